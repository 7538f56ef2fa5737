# -*- Python -*-
# lit configuration for linformer-mlir: .mlir tests under test/, run with
# linformer-opt and the LLVM 22 FileCheck/not/count.
import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "LINFORMER"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.substitutions.append(("%python", sys.executable))
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.linformer_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# The sanitizer options of scripts/test --sanitize reach the tools too.
llvm_config.with_system_environment(
    ["HOME", "TMP", "TEMP", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()

# Our tools first, then LLVM's FileCheck, not, count.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.linformer_tools_dir, append_path=True)
tool_dirs = [config.linformer_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["linformer-opt", "linformer-e2e", "linformer-compile", "linformer-run"], tool_dirs)
# The folder of those tools, for scripts that run them (random_models.py).
config.substitutions.append(("%linformer_bin", config.linformer_tools_dir))

# mlir-runner (mlir-22-tools) and its runtime library (libmlir-22-dev) run
# lowered test functions: the accuracy of the CPU's vector approximations.
runner_utils = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                            "libmlir_c_runner_utils.so")
if (os.access(os.path.join(config.llvm_tools_dir, "mlir-runner"), os.X_OK)
        and os.path.exists(runner_utils)):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_c_runner_utils", runner_utils))
else:
    lit_config.note("no mlir-runner or libmlir_c_runner_utils.so: the "
                    "accuracy tests are skipped; scripts/setup installs them")

# The CUDA path compiles here; ptxas (CUDA toolkit) checks what it emits.
ptxas = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note(f"no ptxas at {ptxas}: the ptxas checks of the CUDA tests "
                    "(spills, registers and shared memory against the "
                    "schedule's budget, cubins) are skipped; install the CUDA "
                    "toolkit there or point CUDA_HOME at one")

# The Halide code generator (--backend=halide) is built when scripts/setup
# installed Halide (build/halide-venv).
if getattr(config, "linformer_have_halide", False):
    config.available_features.add("halide")
else:
    lit_config.note("Halide tests skipped (UNSUPPORTED): this build has no Halide; scripts/setup installs it")

# The stand-in CUDA driver (test/unit/FakeCudaDriver.c): the runtime's CUDA
# path without a GPU.
fake_cuda = os.path.join(config.linformer_obj_root, "lib", "linformer_fake_cuda.so")
config.substitutions.append(("%fake_cuda", fake_cuda))

# A CUDA GPU (a driver that finds a device): test/integration/cuda-gpu.test
# runs there; elsewhere it is UNSUPPORTED, and this says why.
def has_cuda_gpu():
    import ctypes
    try:
        cuda = ctypes.CDLL(os.environ.get("LF_CUDA_DRIVER") or "libcuda.so.1")
    except OSError:
        return "no CUDA driver (libcuda.so.1)"
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "the CUDA driver finds no device"
    return ""
why = has_cuda_gpu()
if why:
    lit_config.note(f"GPU tests skipped (UNSUPPORTED): {why}; scripts/gpu-bundle runs them on a lent GPU")
else:
    config.available_features.add("cuda-gpu")

# The host CPU's x86 vector features (/proc/cpuinfo): tests that run kernels
# compiled for a named CPU (--cpu=haswell, --cpu=znver3) need what that CPU
# has.
def host_cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
flags = host_cpu_flags()
if {"avx2", "fma", "f16c", "bmi1", "bmi2", "movbe"} <= flags:
    config.available_features.add("host-avx2")
if "avx512f" in flags:
    config.available_features.add("host-avx512")
if {"avx512f", "avx512vl", "avx512_bf16"} <= flags:
    config.available_features.add("host-avx512bf16")
if {"amx_tile", "amx_bf16"} <= flags:
    config.available_features.add("host-amx")
# AMX-FP16: Linux lists amx_fp16 from 6.3 only (Debian 12's 6.1 does not,
# on a Granite Rapids that has it), so also ask the compiler which engines
# it finds on this host (LLVM reads CPUID).
def host_has_amx_fp16():
    if {"amx_tile", "amx_fp16"} <= flags:
        return True
    if "amx_tile" not in flags:
        return False
    import json, subprocess
    try:
        out = subprocess.run(
            [os.path.join(config.linformer_tools_dir, "linformer-compile"),
             os.path.join(config.test_source_root, "tools", "Inputs", "small.json"),
             "--print-schedule", "-o", os.devnull],
            capture_output=True, text=True, timeout=120).stdout
        return "amx-fp16" in json.loads(out)["target"].get("engines", [])
    except Exception:
        return False
if host_has_amx_fp16():
    config.available_features.add("host-amx-fp16")
