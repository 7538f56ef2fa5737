// RUN: linformer-opt %s --linformer-cpu-split-reductions | FileCheck %s

// E X over 1024 tokens with a schedule that splits its reduction in 4
// (split-K): a partial contraction with a new leading parallel loop of 4
// parts (each over 256 tokens), then a combining op that adds the parts.
// Both are kernel roots with the cost model's schedules (not split again).
// CHECK-LABEL: func.func @ex_split(
// CHECK-SAME: %[[E:[a-z0-9]+]]: tensor<64x1024xf32>, %[[X:[a-z0-9]+]]: tensor<1x1024x128xf32>
// CHECK-DAG: %[[ES:.*]] = tensor.expand_shape %[[E]] {{\[}}[0], [1, 2]] output_shape [64, 4, 256]
// CHECK-DAG: %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [1, 4, 256, 128]
// CHECK: %[[PARTS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[ES]], %[[XS]] : tensor<64x4x256xf32>, tensor<1x4x256x128xf32>) outs(%{{.*}} : tensor<4x1x64x128xf32>)
// CHECK-SAME: source = "cost-model, split 4", m_loop = 2, n_loop = 4, column_loops = [1, 4]>, linformer.root, linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 32, 0, 0], register = [8, 32], reduction = 64, pack = false>}
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[PARTS]] : tensor<4x1x64x128xf32>) outs(%{{.*}} : tensor<1x64x128xf32>)
// CHECK-SAME: linformer.root
// CHECK: arith.addf
// CHECK: return %[[SUM]]
#e = affine_map<(b, j, t, m) -> (j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "",
    features = "", isa = "avx512", vector_bits = 512, vector_registers = 32,
    fma_units = 2, fma_latency = 4, l1_bytes = 32768, l2_bytes = 1048576,
    l3_bytes = 33554432, cores = 2>} {
func.func @ex_split(%e: tensor<64x1024xf32>, %x: tensor<1x1024x128xf32>,
    %init: tensor<1x64x128xf32>) -> tensor<1x64x128xf32> {
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %x : tensor<64x1024xf32>, tensor<1x1024x128xf32>)
      outs(%init : tensor<1x64x128xf32>)
      attrs = {linformer.root, linformer.schedule = #linformer.cpu_schedule<
        workgroup = [0, 32, 0, 0], register = [8, 32], reduction = 64,
        pack = false, split = 4>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x128xf32>
  return %r : tensor<1x64x128xf32>
}
}
