// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate exact},linformer-cuda-emulate-instructions,cse))' | FileCheck %s --check-prefix=EMU
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=4096},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=SMALL
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=1},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=UNSTAGED
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32 shared-bytes=49152},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32},cse))' | FileCheck %s --check-prefix=TF32
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32x3 shared-bytes=49152},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32x3},cse))' | FileCheck %s --check-prefix=TF32X3
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32 shared-bytes=49152 ldmatrix ldmatrix-trans async-copy prefetch},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32},cse))' | FileCheck %s --check-prefix=TF32PF
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 chunk-k=32},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=CHUNK32
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=PREFETCH
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate exact},linformer-cuda-emulate-instructions,cse))' | FileCheck %s --check-prefix=EMUPF
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 ldmatrix ldmatrix-trans},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=LDM
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch ldmatrix ldmatrix-trans async-copy},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=ASYNC
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch ldmatrix ldmatrix-trans async-copy},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate},linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,cse))' | FileCheck %s --check-prefix=EMUASYNC --implicit-check-not=nvgpu. --implicit-check-not=gpu.barrier
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=ASYNC3
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate},linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,cse))' | FileCheck %s --check-prefix=EMUASYNC3 --implicit-check-not=nvgpu. --implicit-check-not=gpu.barrier
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 shared-bytes=49152},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=f32},cse))' | FileCheck %s --check-prefix=SIMT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 shared-bytes=4096},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=f32},cse))' | FileCheck %s --check-prefix=SIMTSMALL
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 chunk-k=24}))' 2>&1 | FileCheck %s --check-prefix=BADCHUNK
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 async-stages=1}))' 2>&1 | FileCheck %s --check-prefix=BADSTAGES
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3 wgmma wgmma-swizzle=0},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=WGMMA
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3 wgmma wgmma-swizzle=0},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate},linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,cse))' | FileCheck %s --check-prefix=EMUWGMMA
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3 wgmma},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},cse))' | FileCheck %s --check-prefix=SWIZZLED
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3 wgmma},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate},linformer-cuda-emulate-warps,linformer-cuda-emulate-instructions,cse))' | FileCheck %s --check-prefix=EMUSWIZZLED
// BADCHUNK: error: chunk-k must be 16, 32 or 64 (k values a staged block copies at a time), not 24
// BADSTAGES: error: async-stages must be 2 to 8 (shared buffers of a staged contraction copied with cp.async), not 1
// (Only cse: the canonicalizer merges a pre-mapped nest whose block body
// is empty into one loop, dropping the mapping; the pipeline runs none in
// between.)

// Staged: a head-split projection [b, h, n, dh] += X[b, n, c] * W[c, h, dh]
// (X f32, W stored as bf16). Warp blocks of 4 x 4 tiles (64 x 32); the
// innermost m (n = 128) has 2 of them, the innermost n (dh = 32) one, so a
// block is 2 warps over 128 x 32 of C; batch and head make 4 blocks. Chunks
// of 16 k values; the buffer: X's rows are k-major (k is X's contiguous
// dim): 128 rows x (16 / 2 + 4) words = 1536; W's k is not contiguous:
// pair-major, 8 pairs x (32 + 8) words = 320, after X's.
// CHECK-LABEL: func.func @projection
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1) {
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c2, %c32) step (%c1, %c1) {
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<1856xi32, #gpu.address_space<workgroup>>
// The accumulators start as C.
// CHECK-COUNT-64: memref.load %arg2
// The k loop walks the 4 chunks by index, chunk c at k = c % 4 * 16.
// CHECK: scf.for %[[CI:.*]] = %c0 to %c4 step %c1 iter_args
// CHECK: %[[IN:.*]] = arith.remui %[[CI]], %c4
// CHECK: arith.muli %[[IN]], %c16
// The copy: 64 threads take X's 1024 words in units of 2 (4 k-adjacent
// f32, one aligned 16-byte load), 8 units each, in two groups of 4 (all
// loads of a group before its stores), rounded to bf16 and packed into
// words stored two at a time at row * 12 + pair; then W's 256 words in
// units of 4 rows of a pair, 1 each: two 8-byte loads of 4 bf16, k and
// k + 1 apart (extended and rounded back: the identity, which the
// pipeline's cleanup folds), interleaved into 4 words stored at once at
// pair * 40 + row + 1536.
// CHECK-COUNT-4: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<2x128x64xf32>, vector<4xf32>
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: arith.muli %{{.*}}, %c12{{(_[0-9]+)?}} :
// CHECK-COUNT-4: vector.store %{{.*}}, %view{{.*}} {alignment = 8 : i64} : memref<1856xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK-COUNT-4: vector.load %arg0
// CHECK-COUNT-4: vector.store %{{.*}}, %view
// CHECK-COUNT-2: vector.load %arg1{{.*}} {alignment = 8 : i64} : memref<64x2x32xbf16>, vector<4xbf16>
// CHECK: arith.muli %{{.*}}, %c40{{(_[0-9]+)?}} :
// CHECK: %c1536
// CHECK: vector.store %{{.*}}, %view{{.*}} {alignment = 16 : i64} : memref<1856xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// Then the warps' k step (16 tiles) from shared memory, between barriers;
// the fragments are words of the buffer.
// CHECK: gpu.barrier
// CHECK-NOT: memref.load %arg
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-NOT: memref.load %arg
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-COUNT-32: vector.store %{{.*}}, %arg2{{.*}} {alignment = 8 : i64}
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_y{{.*}}processor = thread_x
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_x
// Exact emulation (f32 words, which neither ldmatrix nor mma.sync take:
// otherwise the host runs the GPU's code, see EMUASYNC) is replayed phase
// by phase: the buffer and each thread's accumulators are the block's
// allocations; one thread loop saves the initial
// accumulators, then per chunk one copies and one computes (each lane its
// own C elements from the same words), and one stores.
// EMU-LABEL: func.func @projection
// EMU-NOT: mma.sync
// EMU: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1) {
// EMU: %[[SMEM:.*]] = memref.alloc() : memref<1856xi64>
// EMU: %[[SAVED:.*]] = memref.alloc() : memref<64x16xvector<2x2xf32>>
// EMU: scf.parallel
// EMU-COUNT-16: memref.store %{{.*}}, %[[SAVED]]
// EMU: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// EMU: scf.parallel
// EMU: memref.store %{{.*}}, %[[SMEM]]
// EMU: scf.parallel
// EMU: memref.load %[[SAVED]]
// EMU: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
// EMU: memref.load %[[SMEM]]
// EMU-COUNT-128: arith.mulf
// EMU: memref.store %{{.*}}, %[[SAVED]]
// EMU: scf.parallel
// EMU: memref.load %[[SAVED]]
// EMU: vector.store %{{.*}}, %arg2
// EMU: memref.dealloc %[[SAVED]]
// EMU: memref.dealloc %[[SMEM]]
// EMU: processor = block_x
// With ldmatrix: X's buffer is k-major, so each row tile's A fragment
// (4 words a lane) is one ldmatrix.x4, lane L pointing at row
// wm * 64 + L % 16 + 16 i, pair L / 16 * 4 (word row * 12 + pair). W's
// buffer is natural instead of pair-major: W's own [k][dh] layout, 16 k
// rows of 32 / 2 + 4 = 20 words after X's 1536 (the same 320 words), each
// of the 64 threads copying one 16-byte run (8 bf16 along dh, loaded as one
// vector and stored as 4 words); two column tiles' B fragments (b0, b1 of
// each) are one ldmatrix.x4.trans from the buffer's 16-bit view, lane L
// pointing at k row L % 16 of column tile j + L / 16, half
// 2 (k * 20 + wn * 16 + L / 16 * 4 + 1536) + 8 j (k step 0).
// LDM-LABEL: func.func @projection
// LDM: %[[WLOAD:.*]] = vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<64x2x32xbf16>, vector<8xbf16>
// LDM: %[[K:.*]] = arith.muli %{{.*}}, %c20
// LDM: %[[KW:.*]] = arith.addi %[[K]], %{{.*}}
// LDM: %[[WAT:.*]] = arith.addi %[[KW]], %c1536
// LDM: vector.store %{{.*}}, %view[%[[WAT]]] {alignment = 16 : i64} : memref<1856xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// LDM: gpu.barrier
// LDM: %[[HALVES:.*]] = memref.view %{{.*}} to memref<3712xi16, #gpu.address_space<workgroup>>
// LDM: %[[SECOND:.*]] = arith.divui %[[LANE:.*]], %c16
// LDM: %[[TILE0:.*]] = arith.addi %[[SECOND]], %c0
// LDM: %[[TILE:.*]] = arith.muli %[[TILE0]], %c4
// LDM: %[[WN:.*]] = arith.muli %{{.*}}, %c16
// LDM: %[[COL:.*]] = arith.addi %[[WN]], %[[TILE]]
// LDM: %[[KROW:.*]] = arith.remui %[[LANE]], %c16
// LDM: %[[KK:.*]] = arith.addi %c0, %[[KROW]]
// LDM: %[[KOFF:.*]] = arith.muli %[[KK]], %c20
// LDM: %[[B0:.*]] = arith.addi %[[KOFF]], %[[COL]]
// LDM: %[[B1:.*]] = arith.addi %[[B0]], %c1536
// LDM: %[[BH:.*]] = arith.muli %[[B1]], %c2
// LDM: %[[BH0:.*]] = arith.addi %[[BH]], %c0
// LDM: nvgpu.ldmatrix %[[HALVES]][%[[BH0]]] {numTiles = 4 : i32, transpose = true} : memref<3712xi16, #gpu.address_space<workgroup>> -> vector<4x2xi16>
// LDM-COUNT-4: vector.bitcast %{{.*}} : vector<2xi16> to vector<1xi32>
// The next two column tiles: 8 words (16 halves) on.
// LDM: %[[BH1:.*]] = arith.addi %[[BH]], %c16
// LDM: nvgpu.ldmatrix %[[HALVES]][%[[BH1]]] {numTiles = 4 : i32, transpose = true}
// LDM-NOT: memref.load %view
// LDM: %[[ROW:.*]] = arith.addi %{{.*}}, %[[KROW]]
// LDM: %[[PAIR0:.*]] = arith.muli %[[SECOND]], %c4
// LDM: %[[PAIR:.*]] = arith.addi %c0, %[[PAIR0]]
// LDM: %[[R0:.*]] = arith.addi %[[ROW]], %c0
// LDM: %[[W:.*]] = arith.muli %[[R0]], %c12
// LDM: arith.addi %[[W]], %{{.*}}
// LDM: %[[A0:.*]] = nvgpu.ldmatrix %view[%{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<1856xi32, #gpu.address_space<workgroup>> -> vector<4x1xi32>
// LDM-COUNT-4: vector.extract %[[A0]][{{[0-3]}}, 0]
// LDM-COUNT-4: nvvm.mma.sync
// LDM: %[[R1:.*]] = arith.addi %[[ROW]], %c16
// LDM: arith.muli %[[R1]], %c12
// LDM: nvgpu.ldmatrix
// LDM-COUNT-4: nvvm.mma.sync
// LDM: nvgpu.ldmatrix
// LDM-COUNT-4: nvvm.mma.sync
// LDM: nvgpu.ldmatrix
// LDM-COUNT-4: nvvm.mma.sync
// LDM-NOT: nvgpu.ldmatrix
// LDM: gpu.barrier
// SIMT (precision=f32, no tensor cores): the same block, chunks and
// copies, in words of f32 pairs (i64: 1856 x 8 bytes), X's units 2 words
// (4 f32, one 16-byte load) stored as one vector<2xi64>; per chunk, a loop
// over its 8 pairs of k values: 16 word loads (8 of A's rows, 8 of W's
// columns), then two fma for each of the lane's 64 elements of C.
// SIMT-LABEL: func.func @projection
// SIMT-NOT: nvvm.mma.sync
// SIMT: memref.view {{.*}} to memref<1856xi64, #gpu.address_space<workgroup>>
// SIMT: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<2x128x64xf32>, vector<4xf32>
// SIMT: vector.store %{{.*}}, %view{{.*}} {alignment = 16 : i64} : memref<1856xi64, #gpu.address_space<workgroup>>, vector<2xi64>
// SIMT: gpu.barrier
// SIMT: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
// SIMT-COUNT-16: memref.load %view
// SIMT-NOT: memref.load %view
// SIMT-COUNT-128: llvm.intr.fma
// SIMT-NOT: llvm.intr.fma
// SIMT: scf.yield
// SIMT-NOT: nvvm.mma.sync
// SIMT: gpu.barrier
// SIMT: scf.yield
// TF32 (precision=tf32): the SIMT block's buffer of f32 pairs, and per 8
// k values one mma.sync m16n8k8 .tf32 a tile, its k = t and t + 4 the
// lane's pair at t (k 2t and 2t + 1 of the 8; A and B take the same
// assignment, and the sums run over k in any order): per step the 4
// column tiles' B words (column g, pair t: b0, b1), then each row tile's
// two A words (rows g and g + 8, pair t: a0 a2 and a1 a3) and its 4 mma.
// Chunks of 16: 2 steps, 32 mma. Every value rounded with cvt.rna as it
// leaves its word.
// TF32-LABEL: func.func @projection
// TF32: memref.view {{.*}} to memref<1856xi64, #gpu.address_space<workgroup>>
// TF32: gpu.barrier
// TF32: %[[B0:.*]] = memref.load %view
// TF32: vector.bitcast %{{.*}} : vector<1xi64> to vector<2xf32>
// TF32: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: vector.from_elements {{.*}} : vector<2x1xf32>
// TF32-COUNT-32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// TF32-NOT: nvgpu.mma.sync
// TF32: gpu.barrier
// TF32: scf.yield
// 3xTF32: each value a head and a tail, three mma a tile and step.
// TF32X3-LABEL: func.func @projection
// TF32X3: memref.view {{.*}} to memref<1856xi64, #gpu.address_space<workgroup>>
// TF32X3: gpu.barrier
// TF32X3: %[[AH:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// TF32X3-NEXT: %[[AT:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// TF32X3-NEXT: %[[S1:.*]] = nvgpu.mma.sync(%[[AH]], %[[BT:.*]], %{{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32X3-NEXT: %[[S2:.*]] = nvgpu.mma.sync(%[[AT]], %[[BH:.*]], %[[S1]]) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32X3-NEXT: nvgpu.mma.sync(%[[AH]], %[[BH]], %[[S2]]) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32X3-COUNT-93: nvgpu.mma.sync
// TF32X3-NOT: nvgpu.mma.sync
// TF32X3: gpu.barrier
// With ldmatrix, its .trans layout and cp.async asked for: they move
// 16-bit values, so TF32 takes none of them.
// TF32PF-LABEL: func.func @projection
// TF32PF-SAME: async = [false, false], natural_b = false, ldmatrix_a = false
// TF32PF-NOT: nvgpu.ldmatrix
// TF32PF-NOT: nvgpu.device_async_copy
// TF32PF: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32PF-LABEL: func.func @sequence_projection
// Staged or nothing: where the buffer does not fit, SIMT leaves the op to
// the plain path.
// SIMTSMALL-LABEL: func.func @projection
// SIMTSMALL: linalg.generic
// Chunks of 32: rows of 16 + 4 words, 16 pairs of W.
// CHUNK32-LABEL: func.func @projection
// CHUNK32: memref.view {{.*}} to memref<3200xi32
// CHUNK32: scf.for %[[CI:.*]] = %c0 to %c2 step %c1 iter_args
// CHUNK32: %[[IN:.*]] = arith.remui %[[CI]], %c2
// CHUNK32: arith.muli %[[IN]], %c32
// CHUNK32-COUNT-32: nvvm.mma.sync
// CHUNK32: gpu.barrier
// The buffer (1856 words) exceeds 4096 bytes: the unstaged warp tiles.
// SMALL-LABEL: func.func @projection
// SMALL-NOT: gpu.barrier
// SMALL: {linformer.tensor_core}
// UNSTAGED-LABEL: func.func @projection
// UNSTAGED-NOT: gpu.barrier
// UNSTAGED: {linformer.tensor_core}
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @projection(%x: memref<2x128x64xf32>, %w: memref<64x2x32xbf16>,
                      %y: memref<2x2x128x32xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x128x64xf32>, memref<64x2x32xbf16>) outs(%y : memref<2x2x128x32xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %e = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %e : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Staged and split: the sequence projection E X (32 x 64 outputs over
// n = 1024) is 2 warps (one block), so split-K cuts it into 4 parts of 256;
// each part is a block whose k loop steps through its range in chunks of
// 16 (E k-major: 32 x 12 words; X pair-major: 8 x 72), writing its
// partial sums, which a second loop adds to C in order.
// CHECK-LABEL: func.func @sequence_projection
// CHECK: %[[PARTS:.*]] = memref.alloc() : memref<4x1x32x64xf32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1) {
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c2, %c32{{(_[0-9]+)?}}) step
// CHECK: memref.view {{.*}} to memref<960xi32, #gpu.address_space<workgroup>>
// A part's 16 chunks: chunk c at k = c % 16 * 16 + part * 256.
// CHECK: scf.for %[[CI:.*]] = %c0 to %c16 step %c1 iter_args
// CHECK: %[[IN:.*]] = arith.remui %[[CI]], %c16
// CHECK: %[[K:.*]] = arith.muli %[[IN]], %c16
// CHECK: %[[PB:.*]] = arith.muli %{{.*}}, %c256
// CHECK: arith.addi %[[K]], %[[PB]]
// CHECK-COUNT-2: vector.load %arg0{{.*}} : memref<32x1024xf32>, vector<4xf32>
// CHECK: vector.load %arg1{{.*}} : memref<1x1024x64xf32>, vector<4xf32>
// CHECK: arith.muli %{{.*}}, %c72{{(_[0-9]+)?}} :
// CHECK: gpu.barrier
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store %{{.*}}, %[[PARTS]]{{.*}} {alignment = 8 : i64}
// CHECK: processor = block_x
// CHECK: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %c4{{(_[0-9]+)?}} step
// CHECK: memref.load %[[PARTS]]
// CHECK: memref.dealloc %[[PARTS]]
// 960 words fit in 4096 bytes.
// SMALL-LABEL: func.func @sequence_projection
// SMALL: memref.view {{.*}} to memref<960xi32
// SMALL: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args
// SMALL: gpu.barrier
// UNSTAGED-LABEL: func.func @sequence_projection
// UNSTAGED-NOT: gpu.barrier
// UNSTAGED: {linformer.tensor_core}
// TF32-LABEL: func.func @sequence_projection
// TF32: memref.view {{.*}} to memref<960xi64, #gpu.address_space<workgroup>>
// TF32: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
#e = affine_map<(b, k, d, n) -> (k, n)>
#xx = affine_map<(b, k, d, n) -> (b, n, d)>
#p = affine_map<(b, k, d, n) -> (b, k, d)>
func.func @sequence_projection(%e: memref<32x1024xf32>, %x: memref<1x1024x64xf32>,
                               %p: memref<1x32x64xf32>) {
  linalg.generic {indexing_maps = [#e, #xx, #p],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<32x1024xf32>, memref<1x1024x64xf32>) outs(%p : memref<1x32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An outer k dimension (the heads of an output projection,
// Y[n, c] += A[h, n, d] * W[h, d, c]): a block of 2 x 2 warps over
// 128 x 64 of C; 2 chunks of d a head.
#ao = affine_map<(n, c, h, d) -> (h, n, d)>
#wo = affine_map<(n, c, h, d) -> (h, d, c)>
#yo = affine_map<(n, c, h, d) -> (n, c)>
func.func @output_projection(%a: memref<2x128x32xf32>, %w: memref<2x32x64xbf16>,
                             %y: memref<128x64xf32>) {
  linalg.generic {indexing_maps = [#ao, #wo, #yo],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %w : memref<2x128x32xf32>, memref<2x32x64xbf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%x: f32, %v: bf16, %acc: f32):
    %e = arith.extf %v : bf16 to f32
    %m = arith.mulf %x, %e : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Without prefetching (@projection: 20 words a thread, more than 16): one buffer,
// two barriers.
// PREFETCH-LABEL: func.func @projection
// PREFETCH: memref.view {{.*}} to memref<1856xi32, #gpu.address_space<workgroup>>
// PREFETCH: scf.for %{{.*}} = %c0 to %c4 step %c1
// PREFETCH: gpu.barrier
// PREFETCH: nvvm.mma.sync
// PREFETCH: gpu.barrier
// Prefetching: 2 x 2 warps copy 8 words of A and 4 of W a thread (12: at
// most 16 are carried), so the block gets two buffers of 1536 + 576 words
// and walks its 4 chunks by one index (head = chunk / 2, d = chunk % 2 *
// 16). Chunk 0 is loaded before the loop; its values (A's 8 words as 4
// vectors of 4 f32, W's 4 as two vectors of 4 bf16, the pair's k rows)
// ride in the loop's iter_args next to the accumulators. Each
// iteration stores them into buffer chunk % 2, loads chunk
// min(chunk + 1, 3), meets the block at its only barrier and runs the mma
// from the buffer it stored.
// PREFETCH-LABEL: func.func @output_projection
// PREFETCH: memref.view {{.*}} to memref<4224xi32, #gpu.address_space<workgroup>>
// PREFETCH-COUNT-64: memref.load %arg2
// PREFETCH-COUNT-4: vector.load %arg0{{.*}} : memref<2x128x32xf32>, vector<4xf32>
// PREFETCH-COUNT-2: vector.load %arg1{{.*}} : memref<2x32x64xbf16>, vector<4xbf16>
// PREFETCH-NOT: gpu.barrier
// PREFETCH: scf.for %[[CI:.*]] = %c0 to %c4 step %c1 iter_args({{.*}}) -> ({{.*}}vector<2x2xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xbf16>, vector<4xbf16>) {
// PREFETCH: %[[HALF:.*]] = arith.remui %[[CI]], %c2
// PREFETCH: %[[OFF:.*]] = arith.muli %[[HALF]], %c2112
// PREFETCH: arith.truncf
// PREFETCH: %[[AT:.*]] = arith.addi %{{.*}}, %[[OFF]]
// PREFETCH: vector.store %{{.*}}, %view[%[[AT]]]
// PREFETCH-NOT: gpu.barrier
// PREFETCH: %[[NEXT1:.*]] = arith.addi %[[CI]], %c1
// PREFETCH: %[[NEXT:.*]] = arith.minui %[[NEXT1]], %c3
// PREFETCH: %[[HEAD:.*]] = arith.divui %[[NEXT]], %c2
// PREFETCH: %[[H:.*]] = arith.remui %[[HEAD]], %c2
// PREFETCH: %[[IN:.*]] = arith.remui %[[NEXT]], %c2
// PREFETCH: arith.muli %[[IN]], %c16
// PREFETCH-COUNT-4: vector.load %arg0[%[[H]],
// PREFETCH-COUNT-2: vector.load %arg1[%[[H]],
// PREFETCH-NOT: memref.load %arg
// PREFETCH: gpu.barrier
// PREFETCH-NOT: gpu.barrier
// PREFETCH: memref.load %view
// PREFETCH-NOT: gpu.barrier
// PREFETCH-COUNT-16: nvvm.mma.sync
// PREFETCH-NOT: gpu.barrier
// PREFETCH: scf.yield
// PREFETCH-COUNT-32: vector.store %{{.*}}, %arg2
// Exact emulation: the same chunks phase by phase, each thread's 12 words held in
// memory between them: per chunk one thread loop stores them into buffer
// chunk % 2, one holds the next chunk's, one computes.
// EMUPF-LABEL: func.func @output_projection
// EMUPF: memref.alloc() : memref<4224xi64>
// EMUPF: memref.alloc() : memref<128x16xvector<2x2xf32>>
// EMUPF: memref.alloc() : memref<128x12xi64>
// EMUPF: scf.parallel
// EMUPF: scf.for %[[CI:.*]] = %c0 to %c4 step %c1 {
// EMUPF: %[[HALF:.*]] = arith.remui %[[CI]], %c2
// EMUPF: arith.muli %[[HALF]], %c2112
// EMUPF: scf.parallel
// EMUPF: arith.minui %{{.*}}, %c3
// EMUPF: scf.parallel
// EMUPF: scf.parallel
// EMUPF: memref.dealloc %{{.*}} : memref<128x12xi64>
// With cp.async (async-copy): W is bf16, read as it is staged (natural
// buffer: its runs along the columns), so it is copied with one 16-byte
// nvgpu.device_async_copy a thread (8 bf16, L1 bypassed) into the
// buffer's bf16 view, at half 2 x its word index (k row * (64 / 2 + 4)
// + word + 1536, after A's words); A (f32, rounded as it is
// staged) stays in registers. Chunk 0's copy is committed and waited for
// before the loop; the loop carries only A's 4 vectors. Each iteration
// stores them, loads A's next chunk, meets the barrier, issues W's next
// chunk into the other buffer ((chunk + 1) % 2 x 2112 words), commits it,
// runs the mma and waits for the group before the next barrier.
// wgmma wants both operands copied as they are: A here is f32 (rounded as
// it is staged), so the mma.sync plan stays.
// WGMMA-LABEL: func.func @output_projection
// WGMMA-NOT: nvvm.wgmma
// WGMMA: nvvm.mma.sync
// ASYNC-LABEL: func.func @output_projection
// ASYNC: %[[WORDS:.*]] = memref.view {{.*}} to memref<4224xi32, #gpu.address_space<workgroup>>
// ASYNC: %[[BF16:.*]] = memref.view {{.*}} to memref<8448xbf16, #gpu.address_space<workgroup>>
// ASYNC-COUNT-4: vector.load %arg0{{.*}} : memref<2x128x32xf32>, vector<4xf32>
// ASYNC-NOT: vector.load %arg1
// ASYNC: %[[K:.*]] = arith.muli %{{.*}}, %c36
// ASYNC: %[[KW:.*]] = arith.addi %[[K]], %{{.*}}
// ASYNC: %[[WAT:.*]] = arith.addi %[[KW]], %c1536
// ASYNC: %[[AT:.*]] = arith.muli %[[WAT]], %c2
// ASYNC: nvgpu.device_async_copy %arg1[{{.*}}], %[[BF16]][%[[AT]]], 8 {bypassL1} : memref<2x32x64xbf16> to memref<8448xbf16, #gpu.address_space<workgroup>>
// ASYNC: %[[G0:.*]] = nvgpu.device_async_create_group
// ASYNC: nvgpu.device_async_wait %[[G0]] {numGroups = 0 : i32}
// ASYNC: scf.for %[[CI:.*]] = %c0 to %c4 step %c1 iter_args({{.*}}) -> ({{.*}}vector<2x2xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// ASYNC-COUNT-4: vector.store %{{.*}}, %[[WORDS]]
// ASYNC: %[[NEXT:.*]] = arith.addi %[[CI]], %c1
// ASYNC-COUNT-4: vector.load %arg0
// ASYNC-NOT: nvgpu.device_async_copy
// ASYNC: gpu.barrier
// ASYNC: %[[OTHER:.*]] = arith.remui %[[NEXT]], %c2
// ASYNC: %[[OFF:.*]] = arith.muli %[[OTHER]], %c2112
// ASYNC: %[[W:.*]] = arith.addi %{{.*}}, %[[OFF]]
// ASYNC: %[[H:.*]] = arith.muli %[[W]], %c2
// ASYNC: nvgpu.device_async_copy %arg1[{{.*}}], %[[BF16]][%[[H]]], 8 {bypassL1}
// ASYNC: %[[G:.*]] = nvgpu.device_async_create_group
// ASYNC-NOT: gpu.barrier
// ASYNC-COUNT-16: nvvm.mma.sync
// ASYNC-NOT: gpu.barrier
// ASYNC: nvgpu.device_async_wait %[[G]] {numGroups = 0 : i32}
// ASYNC-NEXT: scf.yield
// Three stages only where every operand is async: A is in registers
// here, so two buffers still.
// ASYNC3-LABEL: func.func @output_projection
// ASYNC3: memref.view {{.*}} to memref<4224xi32, #gpu.address_space<workgroup>>
// ASYNC3: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}


// -----

// A masked operand, staged: E under the padding mask (a guarded extension
// into an f32 [b, k, n] buffer) read by E X. The copy computes each unit
// from the extension's inputs: E and the mask along n (the contiguous dim)
// as one vector each (8 bf16 and 8 i8: 4 words a unit, the width E's 2
// bytes allow), then a compare and a select a value; the op and its
// buffer go.
// CHECK-LABEL: func.func @guarded_mask
// CHECK-NOT: memref<1x32x1024xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: %[[E:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x1024xbf16>, vector<8xbf16>
// CHECK: %[[M:.*]] = vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1x1024xi8>, vector<8xi8>
// CHECK-COUNT-8: arith.select
// CHECK: vector.store %{{.*}}, %view{{.*}} : memref<{{[0-9]+}}xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: gpu.barrier
// CHECK-NOT: linalg.generic
func.func @guarded_mask(%E: memref<32x1024xbf16>, %mask: memref<1x1024xi8>,
                        %x: memref<1x1024x64xbf16>, %p: memref<1x32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0_i8 = arith.constant 0 : i8
  %masked = memref.alloc() : memref<1x32x1024xf32>
  linalg.generic {indexing_maps = [affine_map<(b, k, n) -> (k, n)>, affine_map<(b, k, n) -> (b, n)>, affine_map<(b, k, n) -> (b, k, n)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%E, %mask : memref<32x1024xbf16>, memref<1x1024xi8>) outs(%masked : memref<1x32x1024xf32>) {
  ^bb0(%e: bf16, %m: i8, %out: f32):
    %v = arith.extf %e : bf16 to f32
    %keep = arith.cmpi ne, %m, %c0_i8 : i8
    %s = arith.select %keep, %v, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, k, d, n) -> (b, k, n)>, affine_map<(b, k, d, n) -> (b, n, d)>, affine_map<(b, k, d, n) -> (b, k, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%masked, %x : memref<1x32x1024xf32>, memref<1x1024x64xbf16>) outs(%p : memref<1x32x64xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %masked : memref<1x32x1024xf32>
  return
}

// -----

// Both operands bf16 and read as staged: both copied with cp.async (A
// k-major, 2 units of 8 values a thread; W natural, one), the loop carries
// the accumulators only. Emulated, each unit's 8 bf16 are loaded as they
// are, bitcast to 4 words and stored at the same word index into the
// chunk's own buffer, in the thread loop that stores (nothing is held
// between the phases).
// ASYNC-LABEL: func.func @bf16_gemm
// ASYNC-NOT: vector.load
// ASYNC-COUNT-2: nvgpu.device_async_copy %arg0{{.*}}, 8 {bypassL1} : memref<128x64xbf16> to memref<8448xbf16, #gpu.address_space<workgroup>>
// ASYNC: nvgpu.device_async_copy %arg1{{.*}}, 8 {bypassL1} : memref<64x64xbf16> to memref<8448xbf16, #gpu.address_space<workgroup>>
// ASYNC: nvgpu.device_async_wait
// ASYNC: scf.for {{.*}} -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>) {
// ASYNC-NOT: vector.load
// ASYNC: gpu.barrier
// ASYNC-COUNT-3: nvgpu.device_async_copy
// ASYNC: nvgpu.device_async_create_group
// ASYNC-COUNT-16: nvvm.mma.sync
// ASYNC: nvgpu.device_async_wait
// On the host the GPU's code runs (linformer-cuda-emulate-warps after
// the pass, its nvgpu ops and barriers all lowered): the block's shared
// memory is a buffer of 16896 bytes (two buffers of 2112 words), each
// cp.async a load of its 8 bf16 stored into the buffer's bf16 view at the
// same index; chunk 0's copies before the loop, then a loop of thread
// loops (split at the barrier, each ldmatrix and each mma).
// EMUASYNC-LABEL: func.func @bf16_gemm
// EMUASYNC: %[[SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<16896xi8>
// EMUASYNC: scf.parallel
// EMUASYNC: %[[BF16:.*]] = memref.view %[[SMEM]][%c0][] : memref<16896xi8> to memref<8448xbf16>
// EMUASYNC: %[[A:.*]] = vector.load %arg0[{{.*}}] : memref<128x64xbf16>, vector<8xbf16>
// EMUASYNC-NEXT: vector.store %[[A]], %[[BF16]][%{{.*}}] : memref<8448xbf16>, vector<8xbf16>
// EMUASYNC: %[[W:.*]] = vector.load %arg1[{{.*}}] : memref<64x64xbf16>, vector<8xbf16>
// EMUASYNC-NEXT: vector.store %[[W]], %[[BF16]][%{{.*}}] : memref<8448xbf16>, vector<8xbf16>
// EMUASYNC: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// EMUASYNC: scf.parallel
// EMUASYNC: vector.load %arg0
// EMUASYNC: scf.parallel
// EMUASYNC: memref.view %[[SMEM]][%c0][] : memref<16896xi8> to memref<8448xi16>
// EMUASYNC: memref.dealloc %[[SMEM]] : memref<16896xi8>
// Three stages (async-stages=3): three buffers of 2112 words. Before the
// loop chunk 0 goes into buffer 0 and chunk 1 into buffer 1, a group
// each, and the wait lets one stay in flight. Iteration ci computes from
// buffer ci % 3 and, after the barrier, issues chunk min(ci + 2, 3) into
// buffer (ci + 2) % 3 (the one chunk ci - 1 read), commits it and, after
// the mma, waits until one group is left: chunk ci + 1's has landed.
// ASYNC3-LABEL: func.func @bf16_gemm
// ASYNC3: memref.view {{.*}} to memref<6336xi32, #gpu.address_space<workgroup>>
// ASYNC3: %[[BF16:.*]] = memref.view {{.*}} to memref<12672xbf16, #gpu.address_space<workgroup>>
// ASYNC3-COUNT-3: nvgpu.device_async_copy
// ASYNC3-NEXT: nvgpu.device_async_create_group
// ASYNC3: %[[A1:.*]] = arith.addi %{{.*}}, %c2112
// ASYNC3: %[[H1:.*]] = arith.muli %[[A1]], %c2
// ASYNC3: nvgpu.device_async_copy %arg0[{{.*}}], %[[BF16]][%[[H1]]]
// ASYNC3-COUNT-2: nvgpu.device_async_copy
// ASYNC3-NEXT: %[[G1:.*]] = nvgpu.device_async_create_group
// ASYNC3-NEXT: nvgpu.device_async_wait %[[G1]] {numGroups = 1 : i32}
// ASYNC3-NEXT: scf.for %[[CI:.*]] = %c0 to %c4 step %c1
// ASYNC3: %[[CUR:.*]] = arith.remui %[[CI]], %c3
// ASYNC3: gpu.barrier
// ASYNC3-NEXT: %[[AHEAD:.*]] = arith.addi %[[CI]], %c2
// ASYNC3-NEXT: %[[BUF:.*]] = arith.remui %[[AHEAD]], %c3
// ASYNC3-NEXT: %[[OFF:.*]] = arith.muli %[[BUF]], %c2112
// ASYNC3-NEXT: %[[CHUNK:.*]] = arith.minui %[[AHEAD]], %c3
// ASYNC3: %[[AT:.*]] = arith.addi %{{.*}}, %[[OFF]]
// ASYNC3: %[[H:.*]] = arith.muli %[[AT]], %c2
// ASYNC3: nvgpu.device_async_copy %arg0[{{.*}}], %[[BF16]][%[[H]]]
// ASYNC3-COUNT-2: nvgpu.device_async_copy
// ASYNC3-NEXT: %[[G:.*]] = nvgpu.device_async_create_group
// ASYNC3-NOT: gpu.barrier
// ASYNC3-COUNT-16: nvvm.mma.sync
// ASYNC3-NOT: gpu.barrier
// ASYNC3: nvgpu.device_async_wait %[[G]] {numGroups = 1 : i32}
// ASYNC3-NEXT: scf.yield
// On the host: three buffers of 2112 words; before the loop chunk 1
// goes 2112 words on; iteration ci issues chunk min(ci + 2, 3) into
// buffer (ci + 2) % 3.
// EMUASYNC3-LABEL: func.func @bf16_gemm
// EMUASYNC3: %[[SMEM:.*]] = memref.alloc() {alignment = 16 : i64} : memref<25344xi8>
// EMUASYNC3: %[[BF16:.*]] = memref.view %[[SMEM]][%c0][] : memref<25344xi8> to memref<12672xbf16>
// EMUASYNC3-COUNT-3: vector.store %{{.*}}, %[[BF16]]
// EMUASYNC3: arith.addi %{{.*}}, %c2112
// EMUASYNC3: scf.for %[[CI:.*]] = %c0 to %c4 step %c1 {
// EMUASYNC3: %[[AHEAD:.*]] = arith.addi %[[CI]], %c2
// EMUASYNC3-NEXT: %[[BUF:.*]] = arith.remui %[[AHEAD]], %c3
// EMUASYNC3-NEXT: arith.muli %[[BUF]], %c2112
// EMUASYNC3-NEXT: arith.minui %[[AHEAD]], %c3
func.func @bf16_gemm(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// wgmma (unswizzled, wgmma-swizzle=0): both operands bf16 and copied as
// they are, A k-major and W natural
// ([k][n]). Every warp along m, one 16-row tile by 16 column tiles each:
// two warpgroups of 64 x 128. Chunks of 64 k, three stages of unpadded
// core-layout buffers (A 128 x 64, W 64 x 128: 8192 words). After each
// cp.async wait, the fence that makes the copies visible to the tensor
// cores. Per chunk: the descriptors (A: leading byte offset 128 = 8 << 16,
// stride 1024 = 64 << 32; natural W: leading 2048 = 128 << 16, stride 128
// = 8 << 32), then 4 wgmma m64n128k16, B transposed (row: MN-major), each
// k step 256 bytes further along A (16 in the descriptor) and 4096 along W
// (256); commit, wait for it, then the cp.async wait and fence.
// WGMMA-LABEL: func.func @wgmma_gemm
// WGMMA: memref.view {{.*}} to memref<24576xi32, #gpu.address_space<workgroup>>
// WGMMA: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// WGMMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGMMA-NEXT: scf.for {{.*}} -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>) {
// WGMMA: gpu.barrier
// WGMMA: %[[GROUP:.*]] = nvgpu.device_async_create_group
// WGMMA: memref.extract_aligned_pointer_as_index
// WGMMA: %[[A0:.*]] = arith.ori %{{.*}}, %c274878431232_i64 : i64
// WGMMA: %[[B0:.*]] = arith.ori %{{.*}}, %c34368126976_i64 : i64
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-NEXT: nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// WGMMA-NEXT: %c256_i64 = arith.constant 256 : i64
// WGMMA-NEXT: %[[B1:.*]] = arith.addi %[[B0]], %c256_i64 : i64
// WGMMA-NEXT: %c16_i64 = arith.constant 16 : i64
// WGMMA-NEXT: %[[A1:.*]] = arith.addi %[[A0]], %c16_i64 : i64
// WGMMA-NEXT: nvvm.wgmma.mma_async %[[A1]], %[[B1]]
// WGMMA-COUNT-2: nvvm.wgmma.mma_async
// WGMMA-NEXT: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA-NOT: gpu.barrier
// WGMMA: nvgpu.device_async_wait %[[GROUP]] {numGroups = 1 : i32}
// WGMMA-NEXT: nvvm.fence.proxy
// WGMMA-NEXT: scf.yield
// Emulated, the host runs this GPU code: the block's shared memory one
// buffer (three stages, 98304 bytes), the cp.async copies at issue, and
// each wgmma (linformer-cuda-emulate-warps) each thread's accumulators from
// the buffer's bf16 view where the descriptors point, their start, leading
// and stride byte offsets decoded from their bits; two warpgroups of 4
// warps a block. Nothing of nvvm or nvgpu is left.
// EMUWGMMA-LABEL: func.func @wgmma_gemm
// EMUWGMMA: %[[BUF:.*]] = memref.alloc() {alignment = 16 : i64} : memref<98304xi8>
// EMUWGMMA: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c8, %c32)
// EMUWGMMA: %[[HALVES:.*]] = memref.view %[[BUF]][%c0][] : memref<98304xi8> to memref<49152xbf16>
// EMUWGMMA: vector.load %arg0{{.*}} : memref<128x128xbf16>, vector<8xbf16>
// EMUWGMMA: vector.store %{{.*}}, %[[HALVES]]
// EMUWGMMA: %[[DESC:.*]] = arith.ori %{{.*}}, %{{.*}} : i64
// EMUWGMMA: arith.shrui %[[DESC]], %c16_i64
// EMUWGMMA: arith.shrui %[[DESC]], %c32_i64
// EMUWGMMA: memref.load %[[HALVES]][%{{.*}}] : memref<49152xbf16>
// EMUWGMMA-NOT: nvvm
// EMUWGMMA-NOT: nvgpu
// EMUWGMMA: return
// Swizzled (the default, swizzle = 128): the same buffers (a stage of 8192
// words is whole KiB already), 16-byte units placed along the lines (a
// copy's unit index XOR its line within the atom: one arith.xori a unit).
// A's descriptor: leading byte offset unused (16: 1 << 16), stride 1024
// between groups of 8 rows (64 << 32), 128-byte swizzle (1 << 62):
// 4611686293305360384. W's (MN-major): leading byte offset 8192 between
// its two 64-column atom columns (512 << 16), stride 1024 between groups
// of 8 k rows (64 << 32), 128-byte swizzle: 4611686293338849280. A k step
// moves A's start 32 bytes along its lines (2 in the descriptor) and W's
// 16 k rows, 2048 bytes (128).
// SWIZZLED-LABEL: func.func @wgmma_gemm
// SWIZZLED-SAME: wgmma = true, swizzle = 128>
// SWIZZLED: memref.view {{.*}} to memref<24576xi32, #gpu.address_space<workgroup>>
// SWIZZLED: arith.xori %{{[0-9]+}}, %{{[0-9]+}} : index
// SWIZZLED: nvgpu.device_async_copy %arg0
// SWIZZLED: scf.for
// SWIZZLED: %[[A0:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64 : i64
// SWIZZLED: %[[B0:.*]] = arith.ori %{{.*}}, %c4611686293338849280_i64 : i64
// SWIZZLED: nvvm.wgmma.fence.aligned
// SWIZZLED-NEXT: nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// SWIZZLED-NEXT: %c128_i64 = arith.constant 128 : i64
// SWIZZLED-NEXT: %[[B1:.*]] = arith.addi %[[B0]], %c128_i64 : i64
// SWIZZLED-NEXT: %c2_i64 = arith.constant 2 : i64
// SWIZZLED-NEXT: %[[A1:.*]] = arith.addi %[[A0]], %c2_i64 : i64
// SWIZZLED-NEXT: nvvm.wgmma.mma_async %[[A1]], %[[B1]]
// SWIZZLED: %c384_i64 = arith.constant 384 : i64
// SWIZZLED: %c6_i64 = arith.constant 6 : i64
// SWIZZLED: nvvm.wgmma.mma_async
// SWIZZLED-NEXT: nvvm.wgmma.commit.group.sync.aligned
// Emulated, the descriptor's bits 62-63 are decoded too (256 >> mode
// bytes, 0 for mode 0), and each element's offset XOR its bits 7.. moved
// to bits 4.. before the load.
// EMUSWIZZLED-LABEL: func.func @wgmma_gemm
// EMUSWIZZLED: %[[DESC:.*]] = arith.ori %{{.*}}, %{{.*}} : i64
// EMUSWIZZLED: arith.shrui %[[DESC]], %c62_i64
// EMUSWIZZLED: arith.shrui %c256, %{{.*}} : index
// EMUSWIZZLED: arith.shrui %{{.*}}, %c7 : index
// EMUSWIZZLED: arith.shli %{{.*}}, %c4 : index
// EMUSWIZZLED: arith.xori
// EMUSWIZZLED: memref.load %{{.*}} : memref<49152xbf16>
// EMUSWIZZLED-NOT: nvvm
// EMUSWIZZLED-NOT: nvgpu
// EMUSWIZZLED: return
func.func @wgmma_gemm(%x: memref<128x128xbf16>, %w: memref<128x128xbf16>,
                      %y: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x128xbf16>, memref<128x128xbf16>) outs(%y : memref<128x128xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A k-major W ([n][k], as a torch Linear keeps it): its buffer has the A
// layout (leading 128, stride 1024), B is not transposed (col: K-major),
// and each k step moves both 256 bytes; 64 columns: m64n64k16.
// WGMMA-LABEL: func.func @wgmma_kmajor
// WGMMA: %[[A0:.*]] = arith.ori %{{.*}}, %c274878431232_i64 : i64
// WGMMA: %[[B0:.*]] = arith.ori %{{.*}}, %c274878431232_i64 : i64
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-NEXT: nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// WGMMA-NEXT: %c16_i64 = arith.constant 16 : i64
// WGMMA-NEXT: arith.addi %[[B0]], %c16_i64 : i64
// WGMMA-NEXT: arith.addi %[[A0]], %c16_i64 : i64
// Swizzled, W's buffer is A's layout too (one 128-byte atom column of
// 64 rows): the same descriptor bits, each k step 32 bytes along both.
// SWIZZLED-LABEL: func.func @wgmma_kmajor
// SWIZZLED: %[[A0:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64 : i64
// SWIZZLED: %[[B0:.*]] = arith.ori %{{.*}}, %c4611686293305360384_i64 : i64
// SWIZZLED: nvvm.wgmma.fence.aligned
// SWIZZLED-NEXT: nvvm.wgmma.mma_async %[[A0]], %[[B0]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// SWIZZLED-NEXT: %c2_i64 = arith.constant 2 : i64
// SWIZZLED-NEXT: arith.addi %[[B0]], %c2_i64 : i64
// SWIZZLED-NEXT: arith.addi %[[A0]], %c2_i64 : i64
func.func @wgmma_kmajor(%x: memref<128x128xbf16>, %w: memref<64x128xbf16>,
                        %y: memref<128x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x128xbf16>, memref<64x128xbf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
