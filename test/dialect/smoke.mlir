// RUN: linformer-opt %s | FileCheck %s
// CHECK-LABEL: func.func @smoke
func.func @smoke(%k: tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32> {
  // CHECK: linformer.project<max_pool>
  %kp = linformer.project<max_pool> %k : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
  return %kp : tensor<2x4x16x8xf32>
}
