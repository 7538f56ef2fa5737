// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions,canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{pairs=false},canonicalize,cse))' | FileCheck %s --check-prefix=UNPAIRED
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{fold-elementwise=false},canonicalize,cse))' | FileCheck %s --check-prefix=UNFOLDED
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{warps=0}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{split-warps=64},canonicalize,cse))' | FileCheck %s --check-prefix=SPLIT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{split-warps=64 unroll=4},canonicalize,cse))' | FileCheck %s --check-prefix=UNROLL
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{unroll=3}))' 2>&1 | FileCheck %s --check-prefix=BADUNROLL
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{split-warps=64 unroll=4 vectors=true},canonicalize,cse))' | FileCheck %s --check-prefix=VECTORS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions{split-warps=64 unroll=8 vectors=true},canonicalize,cse))' | FileCheck %s --check-prefix=VECTORS8

// A LayerNorm's mean: the sum over c of the residual x + y, after a zero
// fill. 2 x 12 = 24 rows: blocks of 8 warps (3 blocks), a warp a row; lane
// l adds c = l and l + 32, the warp's shuffles add the 32 partials, and
// lane 0 stores 0 + total (the fill is gone).
// CHECK-LABEL: func.func @mean
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%[[BLK:.*]]) = (%c0) to (%c3) step (%c1)
// CHECK: scf.parallel (%[[W:.*]], %[[LANE:.*]]) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1)
// CHECK: %[[P:.*]] = scf.for %[[R:.*]] = %[[LANE]] to %c64 step %c32 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%{{.*}}, %{{.*}}, %[[R]]]
// CHECK: %[[Y:.*]] = memref.load %arg1[%{{.*}}, %{{.*}}, %[[R]]]
// CHECK: %[[S:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK: %[[N:.*]] = arith.addf %[[ACC]], %[[S]]
// CHECK: scf.yield %[[N]]
// CHECK: gpu.shuffle  xor %[[P]], %c16_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK: %[[T:.*]] = arith.addf
// CHECK: scf.if
// CHECK-NOT: memref.load %arg2
// CHECK: %[[V:.*]] = arith.addf %[[T]], %cst
// CHECK: memref.store %[[V]], %arg2
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
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

// A variance: reads the mean at the row (no reduction dimension: the same
// for every lane), starts from the output as it is (no fill before), and a
// constant from outside the body is cloned in. 5 rows: one block of 5
// warps (its one-iteration block loop folds away here).
// CHECK-LABEL: func.func @variance
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c5, %c32)
// CHECK: scf.for
// CHECK: memref.load %arg1
// CHECK: gpu.shuffle
// CHECK: scf.if
// CHECK: %[[C:.*]] = memref.load %arg2
// CHECK: arith.addf %[[C]]
// CHECK: memref.store
#x = affine_map<(n, c) -> (n, c)>
#row = affine_map<(n, c) -> (n)>
func.func @variance(%x: memref<5x512xf32>, %mean: memref<5xf32>, %v: memref<5xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : memref<5x512xf32>, memref<5xf32>) outs(%v : memref<5xf32>) {
  ^bb0(%a: f32, %mu: f32, %acc: f32):
    %d = arith.subf %a, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %t = arith.mulf %sq, %two : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Bufferization fills one zero buffer and copies it into each reduction's
// output; the last reduction writes the buffer itself. A copy whose source
// was last written by a constant fill is that constant (the copy goes); a
// copy of a buffer written since is a copy (kept, its values loaded); the
// buffer and its fill stay, since the last reduction starts from them.
// CHECK-LABEL: func.func @copied
// CHECK: %[[Z:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] : memref<4xf32>)
// CHECK-NOT: linalg.copy
// CHECK: scf.if
// CHECK-NOT: memref.load %arg1
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: linalg.generic {{.*}} outs(%[[Z]] : memref<4xf32>)
// CHECK: linalg.copy ins(%[[Z]] : memref<4xf32>) outs(%arg2 : memref<4xf32>)
// CHECK: scf.if
// CHECK: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: scf.if
// CHECK: memref.load %[[Z]]
// CHECK: memref.store %{{.*}}, %[[Z]]
#x = affine_map<(n, c) -> (n, c)>
#row = affine_map<(n, c) -> (n)>
func.func @copied(%x: memref<4x64xf32>, %m1: memref<4xf32>, %m2: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<4xf32>)
  linalg.copy ins(%z : memref<4xf32>) outs(%m1 : memref<4xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%m1 : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(n) -> (n)>, affine_map<(n) -> (n)>], iterator_types = ["parallel"]}
      ins(%m1 : memref<4xf32>) outs(%z : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.copy ins(%z : memref<4xf32>) outs(%m2 : memref<4xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%m2 : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%z : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  memref.dealloc %z : memref<4xf32>
  return
}

// -----

// Left alone: a contraction (B is read along k across its rows: lanes on
// consecutive k would not be consecutive addresses), a sum of 16 (fewer
// steps than lanes), a maximum (not a sum), and a reduction that is not
// innermost.
// CHECK-LABEL: func.func @left
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: gpu.shuffle
func.func @left(%a: memref<8x64xf32>, %b: memref<64x8xf32>, %c: memref<8x8xf32>,
                %s: memref<8x16xf32>, %o: memref<8xf32>, %t: memref<64x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x64xf32>, memref<64x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<8x16xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x64xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %r = arith.maximumf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(k, i) -> (k, i)>, affine_map<(k, i) -> (i)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%t : memref<64x8xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// BAD: warps must be 1 to 32 (a block's rows), not 0
// BADUNROLL: unroll must be 1, 2, 4 or 8 (steps of a row a lane takes an iteration), not 3

// -----

// E's row sums over a long n (masked by the lengths): 4 rows of 8192 steps
// are 4 warps for the whole GPU. With split-warps = 64 each row is cut into
// 16 parts of 512 steps (4 x 16 = 64 warps): a warp a part adds its lanes'
// terms into one of 64 partial sums, then a warp a row adds its 16
// partials (lane p < 16 takes part p, the others none) and stores 0 +
// total. Without split-warps (the CHECK run) the rows stay a warp each.
// The sums stop at the lengths (linformer.token_bound, the lengths marked):
// each lane's loop, and each part's, ends at min(end, lengths[b]), so a
// part wholly past the length adds nothing.
// CHECK-LABEL: func.func @long_rows
// CHECK-NOT: memref.alloc
// CHECK: %[[LEN:.*]] = memref.load %arg1[%c0] : memref<1xi32>
// CHECK: %[[L:.*]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK: %[[LEFT:.*]] = arith.maxsi %[[L]], %c0
// CHECK: %[[END:.*]] = arith.minsi %[[LEFT]], %c8192
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c32
// SPLIT-LABEL: func.func @long_rows
// SPLIT: %[[P:.*]] = memref.alloc() : memref<64xf32>
// SPLIT: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
// SPLIT: scf.parallel (%[[W:.*]], %[[LANE:.*]]) = (%c0, %c0) to (%c8, %c32)
// SPLIT: %[[Q:.*]] = arith.addi %{{.*}}, %[[W]]
// SPLIT: %[[ROW:.*]] = arith.divui %[[Q]], %c16
// SPLIT: %[[PART:.*]] = arith.remui %[[Q]], %c16
// SPLIT: %[[FROM:.*]] = arith.muli %[[PART]], %c512
// SPLIT: %[[LEN:.*]] = memref.load %arg1[%c0] : memref<1xi32>
// SPLIT: %[[L:.*]] = arith.index_cast %[[LEN]] : i32 to index
// SPLIT: %[[LEFT:.*]] = arith.subi %[[L]], %[[FROM]]
// SPLIT: %[[POS:.*]] = arith.maxsi %[[LEFT]], %c0
// SPLIT: %[[COUNT:.*]] = arith.minsi %[[POS]], %c512
// SPLIT: %[[STOP:.*]] = arith.addi %[[FROM]], %[[COUNT]]
// SPLIT: %[[START:.*]] = arith.addi %[[FROM]], %[[LANE]]
// SPLIT: scf.for %{{.*}} = %[[START]] to %[[STOP]] step %c32
// SPLIT: arith.select
// SPLIT-COUNT-5: gpu.shuffle  xor
// SPLIT: scf.if
// SPLIT: memref.store %{{.*}}, %[[P]][%[[Q]]]
// SPLIT: scf.parallel (%[[R:.*]], %[[L2:.*]]) = (%c0, %c0) to (%c4, %c32)
// SPLIT: %[[FIRST:.*]] = arith.muli %[[R]], %c16
// SPLIT: scf.for %[[I:.*]] = %[[L2]] to %c16 step %c32
// SPLIT: %[[AT:.*]] = arith.addi %[[FIRST]], %[[I]]
// SPLIT: memref.load %[[P]][%[[AT]]]
// SPLIT-COUNT-5: gpu.shuffle  xor
// SPLIT: scf.if
// SPLIT: memref.store %{{.*}}, %arg2
// SPLIT: memref.dealloc %[[P]]
// Four steps an iteration (unroll = 4), each into a sum of its own: the
// part's whole rounds of 128 steps below the length (the same bound for
// every lane), then the steps left into the first sum, then the sums
// added pairwise. The second loop (a row's 16 partials) is not unrolled.
// UNROLL-LABEL: func.func @long_rows
// UNROLL: %[[FROM:.*]] = arith.muli %{{.*}}, %c512
// UNROLL: %[[COUNT:.*]] = arith.minsi %{{.*}}, %c512
// UNROLL: %[[STOP:.*]] = arith.addi %[[FROM]], %[[COUNT]]
// UNROLL: %[[ROUNDS:.*]] = arith.divui %[[COUNT]], %c128
// UNROLL: %[[WHOLE:.*]] = arith.muli %[[ROUNDS]], %c128
// UNROLL: %[[MID:.*]] = arith.addi %[[FROM]], %[[WHOLE]]
// UNROLL: %[[START:.*]] = arith.addi %[[FROM]], %[[LANE:.*]] : index
// UNROLL: %[[S:.*]]:4 = scf.for %[[R:.*]] = %[[START]] to %[[MID]] step %c128 iter_args(%[[A0:.*]] = %cst, %[[A1:.*]] = %cst, %[[A2:.*]] = %cst, %[[A3:.*]] = %cst)
// UNROLL: memref.load %arg0[%{{.*}}, %[[R]]]
// UNROLL: %[[T0:.*]] = arith.addf %[[A0]]
// UNROLL: %[[R1:.*]] = arith.addi %[[R]], %c32
// UNROLL: memref.load %arg0[%{{.*}}, %[[R1]]]
// UNROLL: %[[T1:.*]] = arith.addf %[[A1]]
// UNROLL: %[[R2:.*]] = arith.addi %[[R]], %c64
// UNROLL: memref.load %arg0[%{{.*}}, %[[R2]]]
// UNROLL: %[[T2:.*]] = arith.addf %[[A2]]
// UNROLL: %[[R3:.*]] = arith.addi %[[R]], %c96
// UNROLL: memref.load %arg0[%{{.*}}, %[[R3]]]
// UNROLL: %[[T3:.*]] = arith.addf %[[A3]]
// UNROLL: scf.yield %[[T0]], %[[T1]], %[[T2]], %[[T3]]
// UNROLL: %[[REST:.*]] = arith.addi %[[MID]], %[[LANE]]
// UNROLL: %[[F:.*]] = scf.for %{{.*}} = %[[REST]] to %[[STOP]] step %c32 iter_args(%{{.*}} = %[[S]]#0)
// UNROLL: %[[U:.*]] = arith.addf %[[F]], %[[S]]#1
// UNROLL: %[[V:.*]] = arith.addf %[[S]]#2, %[[S]]#3
// UNROLL: %[[W:.*]] = arith.addf %[[U]], %[[V]]
// UNROLL: gpu.shuffle  xor %[[W]], %c16_i32
// UNROLL: scf.for %{{.*}} = %{{.*}} to %c16 step %c32
// UNROLL-NOT: step %c128
// UNROLL: return
// With vectors, a lane's 4 steps of a round are contiguous: lane l starts
// at its part's step 4 l and loads its 4 steps as one aligned vector (rows
// of 8192 and parts of 512 steps are multiples of 4 f32, 16 bytes), each
// masked and added into a sum of its own; the steps left stay strided.
// VECTORS-LABEL: func.func @long_rows
// VECTORS: %[[FROM:.*]] = arith.muli %{{.*}}, %c512
// VECTORS: %[[FIRST:.*]] = arith.muli %[[LANE:.*]], %c4
// VECTORS: %[[START:.*]] = arith.addi %[[FROM]], %[[FIRST]]
// VECTORS: %[[S:.*]]:4 = scf.for %[[R:.*]] = %[[START]] to %{{.*}} step %c128 iter_args(%[[A0:.*]] = %cst, %[[A1:.*]] = %cst, %[[A2:.*]] = %cst, %[[A3:.*]] = %cst)
// VECTORS: %[[V:.*]] = vector.load %arg0[%{{.*}}, %[[R]]] {alignment = 16 : i64} : memref<4x8192xf32>, vector<4xf32>
// VECTORS: vector.extract %[[V]][0]
// VECTORS: arith.select
// VECTORS: arith.addf %[[A0]]
// VECTORS: vector.extract %[[V]][3]
// VECTORS: arith.addi %[[R]], %c3
// VECTORS: arith.select
// VECTORS: arith.addf %[[A3]]
// VECTORS-NOT: memref.load %arg0
// VECTORS: scf.yield
// VECTORS: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32 iter_args(%{{.*}} = %[[S]]#0)
// VECTORS: memref.load %arg0
// 8 steps a round of f32 are more than one 16-byte vector: a lane takes 4
// contiguous steps of each half-round of 128 (lane l: steps 4 l and 128 +
// 4 l of a round of 256), two vector loads a round, each half-round's
// loads of a warp contiguous, 8 sums.
// VECTORS8-LABEL: func.func @long_rows
// VECTORS8: %[[FIRST:.*]] = arith.muli %[[LANE:.*]], %c4
// VECTORS8: %[[START:.*]] = arith.addi %{{.*}}, %[[FIRST]]
// VECTORS8: %{{.*}}:8 = scf.for %[[R:.*]] = %[[START]] to %{{.*}} step %c256 iter_args(
// VECTORS8: vector.load %arg0[%{{.*}}, %[[R]]] {alignment = 16 : i64} : memref<4x8192xf32>, vector<4xf32>
// VECTORS8: %[[HALF:.*]] = arith.addi %[[R]], %c128
// VECTORS8: vector.load %arg0[%{{.*}}, %[[HALF]]] {alignment = 16 : i64} : memref<4x8192xf32>, vector<4xf32>
// VECTORS8-NOT: memref.load %arg0
// VECTORS8: scf.yield {{.*}} : f32, f32, f32, f32, f32, f32, f32, f32
// VECTORS8: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// VECTORS8: memref.load %arg0
#e = affine_map<(b, k, n) -> (k, n)>
#len = affine_map<(b, k, n) -> (b)>
#row = affine_map<(b, k, n) -> (b, k)>
func.func @long_rows(%e: memref<4x8192xf32>, %len: memref<1xi32> {linformer.lengths}, %s: memref<1x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<1x4xf32>)
  linalg.generic {indexing_maps = [#e, #len, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %len : memref<4x8192xf32>, memref<1xi32>) outs(%s : memref<1x4xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true>} {
  ^bb0(%a: f32, %l: i32, %acc: f32):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i32
    %real = arith.cmpi slt, %ni, %l : i32
    %t = arith.select %real, %a, %zero : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same sums in a function without a marked lengths argument: nothing
// to stop at, so every lane walks the whole row.
// CHECK-LABEL: func.func @long_rows_unmarked
// CHECK-NOT: arith.minsi
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8192 step %c32
#e = affine_map<(b, k, n) -> (k, n)>
#len = affine_map<(b, k, n) -> (b)>
#row = affine_map<(b, k, n) -> (b, k)>
func.func @long_rows_unmarked(%e: memref<4x8192xf32>, %len: memref<1xi32>, %s: memref<1x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#e, #len, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %len : memref<4x8192xf32>, memref<1xi32>) outs(%s : memref<1x4xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true>} {
  ^bb0(%a: f32, %l: i32, %acc: f32):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i32
    %real = arith.cmpi slt, %ni, %l : i32
    %t = arith.select %real, %a, %zero : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Row sums over tokens (linformer.token_loops: batch loop 0, token loop 1,
// the last parallel one): blocks of 8 tokens of one sequence, so the block
// loop gets the length rule (2 sequences x 16 blocks of 8 tokens).
// CHECK-LABEL: func.func @token_rows
// CHECK: } {linformer.cuda_token_rows = #linformer.token_rows<grid = [2, 16], batch = 0, row = 1, tile = 8>, mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
#x = affine_map<(b, n, c) -> (b, n, c)>
#row = affine_map<(b, n, c) -> (b, n)>
func.func @token_rows(%x: memref<2x128x64xf32>, %m: memref<2x128xf32>) {
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x128x64xf32>) outs(%m : memref<2x128xf32>) attrs = {linformer.token_loops = array<i64: 0, 1>} {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A LayerNorm's statistics: the mean (a fill, a row sum) and the variance
// reading it at its row (an allocation, a fill, a row sum) become one
// kernel: a warp adds the row's terms for the mean, its butterfly gives
// every lane the total, lane 0 stores it, and the lanes add the variance's
// terms with that total where the variance read the mean (no load of it),
// a second butterfly, lane 0 storing the variance. Both fills go.
// CHECK-LABEL: func.func @stats
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c2) step (%c1)
// CHECK: scf.parallel (%{{.*}}, %[[LANE:.*]]) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1)
// CHECK: %[[P:.*]] = scf.for %{{.*}} = %[[LANE]] to %c128 step %c32
// CHECK: gpu.shuffle  xor %[[P]], %c16_i32, %c32_i32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[T:.*]] = arith.addf
// CHECK: %[[MEAN:.*]] = arith.addf %[[T]], %cst
// CHECK: %[[Q:.*]] = scf.for %{{.*}} = %[[LANE]] to %c128 step %c32
// CHECK-NOT: memref.load %arg1
// CHECK: arith.subf %{{.*}}, %[[MEAN]]
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor %[[Q]], %c16_i32, %c32_i32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[U:.*]] = arith.addf
// CHECK: %[[VAR:.*]] = arith.addf %[[U]], %cst
// CHECK: scf.if
// CHECK: memref.store %[[MEAN]], %arg1
// CHECK: memref.store %[[VAR]], %[[V:.*]][
// CHECK-NOT: scf.parallel
// CHECK: return
// UNPAIRED-LABEL: func.func @stats
// UNPAIRED: scf.parallel
// UNPAIRED: memref.store %{{.*}}, %arg1
// UNPAIRED: scf.parallel
// UNPAIRED: memref.load %arg1
#x = affine_map<(n, c) -> (n, c)>
#row = affine_map<(n, c) -> (n)>
func.func @stats(%x: memref<16x128xf32>, %m: memref<16xf32>) -> memref<16xf32> {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x128xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  %v = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%v : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<16x128xf32>, memref<16xf32>) outs(%v : memref<16xf32>) {
  ^bb0(%a: f32, %mu: f32, %acc: f32):
    %d = arith.subf %a, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return %v : memref<16xf32>
}

// -----

// A LayerNorm: its mean, its variance and its normalization (reading both
// at its row, writing an f32 output and a bf16 twin) in one kernel; the
// lanes compute their steps of the row with the totals from registers.
// CHECK-LABEL: func.func @layernorm
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c2) step (%c1)
// CHECK: scf.parallel (%{{.*}}, %[[LANE:.*]]) = (%c0, %c0) to (%c8, %c32) step (%c1, %c1)
// CHECK: %[[MEAN:.*]] = arith.addf %{{.*}}, %cst
// CHECK: %[[VAR:.*]] = arith.addf %{{.*}}, %cst
// CHECK: scf.if
// CHECK: memref.store %[[MEAN]], %arg1
// CHECK: memref.store %[[VAR]], %arg2
// CHECK: }
// CHECK: scf.for %[[C:.*]] = %[[LANE]] to %c128 step %c32 {
// CHECK-NOT: memref.load %arg1
// CHECK-NOT: memref.load %arg2
// CHECK: %[[G:.*]] = memref.load %arg3[%[[C]]]
// CHECK: arith.mulf %[[MEAN]]
// CHECK: arith.mulf %[[VAR]]
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = arith.mulf %{{.*}}, %[[G]]
// CHECK: %[[T:.*]] = arith.truncf %[[Y]]
// CHECK: memref.store %[[Y]], %arg4[%{{.*}}, %[[C]]]
// CHECK: memref.store %[[T]], %arg5[%{{.*}}, %[[C]]]
// CHECK-NOT: scf.parallel
// CHECK: return
// UNPAIRED-LABEL: func.func @layernorm
// UNPAIRED-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32
// UNPAIRED: linalg.generic
// UNFOLDED-LABEL: func.func @layernorm
// UNFOLDED-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32
// UNFOLDED: memref.store %{{.*}}, %arg2
// UNFOLDED: linalg.generic
// UNFOLDED-SAME: ins(%arg0, %arg1, %arg2, %arg3
// Unrolled, each of the pair's sums takes its row's 128 steps as one
// round of 4 (no loop of steps left); the normalization is not unrolled.
// UNROLL-LABEL: func.func @layernorm
// UNROLL: %[[M:.*]]:4 = scf.for %{{.*}} = %[[LANE:.*]] to %c128 step %c128 iter_args(
// UNROLL-NOT: scf.for
// UNROLL: arith.addf %[[M]]#0, %[[M]]#1
// UNROLL: arith.addf %[[M]]#2, %[[M]]#3
// UNROLL: gpu.shuffle  xor %{{.*}}, %c16_i32
// UNROLL: %[[V:.*]]:4 = scf.for %{{.*}} = %[[LANE]] to %c128 step %c128 iter_args(
// UNROLL-NOT: scf.for
// UNROLL: arith.addf %[[V]]#0, %[[V]]#1
// UNROLL: arith.addf %[[V]]#2, %[[V]]#3
// UNROLL: gpu.shuffle  xor %{{.*}}, %c16_i32
// UNROLL: scf.for %{{.*}} = %[[LANE]] to %c128 step %c32 {
// With vectors, each sum of the pair loads a lane's 4 steps of x as one
// vector (the variance takes the mean from the butterfly, not memory).
// VECTORS-LABEL: func.func @layernorm
// VECTORS: %[[FIRST:.*]] = arith.muli %[[LANE:.*]], %c4
// VECTORS: scf.for %[[R:.*]] = %[[FIRST]] to %c128 step %c128
// VECTORS: vector.load %arg0[%{{.*}}, %[[R]]] {alignment = 16 : i64} : memref<16x128xf32>, vector<4xf32>
// VECTORS: gpu.shuffle  xor %{{.*}}, %c16_i32
// VECTORS: scf.for %[[R2:.*]] = %[[FIRST]] to %c128 step %c128
// VECTORS-NOT: memref.load %arg1
// VECTORS: vector.load %arg0[%{{.*}}, %[[R2]]] {alignment = 16 : i64} : memref<16x128xf32>, vector<4xf32>
// VECTORS: gpu.shuffle  xor %{{.*}}, %c16_i32
// The normalization too: x and the scale loaded, y and its bf16 twin
// stored, as one vector each of a lane's 4 contiguous steps.
// VECTORS: scf.for %[[C:.*]] = %[[FIRST]] to %c128 step %c128 {
// VECTORS: vector.load %arg0[%{{.*}}, %[[C]]] {alignment = 16 : i64} : memref<16x128xf32>, vector<4xf32>
// VECTORS: vector.load %arg3[%[[C]]] {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// VECTORS-NOT: memref.store
// VECTORS: %[[Y:.*]] = vector.from_elements {{.*}} : vector<4xf32>
// VECTORS: vector.store %[[Y]], %arg4[%{{.*}}, %[[C]]] {alignment = 16 : i64} : memref<16x128xf32>, vector<4xf32>
// VECTORS: %[[T:.*]] = vector.from_elements {{.*}} : vector<4xbf16>
// VECTORS: vector.store %[[T]], %arg5[%{{.*}}, %[[C]]] {alignment = 8 : i64} : memref<16x128xbf16>, vector<4xbf16>
#x = affine_map<(n, c) -> (n, c)>
#row = affine_map<(n, c) -> (n)>
#col = affine_map<(n, c) -> (c)>
func.func @layernorm(%x: memref<16x128xf32>, %m: memref<16xf32>,
                     %v: memref<16xf32>, %g: memref<128xf32>,
                     %y: memref<16x128xf32>, %t: memref<16x128xbf16>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.0078125 : f32
  %eps = arith.constant 1.0e-5 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x128xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%v : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<16x128xf32>, memref<16xf32>) outs(%v : memref<16xf32>) {
  ^bb0(%a: f32, %s: f32, %acc: f32):
    %mu = arith.mulf %s, %inv : f32
    %d = arith.subf %a, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x, #row, #row, #col, #x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %v, %g : memref<16x128xf32>, memref<16xf32>, memref<16xf32>, memref<128xf32>)
      outs(%y, %t : memref<16x128xf32>, memref<16x128xbf16>) {
  ^bb0(%a: f32, %s: f32, %q: f32, %gamma: f32, %o: f32, %ot: bf16):
    %mu = arith.mulf %s, %inv : f32
    %var = arith.mulf %q, %inv : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %d = arith.subf %a, %mu : f32
    %n = arith.mulf %d, %rs : f32
    %r = arith.mulf %n, %gamma : f32
    %rt = arith.truncf %r : f32 to bf16
    linalg.yield %r, %rt : f32, bf16
  }
  return
}

// -----

// A normalization that writes the buffer the sums read (in place) keeps a
// kernel of its own.
// CHECK-LABEL: func.func @in_place
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: linalg.generic
#x = affine_map<(n, c) -> (n, c)>
#row = affine_map<(n, c) -> (n)>
func.func @in_place(%x: memref<16x128xf32>, %m: memref<16xf32>,
                    %v: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x128xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%v : memref<16xf32>)
  linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<16x128xf32>, memref<16xf32>) outs(%v : memref<16xf32>) {
  ^bb0(%a: f32, %mu: f32, %acc: f32):
    %d = arith.subf %a, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%m, %v : memref<16xf32>, memref<16xf32>) outs(%x : memref<16x128xf32>) {
  ^bb0(%mu: f32, %q: f32, %o: f32):
    %r = arith.mulf %mu, %q : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows of 65 f32: no run of steps fits an aligned vector of every row
// (65 is odd), so even with vectors a lane's 2 steps of a round (65 steps
// take rounds of 64) stay 32 apart, one element a load.
// VECTORS-LABEL: func.func @odd_rows
// VECTORS-NOT: vector.load
// VECTORS: scf.for %{{.*}} = %[[LANE:.*]] to %c64 step %c64 iter_args(
// VECTORS: memref.load %arg0
// VECTORS: arith.addi %{{.*}}, %c32
// VECTORS: memref.load %arg0
// VECTORS: return
#x = affine_map<(r, c) -> (r, c)>
#r = affine_map<(r, c) -> (r)>
func.func @odd_rows(%x: memref<4x65xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x65xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  }
  return
}
