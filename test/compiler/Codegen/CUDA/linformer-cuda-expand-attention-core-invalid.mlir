// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core))'

// The fused kernel indexes q, keys, values and the output with one channel
// loop: a core whose value width is not its head width must have been
// lowered to linalg on tensors (linformer-lower-to-linalg does so for the
// CUDA pipeline's keep-fusable-core), and reaching here is an error.
func.func @value_width(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
                       %v: memref<1x2x16x8xf32>, %o: memref<1x2x32x8xf32>) {
  // expected-error @+1 {{the fused attention core needs a value width equal to the head width (8 against 16): lower such a core to linalg before bufferization}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x8xf32>,
       memref<1x2x32x8xf32>) -> ()
  return
}

// -----

func.func @on_tensors(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x16x16xf32>)
    -> tensor<1x2x32x16xf32> {
  // expected-error @+1 {{the fused attention core expands on buffers: run bufferization first}}
  %o = linformer.attention_core %q, %k, %k scale(0.25) outs(%q)
         : (tensor<1x2x32x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>,
            tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
