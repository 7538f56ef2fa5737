// RUN: linformer-opt %s --split-input-file --verify-diagnostics
// RUN: echo 'func.func @f() { return }' | not linformer-opt --linformer-reassociate=mode=sometimes 2>&1 | FileCheck %s --check-prefix=MODE

// MODE: unknown mode 'sometimes' (expected auto, always or never)

func.func @conv_reassociated(%x: tensor<1x64x32xf32>, %w: tensor<32x32xf32>,
                             %c: tensor<8x4xf32>) -> tensor<1x64x32xf32> {
  // expected-error @+1 {{cannot be reassociated: projection 'conv' is not linear, so E (X W) = (E X) W does not hold}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<conv> e(%c) sharing<key_value> {reassociate = true}
         : (tensor<1x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<8x4xf32>)
         -> tensor<1x64x32xf32>
  return %y : tensor<1x64x32xf32>
}
