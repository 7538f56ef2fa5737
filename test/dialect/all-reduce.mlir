// RUN: linformer-opt %s --split-input-file | linformer-opt --split-input-file | FileCheck %s
// RUN: linformer-opt %s --split-input-file --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF
// RUN: linformer-opt %s --split-input-file --canonicalize | FileCheck %s --check-prefix=DEAD

// linformer.all_reduce: a value summed over the ranks of a
// sequence-parallel run. It prints and parses back on tensors and on
// buffers; one-shot bufferization makes it the same op in place on its
// operand's buffer (no copy); on tensors it has no effect the IR sees, so
// an unused one goes away (every rank runs the same steps).

// CHECK-LABEL: func.func @tensor(
// CHECK: %[[S:.*]] = linformer.all_reduce ranks(2) outs(%{{.*}}) : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
// CHECK: return %[[S]]
// BUF-LABEL: func.func @tensor(
// BUF-SAME: %[[X:[a-z0-9]+]]: memref<1x8x16xf32{{.*}}>
// BUF-NOT: memref.copy
// BUF: linformer.all_reduce ranks(2) outs(%[[X]]) : memref<1x8x16xf32{{.*}}>
// BUF: return %[[X]]
// DEAD-LABEL: func.func @tensor(
// DEAD: linformer.all_reduce
func.func @tensor(%x: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %s = linformer.all_reduce ranks(2) outs(%x) : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
  return %s : tensor<1x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @buffer(
// CHECK: linformer.all_reduce ranks(4) outs(%{{.*}}) : memref<8xf32>
// DEAD-LABEL: func.func @buffer(
// DEAD: linformer.all_reduce ranks(4)
func.func @buffer(%x: memref<8xf32>) {
  linformer.all_reduce ranks(4) outs(%x) : memref<8xf32>
  return
}

// -----

// DEAD-LABEL: func.func @unused(
// DEAD-NOT: linformer.all_reduce
func.func @unused(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s = linformer.all_reduce ranks(2) outs(%x) : tensor<8xf32> -> tensor<8xf32>
  return %x : tensor<8xf32>
}
