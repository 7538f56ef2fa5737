// RUN: linformer-opt %s --split-input-file --verify-diagnostics --linformer-outline-kernels | FileCheck %s

// An all-reduce between two workgroup loops (a sequence-parallel entry:
// the partial sums of the first, summed over the ranks, read by the
// second) becomes a step of the plan in its place: no kernel, one
// workgroup, its buffer (%p, id 2) taken and written, `all_reduce` ranks.
// The entry's sequential path calls the kernels alone.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: kernels = [#linformer.kernel<"entry_kernel_0", workgroups = 2, buffers = [2, 0], writes = [2]>, #linformer.kernel<"entry_all_reduce_0", workgroups = 1, buffers = [2], writes = [2], all_reduce = 2>, #linformer.kernel<"entry_kernel_1", workgroups = 2, buffers = [1, 2], writes = [1]>], intermediates = [64]>
// CHECK-NOT: linformer.all_reduce
// CHECK: call @entry_kernel_0
// CHECK: call @entry_kernel_1
func.func @entry(%x: memref<2x16xf32>, %y: memref<2x16xf32>) {
  %p = memref.alloc() : memref<16xf32>
  scf.forall (%i) in (2) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %o = arith.muli %i, %c8 : index
    %v = vector.load %x[%c0, %o] : memref<2x16xf32>, vector<8xf32>
    vector.store %v, %p[%o] : memref<16xf32>, vector<8xf32>
  }
  linformer.all_reduce ranks(2) outs(%p) : memref<16xf32>
  scf.forall (%s) in (2) {
    %c0 = arith.constant 0 : index
    %v = vector.load %p[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %v, %y[%s, %c0] : memref<2x16xf32>, vector<16xf32>
  }
  memref.dealloc %p : memref<16xf32>
  return
}

// -----

// The runtime sums whole f32 buffers it can name: not a view of one.
func.func @view(%x: memref<2x16xf32>) {
  %p = memref.alloc() : memref<16xf32>
  %v = memref.subview %p[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  // expected-error @+1 {{takes a buffer the runtime cannot name: a collective step needs whole f32 buffers (an argument or an entry-block allocation), not 'memref<8xf32, strided<[1]>>'}}
  linformer.all_reduce ranks(2) outs(%v) : memref<8xf32, strided<[1]>>
  memref.dealloc %p : memref<16xf32>
  return
}

// -----

// An all-gather (a split layer's pooled slots): a step taking the share
// (%s, id 2) and writing the whole (%g, id 3), with the share's contiguous
// blocks (2: its dimensions before the axis) for the runtime to place.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: #linformer.kernel<"gather_all_gather_0", workgroups = 1, buffers = [2, 3], writes = [3], all_reduce = 4, gather = 2>
// CHECK-NOT: linformer.all_gather
func.func @gather(%x: memref<2x4xf32>, %y: memref<2x16xf32>) {
  %s = memref.alloc() : memref<2x4xf32>
  %g = memref.alloc() : memref<2x16xf32>
  scf.forall (%i) in (2) {
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%i, %c0] : memref<2x4xf32>, vector<4xf32>
    vector.store %v, %s[%i, %c0] : memref<2x4xf32>, vector<4xf32>
  }
  linformer.all_gather ranks(4) axis(1) ins(%s : memref<2x4xf32>) outs(%g : memref<2x16xf32>)
  scf.forall (%i) in (2) {
    %c0 = arith.constant 0 : index
    %v = vector.load %g[%i, %c0] : memref<2x16xf32>, vector<16xf32>
    vector.store %v, %y[%i, %c0] : memref<2x16xf32>, vector<16xf32>
  }
  memref.dealloc %s : memref<2x4xf32>
  memref.dealloc %g : memref<2x16xf32>
  return
}
