// RUN: linformer-opt %s --split-input-file --linformer-cpu-expand-strided-copies | FileCheck %s

// A workgroup's 20 of 40 columns copied into a tile of its own: the LLVM
// lowering would call memrefCopy (MLIR's runner library, which kernels do
// not link); as a linalg.copy it becomes the kernel's own loops.
// CHECK-LABEL: func.func @strided(
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<1x4x20xf32, strided<[640, 40, 1], offset: ?>>) outs(%{{.*}} : memref<1x4x20xf32>)
func.func @strided(%a: memref<2x16x40xf32>, %i: index, %j: index) {
  %tile = memref.alloca() : memref<1x4x20xf32>
  %v = memref.subview %a[0, %i, %j] [1, 4, 20] [1, 1, 1]
      : memref<2x16x40xf32> to memref<1x4x20xf32, strided<[640, 40, 1], offset: ?>>
  memref.copy %v, %tile : memref<1x4x20xf32, strided<[640, 40, 1], offset: ?>> to memref<1x4x20xf32>
  return
}

// -----

// Contiguous blocks (an identity layout, or whole rows of a subview) stay
// memref.copy: the LLVM lowering copies them with a memcpy intrinsic.
// CHECK-LABEL: func.func @contiguous(
// CHECK-NOT: linalg.copy
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x1x16x10xf32> to memref<1x1x16x10xf32, strided<[640, 160, 10, 1], offset: ?>>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x4xf32> to memref<1x4xf32>
func.func @contiguous(%a: memref<2x4x16x10xf32>, %i: index, %j: index) {
  %tile = memref.alloca() : memref<1x1x16x10xf32>
  %v = memref.subview %a[%i, %j, 0, 0] [1, 1, 16, 10] [1, 1, 1, 1]
      : memref<2x4x16x10xf32> to memref<1x1x16x10xf32, strided<[640, 160, 10, 1], offset: ?>>
  memref.copy %tile, %v : memref<1x1x16x10xf32> to memref<1x1x16x10xf32, strided<[640, 160, 10, 1], offset: ?>>
  %s = memref.alloca() : memref<1x4xf32>
  %t = memref.alloca() : memref<1x4xf32>
  memref.copy %s, %t : memref<1x4xf32> to memref<1x4xf32>
  return
}
