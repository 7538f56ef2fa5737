// RUN: linformer-opt %s --linformer-verify-layer-sharing --split-input-file --verify-diagnostics

// An op whose sharing has `layers` claims its projection values are those of
// every other layer. The pass checks, per function, that every such op uses
// the same `e` (and `f`) SSA value as the first one; pooling has no
// parameters and is not checked.

// Two layers, one shared E = F for all heads and layers.
func.func @layerwise_same_e(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
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

// A different E in the second layer breaks the claim; the note points at the
// first layer-shared op.
func.func @layerwise_different_e(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e0: tensor<16x64xf32>, %e1: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  // expected-note @+1 {{first layer-shared op is here}}
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e0) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  // expected-error @+1 {{'linformer.attention' op claims layer sharing, but its 'e' is not the value used by the first layer-shared op; layer sharing means every layer uses one projection value}}
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e1) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// Every later op is compared with the first, not with its predecessor.
func.func @layerwise_third_layer_differs(%x: tensor<2x64x32xf32>,
    %w: tensor<32x32xf32>, %e: tensor<8x4xf32>, %e2: tensor<8x4xf32>)
    -> tensor<2x64x32xf32> {
  // expected-note @+1 {{first layer-shared op is here}}
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>)
          -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>)
          -> tensor<2x64x32xf32>
  // expected-error @+1 {{claims layer sharing, but its 'e' is not the value used by the first layer-shared op}}
  %y2 = linformer.attention %y1 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<conv> e(%e2) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>)
          -> tensor<2x64x32xf32>
  return %y2 : tensor<2x64x32xf32>
}

// -----

// `heads, layers` has no `kv`: e and f are both present and both shared.
// Here e matches and f differs.
func.func @heads_layers_different_f(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>, %f0: tensor<16x64xf32>, %f1: tensor<16x64xf32>)
    -> tensor<2x64x32xf32> {
  // expected-note @+1 {{first layer-shared op is here}}
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f0) sharing<heads, layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>) -> tensor<2x64x32xf32>
  // expected-error @+1 {{claims layer sharing, but its 'f' is not the value used by the first layer-shared op}}
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f1) sharing<heads, layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>) -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// `heads, layers` with the same e and f in both layers is fine.
func.func @heads_layers_same(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>, %f: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f) sharing<heads, layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>) -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f) sharing<heads, layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>) -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// So is `layers` alone, with per-head E and F shared by the layers.
func.func @layers_same(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<4x16x64xf32>, %f: tensor<4x16x64xf32>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f) sharing<layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
             tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f) sharing<layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
             tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// Two ops that both claim layer sharing but disagree on the sharing across
// heads cannot use one value: the second one's `e` differs.
func.func @mixed_layer_sharing(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>, %f: tensor<16x64xf32>, %eh: tensor<4x16x64xf32>,
    %fh: tensor<4x16x64xf32>) -> tensor<2x64x32xf32> {
  // expected-note @+1 {{first layer-shared op is here}}
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) f(%f) sharing<heads, layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
             tensor<16x64xf32>) -> tensor<2x64x32xf32>
  // expected-error @+1 {{claims layer sharing, but its 'e' is not the value used by the first layer-shared op}}
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%eh) f(%fh) sharing<layers>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
             tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// Pooling has no parameters: layerwise pooling layers are fine, and they do
// not become the "first layer-shared op" for a learned layer after them.
func.func @pooling_layerwise(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<mean_pool> sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<max_pool> sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  %y2 = linformer.attention %y1 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  return %y2 : tensor<2x64x32xf32>
}

// -----

// Without `layers`, each layer has its own projection: nothing to check.
func.func @key_value_different_e(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e0: tensor<16x64xf32>, %e1: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e0) sharing<key_value>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  %y1 = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e1) sharing<key_value>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  return %y1 : tensor<2x64x32xf32>
}

// -----

// The claim is per function: two models in two functions may each use
// their own shared E.
func.func @model_a(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<layerwise>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}
func.func @model_b(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<layerwise>
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// Within a function the claim covers nested regions too.
func.func @nested_region(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e0: tensor<16x64xf32>, %e1: tensor<16x64xf32>, %c: i1) -> tensor<2x64x32xf32> {
  // expected-note @+1 {{first layer-shared op is here}}
  %y0 = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
          projection<learned> e(%e0) sharing<layerwise>
          : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
             tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
          -> tensor<2x64x32xf32>
  %y1 = scf.if %c -> tensor<2x64x32xf32> {
    // expected-error @+1 {{claims layer sharing, but its 'e' is not the value used by the first layer-shared op}}
    %z = linformer.attention %y0 weights(%w, %w, %w, %w) heads(4) k(16)
           projection<learned> e(%e1) sharing<layerwise>
           : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
              tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>)
           -> tensor<2x64x32xf32>
    scf.yield %z : tensor<2x64x32xf32>
  } else {
    scf.yield %y0 : tensor<2x64x32xf32>
  }
  return %y1 : tensor<2x64x32xf32>
}
