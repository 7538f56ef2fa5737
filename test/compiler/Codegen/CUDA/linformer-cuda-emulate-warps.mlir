// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-warp-reductions,linformer-cuda-emulate-warps,canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-emulate-warps))' | FileCheck %s --check-prefix=HAND

// The warp row sums on the host: the thread loop is split at each of its
// five shuffles. The first loop walks the row and stores each lane's
// partial; each next one adds its own element and lane `l xor offset`'s
// (16, 8, 4, 2, 1, the kernel's own order) into the next buffer; the last
// has lane 0 store the total. The row's indices are computed again there,
// not kept. No shuffle is left for the CPU.
// CHECK-LABEL: func.func @mean
// CHECK-NOT: gpu.shuffle
// CHECK: %[[P0:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK: %[[P1:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK: scf.parallel (%[[W:.*]], %[[L:.*]]) = (%c0, %c0) to (%c8, %c32)
// CHECK: %[[S:.*]] = scf.for
// CHECK: memref.store %[[S]], %[[P0]][%[[W]], %[[L]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: } {mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
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
// CHECK: memref.dealloc %[[P0]]
// CHECK: memref.dealloc %[[P1]]
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
// kept in a buffer of its own; the shuffled value, used after it too, is
// read back from its buffer, the partner's element from the same; the
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
// HAND: %[[I2:.*]] = memref.load %[[SH]][%[[U]]]
// HAND: %[[A2:.*]] = memref.load %[[KEEP]][%[[U]]]
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
  // %in is written as well: its loads are not computed again (see @input).
  %z = arith.constant 0.0 : f32
  memref.store %z, %in[%c0] : memref<64xf32>
  return
}

// -----

// A shuffle in a loop every thread runs alike: an scf.for of thread loops.
// The carried value lives in a buffer (stored before the loop, loaded at
// the start of each step, the step's yield stored at its end); each step
// is split at the shuffle as a thread loop is; the loop after it reads the
// result from the carried buffer.
// HAND-LABEL: func.func @in_a_loop
// HAND: %[[INIT:.*]] = memref.alloc() : memref<32xf32>
// HAND: %[[CARRIED:.*]] = memref.alloc() : memref<32xf32>
// HAND: %[[SH:.*]] = memref.alloc() : memref<32xf32>
// HAND: memref.store %{{.*}}, %[[CARRIED]]
// HAND: scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// HAND: scf.parallel (%[[T:.*]]) = (%c0) to (%c32) step (%c1) {
// HAND: %[[X:.*]] = memref.load %[[CARRIED]][%[[T]]]
// HAND: memref.store %[[X]], %[[SH]][%[[T]]]
// HAND: scf.parallel (%[[U:.*]]) = (%c0) to (%c32) step (%c1) {
// HAND: %[[MINE:.*]] = memref.load %[[SH]][%[[U]]]
// HAND: %[[P:.*]] = arith.xori %[[U]], %{{.*}}
// HAND: %[[THEIRS:.*]] = memref.load %[[SH]][%[[P]]]
// HAND: %[[Y:.*]] = arith.addf %[[MINE]], %[[THEIRS]]
// HAND: memref.store %[[Y]], %[[CARRIED]][%[[U]]]
// HAND: }
// HAND: }
// HAND: scf.parallel (%[[V:.*]]) = (%c0) to (%c32) step (%c1) {
// HAND-NEXT: %[[S:.*]] = memref.load %[[CARRIED]][%[[V]]]
// HAND-NEXT: memref.store %[[S]], %arg1[%[[V]]]
// HAND-NOT: gpu.shuffle
func.func @in_a_loop(%in: memref<32xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %a = memref.load %in[%t] : memref<32xf32>
    %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a) -> (f32) {
      %o, %v = gpu.shuffle xor %x, %off, %w : f32
      %y = arith.addf %x, %o : f32
      scf.yield %y : f32
    }
    memref.store %s, %out[%t] : memref<32xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  %z = arith.constant 0.0 : f32
  memref.store %z, %in[%c0] : memref<32xf32>
  return
}

// -----

// A load of an input that nothing writes (an argument only loaded from,
// as the lengths are) reads the same wherever it runs: it is loaded again
// after the split rather than kept, and may bound a loop of thread loops
// (the same for every thread).
// HAND-LABEL: func.func @input
// HAND: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND-NEXT: %[[N:.*]] = memref.load %arg0[%c0] : memref<2xi32>
// HAND-NEXT: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// HAND: scf.for %{{.*}} = %c0 to %[[NI]] step %c1 {
// HAND: } {mapping
// HAND: }
// HAND: scf.parallel
// HAND: %[[M:.*]] = memref.load %arg0[%c0] : memref<2xi32>
// HAND: arith.addi %{{.*}}, %[[M]] : i32
func.func @input(%len: memref<2xi32>, %out: memref<32xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %n = memref.load %len[%c0] : memref<2xi32>
    %ni = arith.index_cast %n : i32 to index
    %s = scf.for %i = %c0 to %ni step %c1 iter_args(%x = %n) -> (i32) {
      %o, %v = gpu.shuffle xor %x, %off, %w : i32
      %y = arith.addi %x, %o : i32
      scf.yield %y : i32
    }
    %r = arith.addi %s, %n : i32
    memref.store %r, %out[%t] : memref<32xi32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// mma.sync m16n8k4 on tf32 in a k loop (as linformer-cuda-tensor-core-
// contractions emits it): the loop becomes a loop of thread loops; each
// step's A and B fragments go to buffers, and the next loop computes each
// lane's D from them as the PTX ISA lays them out (g = l / 4, t = l % 4
// within the warp): D[g + 8h][2t + o] = C + sum over k of A[g + 8h][k]
// (lane 4g + k, register h) times B[k][2t + o] (lane 4(2t + o) + k), k in
// order, in f32. C is the lane's own accumulator (the carried buffer), D
// goes back there, where the stores after the loop read it.
// CHECK-LABEL: func.func @mma_tf32
// CHECK-NOT: nvgpu.mma.sync
// CHECK: %[[CARRIED:.*]] = memref.alloc() : memref<32xvector<2x2xf32>>
// CHECK: %[[AF:.*]] = memref.alloc() : memref<32xvector<2x1xf32>>
// CHECK: %[[BF:.*]] = memref.alloc() : memref<32xvector<1x1xf32>>
// CHECK: scf.for %[[K:.*]] = %c0 to %c8 step %c4 {
// CHECK: scf.parallel (%[[L:.*]]) =
// CHECK: memref.store %{{.*}}, %[[AF]][%[[L]]]
// CHECK: memref.store %{{.*}}, %[[BF]][%[[L]]]
// CHECK: scf.parallel (%[[M:.*]]) =
// CHECK: %[[C:.*]] = memref.load %[[CARRIED]][%[[M]]]
// CHECK: %[[W:.*]] = arith.remui %[[M]], %c32
// CHECK: %[[BASE:.*]] = arith.subi %[[M]], %[[W]]
// CHECK: %[[G:.*]] = arith.divui %[[W]], %c4
// CHECK: %[[T:.*]] = arith.remui %[[W]], %c4
// CHECK: %[[G4:.*]] = arith.muli %[[G]], %c4
// CHECK: %[[T8:.*]] = arith.muli %[[T]], %c8
// CHECK: %[[C00:.*]] = vector.extract %[[C]][0, 0]
// CHECK: %[[AL0:.*]] = arith.addi %[[BASE]], %[[G4]]
// CHECK: %[[A0:.*]] = memref.load %[[AF]][%[[AL0]]]
// CHECK: %[[A00:.*]] = vector.extract %[[A0]][0, 0]
// CHECK: %[[BL0:.*]] = arith.addi %[[BASE]], %[[T8]]
// CHECK: %[[B0:.*]] = memref.load %[[BF]][%[[BL0]]]
// CHECK: %[[B00:.*]] = vector.extract %[[B0]][0, 0]
// CHECK: %[[P0:.*]] = arith.mulf %[[A00]], %[[B00]]
// CHECK: %[[S0:.*]] = arith.addf %[[C00]], %[[P0]]
// CHECK: %[[J1:.*]] = arith.addi %[[G4]], %c1
// CHECK: %[[AL1:.*]] = arith.addi %[[BASE]], %[[J1]]
// CHECK: memref.load %[[AF]][%[[AL1]]]
// Column 2t + 1: B from lanes 4(2t + 1) + k.
// CHECK: %[[C01:.*]] = vector.extract %[[C]][0, 1]
// CHECK: %[[J4:.*]] = arith.addi %[[T8]], %c4
// CHECK: %[[BL4:.*]] = arith.addi %[[BASE]], %[[J4]]
// CHECK: memref.load %[[BF]][%[[BL4]]]
// Row g + 8: register 1 of the same A fragments.
// CHECK: vector.extract %[[C]][1, 0]
// CHECK: vector.extract %[[A0]][1, 0]
// CHECK: %[[D:.*]] = vector.from_elements
// CHECK: memref.store %[[D]], %[[CARRIED]][%[[M]]]
// CHECK: scf.parallel (%[[R:.*]]) =
// CHECK-NEXT: %[[ACC:.*]] = memref.load %[[CARRIED]][%[[R]]]
// CHECK: %[[E0:.*]] = vector.extract %[[ACC]][0, 0]
// CHECK-NEXT: memref.store %[[E0]], %arg2
func.func @mma_tf32(%a: memref<16x8xf32>, %b: memref<8x8xf32>, %c: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant dense<0.0> : vector<2x2xf32>
  scf.parallel (%l) = (%c0) to (%c32) step (%c1) {
    %g = arith.divui %l, %c4 : index
    %t = arith.remui %l, %c4 : index
    %g8 = arith.addi %g, %c8 : index
    %acc = scf.for %k = %c0 to %c8 step %c4 iter_args(%x = %zero) -> (vector<2x2xf32>) {
      %kt = arith.addi %k, %t : index
      %a0 = memref.load %a[%g, %kt] : memref<16x8xf32>
      %a1 = memref.load %a[%g8, %kt] : memref<16x8xf32>
      %af = vector.from_elements %a0, %a1 : vector<2x1xf32>
      %b0 = memref.load %b[%kt, %g] : memref<8x8xf32>
      %bf = vector.broadcast %b0 : f32 to vector<1x1xf32>
      %d = nvgpu.mma.sync(%af, %bf, %x) {mmaShape = [16, 8, 4], tf32Enabled} : (vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      scf.yield %d : vector<2x2xf32>
    }
    %t2 = arith.muli %t, %c2 : index
    %t21 = arith.addi %t2, %c1 : index
    %e0 = vector.extract %acc[0, 0] : f32 from vector<2x2xf32>
    memref.store %e0, %c[%g, %t2] : memref<16x8xf32>
    %e3 = vector.extract %acc[1, 1] : f32 from vector<2x2xf32>
    memref.store %e3, %c[%g8, %t21] : memref<16x8xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// nvvm.mma.sync m16n8k16 on bf16 pairs (i32 registers, the lower k in the
// low half), two warps: each lane's D[g + 8][2t + 1] (the struct's element
// 3) is C's element 3 plus A's row g + 8 (registers 1 and 3: k < 8 and
// k >= 8) of lanes 4g + j times B's column 2t + 1 (registers 0 and 1) of
// lanes 4(2t + 1) + j, j = (k % 8) / 2, each bf16 extended to f32; the
// lanes are those of its own warp (l - l % 32 on).
// CHECK-LABEL: func.func @mma_bf16
// CHECK-NOT: nvvm.mma.sync
// CHECK: %[[A1:.*]] = memref.alloc() : memref<64xi32>
// CHECK: %[[A3:.*]] = memref.alloc() : memref<64xi32>
// CHECK: %[[B0:.*]] = memref.alloc() : memref<64xi32>
// CHECK: %[[B1:.*]] = memref.alloc() : memref<64xi32>
// CHECK: %[[C3:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.parallel
// CHECK: memref.load %arg0[%{{.*}}, %c1]
// CHECK: memref.load %arg0[%{{.*}}, %c3]
// CHECK: scf.parallel (%[[L:.*]]) =
// CHECK: %[[C:.*]] = memref.load %[[C3]][%[[L]]]
// CHECK: %[[W:.*]] = arith.remui %[[L]], %c32
// CHECK: %[[BASE:.*]] = arith.subi %[[L]], %[[W]]
// CHECK: %[[T8:.*]] = arith.muli %{{.*}}, %c8
// CHECK: %[[J4:.*]] = arith.addi %[[T8]], %c4
// CHECK: %[[BL:.*]] = arith.addi %[[BASE]], %[[J4]]
// CHECK: %[[BW:.*]] = memref.load %[[B0]][%[[BL]]]
// CHECK: memref.load %[[B1]][%[[BL]]]
// CHECK: %[[AW:.*]] = memref.load %[[A1]][%{{.*}}]
// CHECK: memref.load %[[A3]]
// CHECK: %[[AV:.*]] = vector.broadcast %[[AW]] : i32 to vector<1xi32>
// CHECK: %[[AP:.*]] = vector.bitcast %[[AV]] : vector<1xi32> to vector<2xbf16>
// CHECK: %[[AE:.*]] = vector.extract %[[AP]][0]
// CHECK: %[[X:.*]] = arith.extf %[[AE]] : bf16 to f32
// CHECK: %[[BV:.*]] = vector.broadcast %[[BW]] : i32 to vector<1xi32>
// CHECK: %[[BP:.*]] = vector.bitcast %[[BV]] : vector<1xi32> to vector<2xbf16>
// CHECK: %[[BE:.*]] = vector.extract %[[BP]][0]
// CHECK: %[[Y:.*]] = arith.extf %[[BE]] : bf16 to f32
// CHECK: %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK: arith.addf %[[C]], %[[P]]
// CHECK-COUNT-15: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: memref.store %{{.*}}, %arg2[%[[L]], %c3]
func.func @mma_bf16(%a: memref<64x4xi32>, %b: memref<64x2xi32>, %c: memref<64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%l) = (%c0) to (%c64) step (%c1) {
    %a0 = memref.load %a[%l, %c0] : memref<64x4xi32>
    %a1 = memref.load %a[%l, %c1] : memref<64x4xi32>
    %a2 = memref.load %a[%l, %c2] : memref<64x4xi32>
    %a3 = memref.load %a[%l, %c3] : memref<64x4xi32>
    %b0 = memref.load %b[%l, %c0] : memref<64x2xi32>
    %b1 = memref.load %b[%l, %c1] : memref<64x2xi32>
    %x0 = memref.load %c[%l, %c0] : memref<64x4xf32>
    %x1 = memref.load %c[%l, %c1] : memref<64x4xf32>
    %x2 = memref.load %c[%l, %c2] : memref<64x4xf32>
    %x3 = memref.load %c[%l, %c3] : memref<64x4xf32>
    %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%x0, %x1, %x2, %x3] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %d3, %c[%l, %c3] : memref<64x4xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A staged block written by hand: its threads copy into the block's
// shared memory with cp.async, meet at a barrier and read it back with
// ldmatrix (x4, then .trans x2). On the host the block's shared memory is
// a buffer allocated in the body of the loop over blocks, as large as its
// views reach, and the views are of it (no address space); the cp.async
// is a vector load and store, its group and wait go; the thread loop is
// split at the barrier and at each ldmatrix. Lane (g, t) = (l / 4, l % 4)
// of its warp gets, of matrix q, word t of the row that lane 8q + g points
// at (the pointers kept in a buffer of one a thread), or .trans element g
// of the rows of lanes 8q + 2t and 8q + 2t + 1.
// HAND-LABEL: func.func @staged
// HAND-NOT: gpu.barrier
// HAND-NOT: nvgpu.
// HAND-NOT: gpu.dynamic_shared_memory
// HAND: scf.parallel (%[[BLK:.*]]) =
// HAND-NEXT: %[[SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<512xi8>
// HAND: %[[ROWS:.*]] = memref.alloc() : memref<2x32xindex>
// HAND: %[[TROWS:.*]] = memref.alloc() : memref<2x32xindex>
// HAND: scf.parallel (%[[W:.*]], %[[L:.*]]) =
// HAND: %[[HALVES:.*]] = memref.view %[[SMEM]][%c0][] : memref<512xi8> to memref<256xbf16>
// HAND: %[[V:.*]] = vector.load %arg0[%[[AT:.*]]] : memref<256xbf16>, vector<4xbf16>
// HAND-NEXT: vector.store %[[V]], %[[HALVES]][%[[AT]]] : memref<256xbf16>, vector<4xbf16>
// HAND-NEXT: scf.reduce
// HAND: scf.parallel (%[[W2:.*]], %[[L2:.*]]) =
// HAND: %[[R:.*]] = arith.muli %[[L2]], %c4
// HAND-NEXT: memref.store %[[R]], %[[ROWS]][%[[W2]], %[[L2]]]
// HAND: scf.parallel (%[[W3:.*]], %[[L3:.*]]) =
// HAND: %[[WORDS:.*]] = memref.view %[[SMEM]][%c0][] : memref<512xi8> to memref<128xi32>
// HAND: %[[IN:.*]] = arith.remui %[[L3]], %c32
// HAND: %[[BASE:.*]] = arith.subi %[[L3]], %[[IN]]
// HAND: %[[G:.*]] = arith.divui %[[IN]], %c4
// HAND: %[[T:.*]] = arith.remui %[[IN]], %c4
// HAND: %[[G0:.*]] = arith.addi %[[G]], %c0
// HAND: %[[H0:.*]] = arith.addi %[[BASE]], %[[G0]]
// HAND: %[[P0:.*]] = memref.load %[[ROWS]][%[[W3]], %[[H0]]]
// HAND: %[[A0:.*]] = arith.addi %[[P0]], %[[T]]
// HAND: %[[M0:.*]] = memref.load %[[WORDS]][%[[A0]]] : memref<128xi32>
// HAND: %[[G1:.*]] = arith.addi %[[G]], %c8
// HAND: %[[H1:.*]] = arith.addi %[[BASE]], %[[G1]]
// HAND: memref.load %[[ROWS]][%[[W3]], %[[H1]]]
// HAND: vector.from_elements %[[M0]], %{{.*}}, %{{.*}}, %{{.*}} : vector<4x1xi32>
// HAND: scf.parallel (%[[W4:.*]], %[[L4:.*]]) =
// HAND: %[[I16:.*]] = memref.view %[[SMEM]][%c0][] : memref<512xi8> to memref<256xi16>
// HAND: %[[IN4:.*]] = arith.remui %[[L4]], %c32
// HAND: %[[BASE4:.*]] = arith.subi %[[L4]], %[[IN4]]
// HAND: %[[G4:.*]] = arith.divui %[[IN4]], %c4
// HAND: %[[T4:.*]] = arith.remui %[[IN4]], %c4
// HAND: %[[TWOT:.*]] = arith.muli %[[T4]], %c2
// HAND: %[[E0:.*]] = arith.addi %[[TWOT]], %c0
// HAND: %[[HT0:.*]] = arith.addi %[[BASE4]], %[[E0]]
// HAND: %[[PT0:.*]] = memref.load %[[TROWS]][%[[W4]], %[[HT0]]]
// HAND: %[[AT0:.*]] = arith.addi %[[PT0]], %[[G4]]
// HAND: %[[X0:.*]] = memref.load %[[I16]][%[[AT0]]] : memref<256xi16>
// HAND: %[[E1:.*]] = arith.addi %[[TWOT]], %c1
// HAND: %[[HT1:.*]] = arith.addi %[[BASE4]], %[[E1]]
// HAND: memref.load %[[TROWS]][%[[W4]], %[[HT1]]]
// HAND: %[[E8:.*]] = arith.addi %{{.*}}, %c8
// HAND: arith.addi %[[BASE4]], %[[E8]]
// HAND: vector.from_elements %[[X0]], %{{.*}}, %{{.*}}, %{{.*}} : vector<2x2xi16>
// HAND: memref.dealloc %[[SMEM]] : memref<512xi8>
// HAND-NEXT: scf.reduce
func.func @staged(%src: memref<256xbf16>, %out: memref<2x64x4xi32>, %outT: memref<2x64x4xi16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%blk) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%w, %l) = (%c0, %c0) to (%c2, %c32) step (%c1, %c1) {
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %words = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xi32, #gpu.address_space<workgroup>>
      %halves = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xbf16, #gpu.address_space<workgroup>>
      %wl = arith.muli %w, %c32 : index
      %tid = arith.addi %wl, %l : index
      %at = arith.muli %tid, %c4 : index
      %t0 = nvgpu.device_async_copy %src[%at], %halves[%at], 4 : memref<256xbf16> to memref<256xbf16, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t0
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
      %row = arith.muli %l, %c4 : index
      %m = nvgpu.ldmatrix %words[%row] {numTiles = 4 : i32, transpose = false} : memref<128xi32, #gpu.address_space<workgroup>> -> vector<4x1xi32>
      %i16 = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xi16, #gpu.address_space<workgroup>>
      %hrow = arith.muli %l, %c4 : index
      %mt = nvgpu.ldmatrix %i16[%hrow] {numTiles = 2 : i32, transpose = true} : memref<256xi16, #gpu.address_space<workgroup>> -> vector<2x2xi16>
      %e0 = vector.extract %m[0, 0] : i32 from vector<4x1xi32>
      %e3 = vector.extract %m[3, 0] : i32 from vector<4x1xi32>
      memref.store %e0, %out[%blk, %tid, %c0] : memref<2x64x4xi32>
      memref.store %e3, %out[%blk, %tid, %c1] : memref<2x64x4xi32>
      %h0 = vector.extract %mt[0, 0] : i16 from vector<2x2xi16>
      %h1 = vector.extract %mt[1, 1] : i16 from vector<2x2xi16>
      memref.store %h0, %outT[%blk, %tid, %c0] : memref<2x64x4xi16>
      memref.store %h1, %outT[%blk, %tid, %c1] : memref<2x64x4xi16>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Fewer lanes along x than a warp (the f32 attention core's 4 lanes a
// query row, 8 rows of them a warp): a shuffle whose offset is below 4
// stays in the row, so the partner is lane `l xor offset` of the same y.
// HAND-LABEL: func.func @lanes_of_a_row
// HAND-NOT: gpu.shuffle
// HAND: %[[BUF:.*]] = memref.alloc() : memref<8x4xf32>
// HAND: scf.parallel (%[[Y:.*]], %[[L:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// HAND: memref.store %{{.*}}, %[[BUF]][%[[Y]], %[[L]]]
// HAND: scf.parallel (%[[Y2:.*]], %[[L2:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// HAND: %[[X:.*]] = arith.xori %[[L2]], %{{.*}} : index
// HAND: memref.load %[[BUF]][%[[Y2]], %[[X]]]
// HAND-NOT: gpu.shuffle
// HAND: return
func.func @lanes_of_a_row(%in: memref<8x4xf32>, %out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %off = arith.constant 2 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%y, %l) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %a = memref.load %in[%y, %l] : memref<8x4xf32>
    %o, %v = gpu.shuffle xor %a, %off, %w : f32
    %s = arith.addf %a, %o : f32
    memref.store %s, %out[%y, %l] : memref<8x4xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// wgmma.mma_async (shared-memory A and B) on the host: no split (no
// thread reads another's registers); each thread's D registers computed
// in place from the operands where the descriptors point: their start,
// leading and stride byte offsets decoded from the descriptors' bits (0,
// 16, 32), the 16-bit elements read from a bf16 view of the block's
// buffer; A's rows 16 w + g (+ 8) (32 loads), then for B's column 2 t its
// 16 elements and registers 0 and 2 (rows g, g + 8), each its 16 products
// added in k order, then column 2 t + 1 and registers 1 and 3. The wgmma
// fences, commit and wait go.
// HAND-LABEL: func.func @warpgroup
// HAND-NOT: nvvm.wgmma
// HAND: %[[BUF:.*]] = memref.alloc() {alignment = 16 : i64} : memref<4096xi8>
// HAND: scf.parallel
// HAND: memref.extract_aligned_pointer_as_index
// HAND: %[[DA:.*]] = arith.ori %{{.*}}, %{{.*}} : i64
// HAND: %[[DB:.*]] = arith.ori %{{.*}}, %{{.*}} : i64
// HAND: memref.view %[[BUF]][%{{.*}}][] : memref<4096xi8> to memref<2048xbf16>
// HAND: arith.shrui %[[DA]], %c0
// HAND: arith.shrui %[[DA]], %c16
// HAND: arith.shrui %[[DA]], %c32
// HAND: memref.view %[[BUF]][%{{.*}}][] : memref<4096xi8> to memref<2048xbf16>
// HAND: arith.shrui %[[DB]], %c0
// HAND: arith.shrui %[[DB]], %c16
// HAND: arith.shrui %[[DB]], %c32
// HAND-COUNT-48: memref.load %{{.*}} : memref<2048xbf16>
// HAND: llvm.extractvalue %[[D:.*]][0]
// HAND-COUNT-16: arith.mulf
// HAND: llvm.insertvalue %{{.*}}, %[[D]][0]
// HAND: llvm.extractvalue %[[D]][2]
// HAND: llvm.insertvalue %{{.*}}[2]
// HAND-COUNT-16: memref.load %{{.*}} : memref<2048xbf16>
// HAND: llvm.insertvalue %{{.*}}[1]
// HAND: %[[R:.*]] = llvm.insertvalue %{{.*}}[3]
// HAND-NOT: nvvm.wgmma
// HAND: llvm.extractvalue %[[R]][0]
func.func @warpgroup(%out: memref<4x32x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %mask = arith.constant 262143 : i64
  %c4_i64 = arith.constant 4 : i64
  // LBO 128 bytes, SBO 256, as descriptor fields.
  %fieldsA = arith.constant 68720001024 : i64
  %fieldsB = arith.constant 68720001024 : i64
  scf.parallel (%w, %l) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
    %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %smem = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1024xi32, #gpu.address_space<workgroup>>
    %addr = memref.extract_aligned_pointer_as_index %smem : memref<1024xi32, #gpu.address_space<workgroup>> -> index
    %bAddr = arith.addi %addr, %c1024 : index
    %a64 = arith.index_castui %addr : index to i64
    %am = arith.andi %a64, %mask : i64
    %as = arith.shrui %am, %c4_i64 : i64
    %descA = arith.ori %as, %fieldsA : i64
    %b64 = arith.index_castui %bAddr : index to i64
    %bm = arith.andi %b64, %mask : i64
    %bs = arith.shrui %bm, %c4_i64 : i64
    %descB = arith.ori %bs, %fieldsB : i64
    %zero = arith.constant 0.0 : f32
    %u = llvm.mlir.poison : !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.insertvalue %zero, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
    %d1 = llvm.insertvalue %zero, %d0[1] : !llvm.struct<(f32, f32, f32, f32)>
    %d2 = llvm.insertvalue %zero, %d1[2] : !llvm.struct<(f32, f32, f32, f32)>
    %d3 = llvm.insertvalue %zero, %d2[3] : !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.fence.aligned
    %r = nvvm.wgmma.mma_async %descA, %descB, %d3, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    %e0 = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %e0, %out[%w, %l, %c0] : memref<4x32x4xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A merged launch (linformer-cuda-merge-launches): the thread loop's body
// is one scf.if on the block, uniform in it. On the host the branch goes
// outside: a thread loop a branch, each split at its own shuffle.
// HAND-LABEL: func.func @merged
// HAND: scf.parallel (%[[B:.*]]) = (%c0) to (%c3) step (%c1) {
// HAND: %[[FIRST:.*]] = arith.cmpi ult, %[[B]], %c1 : index
// HAND: scf.if %[[FIRST]] {
// HAND: scf.parallel
// HAND: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND: scf.parallel
// HAND: arith.xori %{{.*}}, %c1
// HAND: memref.store %{{.*}}, %arg0
// HAND: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND: } else {
// HAND: scf.parallel
// HAND: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND: scf.parallel
// HAND: arith.xori %{{.*}}, %c2
// HAND: memref.store %{{.*}}, %arg1
// HAND: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// HAND: }
// HAND-NOT: gpu.shuffle
func.func @merged(%a: memref<32xi32>, %b: memref<2x32xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %w = arith.constant 32 : i32
  scf.parallel (%blk) = (%c0) to (%c3) step (%c1) {
    %first = arith.cmpi ult, %blk, %c1 : index
    %rest = arith.subi %blk, %c1 : index
    scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
      scf.if %first {
        %i = arith.index_cast %t : index to i32
        %one = arith.constant 1 : i32
        %o, %valid = gpu.shuffle xor %i, %one, %w : i32
        memref.store %o, %a[%t] : memref<32xi32>
      } else {
        %i = arith.index_cast %t : index to i32
        %two = arith.constant 2 : i32
        %o, %valid = gpu.shuffle xor %i, %two, %w : i32
        memref.store %o, %b[%rest, %t] : memref<2x32xi32>
      }
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}
