// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-fuse-elementwise))' | FileCheck %s

// A bf16 weight's extension feeds a contraction and an elementwise add:
// it fuses into the add (one kernel, nothing written in between) but not
// into the contraction, which stays a plain multiply-add of f32 operands
// for the tensor-core path.
// CHECK-LABEL: func.func @mixed
// CHECK: %[[EXT:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<64x32xbf16>)
// CHECK: arith.extf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %[[EXT]] : tensor<16x64xf32>, tensor<64x32xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// The add reads the bf16 weight itself, extended inside.
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<64x32xf32>, tensor<64x32xbf16>)
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @mixed(%x: tensor<16x64xf32>, %w: tensor<64x32xbf16>, %y: tensor<64x32xf32>)
    -> (tensor<16x32xf32>, tensor<64x32xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x32xbf16>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %f = arith.extf %a : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wf : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %wf : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e2 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %mm, %sum : tensor<16x32xf32>, tensor<64x32xf32>
}
