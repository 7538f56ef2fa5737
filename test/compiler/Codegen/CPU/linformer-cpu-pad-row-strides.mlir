// RUN: linformer-opt %s --split-input-file --linformer-cpu-pad-row-strides | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cpu-pad-row-strides=critical-stride=0 | FileCheck %s --check-prefix=OFF
// RUN: linformer-opt %s --split-input-file --linformer-cpu-pad-row-strides=pad-bytes=128 | FileCheck %s --check-prefix=PAD128

// An FFN's hidden activation (2048 bf16 a token, 4 KiB rows), written by
// one workgroup loop through row-block views and read by another with
// transfers: allocated with 32 bf16 (64 bytes) more a row and used through
// a view of the old shape; the views built on it take its strides and the
// buffer is freed whole.
// CHECK-LABEL: func.func @hidden(
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x256x2080xbf16>
// CHECK: %[[H:.*]] = memref.subview %[[P]][0, 0, 0] [1, 256, 2048] [1, 1, 1] : memref<1x256x2080xbf16> to memref<1x256x2048xbf16, strided<[532480, 2080, 1]>>
// CHECK: scf.forall
// CHECK:   memref.subview %[[H]][0, %{{.*}}, 0] [1, 128, 2048] [1, 1, 1] : memref<1x256x2048xbf16, strided<[532480, 2080, 1]>> to memref<128x2048xbf16, strided<[2080, 1], offset: ?>>
// CHECK:   vector.transfer_write %{{.*}} : vector<4x32xbf16>, memref<128x2048xbf16, strided<[2080, 1], offset: ?>>
// CHECK: scf.forall
// CHECK:   vector.transfer_read %[[H]][{{.*}}], %{{.*}} {in_bounds = [true, true, true]} : memref<1x256x2048xbf16, strided<[532480, 2080, 1]>>, vector<1x4x2xbf16>
// CHECK: memref.dealloc %[[P]] : memref<1x256x2080xbf16>
// OFF-LABEL: func.func @hidden(
// OFF: memref.alloc() {alignment = 64 : i64} : memref<1x256x2048xbf16>
// OFF-NOT: memref<1x256x2080xbf16>
// PAD128-LABEL: func.func @hidden(
// PAD128: memref.alloc() {alignment = 64 : i64} : memref<1x256x2112xbf16>
func.func @hidden(%v: vector<4x32xbf16>, %out: memref<1x4x2xbf16>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %h = memref.alloc() {alignment = 64 : i64} : memref<1x256x2048xbf16>
  scf.forall (%i) = (0) to (256) step (128) {
    %rows = memref.subview %h[0, %i, 0] [1, 128, 2048] [1, 1, 1]
        : memref<1x256x2048xbf16> to memref<128x2048xbf16, strided<[2048, 1], offset: ?>>
    vector.transfer_write %v, %rows[%c0, %c0] {in_bounds = [true, true]}
        : vector<4x32xbf16>, memref<128x2048xbf16, strided<[2048, 1], offset: ?>>
  }
  scf.forall (%i) = (0) to (256) step (4) {
    %r = vector.transfer_read %h[%c0, %i, %c0], %pad {in_bounds = [true, true, true]}
        : memref<1x256x2048xbf16>, vector<1x4x2xbf16>
    vector.transfer_write %r, %out[%c0, %c0, %c0] {in_bounds = [true, true, true]}
        : vector<1x4x2xbf16>, memref<1x4x2xbf16>
  }
  memref.dealloc %h : memref<1x256x2048xbf16>
  return
}

// -----

// f32 rows of 1024 (4 KiB) read by a linalg op: padded by 16 elements.
// Rows of 2 KiB, a single 4 KiB row and a function argument are not.
// CHECK-LABEL: func.func @which(
// CHECK-SAME: %[[ARG:[a-z0-9]+]]: memref<64x1024xf32>
// CHECK-NOT: memref.alloc() : memref<64x1024xf32>
// CHECK-DAG: memref.alloc() : memref<64x1040xf32>
// CHECK-DAG: memref.alloc() : memref<64x512xf32>
// CHECK-DAG: memref.alloc() : memref<1x1024xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<64x1024xf32, strided<[1040, 1]>>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ARG]] : memref<64x1024xf32>)
func.func @which(%arg: memref<64x1024xf32>, %x: f32) {
  %a = memref.alloc() : memref<64x1024xf32>
  %b = memref.alloc() : memref<64x512xf32>
  %c = memref.alloc() : memref<1x1024xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<64x1024xf32>)
  linalg.fill ins(%x : f32) outs(%b : memref<64x512xf32>)
  linalg.fill ins(%x : f32) outs(%c : memref<1x1024xf32>)
  linalg.fill ins(%x : f32) outs(%arg : memref<64x1024xf32>)
  return
}

// -----

// A use whose result follows its operand's layout (a reshape) or that
// wants the identity layout (a call) leaves the buffer as it is.
// CHECK-LABEL: func.func @kept(
// CHECK: memref.alloc() : memref<64x1024xf32>
// CHECK: memref.alloc() : memref<64x1024xf32>
// CHECK-NOT: 1040
func.func private @use(memref<64x1024xf32>)
func.func @kept() {
  %a = memref.alloc() : memref<64x1024xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<64x1024xf32> into memref<65536xf32>
  %b = memref.alloc() : memref<64x1024xf32>
  func.call @use(%b) : (memref<64x1024xf32>) -> ()
  return
}
