// RUN: linformer-opt %s --split-input-file --linformer-lower-to-linalg | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-lower-to-linalg=lower-core=false | FileCheck %s --check-prefix=NOCORE
// RUN: linformer-opt %s --split-input-file --linformer-lower-to-linalg=keep-fusable-core | FileCheck %s --check-prefix=KEEP

// Each projection kind, padded and unpadded, and the attention core, lowered
// to linalg on tensors. Padding becomes bytes (tensor<...xi8>, one byte per
// token, whatever the user's mask type): padded tokens are replaced by the
// reduction's neutral element (0, or -inf for max), and windows are counted
// so that a window without a real token projects to 0. The op that produces
// a projection's result is marked `linformer.root` (one kernel each).
// With lower-core=false the projections are lowered the same way but the
// attention core is left for the CPU pipeline to tile first.
// Shapes: batch 1, heads 2, n = 16, d = 8, k = 4, so windows of w = 4.

// CHECK-DAG: #[[$LEN_MAP:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID2_MAP:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ID4_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$TOK_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// Loops (b, h, j, t, c): in[b, h, t, c] * E[h, j, t] -> out[b, h, j, c].
// CHECK-DAG: #[[$IN_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[$E_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3)>
// CHECK-DAG: #[[$OUT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>

// Learned, padded by lengths: tokens t >= len are zeroed, then contracted
// with E over t.
// CHECK-LABEL: func.func @learned_lengths(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[E:[a-z0-9]+]]: tensor<2x4x16xf32>, %[[LEN:[a-z0-9]+]]: tensor<1xi32>)
// CHECK-DAG: %[[ZERO_I8:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[OE:.*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK-DAG: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[OE]] : tensor<1x2x4x8xf32>)
// The valid-token flags are a kernel of their own.
// CHECK: %[[TE:.*]] = tensor.empty() : tensor<1x16xi8>
// CHECK: %[[TOK:.*]] = linalg.generic {indexing_maps = [#[[$LEN_MAP]], #[[$ID2_MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[LEN]] : tensor<1xi32>) outs(%[[TE]] : tensor<1x16xi8>) attrs = {linformer.root}
// CHECK: arith.cmpi slt
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: %[[ME:.*]] = tensor.empty() : tensor<1x2x16x8xf32>
// CHECK: %[[MASKED:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$TOK_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[K]], %[[TOK]] : tensor<1x2x16x8xf32>, tensor<1x16xi8>) outs(%[[ME]] : tensor<1x2x16x8xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[FLAG:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[REAL:.*]] = arith.cmpi ne, %[[FLAG]], %[[ZERO_I8]] : i8
// CHECK: %[[SEL:.*]] = arith.select %[[REAL]], %[[IN]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[SEL]] : f32
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$IN_MAP]], #[[$E_MAP]], #[[$OUT_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[MASKED]], %[[E]] : tensor<1x2x16x8xf32>, tensor<2x4x16xf32>) outs(%[[INIT]] : tensor<1x2x4x8xf32>) attrs = {linformer.root}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[OUT]] : tensor<1x2x4x8xf32>
// NOCORE-LABEL: func.func @learned_lengths(
// NOCORE-NOT: linformer.project
// NOCORE: linalg.generic {{.*}} attrs = {linformer.root}
func.func @learned_lengths(%k: tensor<1x2x16x8xf32>, %e: tensor<2x4x16xf32>,
    %len: tensor<1xi32>) -> tensor<1x2x4x8xf32> {
  %p = linformer.project<learned> %k, %e lengths(%len)
         : (tensor<1x2x16x8xf32>, tensor<2x4x16xf32>, tensor<1xi32>)
         -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Learned, one E for all heads, unpadded: E is indexed (j, t) only and the
// input is contracted as it is.
// CHECK-DAG: #[[$ES_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
// CHECK-LABEL: func.func @learned_shared_heads(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[E:[a-z0-9]+]]: tensor<4x16xf32>)
// CHECK-NOT: xi8>
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$ES_MAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[K]], %[[E]] : tensor<1x2x16x8xf32>, tensor<4x16xf32>)
// CHECK-SAME: attrs = {linformer.root}
// CHECK: return %[[OUT]]
func.func @learned_shared_heads(%k: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>)
    -> tensor<1x2x4x8xf32> {
  %p = linformer.project<learned> %k, %e
         : (tensor<1x2x16x8xf32>, tensor<4x16xf32>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Mean pooling, unpadded: window sums over [b, h, k, w, d], then a multiply
// by 1 / w (no division, no counts).
// CHECK-DAG: #[[$WIN_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$OUT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$ID4_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @mean_pool(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK-DAG: %[[INV_W:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK: %[[WIN:.*]] = tensor.expand_shape %[[K]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 2, 4, 4, 8] : tensor<1x2x16x8xf32> into tensor<1x2x4x4x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$WIN_MAP]], #[[$OUT_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[WIN]] : tensor<1x2x4x4x8xf32>) outs(%[[INIT]] : tensor<1x2x4x8xf32>) {
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[ADD:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK: linalg.yield %[[ADD]]
// CHECK: %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SUM]] : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.root}
// CHECK: arith.mulf %{{.*}}, %[[INV_W]] : f32
// CHECK-NOT: arith.divf
// CHECK: return %[[MEAN]]
func.func @mean_pool(%k: tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32> {
  %p = linformer.project<mean_pool> %k
         : (tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Mean pooling, padded by i64 lengths: the token flags are a kernel of
// their own, seen as [b, k, w] windows; padded tokens are replaced by 0
// inside the window sum, which is divided by max(count, 1), so an empty
// window stays 0.
// CHECK-DAG: #[[$WIN_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$FLAG_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
// CHECK-DAG: #[[$OUT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$CNT_IN_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$CNT_OUT_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$ID4_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$SLOT_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// CHECK-LABEL: func.func @mean_pool_lengths(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[LEN:[a-z0-9]+]]: tensor<1xi64>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO_I8:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[TOK:.*]] = linalg.generic {{.*}} ins(%[[LEN]] : tensor<1xi64>) outs(%{{.*}} : tensor<1x16xi8>) attrs = {linformer.root}
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK-DAG: %[[WIN:.*]] = tensor.expand_shape %[[K]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 2, 4, 4, 8] : tensor<1x2x16x8xf32> into tensor<1x2x4x4x8xf32>
// CHECK-DAG: %[[TWIN:.*]] = tensor.expand_shape %[[TOK]] {{\[\[}}0], [1, 2]] output_shape [1, 4, 4] : tensor<1x16xi8> into tensor<1x4x4xi8>
// CHECK: %[[CNT:.*]] = linalg.generic {indexing_maps = [#[[$CNT_IN_MAP]], #[[$CNT_OUT_MAP]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<1x4x4xi8>) outs(%{{.*}} : tensor<1x4xf32>)
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$WIN_MAP]], #[[$FLAG_MAP]], #[[$OUT_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[WIN]], %[[TWIN]] : tensor<1x2x4x4x8xf32>, tensor<1x4x4xi8>) outs(%{{.*}} : tensor<1x2x4x8xf32>) {
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[FLAG:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[REAL:.*]] = arith.cmpi ne, %[[FLAG]], %[[ZERO_I8]] : i8
// CHECK: %[[X:.*]] = arith.select %[[REAL]], %[[IN]], %[[ZERO]] : f32
// CHECK: %[[ADD:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK: linalg.yield %[[ADD]]
// CHECK: %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$SLOT_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SUM]], %[[CNT]] : tensor<1x2x4x8xf32>, tensor<1x4xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.root}
// CHECK: ^bb0(%[[S:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[C1:.*]] = arith.maximumf %[[C]], %[[ONE]] : f32
// CHECK: %[[DIV:.*]] = arith.divf %[[S]], %[[C1]] : f32
// CHECK: linalg.yield %[[DIV]]
// CHECK: return %[[MEAN]]
func.func @mean_pool_lengths(%k: tensor<1x2x16x8xf32>, %len: tensor<1xi64>)
    -> tensor<1x2x4x8xf32> {
  %p = linformer.project<mean_pool> %k lengths(%len)
         : (tensor<1x2x16x8xf32>, tensor<1xi64>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Max pooling, unpadded: a -inf init and maximumf over each window.
// CHECK-LABEL: func.func @max_pool(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[WIN:.*]] = tensor.expand_shape %[[K]] {{.*}} into tensor<1x2x4x4x8xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[WIN]] : tensor<1x2x4x4x8xf32>) outs(%[[INIT]] : tensor<1x2x4x8xf32>) attrs = {linformer.root}
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: arith.maximumf %[[ACC]], %[[IN]] : f32
// CHECK-NOT: arith.select
// CHECK: return %[[MAX]]
func.func @max_pool(%k: tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32> {
  %p = linformer.project<max_pool> %k
         : (tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Max pooling, padded by an i8 mask (nonzero = real): the mask is
// normalised to 0/1 bytes, padded tokens become -inf inside the window
// maximum, and a window without a real token (count 0) gives 0, not -inf.
// CHECK-LABEL: func.func @max_pool_mask(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[M:[a-z0-9]+]]: tensor<1x16xi8>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO_I8:.*]] = arith.constant 0 : i8
// CHECK: %[[TOK:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<1x16xi8>) outs(%{{.*}} : tensor<1x16xi8>) attrs = {linformer.root}
// CHECK: arith.cmpi ne, %{{.*}}, %[[ZERO_I8]] : i8
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK-DAG: %[[WIN:.*]] = tensor.expand_shape %[[K]] {{.*}} into tensor<1x2x4x4x8xf32>
// CHECK-DAG: %[[TWIN:.*]] = tensor.expand_shape %[[TOK]] {{.*}} into tensor<1x4x4xi8>
// CHECK: %[[CNT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4xf32>)
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[WIN]], %[[TWIN]] : tensor<1x2x4x4x8xf32>, tensor<1x4x4xi8>) outs(%[[INIT]] : tensor<1x2x4x8xf32>) {
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[FLAG:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[REAL:.*]] = arith.cmpi ne, %[[FLAG]], %[[ZERO_I8]] : i8
// CHECK: %[[X:.*]] = arith.select %[[REAL]], %[[IN]], %[[NEG_INF]] : f32
// CHECK: arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[MAX]], %[[CNT]] : tensor<1x2x4x8xf32>, tensor<1x4xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.root}
// CHECK: ^bb0(%[[V:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[ANY:.*]] = arith.cmpf ogt, %[[C]], %[[ZERO]] : f32
// CHECK: %[[SEL:.*]] = arith.select %[[ANY]], %[[V]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[SEL]]
// CHECK: return %[[OUT]]
func.func @max_pool_mask(%k: tensor<1x2x16x8xf32>, %m: tensor<1x16xi8>)
    -> tensor<1x2x4x8xf32> {
  %p = linformer.project<max_pool> %k mask(%m)
         : (tensor<1x2x16x8xf32>, tensor<1x16xi8>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Conv, per-head kernel [h, d, w], unpadded: a contraction of each window
// with the kernel over r; loops (b, h, j, r, c), kernel read at (h, c, r).
// CHECK-DAG: #[[$WIN_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$KER_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[$OUT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[W:[a-z0-9]+]]: tensor<2x8x4xf32>)
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[WIN:.*]] = tensor.expand_shape %[[V]] {{.*}} into tensor<1x2x4x4x8xf32>
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$WIN_MAP]], #[[$KER_MAP]], #[[$OUT_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[WIN]], %[[W]] : tensor<1x2x4x4x8xf32>, tensor<2x8x4xf32>) outs(%[[INIT]] : tensor<1x2x4x8xf32>) attrs = {linformer.root}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[OUT]]
func.func @conv(%v: tensor<1x2x16x8xf32>, %w: tensor<2x8x4xf32>)
    -> tensor<1x2x4x8xf32> {
  %p = linformer.project<conv> %v, %w
         : (tensor<1x2x16x8xf32>, tensor<2x8x4xf32>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// Conv, one [d, w] kernel for all heads, padded by an i1 mask: the mask
// becomes bytes, the kernel is read at (c, r), and a padded token's product
// is replaced by 0 inside the window sum. Conv needs no window counts.
// CHECK-DAG: #[[$KER_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>
// CHECK-LABEL: func.func @conv_shared_mask(
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>, %[[M:[a-z0-9]+]]: tensor<1x16xi1>)
// CHECK-DAG: %[[ZERO_I8:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[TOK:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<1x16xi1>) outs(%{{.*}} : tensor<1x16xi8>) attrs = {linformer.root}
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK-DAG: %[[WIN:.*]] = tensor.expand_shape %[[V]] {{.*}} into tensor<1x2x4x4x8xf32>
// CHECK-DAG: %[[TWIN:.*]] = tensor.expand_shape %[[TOK]] {{.*}} into tensor<1x4x4xi8>
// CHECK-NOT: xf32>) {
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$KER_MAP]], #{{.*}}, #{{.*}}], {{.*}} ins(%[[WIN]], %[[W]], %[[TWIN]] : tensor<1x2x4x4x8xf32>, tensor<8x4xf32>, tensor<1x4x4xi8>) {{.*}} attrs = {linformer.root}
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[TAP:.*]]: f32, %[[FLAG:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK: %[[P:.*]] = arith.mulf %[[IN]], %[[TAP]] : f32
// CHECK: %[[REAL:.*]] = arith.cmpi ne, %[[FLAG]], %[[ZERO_I8]] : i8
// CHECK: %[[X:.*]] = arith.select %[[REAL]], %[[P]], %[[ZERO]] : f32
// CHECK: arith.addf %[[ACC]], %[[X]] : f32
// CHECK: return %[[OUT]]
func.func @conv_shared_mask(%v: tensor<1x2x16x8xf32>, %w: tensor<8x4xf32>,
    %m: tensor<1x16xi1>) -> tensor<1x2x4x8xf32> {
  %p = linformer.project<conv> %v, %w mask(%m)
         : (tensor<1x2x16x8xf32>, tensor<8x4xf32>, tensor<1x16xi1>)
         -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// The attention core with an i8 key mask, in the transposed form (see
// LowerToLinalg.cpp): scores are S^T [b, h, k, n], so that the softmax
// reduces over rows (elementwise across query vectors, no horizontal
// reductions), the query tile is transposed instead of all k keys, the scale
// goes inside the exponential and the division by the row sum is deferred to
// the [n, d] output:
//   Q^T = transpose(Q)                                     [b, h, d, n]
//   S^T[b,h,j,i] = sum_c K[b,h,j,c] Q^T[b,h,c,i]           [b, h, k, n]
//   S^T = mask[b, j] ? S^T : -inf
//   m[b,h,i] = max_j S^T                                    [b, h, n]
//   P^T = exp(scale (S^T - m))
//   l[b,h,i] = sum_j P^T
//   O[b,h,i,c] = (sum_j P^T[b,h,j,i] V[b,h,j,c]) / l[b,h,i] [b, h, n, d]
// CHECK-DAG: #[[$K_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$QT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[$S_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$PT_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[$ID4_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$KM_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// CHECK-DAG: #[[$ROW_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$OROW_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @core_key_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[M:[a-z0-9]+]]: tensor<1x4xi8>)
// CHECK-DAG: %[[ZERO_I8:.*]] = arith.constant 0 : i8
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[QTE:.*]] = tensor.empty() : tensor<1x2x8x16xf32>
// CHECK: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<1x2x16x8xf32>) outs(%[[QTE]] : tensor<1x2x8x16xf32>) permutation = [0, 1, 3, 2]
// CHECK: %[[SINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x4x16xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$K_MAP]], #[[$QT_MAP]], #[[$S_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[K]], %[[QT]] : tensor<1x2x4x8xf32>, tensor<1x2x8x16xf32>) outs(%[[SINIT]] : tensor<1x2x4x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[L:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$KM_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[S]], %[[M]] : tensor<1x2x4x16xf32>, tensor<1x4xi8>) outs(%{{.*}} : tensor<1x2x4x16xf32>)
// CHECK: ^bb0(%[[SV:.*]]: f32, %[[MV:.*]]: i8, %{{.*}}: f32):
// CHECK: %[[VALID:.*]] = arith.cmpi ne, %[[MV]], %[[ZERO_I8]] : i8
// CHECK: %[[SEL:.*]] = arith.select %[[VALID]], %[[SV]], %[[NEG_INF]] : f32
// CHECK: linalg.yield %[[SEL]]
// CHECK: %[[MINIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$ROW_MAP]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[L]] : tensor<1x2x4x16xf32>) outs(%[[MINIT]] : tensor<1x2x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$ROW_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[L]], %[[MAX]] : tensor<1x2x4x16xf32>, tensor<1x2x16xf32>)
// CHECK-NEXT: ^bb0(%[[LV:.*]]: f32, %[[MXV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[DIFF:.*]] = arith.subf %[[LV]], %[[MXV]] : f32
// CHECK-NEXT: %[[SC:.*]] = arith.mulf %[[DIFF]], %[[SCALE]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[SC]] : f32
// CHECK-NEXT: linalg.yield %[[EXP]]
// CHECK: %[[SUMINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$ROW_MAP]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[P]] : tensor<1x2x4x16xf32>) outs(%[[SUMINIT]] : tensor<1x2x16xf32>)
// CHECK: arith.addf
// CHECK: %[[OINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x16x8xf32>)
// CHECK: %[[W:.*]] = linalg.generic {indexing_maps = [#[[$PT_MAP]], #[[$QT_MAP]], #[[$S_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[V]] : tensor<1x2x4x16xf32>, tensor<1x2x4x8xf32>) outs(%[[OINIT]] : tensor<1x2x16x8xf32>)
// CHECK: %[[O:.*]] = linalg.generic {indexing_maps = [#[[$ID4_MAP]], #[[$OROW_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[W]], %[[SUM]] : tensor<1x2x16x8xf32>, tensor<1x2x16xf32>)
// CHECK: arith.divf
// CHECK: return %[[O]] : tensor<1x2x16x8xf32>
// NOCORE-LABEL: func.func @core_key_mask(
// NOCORE-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[M:[a-z0-9]+]]: tensor<1x4xi8>)
// NOCORE-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x2x16x8xf32>
// NOCORE-NEXT: %[[O:.*]] = linformer.attention_core %[[Q]], %[[K]], %[[V]] scale(1.250000e-01) key_mask(%[[M]]) outs(%[[E]]) {linformer.root}
// NOCORE-NEXT: return %[[O]]
func.func @core_key_mask(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>, %m: tensor<1x4xi8>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) {linformer.root}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x4xi8>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// An i1 key mask (a user's, not the decomposition's bytes) selects directly.
// CHECK-LABEL: func.func @core_i1_key_mask(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<1x2x16x8xf32>, %{{[a-z0-9]+}}: tensor<1x2x4x8xf32>, %{{[a-z0-9]+}}: tensor<1x2x4x8xf32>, %[[M:[a-z0-9]+]]: tensor<1x4xi1>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[M]] : tensor<1x2x4x16xf32>, tensor<1x4xi1>)
// CHECK-NEXT: ^bb0(%[[SV:.*]]: f32, %[[MV:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[MV]], %[[SV]], %{{.*}} : f32
// CHECK-NEXT: linalg.yield %[[SEL]]
// CHECK: math.exp
func.func @core_i1_key_mask(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>, %m: tensor<1x4xi1>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x4xi1>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// Pooled slots (the core's linformer.token_bound, windows of 4 tokens): the
// scores' rows (loops (b, h, j, c, i), j parallel) and the weighted sum's
// steps (loops (b, h, i, j, c), j a reduction) carry the bound, so that
// register tiling stops both at ceil(length / 4) slots; the select, the
// row statistics and the exponentials between them do not (the rows left
// are masked to -inf whatever they hold).
// CHECK-LABEL: func.func @core_slot_bound(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]{{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x4x8xf32>, tensor<1x2x8x16xf32>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
// The softmax over the slots stops at them too: mask, max, exp, sum.
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x4x16xf32>, tensor<1x4xi8>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true, per_step = 4>}
// CHECK: arith.select
// CHECK: linalg.generic {{.*}}ins(%{{.*}} : tensor<1x2x4x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x4x16xf32>, tensor<1x2x16xf32>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}ins(%{{.*}} : tensor<1x2x4x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]{{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x4x16xf32>, tensor<1x2x4x8xf32>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, per_step = 4>}
// CHECK-NOT: linformer.token_bound
// CHECK: return
func.func @core_slot_bound(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>, %m: tensor<1x4xi8>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
         : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x4xi8>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// Without a key mask nothing selects; values may be wider than keys
// (dv = 12).
// CHECK-LABEL: func.func @core_no_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x4x12xf32>)
// CHECK-NOT: arith.select
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[K]], %{{.*}} : tensor<1x2x4x8xf32>, tensor<1x2x8x16xf32>) outs(%{{.*}} : tensor<1x2x4x16xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<1x2x4x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[MAX]] : tensor<1x2x4x16xf32>, tensor<1x2x16xf32>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[V]] : tensor<1x2x4x16xf32>, tensor<1x2x4x12xf32>) outs(%{{.*}} : tensor<1x2x16x12xf32>)
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<1x2x16x12xf32>, tensor<1x2x16xf32>) outs(%{{.*}} : tensor<1x2x16x12xf32>)
// CHECK: return %[[O]] : tensor<1x2x16x12xf32>
// NOCORE-LABEL: func.func @core_no_mask(
// NOCORE: linformer.attention_core
// NOCORE-NOT: math.exp
// keep-fusable-core (the CUDA pipeline) lowers it anyway: its value width
// (12) is not its head width (8), which the fused kernel needs.
// KEEP-LABEL: func.func @core_no_mask(
// KEEP-NOT: linformer.attention_core
// KEEP: math.exp
func.func @core_no_mask(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x12xf32>) -> tensor<1x2x16x12xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x12xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x12xf32>, tensor<1x2x16x12xf32>)
         -> tensor<1x2x16x12xf32>
  return %o : tensor<1x2x16x12xf32>
}

// -----

// Parts composed: with lower-core=false the projections are lowered and the
// core reads their results.
// CHECK-LABEL: func.func @parts(
// CHECK-NOT: linformer.project
// CHECK-NOT: linformer.attention_core
// CHECK: math.exp
// CHECK-NOT: linformer.attention_core
// NOCORE-LABEL: func.func @parts(
// NOCORE-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// NOCORE-NOT: linformer.project
// NOCORE: %[[KP:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x4x4x8xf32>) {{.*}} attrs = {linformer.root}
// NOCORE: %[[VP:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x4x4x8xf32>) {{.*}} attrs = {linformer.root}
// NOCORE: %[[O:.*]] = linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(3.535530e-01)
// NOCORE-NOT: math.exp
// NOCORE: return %[[O]]
// keep-fusable-core keeps it whole (static, value width = head width) and
// lowers the projections.
// KEEP-LABEL: func.func @parts(
// KEEP-NOT: linformer.project
// KEEP: %[[O:.*]] = linformer.attention_core %{{.*}} scale(3.535530e-01) outs(%{{.*}})
// KEEP-NOT: math.exp
// KEEP: return %[[O]]
func.func @parts(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>,
    %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %kp = linformer.project<max_pool> %k
          : (tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
  %vp = linformer.project<max_pool> %v
          : (tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.353553)
         outs(%o_init) : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>)
         -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// Conv padded by the entry's lengths (an argument marked linformer.lengths,
// which the runtime fills per run): the window reduction is marked to stop
// at the length, [r, batch, window, w = 4, 1], the 1 saying that its body
// masks padded tokens itself (so a tile of several windows may stop at its
// first window's tokens). Lengths that are not such an argument (above) or
// a mask: no mark.
// CHECK-LABEL: func.func @conv_lengths_bound(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins({{.*}} : tensor<1x2x4x4x8xf32>, tensor<2x8x4xf32>, tensor<1x4x4xi8>) outs({{.*}}) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, part = 2, per_part = 4, masked = true>}
// CHECK: arith.select
func.func @conv_lengths_bound(%v: tensor<1x2x16x8xf32>, %w: tensor<2x8x4xf32>,
    %len: tensor<1xi32> {linformer.lengths}) -> tensor<1x2x4x8xf32> {
  %p = linformer.project<conv> %v, %w lengths(%len)
         : (tensor<1x2x16x8xf32>, tensor<2x8x4xf32>, tensor<1xi32>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @mean_pool_mask_no_bound(
// CHECK-NOT: linformer.token_bound
// CHECK: return
func.func @mean_pool_mask_no_bound(%k: tensor<1x2x16x8xf32>, %m: tensor<1x16xi1>)
    -> tensor<1x2x4x8xf32> {
  %p = linformer.project<mean_pool> %k mask(%m)
         : (tensor<1x2x16x8xf32>, tensor<1x16xi1>) -> tensor<1x2x4x8xf32>
  return %p : tensor<1x2x4x8xf32>
}

// -----

// bf16 products in the core (linformer.bf16_scores, set by
// linformer-bf16-products when dot products are on): the keys and the
// transposed query tile are rounded to bf16, the score contraction extends
// them (the products exact in f32) and sums in f32; the softmax stays f32;
// the weighted sum takes P (P^T transposed back, so that a row's pair of
// probabilities along the slots is adjacent) and the values, both rounded
// to bf16, the same way. The exponential is marked approximate (afn): the
// probabilities it makes are rounded to bf16.
// CHECK-LABEL: func.func @core_bf16_scores(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x4x8xf32>)
// CHECK: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<1x2x16x8xf32>)
// CHECK: %[[KB:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: arith.truncf
// CHECK: %[[QB:.*]] = linalg.generic {{.*}} ins(%[[QT]] : tensor<1x2x8x16xf32>) outs(%{{.*}} : tensor<1x2x8x16xbf16>)
// CHECK: arith.truncf
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[KB]], %[[QB]] : tensor<1x2x4x8xbf16>, tensor<1x2x8x16xbf16>) outs(%{{.*}} : tensor<1x2x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-NEXT: %[[EA:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[EB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[EA]], %[[EB]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[C]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK-NOT: bf16
// CHECK: math.exp %{{.*}} fastmath<afn> : f32
// CHECK-NOT: bf16
// CHECK: %[[P:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x2x4x16xf32>) outs(%{{.*}} : tensor<1x2x16x4xf32>) permutation = [0, 1, 3, 2]
// CHECK: %[[PB:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<1x2x16x4xf32>) outs(%{{.*}} : tensor<1x2x16x4xbf16>)
// CHECK: %[[VB:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[PB]], %[[VB]] : tensor<1x2x16x4xbf16>, tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x16x8xf32>)
// CHECK-NEXT: ^bb0(%[[PA:.*]]: bf16, %[[VA:.*]]: bf16, %[[OC:.*]]: f32):
// CHECK-NEXT: %[[EP:.*]] = arith.extf %[[PA]] : bf16 to f32
// CHECK-NEXT: %[[EV:.*]] = arith.extf %[[VA]] : bf16 to f32
// CHECK-NEXT: %[[PV:.*]] = arith.mulf %[[EP]], %[[EV]] : f32
// CHECK-NEXT: %[[OS:.*]] = arith.addf %[[OC]], %[[PV]] : f32
// CHECK-NOT: bf16
// The rows' sums inverted once, a product per element (no division per
// element of the result).
// CHECK: %[[INV:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: arith.divf %cst{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[O]], %[[INV]] : tensor<1x2x16x8xf32>, tensor<1x2x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NOT: arith.divf
// CHECK: return
func.func @core_bf16_scores(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.bf16_scores}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// K and V that are extensions of bf16 values (linformer-bf16-products
// had the K' and V' projections round them, as their kernels' epilogues)
// are those bf16 values: nothing of them is rounded again. Q is
// transposed and rounded as before.
// CHECK-LABEL: func.func @core_bf16_factors(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[KB:[a-z0-9]+]]: tensor<1x2x4x8xbf16>, %[[VB:[a-z0-9]+]]: tensor<1x2x4x8xbf16>)
// CHECK: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<1x2x16x8xf32>)
// CHECK-NOT: ins(%{{.*}} : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: %[[QB:.*]] = linalg.generic {{.*}} ins(%[[QT]] : tensor<1x2x8x16xf32>) outs(%{{.*}} : tensor<1x2x8x16xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[KB]], %[[QB]] : tensor<1x2x4x8xbf16>, tensor<1x2x8x16xbf16>) outs(%{{.*}} : tensor<1x2x4x16xf32>)
// CHECK: %[[PB:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x4xbf16>)
// CHECK-NOT: ins(%{{.*}} : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[PB]], %[[VB]] : tensor<1x2x16x4xbf16>, tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x16x8xf32>)
// CHECK: return
#ext4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @core_bf16_factors(%q: tensor<1x2x16x8xf32>, %kb: tensor<1x2x4x8xbf16>,
    %vb: tensor<1x2x4x8xbf16>) -> tensor<1x2x16x8xf32> {
  %ke = tensor.empty() : tensor<1x2x4x8xf32>
  %kp = linalg.generic {indexing_maps = [#ext4, #ext4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kb : tensor<1x2x4x8xbf16>) outs(%ke : tensor<1x2x4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x8xf32>
  %vp = linalg.generic {indexing_maps = [#ext4, #ext4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%vb : tensor<1x2x4x8xbf16>) outs(%ke : tensor<1x2x4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x8xf32>
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.bf16_scores}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// With pooled slots that stop at a length, a pair of slots could straddle
// it: the scores still take bf16 pairs (along the head's channels), the
// weighted sum stays f32 on P^T.
// CHECK-LABEL: func.func @core_bf16_slot_bound(
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x4x8xbf16>, tensor<1x2x8x16xbf16>) outs(%{{.*}} : tensor<1x2x4x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]{{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x2x4x16xf32>, tensor<1x2x4x8xf32>){{.*}}attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, per_step = 4>}
// CHECK: return
func.func @core_bf16_slot_bound(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>, %m: tensor<1x4xi8>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) {linformer.bf16_scores, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
         : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x4xi8>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// The same on AMX tiles (k a multiple of 16, n of 8): the scores as S =
// Q K^T ([n, k]), not S^T. The query tile is the tile product's rows as
// it lies (pairs along the channels: no transpose of Q), K^T the streamed
// operand (K transposed here, as 16-bit pairs' halves, where no kernel
// made K^T: see @core_amx_keys_t), the softmax's row statistics reduce
// the innermost loop (the slots), and P is written rounded as the
// exponential computes it (no transpose of P, no pass that only rounds),
// the row sums adding those rounded values.
// CHECK-LABEL: func.func @core_amx_pairs(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x16x8xf32>, %[[K:[^:]*]]: tensor<1x2x16x8xf32>
// CHECK: %[[KB:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x2x16x8xf32>) outs(%{{.*}} : tensor<1x2x16x8xbf16>)
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[KB]] : tensor<1x2x16x8xbf16>) outs(%{{.*}} : tensor<1x2x8x16xbf16>) permutation = [0, 1, 3, 2]
// CHECK: %[[QB:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x2x16x8xf32>) outs(%{{.*}} : tensor<1x2x16x8xbf16>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[QB]], %[[KT]] : tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) outs(%{{.*}} : tensor<1x2x16x16xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[S]] : tensor<1x2x16x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: %[[PB:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[M]] : tensor<1x2x16x16xf32>, tensor<1x2x16xf32>) outs(%{{.*}} : tensor<1x2x16x16xbf16>)
// CHECK: %[[E:.*]] = math.exp
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[E]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: linalg.generic {{.*}} ins(%[[PB]] : tensor<1x2x16x16xbf16>) outs(%{{.*}} : tensor<1x2x16xf32>)
// CHECK: arith.extf
// CHECK: linalg.generic {{.*}} ins(%[[PB]], %{{.*}} : tensor<1x2x16x16xbf16>, tensor<1x2x16x8xbf16>) outs(%{{.*}} : tensor<1x2x16x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @core_amx_pairs(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x16x8xf32>,
    %vp: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.bf16_scores, linformer.bf16_engine = "amx"}
          : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// The same core with f16 pairs (linformer.f16_pairs: linformer-bf16-
// products' f16, AMX-FP16 tiles): every rounding is to f16 (the keys and
// the query tile, the probabilities, the values), none to bf16.
// CHECK-LABEL: func.func @core_amx_f16_pairs(
// CHECK-NOT: bf16
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[KT:.*]] = linalg.transpose ins(%{{.*}} : tensor<1x2x16x8xf16>) outs(%{{.*}} : tensor<1x2x8x16xf16>) permutation = [0, 1, 3, 2]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[KT]] : tensor<1x2x16x8xf16>, tensor<1x2x8x16xf16>) outs(%{{.*}} : tensor<1x2x16x16xf32>)
// CHECK: %[[PH:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x16xf16>)
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.generic {{.*}} ins(%[[PH]], %{{.*}} : tensor<1x2x16x16xf16>, tensor<1x2x16x8xf16>) outs(%{{.*}} : tensor<1x2x16x8xf32>)
// CHECK-NOT: bf16
// CHECK: return
func.func @core_amx_f16_pairs(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x16x8xf32>,
    %vp: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.bf16_scores, linformer.f16_pairs, linformer.bf16_engine = "amx"}
          : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// K read as the transpose of a K^T (linformer-bf16-products' transposeKeysOnce:
// a kernel of its own transposed it once, from bf16): the scores take that
// K^T as it is, rounded as the extension's source, and transpose nothing.
// CHECK-LABEL: func.func @core_amx_keys_t(
// CHECK-SAME: %{{[^:]*}}: tensor<1x2x16x8xf32>, %[[KT:[^:]*]]: tensor<1x2x8x16xbf16>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[KT]] : tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>) outs(%{{.*}} : tensor<1x2x16x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
#ident = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @core_amx_keys_t(%q: tensor<1x2x16x8xf32>, %kt: tensor<1x2x8x16xbf16>,
    %vp: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %ktf = linalg.generic {indexing_maps = [#ident, #ident], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kt : tensor<1x2x8x16xbf16>) outs(%e : tensor<1x2x8x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<1x2x8x16xf32>
  %ke = tensor.empty() : tensor<1x2x16x8xf32>
  %kp = linalg.transpose ins(%ktf : tensor<1x2x8x16xf32>) outs(%ke : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.bf16_scores, linformer.bf16_engine = "amx"}
          : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
