// RUN: linformer-opt %s --split-input-file --linformer-cuda-pipeline=format=none \
// RUN:   | FileCheck %s --check-prefix=GPU \
// RUN:       --implicit-check-not=linformer.attention --implicit-check-not=linalg. \
// RUN:       --implicit-check-not=gpu.launch{{[[:space:]]}} --implicit-check-not=scf.parallel \
// RUN:       --implicit-check-not=cf.br --implicit-check-not=memref.load \
// RUN:       --implicit-check-not=memref.copy --implicit-check-not=gpu.module
// RUN: linformer-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(linformer-cuda-pipeline{chip=sm_80 features=+ptx70 threads-x=16 threads-y=4 format=none})' \
// RUN:   | FileCheck %s --check-prefix=SM80
// RUN: linformer-opt %s --split-input-file --linformer-cuda-pipeline | FileCheck %s --check-prefix=PTX

// The first CUDA path: every linalg op of the decomposed layer is one
// kernel; its scf.parallel is tiled into blocks of threads (innermost
// dimension = thread x), mapped, outlined, gathered into one gpu.module and
// lowered to NVVM (bare pointers); gpu-module-to-binary then gives PTX.
// Nothing of the Linformer or linalg dialects, no unmapped scf.parallel, no
// gpu.launch (all outlined) and no host loop, load or copy (the host cannot
// touch device buffers) is left on the host side: it is the launch plan.

// GPU-LABEL: func.func @learned_headwise(
// GPU-SAME: linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"learned_headwise_kernel_0", workgroups = {{[0-9]+}}, buffers = [{{[0-9, ]+}}], writes = [{{[0-9, ]+}}], grid = [{{[0-9, ]+}}], block = [{{[0-9]+}}, {{[0-9]+}}, 1]>
// GPU: gpu.launch_func @learned_headwise_kernels::@learned_headwise_kernel_0 blocks in ({{.*}}) threads in ({{.*}}) args({{[^:]+}} : memref<
// GPU: return
// GPU: gpu.module @learned_headwise_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// GPU: llvm.func @{{[a-z_0-9]+}}({{.*}}) attributes {gpu.kernel, {{.*}}nvvm.kernel
// GPU: nvvm.read.ptx.sreg.tid.x
// SM80: gpu.module @{{.*}} [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">]
// SM80: nvvm.maxntid = array<i32: {{(16|8|4|2|1)}},
// PTX: gpu.binary @{{[a-z_0-9]+}}  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "
// PTX-SAME: .version 8.0
// PTX-SAME: .target sm_90
// PTX-SAME: .visible .entry
func.func @learned_headwise(%x: tensor<1x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>, %f: tensor<16x64xf32>) -> tensor<1x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) f(%f) sharing<headwise>
         : (tensor<1x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
            tensor<16x64xf32>) -> tensor<1x64x32xf32>
  return %y : tensor<1x64x32xf32>
}
