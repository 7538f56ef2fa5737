// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors --canonicalize --cse | FileCheck %s

// A schedule with `pack = true` (the kernel's schedule, found on an
// enclosing op): Y = X W on a workgroup of 12 rows, 4 x 16 register tiles,
// 16-step reduction blocks. Inside each reduction block the columns' tiles
// loop outside the rows' ones, and each first copies its block of W (the
// streamed operand: 16 steps x 16 columns, rows of W 256 bytes apart) into a
// contiguous 16 x 16 buffer, in 4 x 16 pieces; every row tile's outer
// products then read that buffer.
//   for kb in 0..32 step 16:            reduction block
//     for j in 0..64 step 16:           columns' register tiles
//       P = copy(W[kb:kb+16, j:j+16])   the packed panel
//       for i in 0..12 step 4:          rows' register tiles
//         for k in 0..16:               one outer product a step
//           Y[i:i+4, j:j+16] += X[i:i+4, kb+k] * P[k, 0:16]
// CHECK-LABEL: func.func @packed(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<12x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[Y:[a-z0-9]+]]: tensor<12x64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %[[KB:.*]] = %[[C0]] to %[[C32]] step %[[C16]]
// CHECK: %[[WB:.*]] = tensor.extract_slice %[[W]][%[[KB]], 0] [16, 64] [1, 1]
// CHECK: scf.for %[[J:.*]] = %[[C0]] to %[[C64]] step %[[C16]]
// CHECK: %[[WS:.*]] = tensor.extract_slice %[[WB]][0, %[[J]]] [16, 16] [1, 1]
// CHECK: %[[YS:.*]] = tensor.extract_slice
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<16x16xf32>
// CHECK: %[[PANEL:.*]] = scf.for %[[PR:.*]] = %[[C0]] to %[[C16]] step %[[C4]] iter_args(%[[PACC:.*]] = %[[EMPTY]])
// CHECK: %[[PIN:.*]] = tensor.extract_slice %[[WS]][%[[PR]], 0] [4, 16] [1, 1]
// CHECK: %[[POUT:.*]] = tensor.extract_slice %[[PACC]][%[[PR]], 0] [4, 16] [1, 1]
// CHECK: linalg.copy ins(%[[PIN]] : tensor<4x16xf32>) outs(%[[POUT]] : tensor<4x16xf32>)
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C12]] step %[[C4]] iter_args(%{{.*}} = %[[YS]])
// CHECK: scf.for %[[K:.*]] = %[[C0]] to %[[C16]] step %[[C1]]
// CHECK: %[[PS:.*]] = tensor.extract_slice %[[PANEL]][%[[K]], 0] [1, 16] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[PS]] : tensor<4x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @packed(%x: tensor<12x32xf32>, %w: tensor<32x64xf32>,
    %y: tensor<12x64xf32>) -> tensor<12x64xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xf32>, tensor<32x64xf32>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}

// -----

// The same with W packed once (linformer-cpu-prepack-weights): W is
// `linalg.unpack` of its panels P (P[j, k, c] = W[k, 16 j + c]), so each
// column tile's reduction block of W is read straight from panel j of P,
// rows kb .. kb + 15: no copy, and the unpack is gone.
// CHECK: #[[$DIV16:.*]] = affine_map<()[s0] -> (s0 floordiv 16)>
// CHECK-LABEL: func.func @prepacked(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<12x32xf32>, %[[P:[a-z0-9]+]]: tensor<4x32x16xf32>, %[[Y:[a-z0-9]+]]: tensor<12x64xf32>)
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.unpack
// CHECK: scf.for %[[KB:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: %[[PANEL:.*]] = affine.apply #[[$DIV16]]()[%[[J]]]
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[P]][%[[PANEL]], %[[KB]], 0] [1, 16, 16] [1, 1, 1] : tensor<4x32x16xf32> to tensor<16x16xf32>
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: %[[PS:.*]] = tensor.extract_slice %[[BLOCK]][%[[K]], 0] [1, 16] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[PS]] : tensor<4x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.unpack
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @prepacked(%x: tensor<12x32xf32>, %p: tensor<4x32x16xf32>,
    %y: tensor<12x64xf32>) -> tensor<12x64xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  %e = tensor.empty() : tensor<32x64xf32>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1]
      inner_tiles = [16] into %e : tensor<4x32x16xf32> -> tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xf32>, tensor<32x64xf32>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}

// -----

// Prepacked, the whole reduction at once (reduction = 0), accumulators
// initialized with a bias broadcast over the rows: the broadcast goes into
// each panel's iteration with the contraction, then into each register
// tile, ahead of its reduction loop: the tile's accumulators start from the
// bias (a [4, 16] broadcast of 16 of its elements) instead of a whole
// [12, 64] output written with the bias and read back.
// CHECK-LABEL: func.func @bias(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<12x32xf32>, %[[P:[a-z0-9]+]]: tensor<4x32x16xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[J:[a-z0-9]+]] =
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][%[[J]]] [16] [1] : tensor<64xf32> to tensor<16xf32>
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BS]] : tensor<16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: scf.for %[[K:[a-z0-9]+]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x16xf32>) outs(%[[ACC]] : tensor<4x16xf32>)
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
#b = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @bias(%x: tensor<12x32xf32>, %p: tensor<4x32x16xf32>,
    %bias: tensor<64xf32>, %y: tensor<12x64xf32>) -> tensor<12x64xf32>
    attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  %e = tensor.empty() : tensor<32x64xf32>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1]
      inner_tiles = [16] into %e : tensor<4x32x16xf32> -> tensor<32x64xf32>
  %init = linalg.generic {indexing_maps = [#b, #id],
                          iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<64xf32>) outs(%y : tensor<12x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<12x64xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xf32>, tensor<32x64xf32>)
      outs(%init : tensor<12x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}

// -----

// A projection's weight split per head (W [32, 64] read as [K, H, C] = [32,
// 2, 32]), packed once: the panels split alike ([H, C / 16, K, 16]) and
// unpacked with outer dims (k, h, c / 16) in the order (h, c / 16, k). The
// panels' loop takes one head at a time (its columns contiguous in a
// panel), and each panel is read in place: head h's columns c .. c + 15
// are panel (h, c / 16), all 32 rows, given back the unit head dim of the
// block the contraction reads ([32, 1, 16]).
// CHECK: #[[$DIV16:.*]] = affine_map<()[s0] -> (s0 floordiv 16)>
// CHECK-LABEL: func.func @prepacked_heads(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<12x32xf32>, %[[P:[a-z0-9]+]]: tensor<4x32x16xf32>, %[[Y:[a-z0-9]+]]: tensor<2x12x32xf32>)
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.unpack
// CHECK: %[[PE:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 2, 32, 16]
// CHECK: scf.for %[[H:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: %[[PANEL:.*]] = affine.apply #[[$DIV16]]()[%[[J]]]
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %[[PE]][%[[H]], %[[PANEL]], 0, 0] [1, 1, 32, 16] [1, 1, 1, 1] : tensor<2x2x32x16xf32> to tensor<32x16xf32>
// CHECK: %[[B3:.*]] = tensor.expand_shape %[[BLOCK]] {{\[}}[0], [1, 2]] output_shape [32, 1, 16] : tensor<32x16xf32> into tensor<32x1x16xf32>
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: %[[PS:.*]] = tensor.extract_slice %[[B3]][%[[K]], 0, 0] [1, 1, 16] [1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[PS]] : tensor<4x1xf32>, tensor<1x1x16xf32>) outs(%{{.*}} : tensor<1x4x16xf32>)
// CHECK-NOT: linalg.copy
// CHECK-NOT: linalg.unpack
#xq = affine_map<(h, s, k, c) -> (s, k)>
#wq = affine_map<(h, s, k, c) -> (k, h, c)>
#yq = affine_map<(h, s, k, c) -> (h, s, c)>
func.func @prepacked_heads(%x: tensor<12x32xf32>, %p: tensor<4x32x16xf32>,
    %y: tensor<2x12x32xf32>) -> tensor<2x12x32xf32> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [0, 12, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  %pe = tensor.expand_shape %p [[0, 1], [2], [3]] output_shape [2, 2, 32, 16]
      : tensor<4x32x16xf32> into tensor<2x2x32x16xf32>
  %e = tensor.empty() : tensor<32x2x32xf32>
  %w = linalg.unpack %pe outer_dims_perm = [1, 2, 0] inner_dims_pos = [2]
      inner_tiles = [16] into %e : tensor<2x2x32x16xf32> -> tensor<32x2x32xf32>
  %r = linalg.generic {indexing_maps = [#xq, #wq, #yq],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xf32>, tensor<32x2x32xf32>)
      outs(%y : tensor<2x12x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x12x32xf32>
  return %r : tensor<2x12x32xf32>
}
