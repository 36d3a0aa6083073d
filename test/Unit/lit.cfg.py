# -*- Python -*-
# Runs the GoogleTest unit tests (unittests/) under lit.

import os

import lit.formats

config.name = "DistIR-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.distir_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
if config.sanitize:
    # allow_user_poisoning=0: LLVM's allocators poison memory in code inlined
    # into our instrumented objects, which the uninstrumented libMLIR.so then
    # legitimately writes (false use-after-poison reports).
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:allow_user_poisoning=0"
