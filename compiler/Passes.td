//===- Passes.td - Linformer compiler passes ---------------*- tablegen -*-===//
//
// The passes of the compiler: rewrites of the Linformer ops, their lowering
// to linalg on tensors, and the CPU code generation steps. Pipelines that
// chain them live in compiler/Pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_PASSES_TD
#define LINFORMER_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinformerDecomposeAttentionPass
    : Pass<"linformer-decompose-attention", "::mlir::func::FuncOp"> {
  let summary = "splits linformer.attention into its parts";
  let description = [{
    Rewrites each `linformer.attention` layer into its parts: the Q/K/V input
    projections (contractions written as `linalg.generic`, producing
    [b, h, n, d] directly, so no transpose is materialised), two
    `linformer.project` ops for K and V, one `linformer.attention_core`, and
    the output projection. For pooling and convolution with padding it also
    computes which projected slots have a real token behind them and passes
    that to the core as `key_mask`.

    Before:
    ```mlir
    %y = linformer.attention %x weights(%wq, %wk, %wv, %wo) heads(4) k(16)
           projection<mean_pool> sharing<none> lengths(%l) : ...
    ```
    After (abridged):
    ```mlir
    %q = linalg.generic ... // X * W_q, [b, h, n, d]
    %k = linalg.generic ... // X * W_k
    %v = linalg.generic ... // X * W_v
    %kp = linformer.project<mean_pool> %k lengths(%l) : ...
    %vp = linformer.project<mean_pool> %v lengths(%l) : ...
    %m = linalg.generic ...  // [b, k] i1: slots with a real token
    %a = linformer.attention_core %q, %kp, %vp scale(0.35355) key_mask(%m)
    %y = linalg.generic ... // concat(heads) * W_o
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LinformerLowerToLinalgPass
    : Pass<"linformer-lower-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "lowers linformer.project and linformer.attention_core to linalg";
  let description = [{
    Lowers the parts to linalg on tensors, with the padding semantics of
    docs/Spec.md:
    - `project<learned>`: padded tokens are zeroed, then a contraction with E
      over n (per head or shared);
    - `project<mean_pool>`: window sums over real tokens divided by the
      number of real tokens (at least 1; a window without one gives 0);
    - `project<max_pool>`: padded tokens become -inf, window maximum, and a
      window without a real token gives 0;
    - `project<conv>`: padded tokens are zeroed, then a depthwise contraction
      with the kernel over each window;
    - `attention_core`: `S = Q K^T` (contraction over d), `S * scale` with
      masked slots at -inf, `linalg.softmax` over k, then `P V`. The softmax
      stays one op here so that tiling can fuse the chain per query tile.

    ```mlir
    // Before
    %kp = linformer.project<max_pool> %k : (tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
    // After
    %e = tensor.expand_shape %k [[0], [1], [2, 3], [4]] ... -> tensor<1x2x2x4x4xf32>
    %kp = linalg.generic {iterator_types = [..., "reduction"]} ins(%e ...) {
      arith.maximumf ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // LINFORMER_COMPILER_PASSES_TD
