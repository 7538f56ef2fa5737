// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map})' | FileCheck %s --check-prefix=ONBUF
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core))' | FileCheck %s
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core))' 2>&1 | FileCheck %s --check-prefix=TENSORS
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-slots=16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=MMA
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-slots=16},linformer-cuda-expand-attention-core{mma=bf16 emulate exact},linformer-cuda-emulate-instructions,canonicalize,cse))' | FileCheck %s --check-prefix=EMU
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2816 core-slots=16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=STAGED
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2816 core-slots=16},linformer-cuda-expand-attention-core{mma=bf16 emulate},linformer-cuda-tile-parallel-loops,linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,canonicalize,cse))' | FileCheck %s --check-prefix=STAGEDEMU
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2815 core-slots=16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=MMA
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2816 core-ldmatrix core-slots=16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=STAGEDLDM
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2816 core-ldmatrix core-slots=16 core-tiles=2},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=TILES2
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{mma=fp8}))' 2>&1 | FileCheck %s --check-prefix=BADMMA
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=STEP
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16},linformer-cuda-expand-attention-core{mma=bf16 emulate exact},linformer-cuda-emulate-instructions,canonicalize,cse))' | FileCheck %s --check-prefix=STEPEMU
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2816 core-ldmatrix wgmma},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=WGCORE
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=2816 wgmma},linformer-cuda-expand-attention-core{mma=bf16 emulate},linformer-cuda-tile-parallel-loops,linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,canonicalize,cse))' | FileCheck %s --check-prefix=WGCOREEMU
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core{lanes=4}))' | FileCheck %s --check-prefix=LANES
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core{lanes=4 emulate},linformer-cuda-tile-parallel-loops,linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,canonicalize,cse))' | FileCheck %s --check-prefix=LANESEMU
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{lanes=2}))' 2>&1 | FileCheck %s --check-prefix=BADLANES
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core{lanes=0 min-blocks=8}))' | FileCheck %s --check-prefix=AUTO4
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core{lanes=0 min-blocks=9}))' | FileCheck %s --check-prefix=AUTO8
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core{lanes=0 rows=2 min-blocks=9}))' | FileCheck %s --check-prefix=AUTOROWS
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core{lanes=4 rows=2}))' | FileCheck %s --check-prefix=ROWS
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{rows=3}))' 2>&1 | FileCheck %s --check-prefix=BADROWS
// BADMMA: error: mma 'fp8' is not one this pass has (none, tf32, tf32x3, bf16 or f16)

// The core crosses bufferization as itself (destination-style): on
// buffers it reads q, keys, values and the mask and writes a new buffer.
// ONBUF-LABEL: func.func @core
// ONBUF: %[[O:.*]] = memref.alloc() {{.*}}: memref<2x4x64x16xf32>
// ONBUF: linformer.attention_core %arg0, %arg1, %arg2 scale(2.500000e-01) key_mask(%arg3) outs(%[[O]]) : (memref<2x4x64x16xf32>, memref<2x4x8x16xf32>, memref<2x4x8x16xf32>, memref<2x8xi8>, memref<2x4x64x16xf32>) -> ()

// On buffers: one parallel loop over (b, h, n); the k slots stream through
// an scf.for carrying the running max, sum and a vector accumulator, a
// block of 8 slots an iteration (k = 8: the largest of 16, 8, 4, 2 that
// divides it): each slot's score one fma chain over the head width (16),
// masked, and the block's max; one rescale, then each slot's P V. Each
// exponential is exp2(s c - m c) (c = scale log2(e)): one fma of the score
// and -m c, then ex2.approx.ftz, 0 while the running max is -inf (the
// mask). One division a row. Rows move as 16-byte aligned vectors. The only
// buffer allocated is the result (no scores).
// CHECK-LABEL: func.func @core
// CHECK: memref.alloc() {{.*}}: memref<2x4x64x16xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = ({{.*}}) to (%c2, %c4, %c64)
// CHECK: %[[Q:.*]] = vector.load %arg0[%[[B]], %[[H]], %[[I]], %{{.*}}] {alignment = 16 : i64} : memref<2x4x64x16xf32>, vector<16xf32>
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c8{{.*}} step %c8{{.*}} iter_args(%[[M:.*]] = %cst{{.*}}, %[[L:.*]] = %cst{{.*}}, %[[A:.*]] = %cst{{.*}}) -> (f32, f32, vector<16xf32>)
// CHECK: vector.load %arg1[%[[B]], %[[H]], %[[J]], %{{.*}}] {alignment = 16 : i64}
// CHECK-COUNT-16: llvm.intr.fma
// CHECK: memref.load %arg3[%[[B]], %[[J]]] : memref<2x8xi8>
// CHECK: %[[M0:.*]] = arith.maximumf %[[M]]
// CHECK: vector.load %arg1
// CHECK-COUNT-16: llvm.intr.fma
// CHECK: memref.load %arg3
// CHECK: arith.maximumf %[[M0]]
// CHECK-COUNT-6: arith.maximumf
// CHECK-NOT: vector.load %arg1
// CHECK: %[[MC:.*]] = arith.mulf %[[MNEW:.*]], %[[C:.*]] : f32
// CHECK: %[[NMC:.*]] = arith.negf %[[MC]]
// CHECK: %[[LIVE:.*]] = arith.cmpf ogt, %[[MNEW]]
// CHECK: %[[X:.*]] = math.fma %[[M]], %[[C]], %[[NMC]] : f32
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]])
// CHECK: %[[ALPHA:.*]] = arith.select %[[LIVE]], %[[E]]
// CHECK: vector.broadcast %[[ALPHA]]
// CHECK: arith.mulf %[[A]]
// CHECK: math.fma %{{.*}}, %[[C]], %[[NMC]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: vector.load %arg2[%[[B]], %[[H]], %[[J]], %{{.*}}] {alignment = 16 : i64}
// CHECK: vector.fma
// CHECK-COUNT-7: vector.fma
// CHECK-NOT: math.exp
// CHECK-NOT: llvm.call_intrinsic
// CHECK: scf.yield
// CHECK: %[[RCP:.*]] = arith.divf %cst{{.*}}, %{{.*}}#1 : f32
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}#2, %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[I]], %{{.*}}] {alignment = 16 : i64} : memref<2x4x64x16xf32>, vector<16xf32>
// TENSORS: error: the fused attention core expands on buffers: run bufferization first
// BADLANES: error: lanes 2 is not a count of lanes a query row the f32 core takes (0: chosen, 1, 4, 8 or 16)
// Chosen (lanes=0): 4 while the 2 x 4 x 64 rows x 4 lanes give 256 threads
// for each of min-blocks blocks (8), else 8.
// AUTO4: scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c4, %c64, %c4{{.*}})
// AUTO8: scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c4, %c64, %c8{{.*}})
// With 2 rows a lane, chosen lanes are 4 whatever the threads (min-blocks
// 9 would choose 8 for one row): pairs of rows, 4 lanes each.
// AUTOROWS: scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c4, %c32, %c4{{.*}})

// Four lanes a query row (lanes=4; n = 64 is a multiple of 32, the head
// width 16 of 4): the loop gets the lanes' dimension innermost, each lane
// loads its 4-column slice of q, K, V and the output (at 4 x lane), each
// slot's partial dot product (4 fmas) is added over the 4 lanes by a
// butterfly of shuffles (xor 2, then 1: every lane gets the same sum), and
// the loop is marked for whole-warp blocks.
// LANES-LABEL: func.func @core
// LANES: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[G:.*]]) = ({{.*}}) to (%c2, %c4, %c64, %c4{{.*}})
// LANES: %[[C0:.*]] = arith.muli %[[G]], %c4
// LANES: vector.load %arg0[%[[B]], %[[H]], %[[I]], %[[C0]]] {alignment = 16 : i64} : memref<2x4x64x16xf32>, vector<4xf32>
// LANES: scf.for
// LANES: vector.load %arg1[%[[B]], %[[H]], %{{.*}}, %[[C0]]] {alignment = 16 : i64} : memref<2x4x8x16xf32>, vector<4xf32>
// LANES-COUNT-4: llvm.intr.fma
// LANES: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[P:.*]], %c2_i32, %c32_i32 : f32
// LANES-NEXT: %[[X:.*]] = arith.addf %[[P]], %[[S1]] : f32
// LANES: %[[S2:.*]], %{{.*}} = gpu.shuffle xor %[[X]], %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// LANES-NEXT: arith.addf %[[X]], %[[S2]] : f32
// LANES: vector.load %arg2[%[[B]], %[[H]], %{{.*}}, %[[C0]]]
// LANES: vector.store %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[I]], %[[C0]]] {alignment = 16 : i64} : memref<2x4x64x16xf32>, vector<4xf32>
// LANES: } {linformer.cuda_whole_warps}
// Emulated, the host runs the same butterfly: mapped, a block is one warp
// of 8 rows x 4 lanes (fewer than 32 along x), and
// linformer-cuda-emulate-warps splits its thread loop at each shuffle,
// each lane then reading its partner's partial sum at lane xor 2, then
// xor 1, in its row.
// LANESEMU-LABEL: func.func @core
// LANESEMU-NOT: gpu.shuffle
// LANESEMU: llvm.intr.fma
// LANESEMU: memref.store %{{.*}}, %[[BUF:.*]][%c0, %{{.*}}, %{{.*}}] : memref<1x8x4xf32>
// LANESEMU: scf.parallel (%[[R:.*]], %[[L:.*]]) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1)
// LANESEMU: %[[X2:.*]] = arith.xori %[[L]], %c2 : index
// LANESEMU: memref.load %[[BUF]][%c0, %[[R]], %[[X2]]]
// LANESEMU: scf.parallel
// LANESEMU: arith.xori %{{.*}}, %c1 : index
// LANESEMU-NOT: gpu.shuffle
// LANESEMU: return
// Two query rows a lane (rows=2): the loop's third dimension counts pairs
// of rows (32 of the 64), rows 2 i and 2 i + 1; each slot's K slice is
// loaded once and feeds both rows' partial dot products (two butterflies),
// the mask read once; the loop and its online softmax carry (m, l, acc)
// for each row, and both rows are stored.
// ROWS-LABEL: func.func @core
// ROWS: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[G:.*]]) = ({{.*}}) to (%c2, %c4, %c32, %c4{{.*}})
// ROWS: %[[I0:.*]] = arith.addi %{{.*}}, %c0
// ROWS: %[[I1:.*]] = arith.addi %{{.*}}, %c1
// ROWS: vector.load %arg0[%[[B]], %[[H]], %[[I0]], %[[C0:.*]]] {{.*}} vector<4xf32>
// ROWS: vector.load %arg0[%[[B]], %[[H]], %[[I1]], %[[C0]]] {{.*}} vector<4xf32>
// ROWS: scf.for {{.*}} -> (f32, f32, vector<4xf32>, f32, f32, vector<4xf32>)
// ROWS: vector.load %arg1[%[[B]], %[[H]], %{{.*}}, %[[C0]]]
// ROWS-NOT: vector.load
// ROWS: gpu.shuffle xor %{{.*}}, %c2_i32
// ROWS: gpu.shuffle xor %{{.*}}, %c1_i32
// ROWS: memref.load %arg3
// ROWS-NOT: vector.load
// ROWS: gpu.shuffle xor %{{.*}}, %c2_i32
// ROWS: gpu.shuffle xor %{{.*}}, %c1_i32
// ROWS-NOT: memref.load %arg3
// ROWS: vector.load %arg1
// ROWS: scf.yield
// ROWS: vector.store %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[I0]], %[[C0]]]
// ROWS: vector.store %{{.*}}, %{{.*}}[%[[B]], %[[H]], %[[I1]], %[[C0]]]
// ROWS: } {linformer.cuda_whole_warps}
// BADROWS: error: rows 3 is not a count of query rows a thread the f32 core takes (1, 2 or 4)
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(linformer-cuda-expand-attention-core))' 2>&1 | FileCheck %s --check-prefix=STRIDED
// STRIDED: error: the fused attention core needs row-major buffers, not 'memref<2x4x64x16xf32, strided<[?, ?, ?, ?], offset: ?>>'

func.func @core(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x8x16xf32>,
                %v: tensor<2x4x8x16xf32>, %mask: tensor<2x8xi8>) -> tensor<2x4x64x16xf32> {
  %o_init = tensor.empty() : tensor<2x4x64x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25) key_mask(%mask)
         outs(%o_init) : (tensor<2x4x64x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>,
            tensor<2x8xi8>, tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}

// On tensor cores (mma=bf16): 8 slots do not fill a 16-slot block, so @core
// keeps the scalar loop.
// MMA-LABEL: func.func @core(
// MMA: llvm.intr.fma
// MMA-NOT: mma.sync
// With 32 slots and a head width of 16 (slots=16: a step of one 16-slot
// block; @core_k64 shows the default two): one warp per 16 query rows, in
// blocks of the schedule's 4 warps of one (b, h) (2 x 4 x 64 / 64 = 8
// blocks, mapped as the staged core's), each warp reading K and V from
// global memory; the slots in blocks of 16; S = Q K^T is two
// m16n8k16 tiles (one head-width step), each row's max is exchanged within
// its quad of lanes, P is packed from the S accumulators into the A
// fragment of O += P V (two 8-column tiles of the head), the running sums
// are summed over the quad at the end.
// MMA-LABEL: func.func @core16
// MMA: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1) {
// MMA: scf.parallel (%{{.*}}, %[[LANE:.*]]) = (%c0, %c0) to (%c4, %c32)
// MMA: scf.for %[[J:.*]] = %c0 to %c32 step %c16 iter_args({{.*}}) -> (f32, f32, f32, f32, vector<2x2xf32>, vector<2x2xf32>)
// MMA-COUNT-2: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// MMA: memref.load %arg3
// MMA: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// MMA: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// MMA: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// MMA-COUNT-2: nvvm.mma.sync
// MMA: scf.yield
// MMA-COUNT-2: gpu.shuffle  xor
// MMA: arith.divf
// MMA-COUNT-2: gpu.shuffle  xor
// MMA: arith.divf
// MMA-NOT: arith.divf
// MMA: } {mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}thread_x
// MMA: } {mapping = [#gpu.loop_dim_map<processor = block_x
// Replayed (exact emulation: f32 operands, which no 16-bit register
// holds): the same warps and blocks, no shuffles or mma.sync. (Rounded,
// the host runs the GPU code above, its mma.sync and shuffles lowered by
// linformer-cuda-emulate-warps once the loops are mapped: cuda-host.test.)
// EMU-LABEL: func.func @core16
// EMU-NOT: gpu.shuffle
// EMU-NOT: mma.sync
// EMU: scf.for {{.*}} step %c16
// EMU-NOT: arith.truncf
// EMU-NOT: llvm.call_intrinsic
// EMU: math.exp2
// EMU: } {mapping = [#gpu.loop_dim_map<processor = block_x
// Staged (shared-bytes at least the 704 words of one (b, h)'s K and V: 32
// slots x (8 + 4) + 16 columns x (16 + 4); one byte less keeps the
// unstaged loops above): a block per (b, h) with its 4 query tiles as 4
// warps (2 x 4 x 1 = 8 blocks), mapped already; the threads copy K and V
// into dynamic shared memory (256 words each, 128 threads), meet at a
// barrier, then read every fragment register as one word from there.
// STAGED-LABEL: func.func @core16
// STAGED: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1) {
// STAGED: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
// STAGED: %[[RAW:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// STAGED: %[[SMEM:.*]] = memref.view %[[RAW]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<704xi32, #gpu.address_space<workgroup>>
// STAGED: scf.for {{.*}} to %c256 step %c128 {
// STAGED: arith.truncf {{.*}} to bf16
// STAGED: memref.store {{.*}}, %[[SMEM]]
// STAGED: scf.for {{.*}} to %c256 step %c128 {
// STAGED: memref.store {{.*}}, %[[SMEM]]
// STAGED: gpu.barrier
// STAGED: scf.for {{.*}} = %c0 to %c32 step %c16 iter_args
// STAGED: memref.load %[[SMEM]]
// STAGED: nvvm.mma.sync
// STAGED: gpu.shuffle  xor
// STAGED: memref.load %[[SMEM]]
// STAGED: nvvm.mma.sync
// STAGED: } {mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// STAGED-NEXT: scf.reduce
// STAGED-NEXT: } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>]}
// STAGED-NOT: linformer.tensor_core
// STAGED-LABEL: func.func @core_k64
// Emulated, the copy and the computation are two thread loops over one
// buffer of the block.
// With ldmatrix: per 16 slots, each key tile's B fragment (head width 16:
// one step) from one ldmatrix x2, then its mma; after the softmax, both
// value tiles' fragments from one x4 (registers 0, 1 for tile 0; 2, 3 for
// tile 1). No word loads remain.
// STAGEDLDM-LABEL: func.func @core16
// STAGEDLDM: gpu.barrier
// STAGEDLDM: scf.for {{.*}} = %c0 to %c32 step %c16 iter_args
// STAGEDLDM-NOT: memref.load %view
// STAGEDLDM: nvgpu.ldmatrix %view[%{{.*}}] {numTiles = 2 : i32, transpose = false} : memref<704xi32, #gpu.address_space<workgroup>> -> vector<2x1xi32>
// STAGEDLDM: nvvm.mma.sync
// STAGEDLDM: nvgpu.ldmatrix %view[%{{.*}}] {numTiles = 2 : i32, transpose = false}
// STAGEDLDM: nvvm.mma.sync
// STAGEDLDM: gpu.shuffle  xor
// STAGEDLDM: %[[V:.*]] = nvgpu.ldmatrix %view[%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<704xi32, #gpu.address_space<workgroup>> -> vector<4x1xi32>
// STAGEDLDM-DAG: %[[V0:.*]] = vector.extract %[[V]][0, 0]
// STAGEDLDM-DAG: %[[V1:.*]] = vector.extract %[[V]][1, 0]
// STAGEDLDM-DAG: %[[V2:.*]] = vector.extract %[[V]][2, 0]
// STAGEDLDM-DAG: %[[V3:.*]] = vector.extract %[[V]][3, 0]
// STAGEDLDM: nvvm.mma.sync A[{{.*}}]  B[%[[V0]], %[[V1]]]
// STAGEDLDM: nvvm.mma.sync A[{{.*}}]  B[%[[V2]], %[[V3]]]
// STAGEDLDM-NOT: memref.load %view
// STAGEDLDM: scf.yield
// Two query tiles a warp (core-tiles = 2): the block's 2 warps take
// tiles w and w + 2 of the 4, one slot loop carries both tiles' maxes,
// sums and accumulators (2 x 6), both tiles' scores (4 mma.sync) come
// before either softmax, both P V products (4) after; each stores its
// rows after the loop.
// TILES2-LABEL: func.func @core16
// TILES2: scf.parallel (%[[W:.*]], %{{.*}}) = (%c0, %c0) to (%c2, %c32)
// TILES2: gpu.barrier
// TILES2: arith.addi %[[W]], %c2 : index
// TILES2: %[[L:.*]]:12 = scf.for {{.*}} = %c0 to %c32 step %c16 iter_args
// TILES2-COUNT-4: nvvm.mma.sync
// TILES2: gpu.shuffle  xor
// TILES2-COUNT-4: nvvm.mma.sync
// TILES2-NOT: nvvm.mma.sync
// TILES2: scf.yield
// TILES2: gpu.shuffle  xor %[[L]]#2
// TILES2: gpu.shuffle  xor %[[L]]#8
// Emulated (rounded), the staged core is its own GPU code with its shared
// memory, barrier, ldmatrix, mma.sync and shuffles lowered for the host by
// linformer-cuda-emulate-warps (after linformer-cuda-tile-parallel-loops,
// which maps the other cores' loops): the block's buffer, the copy's thread loop
// storing into it, then the warps' thread loops reading from it, no GPU op
// left.
// STAGEDEMU-LABEL: func.func @core16
// STAGEDEMU: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1) {
// STAGEDEMU: %[[BUF:.*]] = memref.alloc() {alignment = 16 : i64} : memref<2816xi8>
// STAGEDEMU: scf.parallel
// STAGEDEMU: %[[V:.*]] = memref.view %[[BUF]][%c0][] : memref<2816xi8> to memref<704xi32>
// STAGEDEMU: memref.store {{.*}}, %[[V]]
// STAGEDEMU: {mapping = [#gpu.loop_dim_map<processor = thread_y
// STAGEDEMU-NOT: {{[ "](gpu|nvvm|nvgpu)\.}}
// STAGEDEMU: %[[W:.*]] = memref.view %[[BUF]][%c0][] : memref<2816xi8> to memref<704xi32>
// STAGEDEMU-NOT: {{[ "](gpu|nvvm|nvgpu)\.}}
// STAGEDEMU: memref.load %[[W]]
// STAGEDEMU: {mapping = [#gpu.loop_dim_map<processor = thread_y
// STAGEDEMU: memref.dealloc %[[BUF]]
// The unstaged core (k = 64 does not fit those bytes) likewise, once
// linformer-cuda-tile-parallel-loops has mapped its warps: no GPU op left.
// STAGEDEMU-LABEL: func.func @core_k64
// STAGEDEMU-NOT: {{[ "](gpu|nvvm|nvgpu)\.}}
// STAGEDEMU-LABEL: func.func @core_tokens
// wgmma (4 warps: one warpgroup of 64 query rows): K and V's transpose
// in the core layout, unpadded (32 x 8 + 16 x 16 = 512 words, not 704);
// with 32 slots one step: S = Q K^T as one wgmma m64n32k16 (one head step
// of 16, which overwrites: scale-d 0, no zeroed registers; A = Q's four
// fragment registers, B by a descriptor with leading
// byte offset 128 and stride byte offset 8 lines x 8 words = 256 bytes:
// (128 >> 4) << 16 | (256 >> 4) << 32 = 68720001024), then the softmax,
// then O += P V as one m64n16k16 a 16-slot block (stride 8 x 16 words =
// 512 bytes: 137439477760); each group fenced, committed and waited for.
// ldmatrix is moot (the fragments come from the descriptors). The copy
// writes K and V with st.shared (the generic proxy) and wgmma reads them
// through the async proxy: a fence.proxy.async between the copy and the
// barrier, before any wgmma (PTX ISA, "Proxies").
// WGCORE-LABEL: func.func @core16
// WGCORE-NOT: nvgpu.ldmatrix
// WGCORE: memref.view {{.*}} to memref<512xi32, #gpu.address_space<workgroup>>
// WGCORE-NOT: nvvm.wgmma
// WGCORE: memref.store {{.*}}, #gpu.address_space<workgroup>>
// WGCORE-NOT: nvvm.wgmma
// WGCORE: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGCORE-NEXT: gpu.barrier
// WGCORE: nvvm.wgmma.fence.aligned
// WGCORE: %[[DK:.*]] = arith.ori %{{.*}}, %c68720001024_i64 : i64
// WGCORE-NEXT: llvm.inline_asm has_side_effects asm_dialect = att {linformer.cuda_host_wgmma = array<i64: 32, 0, 1>} "{{.*}}setp.ne.b32 p, 0, 0;\0Awgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {$0, {{.*}}, $15}, {$32, $33, $34, $35}, $36, p, 1, 1, 0;{{.*}}", "=f,{{.*}},0,1,{{.*}},15,r,r,r,r,l" {{.*}}, %[[DK]] :
// WGCORE-NEXT: llvm.extractvalue
// WGCORE-NOT: llvm.inline_asm
// WGCORE: nvvm.wgmma.commit.group.sync.aligned
// WGCORE-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGCORE: gpu.shuffle  xor
// WGCORE: nvvm.wgmma.fence.aligned
// WGCORE: arith.ori %{{.*}}, %c137439477760_i64 : i64
// WGCORE-NEXT: setp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {$0, {{.*}}, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 0;
// WGCORE: arith.ori %{{.*}}, %c137439477760_i64 : i64
// WGCORE-NEXT: setp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {$0, {{.*}}, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 0;
// WGCORE: nvvm.wgmma.commit.group.sync.aligned
// WGCORE-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGCORE-NOT: nvvm.mma.sync
// WGCORE-LABEL: func.func @core_k64
// The inline PTX carries what it says (n, accumulate, bf16) for the host.
// Emulated, the host runs this code: the block's shared memory one buffer
// (2048 bytes), and each wgmma (linformer-cuda-emulate-warps) each
// thread's D registers from its warp's A registers (Q's, then P's
// fragments) and K's or V's core-layout buffer where the descriptor
// points, its start, leading and stride byte offsets decoded; no PTX, no
// fence left.
// WGCOREEMU-LABEL: func.func @core16
// WGCOREEMU-NOT: llvm.inline_asm
// WGCOREEMU-NOT: nvvm.
// WGCOREEMU: %[[BUF:.*]] = memref.alloc() {alignment = 16 : i64} : memref<2048xi8>
// WGCOREEMU: memref.view %[[BUF]][%c0][] : memref<2048xi8> to memref<1024xbf16>
// WGCOREEMU: arith.shrui %[[DK:.*]], %c16_i64 : i64
// WGCOREEMU: arith.shrui %[[DK]], %c32_i64 : i64
// WGCOREEMU: math.exp2
// WGCOREEMU: arith.shrui %[[DV:.*]], %c16_i64 : i64
// WGCOREEMU: arith.shrui %[[DV]], %c32_i64 : i64
// WGCOREEMU-NOT: llvm.inline_asm
// WGCOREEMU-NOT: nvvm.
// WGCOREEMU-LABEL: func.func @core_k64
func.func @core16(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x32x16xf32>,
                  %v: tensor<2x4x32x16xf32>, %mask: tensor<2x32xi8>) -> tensor<2x4x64x16xf32> {
  %o_init = tensor.empty() : tensor<2x4x64x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25) key_mask(%mask)
         outs(%o_init) : (tensor<2x4x64x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>,
            tensor<2x32xi8>, tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}

// The default step (slots=32) over 64 slots: two steps of two 16-slot
// blocks. A step's scores are the two blocks' four m16n8k16 tiles; each row
// exchanges its max once (two shuffles) and takes 9 ex2.approx: its alpha
// and the 8 probabilities the lane holds (4 a block); then one rescale of
// the accumulators and the blocks' P V tiles (two each). No mask: the max
// is finite from the first slot on, so nothing selects.
// STEP-LABEL: func.func @core_k64
// STEP: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args
// STEP-COUNT-4: nvvm.mma.sync
// STEP-NOT: nvvm.mma.sync
// STEP-COUNT-2: gpu.shuffle  xor
// STEP-NOT: arith.select
// STEP-COUNT-9: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// STEP-NOT: nvvm.mma.sync
// STEP-COUNT-2: gpu.shuffle  xor
// STEP-NOT: arith.select
// STEP-COUNT-9: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// STEP-NOT: gpu.shuffle
// STEP-COUNT-2: arith.mulf %{{.*}} : vector<2x2xf32>
// STEP-COUNT-4: nvvm.mma.sync
// STEP-NOT: llvm.call_intrinsic
// STEP: scf.yield
// Replayed: the same steps, exp2 on the CPU.
// STEPEMU-LABEL: func.func @core_k64
// STEPEMU: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args
// STEPEMU-NOT: llvm.call_intrinsic
// STEPEMU: math.exp2
// STEPEMU: scf.yield
func.func @core_k64(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x64x16xf32>,
                    %v: tensor<1x2x64x16xf32>) -> tensor<1x2x32x16xf32> {
  %o_init = tensor.empty() : tensor<1x2x32x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25)
         outs(%o_init) : (tensor<1x2x32x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x32x16xf32>)
         -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}

// Query rows that are one sequence's tokens (linformer-cuda-mark-token-
// loops marked q's batch and token dimensions): the one-thread-a-row loop
// (b, h, i) carries the mark, so that linformer-cuda-tile-parallel-loops
// gives its blocks a length rule as for any loop over tokens.
// CHECK-LABEL: func.func @core_tokens
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = ({{.*}}) to (%c2, %c4, %c64)
// CHECK: } {linformer.token_loops = array<i64: 0, 2>}
func.func @core_tokens(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x8x16xf32>,
                       %v: tensor<2x4x8x16xf32>) -> tensor<2x4x64x16xf32> {
  %o_init = tensor.empty() : tensor<2x4x64x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25)
         outs(%o_init) {linformer.token_loops = array<i64: 0, 2>}
         : (tensor<2x4x64x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>,
            tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}
