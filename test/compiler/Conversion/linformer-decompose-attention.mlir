// RUN: linformer-opt %s --split-input-file --linformer-decompose-attention | FileCheck %s

// The layer splits into three input-projection contractions that write
// [b, h, n, d] directly (W viewed as [d_model, h, d]), two linformer.project
// ops (K with e, V with f, or e again when K and V share it), the attention
// core with scale 1 / sqrt(d), marked as a kernel root, and the output
// contraction over (h, d). Pooling and conv with padding also compute which
// projected slots have a real token behind them (an i8 key mask); a learned
// slot mixes every real token, so it is always valid and gets no mask.
// Shapes: batch 1, n = 16, d_model = 16, heads = 2 (d = 8), k = 4, so a
// pooling or conv window has 4 tokens and scale = 1 / sqrt(8).

// Loops of an input projection: (b, h, i, m, c), reduction over m;
// X [b, n, dm] is read at (b, i, m), W [dm, h, d] at (m, h, c).
// CHECK-DAG: #[[$X_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
// CHECK-DAG: #[[$W_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
// CHECK-DAG: #[[$QKV_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// Bias broadcasts: [h, d] over [b, h, n, d], and [dm] over [b, n, dm].
// CHECK-DAG: #[[$BIAS4_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[$ID4_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$BIAS3_MAP:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$ID3_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// Output projection: loops (b, i, h, c, o), reductions over h and c.
// CHECK-DAG: #[[$A_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-DAG: #[[$WO_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
// CHECK-DAG: #[[$Y_MAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>

// CHECK-LABEL: func.func @learned_none_biases(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[WQ:[a-z0-9]+]]: tensor<16x16xf32>, %[[WK:[a-z0-9]+]]: tensor<16x16xf32>, %[[WV:[a-z0-9]+]]: tensor<16x16xf32>, %[[WO:[a-z0-9]+]]: tensor<16x16xf32>,
// CHECK-SAME: %[[BQ:[a-z0-9]+]]: tensor<16xf32>, %[[BK:[a-z0-9]+]]: tensor<16xf32>, %[[BV:[a-z0-9]+]]: tensor<16xf32>, %[[BO:[a-z0-9]+]]: tensor<16xf32>, %[[E:[a-z0-9]+]]: tensor<2x4x16xf32>, %[[F:[a-z0-9]+]]: tensor<2x4x16xf32>)
// CHECK-NOT: linformer.attention %
// Q = X W_q + b_q: the bias, viewed as [h, d], is broadcast into the init.
// CHECK: %[[WQ3:.*]] = tensor.expand_shape %[[WQ]] {{\[\[}}0], [1, 2]] output_shape [16, 2, 8] : tensor<16x16xf32> into tensor<16x2x8xf32>
// CHECK: %[[BQ2:.*]] = tensor.expand_shape %[[BQ]] {{\[\[}}0, 1]] output_shape [2, 8] : tensor<16xf32> into tensor<2x8xf32>
// CHECK: %[[QE:.*]] = tensor.empty() : tensor<1x2x16x8xf32>
// CHECK: %[[QINIT:.*]] = linalg.generic {indexing_maps = [#[[$BIAS4_MAP]], #[[$ID4_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[BQ2]] : tensor<2x8xf32>) outs(%[[QE]] : tensor<1x2x16x8xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {indexing_maps = [#[[$X_MAP]], #[[$W_MAP]], #[[$QKV_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[WQ3]] : tensor<1x16x16xf32>, tensor<16x2x8xf32>) outs(%[[QINIT]] : tensor<1x2x16x8xf32>) attrs = {linformer.root}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: -> tensor<1x2x16x8xf32>
// CHECK: %[[WK3:.*]] = tensor.expand_shape %[[WK]]
// CHECK: %[[BK2:.*]] = tensor.expand_shape %[[BK]]
// CHECK: %[[KINIT:.*]] = linalg.generic {{.*}} ins(%[[BK2]] : tensor<2x8xf32>)
// CHECK: %[[K:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WK3]] : {{.*}}) outs(%[[KINIT]] : {{.*}}) attrs = {linformer.root}
// CHECK: %[[WV3:.*]] = tensor.expand_shape %[[WV]]
// CHECK: %[[BV2:.*]] = tensor.expand_shape %[[BV]]
// CHECK: %[[VINIT:.*]] = linalg.generic {{.*}} ins(%[[BV2]] : tensor<2x8xf32>)
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WV3]] : {{.*}}) outs(%[[VINIT]] : {{.*}}) attrs = {linformer.root}
// K is projected with e, V with f.
// CHECK: %[[KP:.*]] = linformer.project<learned> %[[K]], %[[E]] : (tensor<1x2x16x8xf32>, tensor<2x4x16xf32>) -> tensor<1x2x4x8xf32>
// CHECK: %[[VP:.*]] = linformer.project<learned> %[[V]], %[[F]] : (tensor<1x2x16x8xf32>, tensor<2x4x16xf32>) -> tensor<1x2x4x8xf32>
// scale = 1 / sqrt(8); a learned projection needs no key mask.
// CHECK: %[[A:.*]] = linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(0.35355339059327373) outs(%{{.*}}) {linformer.root} : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
// concat(heads) W_o + b_o: W_o viewed as [h, d, dm], b_o broadcast over [b, n].
// CHECK: %[[WO3:.*]] = tensor.expand_shape %[[WO]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
// CHECK: %[[YE:.*]] = tensor.empty() : tensor<1x16x16xf32>
// CHECK: %[[YINIT:.*]] = linalg.generic {indexing_maps = [#[[$BIAS3_MAP]], #[[$ID3_MAP]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[BO]] : tensor<16xf32>) outs(%[[YE]] : tensor<1x16x16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$A_MAP]], #[[$WO_MAP]], #[[$Y_MAP]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[WO3]] : tensor<1x2x16x8xf32>, tensor<2x8x16xf32>) outs(%[[YINIT]] : tensor<1x16x16xf32>) attrs = {linformer.root}
// CHECK: return %[[Y]] : tensor<1x16x16xf32>
func.func @learned_none_biases(%x: tensor<1x16x16xf32>, %wq: tensor<16x16xf32>,
    %wk: tensor<16x16xf32>, %wv: tensor<16x16xf32>, %wo: tensor<16x16xf32>,
    %bq: tensor<16xf32>, %bk: tensor<16xf32>, %bv: tensor<16xf32>,
    %bo: tensor<16xf32>, %e: tensor<2x4x16xf32>, %f: tensor<2x4x16xf32>)
    -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%wq, %wk, %wv, %wo)
         biases(%bq, %bk, %bv, %bo) heads(2) k(4)
         projection<learned> e(%e) f(%f) sharing<none>
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>,
            tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
            tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Without biases every init is a zero fill; no broadcast generic is built.
// CHECK-LABEL: func.func @no_biases(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x16xf32>, %[[E:[a-z0-9]+]]: tensor<2x4x16xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[QE:.*]] = tensor.empty() : tensor<1x2x16x8xf32>
// CHECK: %[[QINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[QE]] : tensor<1x2x16x8xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<1x16x16xf32>, tensor<16x2x8xf32>) outs(%[[QINIT]] : tensor<1x2x16x8xf32>) attrs = {linformer.root}
// CHECK: %[[YE:.*]] = tensor.empty() : tensor<1x16x16xf32>
// CHECK: %[[YINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[YE]] : tensor<1x16x16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs(%[[YINIT]] : tensor<1x16x16xf32>) attrs = {linformer.root}
// CHECK: return %[[Y]]
func.func @no_biases(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>,
    %e: tensor<2x4x16xf32>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) f(%e) sharing<none>
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<2x4x16xf32>,
            tensor<2x4x16xf32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// K/V sharing (one E = F per head): V is projected with e too.
// CHECK-LABEL: func.func @learned_kv_sharing(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x16xf32>, %[[E:[a-z0-9]+]]: tensor<2x4x16xf32>)
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: %[[V:.*]] = linalg.generic
// CHECK: linformer.project<learned> %[[K]], %[[E]] : (tensor<1x2x16x8xf32>, tensor<2x4x16xf32>) -> tensor<1x2x4x8xf32>
// CHECK: linformer.project<learned> %[[V]], %[[E]] : (tensor<1x2x16x8xf32>, tensor<2x4x16xf32>) -> tensor<1x2x4x8xf32>
func.func @learned_kv_sharing(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>,
    %e: tensor<2x4x16xf32>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) sharing<kv>
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<2x4x16xf32>)
         -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Headwise sharing: one rank-2 E (and F) for all heads, passed through as is.
// CHECK-LABEL: func.func @learned_headwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x16xf32>, %[[E:[a-z0-9]+]]: tensor<4x16xf32>, %[[F:[a-z0-9]+]]: tensor<4x16xf32>)
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: %[[V:.*]] = linalg.generic
// CHECK: linformer.project<learned> %[[K]], %[[E]] : (tensor<1x2x16x8xf32>, tensor<4x16xf32>) -> tensor<1x2x4x8xf32>
// CHECK: linformer.project<learned> %[[V]], %[[F]] : (tensor<1x2x16x8xf32>, tensor<4x16xf32>) -> tensor<1x2x4x8xf32>
func.func @learned_headwise(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>,
    %e: tensor<4x16xf32>, %f: tensor<4x16xf32>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) f(%f) sharing<headwise>
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<4x16xf32>,
            tensor<4x16xf32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Learned with padding: the projections get the lengths (they zero padded
// tokens), but the core gets no key mask.
// CHECK-LABEL: func.func @learned_lengths_no_key_mask(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x16xf32>, %[[E:[a-z0-9]+]]: tensor<2x4x16xf32>, %[[LEN:[a-z0-9]+]]: tensor<1xi32> {linformer.lengths})
// CHECK: linformer.project<learned> %{{.*}}, %[[E]] lengths(%[[LEN]])
// CHECK: linformer.project<learned> %{{.*}}, %[[E]] lengths(%[[LEN]])
// CHECK-NOT: xi8>
// CHECK: linformer.attention_core %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} scale(0.35355339059327373) outs(%{{.*}}) {linformer.root} : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
func.func @learned_lengths_no_key_mask(%x: tensor<1x16x16xf32>,
    %w: tensor<16x16xf32>, %e: tensor<2x4x16xf32>, %len: tensor<1xi32>)
    -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) sharing<kv> lengths(%len)
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<2x4x16xf32>,
            tensor<1xi32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Mean pooling with lengths: valid tokens (t < len) as bytes, counted per
// window of 4, and a slot is valid when its count is > 0.
// CHECK-DAG: #[[$LEN_MAP:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID2_MAP:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$WIN_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$CNT_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @mean_pool_lengths(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x16xf32>, %[[LEN:[a-z0-9]+]]: tensor<1xi32> {linformer.lengths})
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: %[[V:.*]] = linalg.generic
// CHECK: %[[KP:.*]] = linformer.project<mean_pool> %[[K]] lengths(%[[LEN]]) : (tensor<1x2x16x8xf32>, tensor<1xi32>) -> tensor<1x2x4x8xf32>
// CHECK: %[[VP:.*]] = linformer.project<mean_pool> %[[V]] lengths(%[[LEN]]) : (tensor<1x2x16x8xf32>, tensor<1xi32>) -> tensor<1x2x4x8xf32>
// valid[b, t] = t < lengths[b], a (tiny) kernel of its own: its consumers
// read it through a reshape, which fusion cannot cross.
// CHECK: %[[TE:.*]] = tensor.empty() : tensor<1x16xi8>
// CHECK: %[[TOK:.*]] = linalg.generic {indexing_maps = [#[[$LEN_MAP]], #[[$ID2_MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[LEN]] : tensor<1xi32>) outs(%[[TE]] : tensor<1x16xi8>) attrs = {linformer.root} {
// CHECK: ^bb0(%[[L:.*]]: i32, %{{.*}}: i8):
// CHECK: %[[T:.*]] = linalg.index 1 : index
// CHECK: %[[TI:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[TI]], %[[L]] : i32
// CHECK: %[[B:.*]] = arith.extui %[[LT]] : i1 to i8
// CHECK: linalg.yield %[[B]] : i8
// count[b, j] = sum_r valid[b, j, r]
// CHECK: %[[WIN:.*]] = tensor.expand_shape %[[TOK]] {{\[\[}}0], [1, 2]] output_shape [1, 4, 4] : tensor<1x16xi8> into tensor<1x4x4xi8>
// CHECK: %[[CE:.*]] = tensor.empty() : tensor<1x4xf32>
// CHECK: %[[CINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[CE]] : tensor<1x4xf32>)
// CHECK: %[[CNT:.*]] = linalg.generic {indexing_maps = [#[[$WIN_MAP]], #[[$CNT_MAP]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[WIN]] : tensor<1x4x4xi8>) outs(%[[CINIT]] : tensor<1x4xf32>) {
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// key_mask[b, j] = count[b, j] > 0
// CHECK: %[[ME:.*]] = tensor.empty() : tensor<1x4xi8>
// CHECK: %[[MASK:.*]] = linalg.generic {indexing_maps = [#[[$ID2_MAP]], #[[$ID2_MAP]]], iterator_types = ["parallel", "parallel"]} ins(%[[CNT]] : tensor<1x4xf32>) outs(%[[ME]] : tensor<1x4xi8>) {
// CHECK: arith.cmpf ogt, %{{.*}}, %[[ZERO]] : f32
// CHECK: arith.extui %{{.*}} : i1 to i8
// The core's slots are windows of 4 tokens, valid while their first one
// is: its scores and weighted sum may stop at ceil(length / 4) slots.
// CHECK: %[[A:.*]] = linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(0.35355339059327373) key_mask(%[[MASK]]) outs(%{{.*}}) {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>} : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x4xi8>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<1x2x16x8xf32>, tensor<2x8x16xf32>)
func.func @mean_pool_lengths(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>,
    %len: tensor<1xi32>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi32>)
         -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Conv with an i1 mask and key/value sharing (one [d, w] kernel): the mask
// becomes bytes first, then the same window count and slot test.
// CHECK-LABEL: func.func @conv_mask_key_value(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x16x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x16xf32>, %[[E:[a-z0-9]+]]: tensor<8x4xf32>, %[[M:[a-z0-9]+]]: tensor<1x16xi1>)
// CHECK: %[[KP:.*]] = linformer.project<conv> %{{.*}}, %[[E]] mask(%[[M]]) : (tensor<1x2x16x8xf32>, tensor<8x4xf32>, tensor<1x16xi1>) -> tensor<1x2x4x8xf32>
// CHECK: %[[VP:.*]] = linformer.project<conv> %{{.*}}, %[[E]] mask(%[[M]]) : (tensor<1x2x16x8xf32>, tensor<8x4xf32>, tensor<1x16xi1>) -> tensor<1x2x4x8xf32>
// CHECK: %[[TOK:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<1x16xi1>) outs(%{{.*}} : tensor<1x16xi8>)
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: %[[WIN:.*]] = tensor.expand_shape %[[TOK]] {{.*}} : tensor<1x16xi8> into tensor<1x4x4xi8>
// CHECK: %[[CNT:.*]] = linalg.generic {{.*}} ins(%[[WIN]] : tensor<1x4x4xi8>) outs(%{{.*}} : tensor<1x4xf32>)
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} ins(%[[CNT]] : tensor<1x4xf32>) outs(%{{.*}} : tensor<1x4xi8>)
// CHECK: linformer.attention_core %{{.*}}, %[[KP]], %[[VP]] scale(0.35355339059327373) key_mask(%[[MASK]]) outs(%{{.*}}) {linformer.root}
func.func @conv_mask_key_value(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>,
    %e: tensor<8x4xf32>, %m: tensor<1x16xi1>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<conv> e(%e) sharing<key_value> mask(%m)
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<8x4xf32>,
            tensor<1x16xi1>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Unpadded pooling: every window holds real tokens, so no key mask.
// CHECK-LABEL: func.func @max_pool_unpadded(
// CHECK: %[[KP:.*]] = linformer.project<max_pool> %{{.*}} : (tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK: %[[VP:.*]] = linformer.project<max_pool> %{{.*}} : (tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NOT: xi8>
// CHECK: linformer.attention_core %{{[^ ]*}}, %[[KP]], %[[VP]] scale(0.35355339059327373) outs(%{{.*}}) {linformer.root} :
func.func @max_pool_unpadded(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>)
    -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<max_pool> sharing<none>
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// A different head count changes the scale: d = 16 / 4 = 4, 1 / sqrt(4).
// CHECK-LABEL: func.func @four_heads_scale(
// CHECK: linformer.project<mean_pool> %{{.*}} : (tensor<1x4x16x4xf32>) -> tensor<1x4x8x4xf32>
// CHECK: linformer.attention_core {{.*}} scale(5.000000e-01) outs(%{{.*}}) {linformer.root} : (tensor<1x4x16x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x16x4xf32>) -> tensor<1x4x16x4xf32>
func.func @four_heads_scale(%x: tensor<1x16x16xf32>, %w: tensor<16x16xf32>)
    -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(8)
         projection<mean_pool> sharing<none>
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Reassociated with lengths from an argument: E X, whose E' is zero past
// each sequence's length, is marked with its token and batch loops
// (b, j, t, m) so that register tiling stops it at the length; the
// argument is marked linformer.lengths. With a mask there is no bound.
// E' itself is marked linformer.unread_padding = [batch dim, token dim]: E X
// is its only reader, so the CPU may leave its padded columns unwritten.
// CHECK-LABEL: func.func @reassociated_lengths_bound(
// CHECK-SAME: tensor<1xi32> {linformer.lengths}
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<1x16xi8>) outs(%{{.*}} : tensor<1x4x16xf32>) attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}} attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>}
func.func @reassociated_lengths_bound(%x: tensor<1x16x16xf32>,
    %w: tensor<16x16xf32>, %e: tensor<4x16xf32>, %len: tensor<1xi32>)
    -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) sharing<layerwise> lengths(%len)
         {reassociate = true}
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<4x16xf32>,
            tensor<1xi32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// Reassociated mean pooling with lengths from an argument: the window sums
// of X (loops (b, j, r, m), token = j * 4 + r) are marked so that they stop
// at the length; the body masks padded tokens itself (masked), so a tile
// of windows may stop at its first window's real tokens.
// CHECK-LABEL: func.func @reassociated_mean_pool_bound(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x4x4x16xf32>, tensor<1x4x4xi8>) outs(%{{.*}} : tensor<1x4x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, part = 1, per_part = 4, masked = true>}
func.func @reassociated_mean_pool_bound(%x: tensor<1x16x16xf32>,
    %w: tensor<16x16xf32>, %len: tensor<1xi32>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<mean_pool> sharing<headwise> lengths(%len)
         {reassociate = true}
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi32>)
         -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @reassociated_mask_no_bound(
// CHECK-NOT: linformer.token_bound
// CHECK-NOT: linformer.unread_padding
// CHECK: return
func.func @reassociated_mask_no_bound(%x: tensor<1x16x16xf32>,
    %w: tensor<16x16xf32>, %e: tensor<4x16xf32>, %mask: tensor<1x16xi8>)
    -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) sharing<layerwise> mask(%mask)
         {reassociate = true}
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<4x16xf32>,
            tensor<1x16xi8>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}

// -----

// With biases, E's row sums (what the bias of K and V is scaled by) read
// E' too. They stop at the lengths as well, in steps that may cover
// tokens past them (vectors along the tokens), which their body selects
// away with the valid tokens: a masked bound. So E' is still marked.
// CHECK-LABEL: func.func @reassociated_lengths_bias(
// CHECK: %[[VALID:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1xi32>) outs(%{{.*}} : tensor<1x16xi8>)
// CHECK: %[[EP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x16xf32>) attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>} {
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[EP]], %[[VALID]] : tensor<1x4x16xf32>, tensor<1x16xi8>) outs(%{{.*}} : tensor<1x4xf32>) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true>} {
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[V:.*]]: i8, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[BIT:.*]] = arith.cmpi ne, %[[V]]
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[BIT]], %[[E]], %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[SEL]]
func.func @reassociated_lengths_bias(%x: tensor<1x16x16xf32>,
    %w: tensor<16x16xf32>, %bias: tensor<16xf32>, %e: tensor<4x16xf32>,
    %len: tensor<1xi32>) -> tensor<1x16x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w)
         biases(%bias, %bias, %bias, %bias) heads(2) k(4)
         projection<learned> e(%e) sharing<layerwise> lengths(%len)
         {reassociate = true}
         : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>,
            tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x16xf32>,
            tensor<1xi32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}
