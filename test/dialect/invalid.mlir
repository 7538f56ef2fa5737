// RUN: linformer-opt %s --split-input-file --verify-diagnostics

// One case per verifier rule of the Linformer ops (the constraint numbers
// C*, P*, A* are those in LinformerOps.cpp) and per parse error of the
// sharing attribute. Each expected message includes the shapes or types it
// reports, so a message that loses them fails here.

//===----------------------------------------------------------------------===//
// linformer.attention
//===----------------------------------------------------------------------===//

// C1: the input is [batch, n, d_model].
func.func @attention_input_rank(%x: tensor<2x64xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{'linformer.attention' op operand 'input' must have rank 3 ([batch, n, d_model]), but has shape [2, 64]}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none>
         : (tensor<2x64xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64xf32>
  return
}

// -----

// C2: heads divide d_model.
func.func @attention_heads_divide_model_dim(%x: tensor<2x64x30xf32>, %w: tensor<30x30xf32>) {
  // expected-error @+1 {{d_model = 30 is not divisible by heads = 4 (each head takes d_model / heads channels)}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none>
         : (tensor<2x64x30xf32>, tensor<30x30xf32>, tensor<30x30xf32>,
            tensor<30x30xf32>, tensor<30x30xf32>) -> tensor<2x64x30xf32>
  return
}

// -----

// C3: the result has the input's type.
func.func @attention_result_type(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{result type 'tensor<2x64x16xf32>' must equal the input type 'tensor<2x64x32xf32>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x16xf32>
  return
}

// -----

// C4: the four projections are [d_model, d_model].
func.func @attention_weight_shape(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %wk: tensor<32x16xf32>) {
  // expected-error @+1 {{operand 'wk' must have shape [32, 32] ([d_model, d_model], applied as x * W), but has shape [32, 16]}}
  %y = linformer.attention %x weights(%w, %wk, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x16xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C5: biases come as a set of four. The custom syntax cannot say two, the
// generic form can.
func.func @attention_bias_count(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{takes all four biases (bq, bk, bv, bo) or none, but has 2}}
  %y = "linformer.attention"(%x, %w, %w, %w, %w, %b, %b) <{
         heads = 4 : i64, k = 16 : i64,
         operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>,
         projection = #linformer.projection<mean_pool>,
         sharing = #linformer.sharing<none>}>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
            tensor<32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C5: each bias is [d_model].
func.func @attention_bias_shape(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>, %bv: tensor<16xf32>) {
  // expected-error @+1 {{operand 'bv' must have shape [32] ([d_model]), but has shape [16]}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %bv, %b)
         heads(4) k(16) projection<mean_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
            tensor<32xf32>, tensor<16xf32>, tensor<32xf32>)
         -> tensor<2x64x32xf32>
  return
}

// -----

// C6: k does not exceed n.
func.func @attention_k_exceeds_n(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{projected length k = 128 exceeds the sequence length n = 64 (the projection must shorten the sequence)}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(128)
         projection<mean_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C7: pooling and conv windows tile n.
func.func @attention_window_divides_n(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{sequence length n = 64 is not divisible by the projected length k = 24 ('max_pool' uses windows of n / k tokens)}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(24)
         projection<max_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C8: pooling has no parameters.
func.func @attention_pool_takes_no_e(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) {
  // expected-error @+1 {{projection 'mean_pool' has no parameters, so it takes no 'e' or 'f'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> e(%e) sharing<key_value>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
         -> tensor<2x64x32xf32>
  return
}

// -----

// C8: learned and conv need `e`.
func.func @attention_conv_needs_e(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{projection 'conv' needs operand 'e' (the projection of K)}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<conv> sharing<key_value>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C8: with `kv` sharing, `e` projects both K and V and `f` is absent.
func.func @attention_kv_sharing_takes_no_f(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) {
  // expected-error @+1 {{sharing has 'kv' (K and V share one projection), so operand 'f' must be absent: 'e' projects both}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) f(%e) sharing<layerwise>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
            tensor<16x64xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C8: without `kv` sharing, V needs its own `f`.
func.func @attention_needs_f(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) {
  // expected-error @+1 {{projection 'learned' needs operand 'f' (the projection of V) unless sharing has 'kv'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<heads, layers>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
         -> tensor<2x64x32xf32>
  return
}

// -----

// C9: shared by the heads, a learned E is [k, n], not [heads, k, n].
func.func @attention_learned_shared_e_shape(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<4x16x64xf32>) {
  // expected-error @+1 {{operand 'e' must have shape [16, 64] ([k, n]: one learned matrix shared by all heads), but has shape [4, 16, 64]}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<key_value>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>)
         -> tensor<2x64x32xf32>
  return
}

// -----

// C9: per head, a conv F is [heads, head_dim, n / k]; `f` is checked too.
func.func @attention_conv_f_shape(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<4x8x4xf32>, %f: tensor<4x8x2xf32>) {
  // expected-error @+1 {{operand 'f' must have shape [4, 8, 4] ([heads, head_dim, n / k]: one depthwise kernel per head), but has shape [4, 8, 2]}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<conv> e(%e) f(%f) sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x8x4xf32>,
            tensor<4x8x2xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C10: one floating-point element type throughout.
func.func @attention_element_type(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %wv: tensor<32x32xf16>) {
  // expected-error @+1 {{operand 'wv' has element type 'f16', but the element type of 'input' is 'f32' (all floating-point operands must agree)}}
  %y = linformer.attention %x weights(%w, %w, %wv, %w) heads(4) k(16)
         projection<mean_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf16>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// C11: padding is given one way.
func.func @attention_lengths_and_mask(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %len: tensor<2xi32>, %mask: tensor<2x64xi1>) {
  // expected-error @+1 {{takes either 'lengths' or 'mask' to describe padding, not both}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> lengths(%len) mask(%mask)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi32>,
            tensor<2x64xi1>) -> tensor<2x64x32xf32>
  return
}

// -----

// C11: one length per sequence of the batch.
func.func @attention_lengths_shape(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %len: tensor<3xi64>) {
  // expected-error @+1 {{operand 'lengths' must have shape [2] (one length per sequence of the batch), but has shape [3]}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<3xi64>)
         -> tensor<2x64x32xf32>
  return
}

// -----

// C11: one mask flag per token.
func.func @attention_mask_shape(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %mask: tensor<2x16xi1>) {
  // expected-error @+1 {{operand 'mask' must have shape [2, 64] ([batch, n]: one flag per token, true = real token), but has shape [2, 16]}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> mask(%mask)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2x16xi1>)
         -> tensor<2x64x32xf32>
  return
}

// -----

// heads and k are positive (checked by the attribute constraint).
func.func @attention_zero_heads(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{attribute 'heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(0) k(16)
         projection<mean_pool> sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Operand types are constrained by ODS: lengths are i32 or i64.
func.func @attention_lengths_element_type(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %len: tensor<2xf32>) {
  // expected-error @+1 {{operand #5 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xf32>)
         -> tensor<2x64x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// linformer.project
//===----------------------------------------------------------------------===//

// -----

// P1: the input is [batch, heads, n, head_dim].
func.func @project_input_rank(%k: tensor<2x64x8xf32>) {
  // expected-error @+1 {{'linformer.project' op operand 'input' must have rank 4 ([batch, heads, n, head_dim]), but has shape [2, 64, 8]}}
  %p = linformer.project<mean_pool> %k
         : (tensor<2x64x8xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P1: only the sequence axis changes.
func.func @project_result_shape(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+1 {{result must have shape [2, 4, 16, 8] ([batch, heads, k, head_dim]: only the sequence axis changes), but has shape [2, 4, 16, 4]}}
  %p = linformer.project<mean_pool> %k
         : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x4xf32>
  return
}

// -----

// P1: the element type is kept.
func.func @project_result_element_type(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+1 {{result element type 'f16' must equal the input's 'f32'}}
  %p = linformer.project<max_pool> %k
         : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf16>
  return
}

// -----

// P2: k must be positive. (This used to divide by zero in the verifier.)
func.func @project_zero_k(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+1 {{projected length k = 0 must be positive}}
  %p = linformer.project<mean_pool> %k
         : (tensor<2x4x64x8xf32>) -> tensor<2x4x0x8xf32>
  return
}

// -----

// P2: k does not exceed n.
func.func @project_k_exceeds_n(%k: tensor<2x4x64x8xf32>, %e: tensor<4x128x64xf32>) {
  // expected-error @+1 {{projected length k = 128 exceeds the sequence length n = 64}}
  %p = linformer.project<learned> %k, %e
         : (tensor<2x4x64x8xf32>, tensor<4x128x64xf32>) -> tensor<2x4x128x8xf32>
  return
}

// -----

// P2: pooling and conv windows tile n.
func.func @project_window_divides_n(%k: tensor<2x4x64x8xf32>, %w: tensor<4x8x2xf32>) {
  // expected-error @+1 {{sequence length n = 64 is not divisible by the projected length k = 24 ('conv' uses windows of n / k tokens)}}
  %p = linformer.project<conv> %k, %w
         : (tensor<2x4x64x8xf32>, tensor<4x8x2xf32>) -> tensor<2x4x24x8xf32>
  return
}

// -----

// P3: pooling takes no weight.
func.func @project_pool_takes_no_weight(%k: tensor<2x4x64x8xf32>, %e: tensor<16x64xf32>) {
  // expected-error @+1 {{projection 'mean_pool' has no parameters, so it takes no weight}}
  %p = linformer.project<mean_pool> %k, %e
         : (tensor<2x4x64x8xf32>, tensor<16x64xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P3: learned and conv need one.
func.func @project_learned_needs_weight(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+1 {{projection 'learned' needs a weight operand}}
  %p = linformer.project<learned> %k
         : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P3: a learned weight of rank 3 is per head: [heads, k, n].
func.func @project_learned_weight_shape(%k: tensor<2x4x64x8xf32>, %e: tensor<2x16x64xf32>) {
  // expected-error @+1 {{operand 'weight' must have shape [4, 16, 64] ([heads, k, n]: one learned matrix per head), but has shape [2, 16, 64]}}
  %p = linformer.project<learned> %k, %e
         : (tensor<2x4x64x8xf32>, tensor<2x16x64xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P3: a conv weight of rank 2 is shared by the heads: [head_dim, n / k].
func.func @project_conv_shared_weight_shape(%k: tensor<2x4x64x8xf32>, %w: tensor<8x2xf32>) {
  // expected-error @+1 {{operand 'weight' must have shape [8, 4] ([head_dim, n / k]: one depthwise kernel shared by all heads), but has shape [8, 2]}}
  %p = linformer.project<conv> %k, %w
         : (tensor<2x4x64x8xf32>, tensor<8x2xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P3: the weight has the input's element type.
func.func @project_weight_element_type(%k: tensor<2x4x64x8xf32>, %e: tensor<16x64xbf16>) {
  // expected-error @+1 {{operand 'weight' has element type 'bf16', but the element type of 'input' is 'f32'}}
  %p = linformer.project<learned> %k, %e
         : (tensor<2x4x64x8xf32>, tensor<16x64xbf16>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P4: padding is given one way.
func.func @project_lengths_and_mask(%k: tensor<2x4x64x8xf32>, %len: tensor<2xi32>, %mask: tensor<2x64xi1>) {
  // expected-error @+1 {{takes either 'lengths' or 'mask' to describe padding, not both}}
  %p = linformer.project<mean_pool> %k lengths(%len) mask(%mask)
         : (tensor<2x4x64x8xf32>, tensor<2xi32>, tensor<2x64xi1>)
         -> tensor<2x4x16x8xf32>
  return
}

// -----

// P4: lengths is one-dimensional.
func.func @project_lengths_rank(%k: tensor<2x4x64x8xf32>, %len: tensor<2x1xi32>) {
  // expected-error @+1 {{operand 'lengths' must have shape [2] (one length per sequence of the batch), but has shape [2, 1]}}
  %p = linformer.project<max_pool> %k lengths(%len)
         : (tensor<2x4x64x8xf32>, tensor<2x1xi32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

// P4: the mask covers the input's n tokens, not the k projected ones.
func.func @project_mask_shape(%k: tensor<2x4x64x8xf32>, %mask: tensor<2x16xi1>) {
  // expected-error @+1 {{operand 'mask' must have shape [2, 64] ([batch, n]: one flag per token, true = real token), but has shape [2, 16]}}
  %p = linformer.project<max_pool> %k mask(%mask)
         : (tensor<2x4x64x8xf32>, tensor<2x16xi1>) -> tensor<2x4x16x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// linformer.attention_core
//===----------------------------------------------------------------------===//

// -----

// A1: q, key and value are rank 4.
func.func @core_key_rank(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x16x8xf32>, %vp: tensor<2x4x16x8xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{'linformer.attention_core' op operand 'key' must have rank 4 ([batch, heads, length, head_dim]), but has shape [2, 16, 8]}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

// -----

// A1: key shares batch, heads and head_dim with q.
func.func @core_key_shape(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x4xf32>, %vp: tensor<2x4x16x8xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{operand 'key' must have shape [2, 4, 16, 8] ([batch, heads, k, head_dim]: batch, heads and head_dim of 'q'), but has shape [2, 4, 16, 4]}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x4xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

// -----

// A1: value shares batch and heads with q, and k with key.
func.func @core_value_shape(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x8x8xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{operand 'value' must have shape [2, 4, 16, 8] ([batch, heads, k, dv]: batch, heads and k of 'key'), but has shape [2, 4, 8, 8]}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

// -----

// A1: the result is [batch, heads, n, dv].
func.func @core_result_shape(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x12xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{operand 'init' must have shape [2, 4, 64, 12] ([batch, heads, n, dv]: the result's), but has shape [2, 4, 64, 8]}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x12xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

// -----

// A2: one floating-point element type throughout.
func.func @core_element_type(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf16>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{operand 'value' has element type 'f16', but the element type of 'q' is 'f32'}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf16>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

// -----

// A2: the result too.
func.func @core_result_element_type(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xbf16>
  // expected-error @+1 {{operand 'init' has element type 'bf16', but the element type of 'q' is 'f32'}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xbf16>)
         -> tensor<2x4x64x8xbf16>
  return
}

// -----

// A3: the key mask has one flag per projected slot.
func.func @core_key_mask_shape(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>, %m: tensor<2x64xi1>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{operand 'key_mask' must have shape [2, 16] ([batch, k]: one flag per projected slot), but has shape [2, 64]}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
            tensor<2x64xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return
}

// -----

// A4: the scale is non-zero.
func.func @core_zero_scale(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{scale must be finite and non-zero, but is 0}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.0)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

// -----

// A4: and finite (0x7FF0000000000000 is +inf as an f64).
func.func @core_infinite_scale(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>) {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  // expected-error @+1 {{scale must be finite and non-zero, but is INF}}
  %o = linformer.attention_core %q, %kp, %vp scale(0x7FF0000000000000)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// #linformer.sharing parse errors
//===----------------------------------------------------------------------===//

// -----

func.func @sharing_unknown_word(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         // expected-error @+1 {{unknown sharing 'all': expected one preset (none, headwise, key_value, layerwise) or a list of flags (heads, kv, layers)}}
         projection<mean_pool> sharing<all>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @sharing_repeated_flag(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         // expected-error @+1 {{sharing flag 'heads' repeated}}
         projection<mean_pool> sharing<heads, kv, heads>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @sharing_preset_then_flag(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         // expected-error @+1 {{a sharing preset ('headwise') cannot be combined with other flags}}
         projection<mean_pool> sharing<headwise, layers>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// A preset after a flag is a known preset, not an unknown word.
func.func @sharing_flag_then_preset(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         // expected-error @+1 {{a sharing preset ('none') cannot be combined with other flags}}
         projection<mean_pool> sharing<kv, none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// In the generic form the attribute is spelled out in full.
func.func @sharing_generic_form(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = "linformer.attention"(%x, %w, %w, %w, %w) <{
         heads = 4 : i64, k = 16 : i64,
         operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>,
         projection = #linformer.projection<mean_pool>,
         // expected-error @+1 {{sharing flag 'layers' repeated}}
         sharing = #linformer.sharing<layers, layers>}>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// A0: the attention core is on tensors or on buffers, not a mix.
func.func @core_mixed_forms(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>,
    %out: memref<2x4x64x8xf32>) {
  // expected-error @+1 {{operands must be all tensors or all memrefs, but operand #0 is 'tensor<2x4x64x8xf32>' and 'init' is 'memref<2x4x64x8xf32>'}}
  linformer.attention_core %q, %kp, %kp scale(0.125) outs(%out)
    : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
       memref<2x4x64x8xf32>) -> ()
  return
}

// -----

// On tensors the core returns its result (destination-passing style).
func.func @core_tensor_without_result(%q: tensor<2x4x64x8xf32>,
    %kp: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{on tensors must have one result, of the type of 'init'}}
  linformer.attention_core %q, %kp, %kp scale(0.125) outs(%q)
    : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
       tensor<2x4x64x8xf32>) -> ()
  return
}

// -----

// On buffers the shapes are checked as on tensors.
func.func @core_buffer_shape(%q: memref<2x4x64x8xbf16>,
    %kp: memref<2x4x16x8xbf16>, %out: memref<2x4x32x8xbf16>) {
  // expected-error @+1 {{operand 'init' must have shape [2, 4, 64, 8] ([batch, heads, n, dv]: the result's), but has shape [2, 4, 32, 8]}}
  linformer.attention_core %q, %kp, %kp scale(0.125) outs(%out)
    : (memref<2x4x64x8xbf16>, memref<2x4x16x8xbf16>, memref<2x4x16x8xbf16>,
       memref<2x4x32x8xbf16>) -> ()
  return
}
