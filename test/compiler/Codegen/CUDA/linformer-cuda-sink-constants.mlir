// RUN: linformer-opt %s --linformer-cuda-sink-constants | FileCheck %s

// A constant-like op of another dialect than arith (the empty struct a
// wgmma's accumulators are inserted into, hoisted out by canonicalization)
// is cloned into the launch that uses it, and goes from the host function:
// the kernel makes it rather than taking it as an argument. A host op the
// launch does not use (a store) stays, and so does a constant the host
// still uses (arith's, cloned too).
// CHECK-LABEL: func.func @sink
// CHECK-NOT: llvm.mlir.poison
// CHECK: gpu.launch
// CHECK-NEXT: %[[P:.*]] = llvm.mlir.poison : !llvm.struct<(f32, f32)>
// CHECK: llvm.insertvalue %{{.*}}, %[[P]][0]
// CHECK: gpu.terminator
// CHECK: memref.store
func.func @sink(%x: f32, %m: memref<1xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %p = llvm.mlir.poison : !llvm.struct<(f32, f32)>
  %unused = llvm.mlir.poison : !llvm.struct<(f32)>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s = llvm.insertvalue %x, %p[0] : !llvm.struct<(f32, f32)>
    %v = llvm.extractvalue %s[0] : !llvm.struct<(f32, f32)>
    memref.store %v, %m[%c0] : memref<1xf32>
    gpu.terminator
  }
  memref.store %x, %m[%c0] : memref<1xf32>
  return
}
