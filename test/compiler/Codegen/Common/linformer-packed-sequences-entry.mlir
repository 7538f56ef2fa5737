// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-packed-sequences{entry}))' -verify-diagnostics | FileCheck %s

// A whole model's function (the CUDA pipeline, its loops tiled for blocks
// and threads): the sequence input and the output, both marked
// linformer.sequence (the output by linformer-sequence-results, through
// bufferization), become packed, and keep the mark (the launch plan reads
// it); the weight `%w`, of their shape, and `%scratch` do not. Each
// thread loop (the scf.parallel in a kernel's block loop) gets its own
// [b * n, ...] view, as a reinterpret_cast that the GPU lowering takes as
// it is, and its own sequence start and length: a block loop past the
// lengths skips its thread loops, and nothing else in it may touch memory.
// An nvgpu.device_async_copy reads its source row through the lengths as a
// load does; a store past the length is guarded off.
// CHECK-LABEL: func.func @model(
// CHECK-SAME: %[[X:[^:]*]]: memref<2x64x16xbf16> {linformer.packed_sequence, linformer.sequence}
// CHECK-SAME: %[[LEN:[^:]*]]: memref<2xi32> {linformer.lengths}
// CHECK-SAME: %[[W:[^:]*]]: memref<2x64x16xbf16>,
// CHECK-SAME: %[[SCRATCH:[^:]*]]: memref<2x32x16xbf16>,
// CHECK-SAME: %[[Y:[^:]*]]: memref<2x64x16xbf16> {linformer.packed_sequence, linformer.sequence})
// CHECK: scf.parallel (%[[BLK:.*]]) =
// CHECK: %[[S:.*]] = arith.divui %[[BLK]], %c4
// CHECK-NOT: memref.load
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK: %[[XROWS:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [128, 16], strides: [16, 1] : memref<2x64x16xbf16> to memref<128x16xbf16>
// CHECK: %[[L32:.*]] = memref.load %[[LEN]][%[[S]]]
// CHECK: %[[L:.*]] = arith.index_cast %[[L32]]
// CHECK: %[[LAST:.*]] = arith.subi %[[L]], %{{.*}}
// CHECK: %[[EMPTY:.*]] = arith.cmpi slt, %[[LAST]], %{{.*}}
// CHECK: %[[START:.*]] = scf.for %{{.*}} = %{{.*}} to %[[S]] step %{{.*}} iter_args
// CHECK: %[[MIN:.*]] = arith.minsi %{{.*}}, %[[LAST]]
// CHECK: %[[IN:.*]] = arith.addi %[[START]], %[[MIN]]
// CHECK: %[[ROW:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[IN]]
// CHECK: nvgpu.device_async_copy %[[XROWS]][%[[ROW]], %c0], %{{.*}}[%{{.*}}], 8 {bypassL1} : memref<128x16xbf16> to memref<128xbf16, 3>
// CHECK: memref.load %[[W]][%[[S]], %{{.*}}, %c0]
// CHECK: scf.parallel (%[[T2:.*]]) =
// CHECK-DAG: %[[YROWS:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [128, 16], strides: [16, 1]
// CHECK-DAG: memref.load %[[LEN]]
// CHECK: scf.for
// CHECK: %[[REAL:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}}
// CHECK: scf.if %[[REAL]] {
// CHECK:   %[[OUT:.*]] = arith.addi %{{.*}}, %{{.*}}
// CHECK:   memref.store %{{.*}}, %[[YROWS]][%[[OUT]], %c0] : memref<128x16xbf16>
// CHECK: }
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
func.func @model(%x: memref<2x64x16xbf16> {linformer.sequence},
    %len: memref<2xi32> {linformer.lengths}, %w: memref<2x64x16xbf16>,
    %scratch: memref<2x32x16xbf16>, %y: memref<2x64x16xbf16> {linformer.sequence}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%blk) = (%c0) to (%c8) step (%c1) {
    %s = arith.divui %blk, %c4 : index
    %tile = arith.remui %blk, %c4 : index
    %r0 = arith.muli %tile, %c16 : index
    %shared = memref.alloc() : memref<128xbf16, 3>
    scf.parallel (%t) = (%c0) to (%c16) step (%c1) {
      %r = arith.addi %r0, %t : index
      %dst = arith.muli %t, %c8 : index
      %tok = nvgpu.device_async_copy %x[%s, %r, %c0], %shared[%dst], 8 {bypassL1}
          : memref<2x64x16xbf16> to memref<128xbf16, 3>
      %v = memref.load %w[%s, %r, %c0] : memref<2x64x16xbf16>
      scf.reduce
    }
    scf.parallel (%t) = (%c0) to (%c16) step (%c1) {
      %r = arith.addi %r0, %t : index
      %v = memref.load %shared[%t] : memref<128xbf16, 3>
      memref.store %v, %y[%s, %r, %c0] : memref<2x64x16xbf16>
      memref.store %v, %scratch[%s, %t, %c0] : memref<2x32x16xbf16>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// Without lengths nothing is packed.
// CHECK-LABEL: func.func @no_lengths(
// CHECK-NOT: linformer.packed_sequence
// CHECK: memref.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x4xf32>
func.func @no_lengths(%x: memref<1x8x4xf32> {linformer.sequence},
                      %y: memref<1x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%blk) = (%c0) to (%c1) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %x[%c0, %t, %c0] : memref<1x8x4xf32>
      memref.store %v, %y[%c0, %t, %c0] : memref<1x8x4xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// An access in the host code, outside every kernel, has no sequence to
// find its row with.
func.func @host_access(%x: memref<1x8x4xf32> {linformer.sequence},
                       %len: memref<1xi32> {linformer.lengths},
                       %y: memref<1x8x4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{accesses a packed sequence argument outside the function's parallel loops (its kernels), where no sequence can be found}}
  %v = memref.load %x[%c0, %c0, %c0] : memref<1x8x4xf32>
  memref.store %v, %y[%c0, %c0, %c0] : memref<1x8x4xf32>
  return
}

// -----

// An argument the function writes with the input's [b, n] but unmarked (an
// output whose rows are not tokens, [b, k, d] with k = n) is not packed: a
// size that happens to match is no reason.
// CHECK-LABEL: func.func @same_size(
// CHECK-SAME: %{{[^:]*}}: memref<1x8x4xf32> {linformer.packed_sequence, linformer.sequence}
// CHECK-SAME: %[[Y:[^:]*]]: memref<1x8x4xf32>)
// CHECK: memref.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x4xf32>
func.func @same_size(%x: memref<1x8x4xf32> {linformer.sequence},
                     %len: memref<1xi32> {linformer.lengths},
                     %y: memref<1x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%blk) = (%c0) to (%c1) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %x[%c0, %t, %c0] : memref<1x8x4xf32>
      memref.store %v, %y[%c0, %t, %c0] : memref<1x8x4xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}
