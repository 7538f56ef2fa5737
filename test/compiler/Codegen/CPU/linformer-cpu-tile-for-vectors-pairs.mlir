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

// Steps of one row of a pairs block (here f32 rows times the bf16 weight,
// no pairs; in a model, a token loop's odd last token stepped alone): each
// reads its row's 16 elements where they are, two apart in the pairs
// (P[j, k / 2, 0:16, k mod 2]), and no transpose of the block is made.
// CHECK-DAG: #[[$HALF:.*]] = affine_map<()[s0] -> (s0 floordiv 2)>
// CHECK-DAG: #[[$ODD:.*]] = affine_map<()[s0] -> (s0 mod 2)>
// CHECK-LABEL: func.func @rows(
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %[[K:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK: %[[I:.*]] = affine.apply #[[$HALF]]()[%[[K]]]
// CHECK: %[[T:.*]] = affine.apply #[[$ODD]]()[%[[K]]]
// CHECK: %[[ROW:.*]] = tensor.extract_slice %{{.*}}[0, %[[I]], 0, %[[T]]] [1, 1, 16, 1] [1, 1, 1, 1] : tensor<1x8x16x2xbf16> to tensor<16xbf16>
// CHECK: %[[STEP:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<16xbf16>) outs(%{{.*}} : tensor<1x16xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[STEP]] : tensor<4x1xf32>, tensor<1x16xbf16>)
// CHECK-NOT: linalg.transpose
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @rows(%x: tensor<12x32xf32>, %p: tensor<4x16x16x2xbf16>,
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

// -----

// A streamed operand that is no prepacked weight (the attention core's keys
// and values, E X's tokens), both factors bf16: whether or not the schedule
// packs it (here not), its block is copied once as pairs, [1, K / 2, 16,
// 2], by a generic that reads two rows and writes them interleaved, one
// pair of rows a step; every register tile then reads its steps' pairs
// from that copy in place, as from a weight's panels.
// CHECK-DAG: #[[$HALF:.*]] = affine_map<()[s0] -> (s0 floordiv 2)>
// CHECK-DAG: #[[$SPLIT:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
// CHECK-LABEL: func.func @activations(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<12x32xbf16>, %[[V:[a-z0-9]+]]: tensor<32x16xbf16>
// CHECK: %[[S:.*]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2]] output_shape [16, 2, 16] : tensor<32x16xbf16> into tensor<16x2x16xbf16>
// CHECK: %[[PAIRS:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x16x16x2xbf16>)
// CHECK: linalg.generic {indexing_maps = [#[[$SPLIT]], {{.*}}]{{.*}} ins(%{{.*}} : tensor<1x2x16xbf16>) outs(%{{.*}} : tensor<1x1x16x2xbf16>)
// CHECK: scf.for %[[K:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c2 iter_args
// CHECK: %[[ROW:.*]] = affine.apply #[[$HALF]]()[%[[K]]]
// CHECK: tensor.extract_slice %[[PAIRS]][0, %[[ROW]], 0, 0] [1, 1, 16, 2] [1, 1, 1, 1] : tensor<1x16x16x2xbf16> to tensor<16x2xbf16>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.copy
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @activations(%x: tensor<12x32xbf16>, %v: tensor<32x16xbf16>,
    %y: tensor<12x16xf32>) -> tensor<12x16xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 0, pack = false>} {
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %v : tensor<12x32xbf16>, tensor<32x16xbf16>)
      outs(%y : tensor<12x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x16xf32>
  return %r : tensor<12x16xf32>
}

// -----

// An op that is one register tile (one pair of rows, 4 x 16) reads its
// pairs in place too (random models of a few tokens found it reading the
// block whole).
// CHECK-LABEL: func.func @one_tile(
// CHECK: %[[PAIRS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x16x2xbf16>)
// CHECK: %[[STEP:.*]] = tensor.extract_slice %[[PAIRS]][0, 0, 0, 0] [1, 1, 16, 2] [1, 1, 1, 1] : tensor<1x1x16x2xbf16> to tensor<16x2xbf16>
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[STEP]] : tensor<16x2xbf16>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<4x2xbf16>, tensor<2x16xbf16>)
// CHECK-NOT: linalg.transpose
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @one_tile(%x: tensor<4x2xbf16>, %v: tensor<2x16xbf16>,
    %y: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [4, 0, 0],
        register = [4, 16], reduction = 0, pack = false>} {
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %v : tensor<4x2xbf16>, tensor<2x16xbf16>)
      outs(%y : tensor<4x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
