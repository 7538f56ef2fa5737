// RUN: linformer-opt %s --split-input-file | linformer-opt --split-input-file | FileCheck %s
// RUN: linformer-opt %s --split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// linformer.all_gather: every rank's block of a value along an axis, in
// rank order (the slots of a sequence-parallel layer's pooling windows).
// It prints and parses back on tensors and on buffers; one-shot
// bufferization makes it the same op from the share's buffer into the
// init's (written whole, never read: an empty init needs no copy).

// CHECK-LABEL: func.func @tensor(
// CHECK: %[[G:.*]] = linformer.all_gather ranks(2) axis(1) ins(%{{.*}} : tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
// CHECK: return %[[G]]
// BUF-LABEL: func.func @tensor(
// BUF-SAME: %[[X:.*]]: memref<2x8x16xf32
// BUF: %[[W:.*]] = memref.alloc() {{.*}}: memref<2x16x16xf32>
// BUF-NOT: memref.copy
// BUF: linformer.all_gather ranks(2) axis(1) ins(%[[X]] : memref<2x8x16xf32{{.*}}>) outs(%[[W]] : memref<2x16x16xf32>)
// BUF: return %[[W]]
func.func @tensor(%x: tensor<2x8x16xf32>) -> tensor<2x16x16xf32> {
  %init = tensor.empty() : tensor<2x16x16xf32>
  %g = linformer.all_gather ranks(2) axis(1) ins(%x : tensor<2x8x16xf32>) outs(%init : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  return %g : tensor<2x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @buffer(
// CHECK: linformer.all_gather ranks(4) axis(0) ins(%{{.*}} : memref<2xf32>) outs(%{{.*}} : memref<8xf32>)
func.func @buffer(%x: memref<2xf32>, %y: memref<8xf32>) {
  linformer.all_gather ranks(4) axis(0) ins(%x : memref<2xf32>) outs(%y : memref<8xf32>)
  return
}
