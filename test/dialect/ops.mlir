// RUN: linformer-opt %s --split-input-file | linformer-opt --split-input-file | FileCheck %s
// RUN: linformer-opt %s --split-input-file --mlir-print-op-generic | linformer-opt --split-input-file | FileCheck %s

// Round trip of every Linformer op: each projection kind, each sharing
// preset and a few explicit flag sets, optional biases, padding given as
// lengths (i32, i64) or as a mask, the attention core's key mask, f16 and
// bf16, and a dynamic batch. The second RUN line goes through the generic
// form, so the custom printer and parser must agree with the properties.
// Shapes: batch 2, n = 64, d_model = 32, heads = 4 (head_dim 8), k = 16,
// so a pooling or conv window has n / k = 4 tokens.

//===----------------------------------------------------------------------===//
// linformer.attention: learned projection, every sharing
//===----------------------------------------------------------------------===//

// Distinct weights and biases, so the operand order is checked as well.
// CHECK-LABEL: func.func @attention_learned_none_biases(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[WQ:[a-z0-9]+]]: tensor<32x32xf32>, %[[WK:[a-z0-9]+]]: tensor<32x32xf32>, %[[WV:[a-z0-9]+]]: tensor<32x32xf32>, %[[WO:[a-z0-9]+]]: tensor<32x32xf32>,
// CHECK-SAME: %[[BQ:[a-z0-9]+]]: tensor<32xf32>, %[[BK:[a-z0-9]+]]: tensor<32xf32>, %[[BV:[a-z0-9]+]]: tensor<32xf32>, %[[BO:[a-z0-9]+]]: tensor<32xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>, %[[F:[a-z0-9]+]]: tensor<4x16x64xf32>)
// CHECK: %[[Y:.*]] = linformer.attention %[[X]] weights(%[[WQ]], %[[WK]], %[[WV]], %[[WO]]) biases(%[[BQ]], %[[BK]], %[[BV]], %[[BO]]) heads(4) k(16) projection<learned> e(%[[E]]) f(%[[F]]) sharing<none> :
// CHECK-SAME: (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
// CHECK: return %[[Y]]
func.func @attention_learned_none_biases(
    %x: tensor<2x64x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>,
    %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>, %bq: tensor<32xf32>,
    %bk: tensor<32xf32>, %bv: tensor<32xf32>, %bo: tensor<32xf32>,
    %e: tensor<4x16x64xf32>, %f: tensor<4x16x64xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%wq, %wk, %wv, %wo)
         biases(%bq, %bk, %bv, %bo) heads(4) k(16)
         projection<learned> e(%e) f(%f) sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
            tensor<32xf32>, tensor<32xf32>, tensor<32xf32>,
            tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_learned_none(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>, %[[F:[a-z0-9]+]]: tensor<4x16x64xf32>)
// CHECK: %[[Y:.*]] = linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) f(%[[F]]) sharing<none> :
// CHECK-NOT: biases
// CHECK: return %[[Y]]
func.func @attention_learned_none(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<4x16x64xf32>, %f: tensor<4x16x64xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) f(%f) sharing<none>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
            tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// Headwise: one E and one F, each [k, n], shared by the heads.
// CHECK-LABEL: func.func @attention_learned_headwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[E:[a-z0-9]+]]: tensor<16x64xf32>, %[[F:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) biases(%[[B]], %[[B]], %[[B]], %[[B]]) heads(4) k(16) projection<learned> e(%[[E]]) f(%[[F]]) sharing<headwise> :
// CHECK-SAME: tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x64x32xf32>
func.func @attention_learned_headwise(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %b: tensor<32xf32>, %e: tensor<16x64xf32>, %f: tensor<16x64xf32>)
    -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b, %b)
         heads(4) k(16) projection<learned> e(%e) f(%f) sharing<headwise>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
            tensor<32xf32>, tensor<32xf32>, tensor<32xf32>,
            tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// Key-value sharing has `kv`: `e` projects both K and V, there is no `f`.
// CHECK-LABEL: func.func @attention_learned_key_value(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) sharing<key_value> :
// CHECK-SAME: tensor<16x64xf32>) -> tensor<2x64x32xf32>
func.func @attention_learned_key_value(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<key_value>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_learned_layerwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK: %[[Y0:.*]] = linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) sharing<layerwise> :
// CHECK: %[[Y1:.*]] = linformer.attention %[[Y0]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) sharing<layerwise> :
// CHECK: return %[[Y1]]
func.func @attention_learned_layerwise(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// Explicit flags that match no preset print as flags. `kv` alone: one E = F
// per head, so `e` is [heads, k, n] and there is no `f`.
// CHECK-LABEL: func.func @attention_sharing_kv(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) sharing<kv> :
// CHECK-SAME: tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
func.func @attention_sharing_kv(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<4x16x64xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<kv>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// `heads, layers`: separate E and F, each [k, n], shared by all layers.
// CHECK-LABEL: func.func @attention_sharing_heads_layers(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<16x64xf32>, %[[F:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) f(%[[F]]) sharing<heads, layers> :
func.func @attention_sharing_heads_layers(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<16x64xf32>, %f: tensor<16x64xf32>)
    -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) f(%f) sharing<heads, layers>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
            tensor<16x64xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// `layers` alone: per-head E and F, each [heads, k, n], shared by all layers.
// CHECK-LABEL: func.func @attention_sharing_layers(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>, %[[F:[a-z0-9]+]]: tensor<4x16x64xf32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) f(%[[F]]) sharing<layers> :
func.func @attention_sharing_layers(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<4x16x64xf32>, %f: tensor<4x16x64xf32>)
    -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) f(%f) sharing<layers>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
            tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// Flags that spell a preset print as the preset, whatever their order.
// CHECK-LABEL: func.func @attention_flags_print_as_preset(
// CHECK: linformer.attention {{.*}} sharing<headwise> :
// CHECK: linformer.attention {{.*}} sharing<key_value> :
// CHECK: linformer.attention {{.*}} sharing<layerwise> :
func.func @attention_flags_print_as_preset(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%e) sharing<heads>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>) -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) sharing<kv, heads>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  %y2 = linformer.attention %y1 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) sharing<layers, kv, heads>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  return %y2 : tensor<2x64x32xf32>
}

//===----------------------------------------------------------------------===//
// linformer.attention: pooling (no parameters) and conv
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @attention_mean_pool_lengths_i32(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<mean_pool> sharing<none> lengths(%[[LEN]]) :
// CHECK-SAME: tensor<32x32xf32>, tensor<2xi32>) -> tensor<2x64x32xf32>
func.func @attention_mean_pool_lengths_i32(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %len: tensor<2xi32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi32>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_max_pool_lengths_i64(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi64>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) biases(%[[B]], %[[B]], %[[B]], %[[B]]) heads(4) k(16) projection<max_pool> sharing<layerwise> lengths(%[[LEN]]) :
// CHECK-SAME: tensor<32xf32>, tensor<2xi64>) -> tensor<2x64x32xf32>
func.func @attention_max_pool_lengths_i64(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %b: tensor<32xf32>, %len: tensor<2xi64>)
    -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b, %b)
         heads(4) k(16) projection<max_pool> sharing<layerwise> lengths(%len)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
            tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<2xi64>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_pool_presets(
// CHECK: linformer.attention {{.*}} projection<mean_pool> sharing<headwise> :
// CHECK: linformer.attention {{.*}} projection<max_pool> sharing<key_value> :
// CHECK: linformer.attention {{.*}} projection<max_pool> sharing<none> mask(%{{.*}}) :
// CHECK-SAME: tensor<2x64xi1>) -> tensor<2x64x32xf32>
func.func @attention_pool_presets(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %mask: tensor<2x64xi1>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<mean_pool> sharing<headwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<max_pool> sharing<key_value>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  %y2 = linformer.attention %y1 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<max_pool> sharing<none> mask(%mask)
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<2x64xi1>)
          -> tensor<2x64x32xf32>
  return %y2 : tensor<2x64x32xf32>
}

// -----

// Conv weights are [heads, head_dim, n / k] per head.
// CHECK-LABEL: func.func @attention_conv_none_mask(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<4x8x4xf32>, %[[F:[a-z0-9]+]]: tensor<4x8x4xf32>, %[[M:[a-z0-9]+]]: tensor<2x64xi1>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<conv> e(%[[E]]) f(%[[F]]) sharing<none> mask(%[[M]]) :
// CHECK-SAME: tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<2x64xi1>) -> tensor<2x64x32xf32>
func.func @attention_conv_none_mask(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<4x8x4xf32>, %f: tensor<4x8x4xf32>, %mask: tensor<2x64xi1>)
    -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<conv> e(%e) f(%f) sharing<none> mask(%mask)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x8x4xf32>,
            tensor<4x8x4xf32>, tensor<2x64xi1>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// Shared across heads, a conv weight is [head_dim, n / k].
// CHECK-LABEL: func.func @attention_conv_headwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<8x4xf32>, %[[F:[a-z0-9]+]]: tensor<8x4xf32>)
// CHECK: linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<conv> e(%[[E]]) f(%[[F]]) sharing<headwise> :
func.func @attention_conv_headwise(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<8x4xf32>, %f: tensor<8x4xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<conv> e(%e) f(%f) sharing<headwise>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>,
            tensor<8x4xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_conv_key_value_layerwise(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<8x4xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: %[[Y0:.*]] = linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<conv> e(%[[E]]) sharing<key_value> :
// CHECK: linformer.attention %[[Y0]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<conv> e(%[[E]]) sharing<layerwise> lengths(%[[LEN]]) :
// CHECK-SAME: tensor<8x4xf32>, tensor<2xi32>) -> tensor<2x64x32xf32>
func.func @attention_conv_key_value_layerwise(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<8x4xf32>, %len: tensor<2xi32>)
    -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e) sharing<key_value>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>)
          -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e) sharing<layerwise> lengths(%len)
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>,
             tensor<2xi32>) -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_conv_flags(
// CHECK: linformer.attention {{.*}} projection<conv> e(%{{.*}}) sharing<kv> : {{.*}} tensor<4x8x4xf32>) -> tensor<2x64x32xf32>
// CHECK: linformer.attention {{.*}} projection<conv> e(%{{.*}}) f(%{{.*}}) sharing<heads, layers> : {{.*}} tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<2x64x32xf32>
func.func @attention_conv_flags(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e4: tensor<4x8x4xf32>, %e: tensor<8x4xf32>, %f: tensor<8x4xf32>)
    -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e4) sharing<kv>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x8x4xf32>)
          -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e) f(%f) sharing<heads, layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>,
             tensor<8x4xf32>) -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

//===----------------------------------------------------------------------===//
// linformer.attention: element types and dynamic shapes
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @attention_f16(
// CHECK: linformer.attention {{.*}} projection<learned> e(%{{.*}}) f(%{{.*}}) sharing<none> lengths(%{{.*}}) :
// CHECK-SAME: (tensor<2x64x32xf16>, tensor<32x32xf16>, tensor<32x32xf16>, tensor<32x32xf16>, tensor<32x32xf16>, tensor<32xf16>, tensor<32xf16>, tensor<32xf16>, tensor<32xf16>, tensor<4x16x64xf16>, tensor<4x16x64xf16>, tensor<2xi32>) -> tensor<2x64x32xf16>
func.func @attention_f16(%x: tensor<2x64x32xf16>, %w: tensor<32x32xf16>,
    %b: tensor<32xf16>, %e: tensor<4x16x64xf16>, %len: tensor<2xi32>)
    -> tensor<2x64x32xf16> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b, %b)
         heads(4) k(16) projection<learned> e(%e) f(%e) sharing<none>
         lengths(%len)
         : (tensor<2x64x32xf16>, tensor<32x32xf16>, tensor<32x32xf16>,
            tensor<32x32xf16>, tensor<32x32xf16>, tensor<32xf16>,
            tensor<32xf16>, tensor<32xf16>, tensor<32xf16>,
            tensor<4x16x64xf16>, tensor<4x16x64xf16>, tensor<2xi32>)
         -> tensor<2x64x32xf16>
  return %y : tensor<2x64x32xf16>
}

// -----

// CHECK-LABEL: func.func @attention_bf16(
// CHECK: linformer.attention {{.*}} projection<conv> e(%{{.*}}) sharing<layerwise> mask(%{{.*}}) :
// CHECK-SAME: (tensor<2x64x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<8x4xbf16>, tensor<2x64xi1>) -> tensor<2x64x32xbf16>
func.func @attention_bf16(%x: tensor<2x64x32xbf16>, %w: tensor<32x32xbf16>,
    %e: tensor<8x4xbf16>, %mask: tensor<2x64xi1>) -> tensor<2x64x32xbf16> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<conv> e(%e) sharing<layerwise> mask(%mask)
         : (tensor<2x64x32xbf16>, tensor<32x32xbf16>, tensor<32x32xbf16>,
            tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<8x4xbf16>,
            tensor<2x64xi1>) -> tensor<2x64x32xbf16>
  return %y : tensor<2x64x32xbf16>
}

// -----

// A dynamic batch: lengths and mask follow it.
// CHECK-LABEL: func.func @attention_dynamic_batch(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>, %[[LEN:[a-z0-9]+]]: tensor<?xi32>, %[[M:[a-z0-9]+]]: tensor<?x64xi1>)
// CHECK: %[[Y0:.*]] = linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) sharing<kv> lengths(%[[LEN]]) :
// CHECK-SAME: (tensor<?x64x32xf32>, {{.*}}, tensor<?xi32>) -> tensor<?x64x32xf32>
// CHECK: linformer.attention %[[Y0]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<mean_pool> sharing<none> mask(%[[M]]) :
// CHECK-SAME: (tensor<?x64x32xf32>, {{.*}}, tensor<?x64xi1>) -> tensor<?x64x32xf32>
func.func @attention_dynamic_batch(%x: tensor<?x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<4x16x64xf32>, %len: tensor<?xi32>, %mask: tensor<?x64xi1>)
    -> tensor<?x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) sharing<kv> lengths(%len)
          : (tensor<?x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
             tensor<?xi32>) -> tensor<?x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<mean_pool> sharing<none> mask(%mask)
          : (tensor<?x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<?x64xi1>)
          -> tensor<?x64x32xf32>
  return %y1 : tensor<?x64x32xf32>
}

//===----------------------------------------------------------------------===//
// linformer.project
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @project_learned(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>, %[[ES:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK: %[[P0:.*]] = linformer.project<learned> %[[K]], %[[E]] : (tensor<2x4x64x8xf32>, tensor<4x16x64xf32>) -> tensor<2x4x16x8xf32>
// CHECK: %[[P1:.*]] = linformer.project<learned> %[[K]], %[[ES]] : (tensor<2x4x64x8xf32>, tensor<16x64xf32>) -> tensor<2x4x16x8xf32>
// CHECK: return %[[P0]], %[[P1]]
func.func @project_learned(%k: tensor<2x4x64x8xf32>, %e: tensor<4x16x64xf32>,
    %es: tensor<16x64xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) {
  %p0 = linformer.project<learned> %k, %e
          : (tensor<2x4x64x8xf32>, tensor<4x16x64xf32>) -> tensor<2x4x16x8xf32>
  %p1 = linformer.project<learned> %k, %es
          : (tensor<2x4x64x8xf32>, tensor<16x64xf32>) -> tensor<2x4x16x8xf32>
  return %p0, %p1 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @project_pool(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[LEN32:[a-z0-9]+]]: tensor<2xi32>, %[[LEN64:[a-z0-9]+]]: tensor<2xi64>, %[[M:[a-z0-9]+]]: tensor<2x64xi1>)
// CHECK: linformer.project<mean_pool> %[[K]] : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK: linformer.project<mean_pool> %[[K]] lengths(%[[LEN32]]) : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
// CHECK: linformer.project<max_pool> %[[K]] lengths(%[[LEN64]]) : (tensor<2x4x64x8xf32>, tensor<2xi64>) -> tensor<2x4x16x8xf32>
// CHECK: linformer.project<max_pool> %[[K]] mask(%[[M]]) : (tensor<2x4x64x8xf32>, tensor<2x64xi1>) -> tensor<2x4x16x8xf32>
func.func @project_pool(%k: tensor<2x4x64x8xf32>, %len32: tensor<2xi32>,
    %len64: tensor<2xi64>, %mask: tensor<2x64xi1>)
    -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
        tensor<2x4x16x8xf32>) {
  %p0 = linformer.project<mean_pool> %k
          : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
  %p1 = linformer.project<mean_pool> %k lengths(%len32)
          : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
  %p2 = linformer.project<max_pool> %k lengths(%len64)
          : (tensor<2x4x64x8xf32>, tensor<2xi64>) -> tensor<2x4x16x8xf32>
  %p3 = linformer.project<max_pool> %k mask(%mask)
          : (tensor<2x4x64x8xf32>, tensor<2x64xi1>) -> tensor<2x4x16x8xf32>
  return %p0, %p1, %p2, %p3 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
                              tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @project_conv(
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[W:[a-z0-9]+]]: tensor<4x8x4xf32>, %[[WS:[a-z0-9]+]]: tensor<8x4xf32>, %[[M:[a-z0-9]+]]: tensor<2x64xi1>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: linformer.project<conv> %[[V]], %[[W]] lengths(%[[LEN]]) : (tensor<2x4x64x8xf32>, tensor<4x8x4xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
// CHECK: linformer.project<conv> %[[V]], %[[WS]] mask(%[[M]]) : (tensor<2x4x64x8xf32>, tensor<8x4xf32>, tensor<2x64xi1>) -> tensor<2x4x16x8xf32>
func.func @project_conv(%v: tensor<2x4x64x8xf32>, %w: tensor<4x8x4xf32>,
    %ws: tensor<8x4xf32>, %mask: tensor<2x64xi1>, %len: tensor<2xi32>)
    -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) {
  %p0 = linformer.project<conv> %v, %w lengths(%len)
          : (tensor<2x4x64x8xf32>, tensor<4x8x4xf32>, tensor<2xi32>)
          -> tensor<2x4x16x8xf32>
  %p1 = linformer.project<conv> %v, %ws mask(%mask)
          : (tensor<2x4x64x8xf32>, tensor<8x4xf32>, tensor<2x64xi1>)
          -> tensor<2x4x16x8xf32>
  return %p0, %p1 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @project_low_precision(
// CHECK: linformer.project<learned> %{{.*}}, %{{.*}} : (tensor<2x4x64x8xf16>, tensor<16x64xf16>) -> tensor<2x4x16x8xf16>
// CHECK: linformer.project<max_pool> %{{.*}} : (tensor<2x4x64x8xbf16>) -> tensor<2x4x16x8xbf16>
// CHECK: linformer.project<conv> %{{.*}}, %{{.*}} : (tensor<2x4x64x8xbf16>, tensor<4x8x4xbf16>) -> tensor<2x4x16x8xbf16>
func.func @project_low_precision(%kh: tensor<2x4x64x8xf16>, %eh: tensor<16x64xf16>,
    %kb: tensor<2x4x64x8xbf16>, %wb: tensor<4x8x4xbf16>)
    -> (tensor<2x4x16x8xf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>) {
  %p0 = linformer.project<learned> %kh, %eh
          : (tensor<2x4x64x8xf16>, tensor<16x64xf16>) -> tensor<2x4x16x8xf16>
  %p1 = linformer.project<max_pool> %kb
          : (tensor<2x4x64x8xbf16>) -> tensor<2x4x16x8xbf16>
  %p2 = linformer.project<conv> %kb, %wb
          : (tensor<2x4x64x8xbf16>, tensor<4x8x4xbf16>) -> tensor<2x4x16x8xbf16>
  return %p0, %p1, %p2 : tensor<2x4x16x8xf16>, tensor<2x4x16x8xbf16>,
                         tensor<2x4x16x8xbf16>
}

// -----

// CHECK-LABEL: func.func @project_dynamic_batch(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<?x4x64x8xf32>, %[[E:[a-z0-9]+]]: tensor<4x16x64xf32>, %[[LEN:[a-z0-9]+]]: tensor<?xi64>)
// CHECK: linformer.project<learned> %[[K]], %[[E]] lengths(%[[LEN]]) : (tensor<?x4x64x8xf32>, tensor<4x16x64xf32>, tensor<?xi64>) -> tensor<?x4x16x8xf32>
func.func @project_dynamic_batch(%k: tensor<?x4x64x8xf32>,
    %e: tensor<4x16x64xf32>, %len: tensor<?xi64>) -> tensor<?x4x16x8xf32> {
  %p = linformer.project<learned> %k, %e lengths(%len)
         : (tensor<?x4x64x8xf32>, tensor<4x16x64xf32>, tensor<?xi64>)
         -> tensor<?x4x16x8xf32>
  return %p : tensor<?x4x16x8xf32>
}

//===----------------------------------------------------------------------===//
// linformer.attention_core
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @attention_core(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[KP:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[VP:[a-z0-9]+]]: tensor<2x4x16x8xf32>)
// CHECK: %[[O:.*]] = linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(1.250000e-01) outs(%{{.*}}) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
// CHECK: return %[[O]]
func.func @attention_core(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>,
    %vp: tensor<2x4x16x8xf32>) -> tensor<2x4x64x8xf32> {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>)
         -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}

// -----

// CHECK-LABEL: func.func @attention_core_key_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[KP:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[VP:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[M:[a-z0-9]+]]: tensor<2x16xi1>)
// CHECK: linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(1.250000e-01) key_mask(%[[M]]) outs(%{{.*}}) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x16xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
func.func @attention_core_key_mask(%q: tensor<2x4x64x8xf32>,
    %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>, %m: tensor<2x16xi1>)
    -> tensor<2x4x64x8xf32> {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
            tensor<2x16xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}

// -----

// Values may have their own width dv; a negative scale is allowed.
// CHECK-LABEL: func.func @attention_core_low_precision(
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale(-5.000000e-01) outs(%{{.*}}) : (tensor<2x4x64x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16x12xf16>, tensor<2x4x64x12xf16>) -> tensor<2x4x64x12xf16>
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) key_mask(%{{.*}}) outs(%{{.*}}) : (tensor<2x4x64x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x16xi1>, tensor<2x4x64x8xbf16>) -> tensor<2x4x64x8xbf16>
func.func @attention_core_low_precision(%qh: tensor<2x4x64x8xf16>,
    %kh: tensor<2x4x16x8xf16>, %vh: tensor<2x4x16x12xf16>,
    %qb: tensor<2x4x64x8xbf16>, %kb: tensor<2x4x16x8xbf16>, %m: tensor<2x16xi1>)
    -> (tensor<2x4x64x12xf16>, tensor<2x4x64x8xbf16>) {
  %o0_init = tensor.empty() : tensor<2x4x64x12xf16>
  %o0 = linformer.attention_core %qh, %kh, %vh scale(-0.5)
          outs(%o0_init) : (tensor<2x4x64x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16x12xf16>, tensor<2x4x64x12xf16>)
          -> tensor<2x4x64x12xf16>
  %o1_init = tensor.empty() : tensor<2x4x64x8xbf16>
  %o1 = linformer.attention_core %qb, %kb, %kb scale(0.125) key_mask(%m)
          outs(%o1_init) : (tensor<2x4x64x8xbf16>, tensor<2x4x16x8xbf16>,
             tensor<2x4x16x8xbf16>, tensor<2x16xi1>, tensor<2x4x64x8xbf16>) -> tensor<2x4x64x8xbf16>
  return %o0, %o1 : tensor<2x4x64x12xf16>, tensor<2x4x64x8xbf16>
}

// -----

// CHECK-LABEL: func.func @attention_core_dynamic_batch(
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) key_mask(%{{.*}}) outs(%{{.*}}) : (tensor<?x4x64x8xf32>, tensor<?x4x16x8xf32>, tensor<?x4x16x8xf32>, tensor<?x16xi1>, tensor<?x4x64x8xf32>) -> tensor<?x4x64x8xf32>
func.func @attention_core_dynamic_batch(%q: tensor<?x4x64x8xf32>,
    %kp: tensor<?x4x16x8xf32>, %vp: tensor<?x4x16x8xf32>, %m: tensor<?x16xi1>)
    -> tensor<?x4x64x8xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x64x8xf32>
  %o_init = tensor.empty(%b) : tensor<?x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<?x4x64x8xf32>, tensor<?x4x16x8xf32>, tensor<?x4x16x8xf32>,
            tensor<?x16xi1>, tensor<?x4x64x8xf32>) -> tensor<?x4x64x8xf32>
  return %o : tensor<?x4x64x8xf32>
}

// -----

// The parts compose into one attention head group: project K and V, then the
// core.
// CHECK-LABEL: func.func @parts_compose(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>, %[[KM:[a-z0-9]+]]: tensor<2x16xi1>)
// CHECK: %[[KP:.*]] = linformer.project<mean_pool> %[[K]] lengths(%[[LEN]])
// CHECK: %[[VP:.*]] = linformer.project<mean_pool> %[[V]] lengths(%[[LEN]])
// CHECK: %[[O:.*]] = linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(3.535530e-01) key_mask(%[[KM]])
// CHECK: return %[[O]]
func.func @parts_compose(%q: tensor<2x4x64x8xf32>, %k: tensor<2x4x64x8xf32>,
    %v: tensor<2x4x64x8xf32>, %len: tensor<2xi32>, %km: tensor<2x16xi1>)
    -> tensor<2x4x64x8xf32> {
  %kp = linformer.project<mean_pool> %k lengths(%len)
          : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
  %vp = linformer.project<mean_pool> %v lengths(%len)
          : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.353553) key_mask(%km)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
            tensor<2x16xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}

// -----

// On buffers (after bufferization) the core has no result; each operand may
// have its own float type (the CUDA pipeline narrows some to 16 bits).
// CHECK-LABEL: func.func @attention_core_buffers(
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) key_mask(%{{.*}}) outs(%{{.*}}) : (memref<2x4x64x8xbf16>, memref<2x4x16x8xbf16>, memref<2x4x16x8xf32>, memref<2x16xi8>, memref<2x4x64x8xf32>) -> ()
func.func @attention_core_buffers(%q: memref<2x4x64x8xbf16>,
    %kp: memref<2x4x16x8xbf16>, %vp: memref<2x4x16x8xf32>, %m: memref<2x16xi8>,
    %out: memref<2x4x64x8xf32>) {
  linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m) outs(%out)
    : (memref<2x4x64x8xbf16>, memref<2x4x16x8xbf16>, memref<2x4x16x8xf32>,
       memref<2x16xi8>, memref<2x4x64x8xf32>) -> ()
  return
}
