// RUN: linformer-opt %s --split-input-file --linformer-lower-to-linalg --verify-diagnostics

// Code generation needs static shapes: a projection or attention core with
// a dynamic batch is not rewritten, and the pass says so.

func.func @project_dynamic_batch(%k: tensor<?x2x16x8xf32>)
    -> tensor<?x2x4x8xf32> {
  // expected-error @+1 {{'linformer.project' op cannot be lowered to linalg: code generation needs static shapes}}
  %p = linformer.project<mean_pool> %k
         : (tensor<?x2x16x8xf32>) -> tensor<?x2x4x8xf32>
  return %p : tensor<?x2x4x8xf32>
}

// -----

func.func @core_dynamic_batch(%q: tensor<?x2x16x8xf32>,
    %kp: tensor<?x2x4x8xf32>, %vp: tensor<?x2x4x8xf32>)
    -> tensor<?x2x16x8xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x2x16x8xf32>
  %o_init = tensor.empty(%b) : tensor<?x2x16x8xf32>
  // expected-error @+1 {{'linformer.attention_core' op cannot be lowered to linalg: code generation needs static shapes}}
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) : (tensor<?x2x16x8xf32>, tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32>, tensor<?x2x16x8xf32>)
         -> tensor<?x2x16x8xf32>
  return %o : tensor<?x2x16x8xf32>
}
