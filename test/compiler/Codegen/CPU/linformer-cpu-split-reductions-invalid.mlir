// RUN: not linformer-opt %s --linformer-cpu-split-reductions -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR

// A reduction that does not divide into the parts is an error.
#e = affine_map<(b, j, t, m) -> (j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "",
    features = "", isa = "avx512", vector_bits = 512, vector_registers = 32,
    fma_units = 2, fma_latency = 4, l1_bytes = 32768, l2_bytes = 1048576,
    l3_bytes = 33554432, cores = 2>} {
func.func @bad_split(%e: tensor<64x1000xf32>, %x: tensor<1x1000x128xf32>,
    %init: tensor<1x64x128xf32>) -> tensor<1x64x128xf32> {
  // ERR: error: 'linalg.generic' op cannot split its reduction into 3 parts (it needs a single reduction loop that the parts divide
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %x : tensor<64x1000xf32>, tensor<1x1000x128xf32>)
      outs(%init : tensor<1x64x128xf32>)
      attrs = {linformer.root, linformer.schedule = #linformer.cpu_schedule<
        workgroup = [0, 32, 0, 0], register = [8, 32], reduction = 64,
        pack = false, split = 3>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x128xf32>
  return %r : tensor<1x64x128xf32>
}
}
