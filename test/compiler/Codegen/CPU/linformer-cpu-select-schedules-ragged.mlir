// RUN: linformer-opt %s --linformer-cpu-select-schedules | FileCheck %s

// E X for 4 sequences whose lengths the runtime knows (linformer.token_bound
// over the lengths argument): it sweeps 8 MiB of X a workgroup, and the
// sequences' lengths differ, so each sequence gets a workgroup a core (256
// of its 512 columns: more columns than rows, so the cores share X's
// columns, not E's rows), not one workgroup a sequence. Without the bound
// the four sequences are the cores' shares. Full-width AVX-512 packs such
// a sweep, in panels of half of L1 (128 steps of 32 columns).
// CHECK-LABEL: func.func @ex_ragged(
// CHECK: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 0, 256], register = [8, 32], reduction = 128, pack = true>
// CHECK-LABEL: func.func @ex_equal(
// CHECK: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 256, 0, 0], register = [8, 32], reduction = 128, pack = true>
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#xs = affine_map<(b, j, t, m) -> (b, t, m)>
#ex = affine_map<(b, j, t, m) -> (b, j, m)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "",
    features = "", isa = "avx512", vector_bits = 512,
    vector_registers = 32, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
func.func @ex_ragged(%len: tensor<4xi32> {linformer.lengths},
    %e: tensor<4x256x4096xf32>, %x: tensor<4x4096x512xf32>,
    %init: tensor<4x256x512xf32>) -> tensor<4x256x512xf32> {
  %r = linalg.generic {indexing_maps = [#e, #xs, #ex],
      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %x : tensor<4x256x4096xf32>, tensor<4x4096x512xf32>)
      outs(%init : tensor<4x256x512xf32>)
      attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x256x512xf32>
  return %r : tensor<4x256x512xf32>
}
func.func @ex_equal(%e: tensor<4x256x4096xf32>, %x: tensor<4x4096x512xf32>,
    %init: tensor<4x256x512xf32>) -> tensor<4x256x512xf32> {
  %r = linalg.generic {indexing_maps = [#e, #xs, #ex],
      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %x : tensor<4x256x4096xf32>, tensor<4x4096x512xf32>)
      outs(%init : tensor<4x256x512xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x256x512xf32>
  return %r : tensor<4x256x512xf32>
}
}
