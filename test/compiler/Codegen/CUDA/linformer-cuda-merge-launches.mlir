// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-merge-launches{max-blocks=64}))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-merge-launches{max-blocks=47}))' | FileCheck %s --check-prefix=SMALL
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-merge-launches))' | FileCheck %s --check-prefix=OFF

// Two projections of one buffer (16 and 2 x 16 blocks, 8 x 32 threads)
// with a kernel and a deallocation between them that touch neither's
// buffers: one launch of 48 blocks on block x. The second loop moves up
// with its allocation and the index arithmetic it uses; its blocks
// (z 2, x 16) come back from block x - 16, x fastest.
// CHECK-LABEL: func.func @projections(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<256x64xf32>, %[[WK:[a-z0-9]+]]: memref<64x64xf32>, %[[WV:[a-z0-9]+]]: memref<64x64xf32>
// CHECK: %[[K:.*]] = memref.alloc() : memref<256x64xf32>
// CHECK: %[[V:.*]] = memref.alloc() : memref<2x256x64xf32>
// CHECK: scf.parallel (%[[BLK:.*]]) = (%{{.*}}) to (%c48{{.*}}) step (%{{.*}}) {
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[BLK]], %c16{{.*}} : index
// CHECK: %[[REST:.*]] = arith.subi %[[BLK]], %c16{{.*}} : index
// CHECK: scf.parallel (%[[Y:.*]], %[[X:.*]]) = {{.*}} to (%c8{{.*}}, %c32{{.*}})
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[BX:.*]] = arith.remui %[[BLK]], %c16{{.*}} : index
// CHECK: memref.load %[[WK]]
// CHECK: memref.store %{{.*}}, %[[K]][
// CHECK: } else {
// CHECK: %[[VX:.*]] = arith.remui %[[REST]], %c16{{.*}} : index
// CHECK: %[[VQ:.*]] = arith.divui %[[REST]], %c16{{.*}} : index
// CHECK: %[[VZ:.*]] = arith.remui %[[VQ]], %c2{{.*}} : index
// CHECK: memref.load %[[WV]]
// CHECK: memref.store %{{.*}}, %[[V]][%[[VZ]],
// CHECK: }
// CHECK: scf.reduce
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: scf.parallel
// CHECK: memref.dealloc
// CHECK-NOT: scf.parallel
// CHECK: return
// 48 blocks are more than 47: two launches.
// SMALL-LABEL: func.func @projections(
// SMALL-COUNT-3: {mapping = [#gpu.loop_dim_map<processor = block_
// SMALL-NOT: scf.if
// OFF-LABEL: func.func @projections(
// OFF-NOT: scf.if
func.func @projections(%a: memref<256x64xf32>, %wk: memref<64x64xf32>,
                       %wv: memref<64x64xf32>, %o: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %k = memref.alloc() : memref<256x64xf32>
  %t = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c16) step (%c1) {
    %row = arith.muli %bx, %c16 : index
    scf.parallel (%y, %x) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1) {
      %r = arith.addi %row, %y : index
      %w = memref.load %wk[%y, %x] : memref<64x64xf32>
      %v = memref.load %a[%r, %x] : memref<256x64xf32>
      %p = arith.mulf %v, %w : f32
      memref.store %p, %k[%r, %x] : memref<256x64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  // Touches neither projection's buffers.
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %o[%x] : memref<64xf32>
      memref.store %v, %t[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  memref.dealloc %t : memref<64xf32>
  %vv = memref.alloc() : memref<2x256x64xf32>
  %c16b = arith.constant 16 : index
  scf.parallel (%bz, %bx) = (%c0, %c0) to (%c2, %c16b) step (%c1, %c1) {
    %row = arith.muli %bx, %c16 : index
    scf.parallel (%y, %x) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1) {
      %r = arith.addi %row, %y : index
      %w = memref.load %wv[%y, %x] : memref<64x64xf32>
      %v = memref.load %a[%r, %x] : memref<256x64xf32>
      %p = arith.mulf %v, %w : f32
      memref.store %p, %vv[%bz, %r, %x] : memref<2x256x64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_z, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// The second reads what the first writes: two launches.
// SMALL-LABEL: func.func @dependent(
// CHECK-LABEL: func.func @dependent(
// CHECK-NOT: scf.if
// CHECK-COUNT-2: {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @dependent(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %t[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %t[%x] : memref<64xf32>
      memref.store %v, %b[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A kernel between them writes, through a view, what the second reads:
// the second cannot move up past it (nor join it: other threads).
// CHECK-LABEL: func.func @through_view(
// CHECK-NOT: scf.if
// CHECK: return
func.func @through_view(%a: memref<64xf32>, %c: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<64xf32>
  %u = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %t[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  %w = memref.subview %u[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c16) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %w[%x] : memref<32xf32, strided<[1]>>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %u[%x] : memref<64xf32>
      memref.store %v, %s[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Two arguments may be one buffer: the second writes %b, the first reads
// %a.
// CHECK-LABEL: func.func @arguments_may_alias(
// CHECK-NOT: scf.if
// CHECK: return
func.func @arguments_may_alias(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %t[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %s[%x] : memref<64xf32>
      memref.store %v, %b[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Independent, but on other threads.
// CHECK-LABEL: func.func @other_threads(
// CHECK-NOT: scf.if
// CHECK: return
func.func @other_threads(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %t[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c16) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %s[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A length rule numbers its own grid.
// CHECK-LABEL: func.func @length_rule(
// CHECK-NOT: scf.if
// CHECK: return
func.func @length_rule(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %t[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 1], batch = 0, row = 1, tile = 32>, mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %s[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Three independent launches of 2 blocks: the third joins the merged
// first two, whose body is then its first branch (4 + 2 blocks).
// (They write buffers of their own: a write of an argument would keep them
// apart from the reads of %a.)
// CHECK-LABEL: func.func @three(
// CHECK: %[[P:.*]] = memref.alloc()
// CHECK: %[[Q:.*]] = memref.alloc()
// CHECK: %[[R:.*]] = memref.alloc()
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%c6{{.*}})
// CHECK: %[[OUTER:.*]] = arith.cmpi ult, %[[B]], %c4{{.*}} : index
// CHECK: scf.parallel
// CHECK: scf.if %[[OUTER]] {
// CHECK: %[[BI:.*]] = arith.remui %[[B]], %c4{{.*}} : index
// CHECK: %[[INNER:.*]] = arith.cmpi ult, %[[BI]], %c2{{.*}} : index
// CHECK: scf.if %[[INNER]] {
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[Q]]
// CHECK: }
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[R]]
// CHECK: }
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @three(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %p = memref.alloc() : memref<64xf32>
  %q = memref.alloc() : memref<64xf32>
  %r = memref.alloc() : memref<64xf32>
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %p[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %q[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%bx) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%x) = (%c0) to (%c32) step (%c1) {
      %v = memref.load %a[%x] : memref<64xf32>
      memref.store %v, %r[%x] : memref<64xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}
