// RUN: linformer-opt %s --split-input-file --linformer-cuda-tile-parallel-loops | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cuda-tile-parallel-loops="threads-x=16 threads-y=4" | FileCheck %s --check-prefix=SMALL

// The two innermost dimensions become the threads of a block, each tile the
// largest divisor of the extent within threads-x (32) / threads-y (8);
// leading dimensions get tiles of 1 (one block each).
// (Constants print as %c<value>[_N], so the names say the tile sizes.)
// CHECK-LABEL: func.func @rank3(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c4, %c128, %c64) step (%[[S0:c1_[0-9]+]], %[[S1:c8_[0-9]+]], %[[S2:c32_[0-9]+]])
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[S0]], %[[S1]], %[[S2]]) step (%c1, %c1, %c1)
// CHECK: memref.store
// The innermost dimension is thread x and block x (coalesced accesses).
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_z{{.*}}>, #gpu.loop_dim_map<processor = block_y{{.*}}>, #gpu.loop_dim_map<processor = block_x{{.*}}>]}
// SMALL-LABEL: func.func @rank3(
// SMALL: scf.parallel ({{.*}}) = ({{.*}}) to (%c4, %c128, %c64) step (%c1_{{[0-9]+}}, %c4_{{[0-9]+}}, %c16_{{[0-9]+}})
func.func @rank3(%out: memref<4x128x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c4, %c128, %c64) step (%c1, %c1, %c1) {
    memref.store %cst, %out[%i, %j, %k] : memref<4x128x64xf32>
  }
  return
}

// -----

// Extents that 32 and 8 do not divide: the largest divisors within them
// (18 of 36, 6 of 30), so every block is full and no bound needs a min.
// CHECK-LABEL: func.func @odd(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c30, %c36) step (%[[T0:c6_[0-9]+]], %[[T1:c18_[0-9]+]])
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[T0]], %[[T1]]) step (%c1, %c1)
func.func @odd(%out: memref<30x36xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c30 = arith.constant 30 : index
  %c36 = arith.constant 36 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c30, %c36) step (%c1, %c1) {
    memref.store %cst, %out[%i, %j] : memref<30x36xf32>
  }
  return
}

// -----

// Dynamic bounds are left alone: one loop, run sequentially.
// CHECK-LABEL: func.func @dynamic(
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>]}
func.func @dynamic(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %out[%i] : memref<?xf32>
  }
  return
}


// -----

// Rank 4 ([b, h, n, k]): the grid has three dimensions, so b and h fold into
// one (2 * 4 = 8, the blocks' z) instead of staying a sequential loop in
// every thread; the indices are recovered inside.
// CHECK-LABEL: func.func @rank4(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c8{{.*}}, %c128{{.*}}, %c64{{.*}}) step (%c1{{.*}}, %c8{{.*}}, %c32{{.*}})
// CHECK: %[[Z:.*]] = arith.addi %arg4, %arg1
// CHECK: %[[H:.*]] = arith.remsi %[[Z]], %c4
// CHECK: %[[B:.*]] = arith.divsi %[[Z]], %c4
// CHECK: memref.store %{{.*}}, %arg0[%[[B]], %[[H]], %{{.*}}, %{{.*}}]
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_z{{.*}}>, #gpu.loop_dim_map<processor = block_y{{.*}}>, #gpu.loop_dim_map<processor = block_x{{.*}}>]}
func.func @rank4(%out: memref<2x4x128x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%b, %h, %i, %j) = (%c0, %c0, %c0, %c0) to (%c2, %c4, %c128, %c64) step (%c1, %c1, %c1, %c1) {
    memref.store %cst, %out[%b, %h, %i, %j] : memref<2x4x128x64xf32>
  }
  return
}

// -----

// A fold beyond the grid's z limit (65535) keeps the leading dimension a
// loop in the kernel rather than making a launch CUDA refuses.
// CHECK-LABEL: func.func @huge(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c300, %c300, %c8, %c32)
func.func @huge(%out: memref<300x300x8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c300 = arith.constant 300 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%a, %b, %i, %j) = (%c0, %c0, %c0, %c0) to (%c300, %c300, %c8, %c32) step (%c1, %c1, %c1, %c1) {
    memref.store %cst, %out[%a, %b, %i, %j] : memref<300x300x8x32xf32>
  }
  return
}

// -----

// A nest that comes mapped (the staged attention core: its threads share a
// block's memory) is kept as it is, not tiled again.
// CHECK-LABEL: func.func @premapped(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c64) step (%c1) {
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
// CHECK: gpu.barrier
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{.*}}>]}
func.func @premapped(%out: memref<64x4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%b) = (%c0) to (%c64) step (%c1) {
    scf.parallel (%w, %l) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
      gpu.barrier
      memref.store %cst, %out[%b, %w, %l] : memref<64x4x32xf32>
    } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A loop over tokens (linformer.token_loops: its batch and token
// dimensions; a split-K contraction's sums) is tiled as any other, then its
// blocks numbered row-major along x alone with the length rule of that
// order: 4 sequences x 16 tiles of 8 tokens x 2 column tiles; the function
// records it for the plan.
// CHECK-LABEL: func.func @tokens(
// CHECK-SAME: linformer.cuda_launch_rows = [#linformer.token_rows<grid = [4, 16, 2], batch = 0, row = 1, tile = 8>]
// CHECK: scf.parallel ({{.*}}) = (%c0{{.*}}) to (%c128{{.*}}) step (%c1{{.*}}) {
// CHECK: scf.parallel
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: } {linformer.cuda_token_rows = #linformer.token_rows<grid = [4, 16, 2], batch = 0, row = 1, tile = 8>, mapping = [#gpu.loop_dim_map<processor = block_x{{.*}}>]}
func.func @tokens(%out: memref<4x128x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c4, %c128, %c64) step (%c1, %c1, %c1) {
    memref.store %cst, %out[%i, %j, %k] : memref<4x128x64xf32>
  } {linformer.token_loops = array<i64: 0, 1>}
  return
}

// -----

// A loop of nothing but (sequence, token) has the sequences as the
// threads' y: a block still takes one sequence alone (y tiles of 1, the
// tokens along x), so that the length rule's grid counts every sequence.
// Tiled 4 to a block, the rule said one sequence (grid [1, 1]) and
// linformer-cuda-skip-padding-blocks refused it: random-model soak, seed
// 20261257 cases 0 and 3.
// CHECK-LABEL: func.func @tokens_rank2(
// CHECK-SAME: linformer.cuda_launch_rows = [#linformer.token_rows<grid = [4, 1], batch = 0, row = 1, tile = 2>]
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c1{{.*}}, %c2{{.*}}) step
// CHECK: } {linformer.cuda_token_rows = #linformer.token_rows<grid = [4, 1], batch = 0, row = 1, tile = 2>
func.func @tokens_rank2(%out: memref<4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c2) step (%c1, %c1) {
    memref.store %cst, %out[%i, %j] : memref<4x2xf32>
  } {linformer.token_loops = array<i64: 0, 1>}
  return
}

// -----

// Of any rank, the token dimension anywhere after the batch's: the blocks
// go (sequence, token, the rest), not folded into z, every block along x,
// so that one sequence's real tokens are a prefix of its blocks. The
// threads stay on the loop's own two innermost dimensions (x: the 64
// columns, 32 a tile; y: the tokens, 8 a tile), wherever the permutation
// put them: 2 sequences x 32 tiles of 8 tokens x 2 heads x 2 column tiles.
// The store keeps its indices.
// CHECK-LABEL: func.func @tokens_rank4(
// CHECK-SAME: linformer.cuda_launch_rows = [#linformer.token_rows<grid = [2, 32, 2, 2], batch = 0, row = 1, tile = 8>]
// CHECK: scf.parallel ({{.*}}) = (%c0{{.*}}) to (%c256{{.*}}) step (%c1{{.*}}) {
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c1{{.*}}, %c8{{.*}}, %c1{{.*}}, %c32{{.*}})
// CHECK-NEXT: %[[B:.*]] = arith.addi
// CHECK-NEXT: %[[N:.*]] = arith.addi
// CHECK-NEXT: %[[H:.*]] = arith.addi
// CHECK-NEXT: %[[D:.*]] = arith.addi
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[N]], %[[D]]] : memref<2x2x256x64xf32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 32, 2, 2], batch = 0, row = 1, tile = 8>, mapping = [#gpu.loop_dim_map<processor = block_x{{.*}}>]}
func.func @tokens_rank4(%out: memref<2x2x256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %h, %j, %k) = (%c0, %c0, %c0, %c0) to (%c2, %c2, %c256, %c64) step (%c1, %c1, %c1, %c1) {
    memref.store %cst, %out[%i, %h, %j, %k] : memref<2x2x256x64xf32>
  } {linformer.token_loops = array<i64: 0, 2>}
  return
}

// -----

// The f32 attention core's loop, one thread a query row: (batch, head,
// row), its rows the tokens. Its blocks go (sequence, token tile, head
// tile), and its threads stay on the loop's own innermost dimensions: the
// lanes (thread x) on 32 consecutive rows of one head, which read the same
// K and V elements at once, the heads on thread y (lanes across heads read
// 8 rows of K a step: 2x slower on an H200): 2 sequences x 4 tiles of 32
// tokens x 1 tile of 8 heads.
// CHECK-LABEL: func.func @core_rows(
// CHECK-SAME: linformer.cuda_launch_rows = [#linformer.token_rows<grid = [2, 4, 1], batch = 0, row = 1, tile = 32>]
// CHECK: scf.parallel ({{.*}}) = (%c0{{.*}}) to (%c8{{.*}}) step (%c1{{.*}}) {
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c1{{.*}}, %c32{{.*}}, %c8{{.*}})
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>, #gpu.loop_dim_map<processor = thread_y{{.*}}>]}
// CHECK: } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 4, 1], batch = 0, row = 1, tile = 32>, mapping = [#gpu.loop_dim_map<processor = block_x{{.*}}>]}
// SMALL-LABEL: func.func @core_rows(
// SMALL-SAME: linformer.cuda_launch_rows = [#linformer.token_rows<grid = [2, 8, 2], batch = 0, row = 1, tile = 16>]
func.func @core_rows(%out: memref<2x8x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%b, %h, %i) = (%c0, %c0, %c0) to (%c2, %c8, %c128) step (%c1, %c1, %c1) {
    memref.store %cst, %out[%b, %h, %i] : memref<2x8x128xf32>
  } {linformer.token_loops = array<i64: 0, 2>}
  return
}

// -----

// The f32 core with 4 lanes and 2 rows a lane: (batch, head, row pair,
// lane), its token dimension counting pairs of tokens
// (linformer.cuda_tokens_per_iteration = 2). The lanes are thread x (4),
// the row pairs thread y (8): one warp a block; the rule's tile counts
// tokens: 8 pairs, 16 tokens (2 sequences x 8 tiles x 8 heads).
// CHECK-LABEL: func.func @core_row_pairs(
// CHECK-SAME: linformer.cuda_launch_rows = [#linformer.token_rows<grid = [2, 8, 8, 1], batch = 0, row = 1, tile = 16>]
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c1{{.*}}, %c8{{.*}}, %c1{{.*}}, %c4{{.*}})
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
func.func @core_row_pairs(%out: memref<2x8x64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%b, %h, %i, %g) = (%c0, %c0, %c0, %c0) to (%c2, %c8, %c64, %c4) step (%c1, %c1, %c1, %c1) {
    memref.store %cst, %out[%b, %h, %i, %g] : memref<2x8x64x4xf32>
  } {linformer.token_loops = array<i64: 0, 2>, linformer.cuda_tokens_per_iteration = 2 : i64}
  return
}
