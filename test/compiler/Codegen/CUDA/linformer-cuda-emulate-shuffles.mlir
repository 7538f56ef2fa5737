// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions,linformer-cuda-emulate-shuffles,canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-emulate-shuffles))' | FileCheck %s --check-prefix=HAND

// The warp row sums on the host: the thread loop is split at each of its
// five shuffles. The first loop walks the row and stores each lane's
// partial; each next one adds its own element and lane `l xor offset`'s
// (16, 8, 4, 2, 1, the kernel's own order) into the next buffer; the last
// has lane 0 store the total. The row's indices are computed again there,
// not kept. No shuffle is left for the CPU.
// CHECK-LABEL: func.func @mean
// CHECK-NOT: gpu.shuffle
// CHECK: %[[P0:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK: scf.parallel (%[[W:.*]], %[[L:.*]]) = (%c0, %c0) to (%c8, %c32)
// CHECK: %[[S:.*]] = scf.for
// CHECK: memref.store %[[S]], %[[P0]][%[[W]], %[[L]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: %[[P1:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK: scf.parallel (%[[W1:.*]], %[[L1:.*]]) = (%c0, %c0) to (%c8, %c32)
// CHECK: %[[MINE:.*]] = memref.load %[[P0]][%[[W1]], %[[L1]]]
// CHECK: %[[X:.*]] = arith.xori %[[L1]], %c16
// CHECK: %[[THEIRS:.*]] = memref.load %[[P0]][%[[W1]], %[[X]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[MINE]], %[[THEIRS]]
// CHECK: memref.store %[[SUM]], %[[P1]]
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: arith.xori %{{.*}}, %c8
// CHECK: arith.xori %{{.*}}, %c4
// CHECK: arith.xori %{{.*}}, %c2
// CHECK: scf.parallel
// CHECK: arith.xori %{{.*}}, %c1
// CHECK: %[[T:.*]] = arith.addf
// CHECK: scf.if
// CHECK: arith.remui
// CHECK: %[[V:.*]] = arith.addf %[[T]], %cst
// CHECK: memref.store %[[V]], %arg2
// CHECK: memref.dealloc %[[P1]]
// CHECK: memref.dealloc %[[P0]]
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{.*}}>]}
#x = affine_map<(b, n, c) -> (b, n, c)>
#row = affine_map<(b, n, c) -> (b, n)>
func.func @mean(%x: memref<2x12x64xf32>, %y: memref<2x12x64xf32>, %m: memref<2x12xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<2x12xf32>)
  linalg.generic {indexing_maps = [#x, #x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<2x12x64xf32>, memref<2x12x64xf32>) outs(%m : memref<2x12xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Written by hand: a value loaded before the shuffle and used after it is
// kept in a buffer of its own; the index arithmetic is computed again; the
// shuffle's `valid` is true; the loop's marks go with the second loop.
// HAND-LABEL: func.func @kept
// HAND: %[[SH:.*]] = memref.alloc() : memref<64xi32>
// HAND: %[[KEEP:.*]] = memref.alloc() : memref<64xf32>
// HAND: scf.parallel (%[[T:.*]]) = (%c0) to (%c64) step (%c1) {
// HAND: %[[A:.*]] = memref.load %arg0[%[[T]]]
// HAND: %[[I:.*]] = arith.index_cast %[[T]] : index to i32
// HAND: memref.store %[[I]], %[[SH]][%[[T]]]
// HAND: memref.store %[[A]], %[[KEEP]][%[[T]]]
// HAND: } {linformer.cuda_whole_warps, mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND: scf.parallel (%[[U:.*]]) = (%c0) to (%c64) step (%c1) {
// HAND: %[[A2:.*]] = memref.load %[[KEEP]][%[[U]]]
// HAND: %[[I2:.*]] = arith.index_cast %[[U]] : index to i32
// HAND: %[[C5:.*]] = arith.constant 5 : index
// HAND: %[[P:.*]] = arith.xori %[[U]], %[[C5]]
// HAND: %[[O:.*]] = memref.load %[[SH]][%[[P]]]
// HAND: %[[TRUE:.*]] = arith.constant true
// HAND: %[[D:.*]] = arith.subi %[[O]], %[[I2]]
// HAND: %[[F:.*]] = arith.sitofp %[[D]]
// HAND: %[[R:.*]] = arith.addf %[[A2]], %[[F]]
// HAND: %[[R2:.*]] = arith.select %[[TRUE]], %[[R]], %[[A2]]
// HAND: memref.store %[[R2]], %arg1[%[[U]]]
// HAND: } {linformer.cuda_whole_warps, mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND: memref.dealloc %[[SH]]
// HAND: memref.dealloc %[[KEEP]]
func.func @kept(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
    %a = memref.load %in[%t] : memref<64xf32>
    %i = arith.index_cast %t : index to i32
    %off = arith.constant 5 : i32
    %w = arith.constant 32 : i32
    %o, %valid = gpu.shuffle xor %i, %off, %w : i32
    %d = arith.subi %o, %i : i32
    %f = arith.sitofp %d : i32 to f32
    %r = arith.addf %a, %f : f32
    %r2 = arith.select %valid, %r, %a : f32
    memref.store %r2, %out[%t] : memref<64xf32>
    scf.reduce
  } {linformer.cuda_whole_warps, mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}
