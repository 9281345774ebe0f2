# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MNEMO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mnemo_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so")))
config.substitutions.append(
    ("%example_plugin",
     os.path.join(config.mnemo_lib_dir, "MnemoExamplePlugin.so")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The numeric harness imports its helpers from test/Numerics.
llvm_config.with_environment(
    "PYTHONPATH", os.pathsep.join([os.path.join(config.mnemo_src_root, "test", "Numerics"),
                 os.path.join(config.mnemo_src_root, "scripts", "lib")]),
    append_path=True)
llvm_config.with_environment("MNEMO_TOOLS_DIR", config.mnemo_tools_dir)
llvm_config.with_environment("MNEMO_SRC", config.mnemo_src_root)
config.substitutions.append(("%mnemo_src", config.mnemo_src_root))
llvm_config.with_environment("MLIR_RUNNER",
                             os.path.join(config.llvm_tools_dir, "mlir-runner"))
llvm_config.with_environment("MLIR_LIB_DIR", config.mlir_lib_dir)

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# The runtime's programs (runtime/CMakeLists.txt builds them into bin/, or
# MNEMO_RUNTIME_TOOLS_DIR names another build of them: scripts/test.sh
# --sanitize=thread runs these tests on a TSan build of the runtime), and
# their AArch64 builds from scripts/build-aarch64.sh, run under qemu; tests
# of those need the `aarch64-runtime` feature. (Longest name first: lit
# replaces in order, and %mnemo_run is a prefix of %mnemo_runtime_*.)
runtime_tools_dir = (os.environ.get("MNEMO_RUNTIME_TOOLS_DIR")
                     or config.mnemo_tools_dir)
for name, tool in [("%mnemo_runtime_threads_test", "mnemo-runtime-threads-test"),
                   ("%mnemo_runtime_generator_test", "mnemo-runtime-generator-test"),
                   ("%mnemo_runtime_append_test", "mnemo-runtime-append-test"),
                   ("%mnemo_runtime_random_generator_test",
                    "mnemo-runtime-random-generator-test"),
                   ("%mnemo_runtime_adapters_test", "mnemo-runtime-adapters-test"),
                   ("%mnemo_runtime_shapes_test", "mnemo-runtime-shapes-test"),
                   ("%mnemo_runtime_load_test", "mnemo-runtime-load-test"),
                   ("%mnemo_generate_example", "mnemo-generate-example"),
                   ("%mnemo_embed_example", "mnemo-embed-example"),
                   ("%mnemo_run", "mnemo-run")]:
    config.substitutions.append(
        (name, os.path.join(runtime_tools_dir, tool)))
for name, lib in [("%fake_cuda_no_graphs", "libmnemo-fake-cuda-no-graphs.so"),
                  ("%fake_cuda", "libmnemo-fake-cuda.so")]:
    config.substitutions.append(
        (name, os.path.join(runtime_tools_dir, lib)))
aarch64_bin = os.path.join(config.mnemo_src_root, "build", "aarch64", "bin")
config.substitutions.append(
    ("%aarch64_run", "qemu-aarch64 -L /usr/aarch64-linux-gnu"))
config.substitutions.append(("%aarch64_bin", aarch64_bin))
if shutil.which("qemu-aarch64") and all(
        os.path.exists(os.path.join(aarch64_bin, tool))
        for tool in ["mnemo-run", "mnemo-embed-example",
                     "mnemo-runtime-load-test"]):
    config.available_features.add("aarch64-runtime")

# Commands whose memory a test bounds (test/Inputs/limit_memory.py: an
# address-space limit, or per allocation under AddressSanitizer).
config.substitutions.append(
    ("%limit_memory", config.python_executable + " " +
     os.path.join(config.mnemo_src_root, "test", "Inputs", "limit_memory.py")))
if "address" in config.mnemo_sanitizers:
    config.environment["MNEMO_SANITIZED_ADDRESS"] = "1"

# ptxas (CUDA toolkit) validates emitted PTX; tests of that need the
# `ptxas` feature and are UNSUPPORTED where it is missing.
ptxas = shutil.which("ptxas") or next(
    (p for p in [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"),
                              "bin", "ptxas"), "/usr/local/cuda/bin/ptxas"]
     if os.access(p, os.X_OK)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    # The toolkit it belongs to (mnemoc --cuda-path).
    config.substitutions.append(
        ("%cuda_toolkit", os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))))
else:
    lit_config.note("ptxas not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): "
                    "PTX validation tests are UNSUPPORTED")

tool_dirs = [config.mnemo_tools_dir, config.llvm_tools_dir]
tools = ["mnemo-opt", "mnemoc", "mlir-opt", "mlir-runner", "split-file", "llvm-readelf",
         "mnemo-fuzz-onnx", "mnemo-fuzz-safetensors", "mnemo-fuzz-load",
         "mnemo-fuzz-checkpoint"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The reference exports (torch.onnx, opset 23, external data) with their
# inputs and PyTorch logits are kept under test/Frontend/ONNX/Inputs;
# MNEMO_SHARED_MODELS may point the same tests at another models directory
# with the same layout (refs_public/<model>/...).
shared_models = os.environ.get("MNEMO_SHARED_MODELS") or os.path.join(
    config.mnemo_src_root, "test", "Frontend", "ONNX", "Inputs")
llvm_config.with_environment("MNEMO_SHARED_MODELS", shared_models)
config.substitutions.append(("%shared_models", shared_models))
