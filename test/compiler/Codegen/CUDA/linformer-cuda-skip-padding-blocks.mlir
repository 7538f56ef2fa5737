// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-skip-padding-blocks))' | FileCheck %s

// A block loop with a length rule over (sequence 2, token tile 4, column 3):
// block x = (s * 4 + t) * 3 + j. Its thread loop's body runs only when
// the block's first token, t * 64, is before lengths[s].
// CHECK-LABEL: func.func @ruled(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: memref<2xi32> {linformer.lengths}
// CHECK: scf.parallel (%[[BLK:.*]]) =
// CHECK: scf.parallel
// CHECK: %[[SQ:.*]] = arith.divui %[[BLK]], %c12{{.*}} : index
// CHECK: %[[S:.*]] = arith.remui %[[SQ]], %c2{{.*}} : index
// CHECK: %[[TQ:.*]] = arith.divui %[[BLK]], %c3{{.*}} : index
// CHECK: %[[T:.*]] = arith.remui %[[TQ]], %c4{{.*}} : index
// CHECK: %[[L:.*]] = memref.load %[[LEN]][%[[S]]] : memref<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[FIRST:.*]] = arith.muli %[[T]], %c64{{.*}} : index
// CHECK: %[[REAL:.*]] = arith.cmpi slt, %[[FIRST]], %[[LI]] : index
// CHECK: scf.if %[[REAL]] {
// CHECK: memref.store
// CHECK: }
// CHECK: scf.reduce
// A loop without a rule is left alone.
// CHECK: scf.parallel
// CHECK-NOT: scf.if
// CHECK: return
func.func @ruled(%x: memref<2x256x96xf32>, %len: memref<2xi32> {linformer.lengths},
                 %y: memref<2x256x96xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%blk) = (%c0) to (%c24) step (%c1) {
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %v = memref.load %x[%c0, %i, %c0] : memref<2x256x96xf32>
      memref.store %v, %y[%c0, %i, %c0] : memref<2x256x96xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 4, 3], batch = 0, row = 1, tile = 64>, mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%blk) = (%c0) to (%c32) step (%c1) {
    %v = memref.load %x[%c0, %blk, %c0] : memref<2x256x96xf32>
    memref.store %v, %y[%c0, %blk, %c0] : memref<2x256x96xf32>
    scf.reduce
  }
  return
}

// -----

// Without the lengths argument the rule cannot be checked per block.
func.func @no_lengths(%y: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 0.0 : f32
  // expected-error @+1 {{has the length rule #linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 64>, and its function has no linformer.lengths argument of 2 sequences}}
  scf.parallel (%blk) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %f, %y[%c0, %i] : memref<2x256xf32>
      scf.reduce
    }
    scf.reduce
  } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 64>}
  return
}

// -----

// A store in the block loop, outside its thread loop, would run in every
// block: a padding block could not skip it.
func.func @store_outside(%len: memref<2xi32> {linformer.lengths}, %y: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %f = arith.constant 0.0 : f32
  scf.parallel (%blk) = (%c0) to (%c8) step (%c1) {
    // expected-error @+1 {{touches memory in a block loop with a length rule outside its thread loops}}
    memref.store %f, %y[%c0, %blk] : memref<2x256xf32>
    scf.reduce
  } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 64>}
  return
}

// -----

// A rule numbers block x alone.
func.func @two_dims(%len: memref<2xi32> {linformer.lengths}, %y: memref<2x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{over 2 block dimensions; a rule numbers block x alone}}
  scf.parallel (%s, %t) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    scf.reduce
  } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 64>}
  return
}
