// RUN: linformer-opt %s --split-input-file --verify-diagnostics --linformer-outline-kernels | FileCheck %s

// A workgroup loop marked linformer.initializer (a weight's panels, made by
// linformer-cpu-prepack-weights) becomes an initializer of the plan: the
// runtime runs it once per session, and the buffer it writes (%p, id 3) is
// a constant that the kernels of a run only read.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: kernels = [#linformer.kernel<"entry_kernel_0", workgroups = 2, buffers = [3, 1], writes = [3], initializer>, #linformer.kernel<"entry_kernel_1", workgroups = 2, buffers = [2, 3, 0], writes = [2]>], intermediates = [64], sequences = [0]>
func.func @entry(%x: memref<2x16xf32> {linformer.sequence},
    %w: memref<16xf32>, %y: memref<2x16xf32>) {
  %p = memref.alloc() : memref<16xf32>
  scf.forall (%i) in (2) {
    %c8 = arith.constant 8 : index
    %o = arith.muli %i, %c8 : index
    %v = vector.load %w[%o] : memref<16xf32>, vector<8xf32>
    vector.store %v, %p[%o] : memref<16xf32>, vector<8xf32>
  } {linformer.initializer}
  scf.forall (%s) in (2) {
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%s, %c0] : memref<2x16xf32>, vector<16xf32>
    %b = vector.load %p[%c0] : memref<16xf32>, vector<16xf32>
    %sum = arith.addf %v, %b : vector<16xf32>
    vector.store %sum, %y[%s, %c0] : memref<2x16xf32>, vector<16xf32>
  }
  memref.dealloc %p : memref<16xf32>
  return
}

// -----

// An initializer runs before the inputs exist: it may not read one (an
// argument the entry marks, or any argument of an entry that marks none).
// expected-error @+1 {{initializer kernel 'input_kernel_0' takes argument 0, which is not a weight it only reads}}
func.func @input(%x: memref<16xf32> {linformer.sequence}, %y: memref<16xf32>) {
  %p = memref.alloc() : memref<16xf32>
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %v, %p[%c0] : memref<16xf32>, vector<16xf32>
  } {linformer.initializer}
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %v = vector.load %p[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %v, %y[%c0] : memref<16xf32>, vector<16xf32>
  }
  memref.dealloc %p : memref<16xf32>
  return
}

// -----

// What an initializer made stays as it made it: no kernel of a run writes it.
// expected-error @+1 {{kernel 'overwrite_kernel_1' writes buffer 3, a constant an initializer made once per session}}
func.func @overwrite(%w: memref<16xf32>, %y: memref<16xf32>,
    %x: memref<16xf32> {linformer.sequence}) {
  %p = memref.alloc() : memref<16xf32>
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %v = vector.load %w[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %v, %p[%c0] : memref<16xf32>, vector<16xf32>
  } {linformer.initializer}
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %v = vector.load %p[%c0] : memref<16xf32>, vector<16xf32>
    %d = arith.addf %v, %v : vector<16xf32>
    vector.store %d, %p[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %d, %y[%c0] : memref<16xf32>, vector<16xf32>
  }
  memref.dealloc %p : memref<16xf32>
  return
}

// -----

// expected-error @+1 {{initializer kernel 'unmarked_kernel_0' takes argument 0, which is not a weight it only reads}}
func.func @unmarked(%w: memref<16xf32>, %y: memref<16xf32>) {
  %p = memref.alloc() : memref<16xf32>
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %v = vector.load %w[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %v, %p[%c0] : memref<16xf32>, vector<16xf32>
  } {linformer.initializer}
  scf.forall (%i) in (1) {
    %c0 = arith.constant 0 : index
    %v = vector.load %p[%c0] : memref<16xf32>, vector<16xf32>
    vector.store %v, %y[%c0] : memref<16xf32>, vector<16xf32>
  }
  memref.dealloc %p : memref<16xf32>
  return
}
