// RUN: linformer-opt %s --split-input-file --linformer-outline-kernels=packed-sequences | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-outline-kernels | FileCheck %s --check-prefix=OFF

// With packed-sequences, an entry with lengths packs its sequence buffers,
// the arguments marked linformer.sequence: the input, and the output
// (linformer-sequence-results marks a result that holds tokens, and
// bufferization carries the mark to its out-parameter); the intermediate
// %tmp and the weight stay as they are. Each kernel that binds a packed
// buffer also binds the lengths, and the plan says packed_sequences.
// CHECK-LABEL: func.func @entry_kernel_0(
// CHECK-SAME: %{{.*}}: memref<2x64x16xf32>, %{{.*}}: memref<16xf32>, %{{.*}}: memref<2x64x16xf32> {linformer.packed_sequence}, %{{.*}}: memref<2xi32> {linformer.lengths}, %{{.*}}: index)
// CHECK-SAME: linformer.buffer_bytes = array<i64: 8192, 64, 8192, 8>
// CHECK-LABEL: func.func @entry_kernel_1(
// CHECK-SAME: %{{.*}}: memref<2x64x16xf32> {linformer.packed_sequence}, %{{.*}}: memref<2x64x16xf32>, %{{.*}}: memref<2xi32> {linformer.lengths}, %{{.*}}: index)
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: kernels = [#linformer.kernel<"entry_kernel_0", workgroups = 4, buffers = [4, 2, 0, 1], writes = [4]>, #linformer.kernel<"entry_kernel_1", workgroups = 4, buffers = [3, 4, 1], writes = [3]>], intermediates = [8192], sequences = [0, 3], packed_sequences>
// Without the option nothing is marked and the kernels take no lengths.
// OFF-LABEL: func.func @entry_kernel_0(
// OFF-NOT: linformer.packed_sequence
// OFF-SAME: linformer.buffer_bytes = array<i64: 8192, 64, 8192>
// OFF: intermediates = [8192], sequences = [0, 3]>
func.func @entry(%x: memref<2x64x16xf32> {linformer.sequence},
    %len: memref<2xi32> {linformer.lengths}, %w: memref<16xf32>,
    %y: memref<2x64x16xf32> {linformer.sequence}) {
  %tmp = memref.alloc() : memref<2x64x16xf32>
  scf.forall (%s, %t) in (2, 2) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %r = arith.muli %t, %c32 : index
    %v = vector.load %x[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
    %b = vector.load %w[%c0] : memref<16xf32>, vector<16xf32>
    %sum = arith.addf %v, %b : vector<16xf32>
    vector.store %sum, %tmp[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
  }
  scf.forall (%s, %t) in (2, 2) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %r = arith.muli %t, %c32 : index
    %v = vector.load %tmp[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
    vector.store %v, %y[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
  }
  memref.dealloc %tmp : memref<2x64x16xf32>
  return
}

// -----

// No lengths argument: nothing to find the sequences with, nothing packed
// (the plan still says which arguments are sequences).
// CHECK-LABEL: func.func @no_lengths_kernel_0(
// CHECK-NOT: linformer.packed_sequence
// CHECK: intermediates = [], sequences = [0]>
func.func @no_lengths(%x: memref<2x64x16xf32> {linformer.sequence},
    %y: memref<2x64x16xf32>) {
  scf.forall (%s, %t) in (2, 2) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %r = arith.muli %t, %c32 : index
    %v = vector.load %x[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
    vector.store %v, %y[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
  }
  return
}

// -----

// An argument a kernel writes, of the input's [b, n] but unmarked (an
// output whose rows are not tokens: [b, k, d] with k = n) is not packed:
// a size that happens to match says nothing (E X with k = n once lost its
// rows past the lengths in a packed output).
// CHECK-LABEL: func.func @same_size_kernel_0(
// CHECK-SAME: %[[Y:[^:]*]]: memref<2x64x16xf32>, %[[X:[^:]*]]: memref<2x64x16xf32> {linformer.packed_sequence}, %{{.*}}: memref<2xi32> {linformer.lengths}, %{{.*}}: index)
// CHECK: vector.load %[[X]]
// CHECK: vector.store %{{.*}}, %[[Y]]
func.func @same_size(%x: memref<2x64x16xf32> {linformer.sequence},
    %len: memref<2xi32> {linformer.lengths}, %y: memref<2x64x16xf32>) {
  scf.forall (%s, %t) in (2, 2) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %r = arith.muli %t, %c32 : index
    %v = vector.load %x[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
    vector.store %v, %y[%s, %r, %c0] : memref<2x64x16xf32>, vector<16xf32>
  }
  return
}
