# -*- Python -*-
# Lit configuration of the DistIR regression tests.

import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DistIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".json"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Unit", "consumer"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.distir_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%distir_src_root", config.distir_src_root))
config.substitutions.append(("%distir_obj_root", config.distir_obj_root))
config.substitutions.append(("%python", config.python_executable))
# %export_cache OUT COMMAND...: a model export (PyTorch) that writes OUT, run
# once per distinct command and then copied (scripts/export-cache.py). Both
# lit runs of scripts/test.sh pass the same --param export_cache=DIR.
export_cache = lit_config.params.get(
    "export_cache", os.path.join(config.distir_obj_root, "test", "export-cache"))
config.substitutions.append(
    ("%export_cache", f"{config.python_executable} "
     f"{config.distir_src_root}/scripts/export-cache.py --cache {export_cache}"))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Setting DISTIR_OPT_CHECK_IR_ROUNDTRIP reruns the whole suite with every
# distir-opt invocation also checking that its output round-trips.
opt_args = []
if os.environ.get("DISTIR_OPT_CHECK_IR_ROUNDTRIP"):
    opt_args.append("--verify-roundtrip")

tool_dirs = [config.distir_tools_dir, config.llvm_tools_dir]
for tools_dir in (config.llvm_tools_dir, config.distir_tools_dir):
    llvm_config.with_environment("PATH", tools_dir, append_path=True)
tools = [
    ToolSubst("distir-opt", extra_args=opt_args, unresolved="fatal"),
    ToolSubst("distir-translate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.sanitize:
    config.available_features.add("sanitize")
    # LeakSanitizer does not work under ptrace-restricted sandboxes and MLIR
    # keeps some intentional process-lifetime allocations.
    # allow_user_poisoning=0: LLVM's allocators poison memory in code inlined
    # into our instrumented objects, which the uninstrumented libMLIR.so then
    # legitimately writes (false use-after-poison reports).
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:allow_user_poisoning=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1"
    # The default sanitizer run leaves out the tests marked
    # "UNSUPPORTED: sanitize-subset": their cost there is PyTorch, Python
    # and mpirun (the JIT's libMLIR.so is not instrumented), and other tests
    # run their C++ paths under the sanitizers. --param sanitize_all=1
    # (scripts/test.sh --sanitize-all) runs them too.
    if not lit.util.pythonize_bool(lit_config.params.get("sanitize_all")):
        config.available_features.add("sanitize-subset")
if config.enable_rsvg:
    # distir-search was linked with librsvg (PNG plots).
    config.available_features.add("rsvg")
if config.enable_cuda:
    # CUDA and NCCL were found: the CUDA tools (distir-microbench-cuda) exist.
    config.available_features.add("cuda-toolkit")
if config.fuzz:
    # The libFuzzer harnesses were built (sanitizer build).
    config.available_features.add("fuzz")
if config.tcmalloc:
    # The tools link tcmalloc (DISTIR_TCMALLOC).
    config.available_features.add("tcmalloc")
if config.static_tools:
    # The tools link LLVM's and MLIR's static archives (DISTIR_STATIC_TOOLS).
    config.available_features.add("static-tools")
if config.python_package:
    # The distir Python package was built (pybind11 found, no sanitizer).
    config.available_features.add("python-package")
if config.enable_nccl:
    # The NCCL runtime shim was built (CUDA, NCCL and MPI found).
    config.available_features.add("nccl")
if os.path.exists("/dev/nvidiactl") and os.path.exists("/dev/nvidia0"):
    config.available_features.add("cuda-device")
    # Multi-rank NCCL runs need one GPU per rank.
    if os.path.exists("/dev/nvidia1"):
        config.available_features.add("cuda-devices-2")

# Config values that tests need as shell variables.
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%generator", config.cmake_generator))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))
config.substitutions.append(("%distir_lib_dir", config.distir_lib_dir))
