// Each bad cluster spec gives one error line and a failing exit code.
// RUN: not distir-opt %s --dist-attach-cluster 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not distir-opt %s --dist-attach-cluster=cluster=dgx-z100 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not distir-opt %s --dist-attach-cluster=cluster=dgx-h100:gpus=4 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not distir-opt %s --dist-attach-cluster=cluster=dgx-h100:nodes=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not distir-opt %s --dist-attach-cluster=cluster=dgx-h100:nodes=two 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not distir-opt %s --dist-attach-cluster=cluster=dgx-h100:devices=4 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not distir-opt %s --dist-attach-cluster=cluster=%t.missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not distir-opt %s --dist-attach-cluster=cluster=%S/Inputs/bad-bandwidth.json 2>&1 | FileCheck %s --check-prefix=BADJSON
// RUN: not distir-opt %s --dist-attach-cluster=cluster=%S/Inputs/syntax-error.json 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not distir-opt %s --dist-attach-cluster=cluster=%S/Inputs/unknown-key.json 2>&1 | FileCheck %s --check-prefix=TYPO

// NONE: error: no cluster given: pass cluster=NAME or cluster=path.json to dist-attach-cluster
// NONE-NOT: error
// UNKNOWN: error: unknown cluster preset 'dgx-z100' (valid presets: aws-p3.8xlarge, dgx-a100, dgx-h100, dgx1-v100, dgx2-v100x16, distir-uniform, gcp-a100x16, gcp-v100x8)
// UNKNOWN-NOT: error
// KEY: error: {{.*}}gpus
// KEY-NOT: error
// ZERO: error: {{.*}}nodes
// NAN: error: {{.*}}two
// DEVICES: error: {{.*}}devices
// MISSING: error: cannot open cluster file '{{.*}}missing.json'
// MISSING-NOT: error
// BADJSON: error: {{.*}}$.levels[1].link.bandwidth: expected a positive number
// BADJSON-NOT: error
// SYNTAX: error: {{.*}}invalid JSON: line 3
// TYPO: error: {{.*}}unknown-key.json: $.levels[0].link.bandwith: unknown key (did you mean 'bandwidth'?)
module {
}
