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
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0"
