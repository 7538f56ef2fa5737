// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors=bf16-dot=emulate --canonicalize --cse | FileCheck %s

// W prepacked in panels of bf16 pairs (linformer-cpu-prepack-weights with
// dot products): P[j, i, c, t] = W[2 i + t, 16 j + c], read through an
// unpack with inner tiles [16, 2]. Each register tile's step (two rows k,
// k + 1 of the panel's 16 columns) reads its 16 pairs where they are,
// P[j, k / 2, 0:16, 0:2], one contiguous slice, transposed to the [2, 16]
// the contraction reads by a generic of that size (which vectorization
// folds into the contraction's maps). The block's transpose in full is not
// made: no linalg.transpose, no unpack, no copy.
// CHECK-DAG: #[[$DIV16:.*]] = affine_map<()[s0] -> (s0 floordiv 16)>
// CHECK-DAG: #[[$HALF:.*]] = affine_map<()[s0] -> (s0 floordiv 2)>
// CHECK-DAG: #[[$T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @pairs(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<12x32xbf16>, %[[P:[a-z0-9]+]]: tensor<4x16x16x2xbf16>, %[[Y:[a-z0-9]+]]: tensor<12x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.unpack
// CHECK-NOT: linalg.copy
// CHECK: scf.for %[[KB:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: %[[PANEL:.*]] = affine.apply #[[$DIV16]]()[%[[J]]]
// CHECK: %[[BROW:.*]] = affine.apply #[[$HALF]]()[%[[KB]]]
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[P]][%[[PANEL]], %[[BROW]], 0, 0] [1, 8, 16, 2] [1, 1, 1, 1] : tensor<4x16x16x2xbf16> to tensor<1x8x16x2xbf16>
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: scf.for %[[K:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c2
// CHECK: %[[ROW:.*]] = affine.apply #[[$HALF]]()[%[[K]]]
// CHECK: %[[PAIRS:.*]] = tensor.extract_slice %[[BLOCK]][0, %[[ROW]], 0, 0] [1, 1, 16, 2] [1, 1, 1, 1] : tensor<1x8x16x2xbf16> to tensor<16x2xbf16>
// CHECK: %[[STEP:.*]] = linalg.generic {indexing_maps = [#[[$T]], {{.*}}]{{.*}} ins(%[[PAIRS]] : tensor<16x2xbf16>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[STEP]] : tensor<4x2xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK-NOT: linalg.transpose
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @pairs(%x: tensor<12x32xbf16>, %p: tensor<4x16x16x2xbf16>,
    %y: tensor<12x64xf32>) -> tensor<12x64xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  %e = tensor.empty() : tensor<32x64xbf16>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1, 0]
      inner_tiles = [16, 2] into %e : tensor<4x16x16x2xbf16> -> tensor<32x64xbf16>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xbf16>, tensor<32x64xbf16>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}

// -----

// A read of a pairs block that is not a register tile's step: f32 rows
// times the bf16 weight step one row at a time (no pairs), so each step
// reads a [1, 16] row of the block, which the panels do not hold
// contiguously. The block is then the panels' slice transposed in full,
// and that transpose is tiled to vector size like any other op (a whole
// [16, 16, 2] block transposed as one vector would blow up compile time);
// the result is the same.
// CHECK-LABEL: func.func @not_steps(
// CHECK: scf.for
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x16x1xbf16>)
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x16xbf16>)
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @not_steps(%x: tensor<12x32xf32>, %p: tensor<4x16x16x2xbf16>,
    %y: tensor<12x64xf32>) -> tensor<12x64xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  %e = tensor.empty() : tensor<32x64xbf16>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1, 0]
      inner_tiles = [16, 2] into %e : tensor<4x16x16x2xbf16> -> tensor<32x64xbf16>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xf32>, tensor<32x64xbf16>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}
