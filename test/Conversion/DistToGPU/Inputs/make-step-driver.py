#!/usr/bin/env python3
"""Writes a C driver for a device=gpu rank program's entry point.

make-step-driver.py PROGRAM.mlir FUNC > driver.c

Reads the signature of FUNC (tensor arguments and results) from the global
program and writes a C program that, on this process's rank, loads every
argument from DIR/in_K.bin (raw little-endian data) into device memory, calls
_mlir_ciface_FUNC STEPS times, writes the results of the first call that this
rank owns (its device's) to DIR/out_K.bin and prints the median step time.
Usage of the driver: `driver DIR STEPS`, or `mpirun -np N driver DIR STEPS`
for a program on N devices (one GPU each).
The entry must carry `llvm.emit_c_interface`.
"""
import re
import sys

TYPES = {"f32": ("float", 4), "f64": ("double", 8), "i64": ("int64_t", 8),
         "i32": ("int32_t", 4)}


def tensors(text):
    out = []
    for m in re.finditer(r"tensor<((?:\d+x)*)([a-z0-9]+)", text):
        shape = [int(d) for d in m.group(1).split("x") if d]
        out.append((shape, m.group(2)))
    return out


def devices(text):
    """The device of each tensor type (None when it carries no placement)."""
    return [int(m.group(2)) if m.group(2) else None for m in re.finditer(
        r"tensor<[^,>]*(, #dist\.device<(\d+)>)?", text)]


def main():
    program, func = sys.argv[1], sys.argv[2]
    text = open(program).read()
    m = re.search(r"func\.func @%s\((.*?)\)\s*->\s*(\((.*?)\)|tensor<.*?)"
                  r"\s*(attributes|\{)" % re.escape(func), text, re.S)
    if not m:
        sys.exit("error: no function @%s with results in %s" % (func, program))
    args, results = tensors(m.group(1)), tensors(m.group(2))
    owners = devices(m.group(2))
    for _, t in args + results:
        if t not in TYPES:
            sys.exit("error: unsupported element type " + t)
    w = sys.stdout.write
    w("#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
      "#include <time.h>\n#include \"DistIRCUDARuntime.h\"\n"
      "#include \"DistIRNCCLRuntime.h\"\n\n")
    for r in sorted({len(s) for s, _ in args + results}):
        dims = "int64_t sizes[%d]; int64_t strides[%d];" % (r, r) if r else ""
        w("typedef struct { void *allocated, *aligned; int64_t offset; %s } "
          "MemRef%d;\n" % (dims, r))
    w("typedef struct {\n")
    for i, (s, _) in enumerate(results):
        w("  MemRef%d r%d;\n" % (len(s), i))
    w("} Results;\n")
    params = ", ".join("MemRef%d *" % len(s) for s, _ in args)
    w("void _mlir_ciface_%s(Results *%s);\n\n" % (func, ", " + params if params else ""))
    w("""static void *load(const char *dir, int k, int64_t bytes) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/in_%d.bin", dir, k);
  FILE *f = fopen(path, "rb");
  void *host = malloc(bytes ? bytes : 1);
  if (!f || fread(host, 1, bytes, f) != (size_t)bytes) {
    fprintf(stderr, "error: cannot read %ld bytes from %s\\n", (long)bytes, path);
    exit(1);
  }
  fclose(f);
  void *device = _mlir_memref_to_llvm_alloc(bytes);
  distir_cuda_copy((int64_t)device, (int64_t)host, bytes);
  free(host);
  return device;
}

static void store(const char *dir, int k, void *aligned, int64_t offset,
                  int64_t bytes, int64_t elem) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/out_%d.bin", dir, k);
  void *host = malloc(bytes ? bytes : 1);
  distir_cuda_copy((int64_t)host, (int64_t)((char *)aligned + offset * elem), bytes);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(host, 1, bytes, f) != (size_t)bytes) {
    fprintf(stderr, "error: cannot write %s\\n", path);
    exit(1);
  }
  fclose(f);
  free(host);
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DIR STEPS\\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  int steps = atoi(argv[2]);
  if (steps < 1)
    steps = 1;
  int rank = distir_nccl_world_rank();
""")
    for i, (s, t) in enumerate(args):
        n = 1
        for d in s:
            n *= d
        w("  MemRef%d a%d = {0};\n" % (len(s), i))
        w("  a%d.allocated = a%d.aligned = load(dir, %d, %dLL);\n"
          % (i, i, i, n * TYPES[t][1]))
        stride = 1
        for d in reversed(range(len(s))):
            w("  a%d.sizes[%d] = %d; a%d.strides[%d] = %d;\n"
              % (i, d, s[d], i, d, stride))
            stride *= s[d]
    call_args = "".join(", &a%d" % i for i in range(len(args)))
    w("  double *times = malloc(sizeof(double) * steps);\n")
    w("  for (int step = 0; step < steps; ++step) {\n"
      "    Results r;\n    struct timespec t0, t1;\n"
      "    clock_gettime(CLOCK_MONOTONIC, &t0);\n"
      "    _mlir_ciface_%s(&r%s);\n    distir_cuda_synchronize();\n"
      "    clock_gettime(CLOCK_MONOTONIC, &t1);\n"
      "    times[step] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;\n"
      % (func, call_args))
    w("    if (step == 0) {\n")
    for i, (s, t) in enumerate(results):
        n = 1
        for d in s:
            n *= d
        # Each result is written by the rank of its device (dist-to-rank maps
        # device N to rank N); other ranks hold placeholders.
        w("      if (rank == %d)\n" % (owners[i] or 0))
        w("        store(dir, %d, r.r%d.aligned, r.r%d.offset, %dLL, %d);\n"
          % (i, i, i, n * TYPES[t][1], TYPES[t][1]))
    w("    }\n")
    for i in range(len(results)):
        w("    _mlir_memref_to_llvm_free(r.r%d.allocated);\n" % i)
    w("  }\n")
    w("  qsort(times, steps, sizeof(double), compare);\n"
      "  printf(\"rank %d: %d steps, median %.3f ms, %ld kernel launches\\n\", "
      "rank, steps, times[steps / 2], (long)distir_cuda_launches());\n"
      "  distir_nccl_finalize();\n  return 0;\n}\n")


main()
