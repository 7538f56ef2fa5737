// What linformer-cuda-select-schedules chooses for an attention core on
// tensor cores (config: the #linformer.cuda_core_schedule it attaches);
// linformer-cuda-expand-attention-core's tests check what each applies.
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16}))' | FileCheck %s --check-prefixes=PLAIN,DEFAULT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432}))' | FileCheck %s --check-prefix=STAGED
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18431}))' | FileCheck %s --check-prefix=PLAIN
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432 core-ldmatrix}))' | FileCheck %s --check-prefix=LDM
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=16384 core-ldmatrix wgmma}))' | FileCheck %s --check-prefix=WGMMA
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432 core-ldmatrix wgmma core-warps=6}))' | FileCheck %s --check-prefix=WARPS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432 core-warps=2 core-groups=4}))' | FileCheck %s --check-prefix=GROUPS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432 core-warps=2 core-groups=4 core-min-blocks=8}))' | FileCheck %s --check-prefix=MINBLOCKS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32 core-shared-bytes=18432}))' | FileCheck %s --check-prefix=NONE
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432 core-ldmatrix core-tiles=2}))' | FileCheck %s --check-prefix=TILES
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=18432 core-warps=2 core-groups=4 core-tiles=2}))' | FileCheck %s --check-prefix=TILESGROUPS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=16384 core-ldmatrix wgmma core-tiles=2}))' | FileCheck %s --check-prefix=WGMMA
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-slots=48}))' 2>&1 | FileCheck %s --check-prefix=BADSLOTS
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-tiles=3}))' 2>&1 | FileCheck %s --check-prefix=BADTILES
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-warps=0}))' 2>&1 | FileCheck %s --check-prefix=BADWARPS

// n = 128: 8 query tiles; d = k = 64. Staged, the keys and values take
// k (d/2 + 4) + d (k/2 + 4) = 4608 words (18432 bytes); in wgmma's
// unpadded layout k d = 4096 (16384 bytes). The record follows the
// contractions' (none here) in the function's linformer.cuda_schedules.
// PLAIN: func.func @core({{.*}}) attributes {linformer.cuda_schedules = [{key = "attention_core/1x2x128x64x64/bf16,bf16,bf16,f32", schedule = #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = false, groups = 1, ldmatrix = false, wgmma = false>, source = "selected"}]}
// PLAIN: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
// STAGED: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = true, groups = 1, ldmatrix = false, wgmma = false>}
// LDM: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = true, groups = 1, ldmatrix = true, wgmma = false>}
// wgmma (8 warps: two warpgroups) takes the unpadded layout, and no
// ldmatrix.
// WGMMA: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = true, groups = 1, ldmatrix = false, wgmma = true>}
// At most 6 warps: 4, the largest divisor of the 8 tiles, a warpgroup.
// WARPS: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 4, slots = 32, staged = true, groups = 1, ldmatrix = false, wgmma = true>}
// 2 warps: 4 query groups a head, all 4 walked by one block (2 blocks);
// keeping 8 blocks, 2 groups each would leave 4: one group.
// GROUPS: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 32, staged = true, groups = 4, ldmatrix = false, wgmma = false>}
// MINBLOCKS: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 32, staged = true, groups = 1, ldmatrix = false, wgmma = false>}
// Two query tiles a warp (core-tiles = 2): the 8 tiles are 4 warps' pairs,
// a block of 4 warps; with at most 2 warps, 2 groups of 2 x 2 tiles a head,
// both walked by one block. wgmma keeps one tile a warp (a warpgroup's
// m64), the WGMMA line above (tiles = 1, elided).
// TILES: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 4, slots = 32, staged = true, groups = 1, ldmatrix = true, wgmma = false, tiles = 2>}
// TILESGROUPS: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 32, staged = true, groups = 2, ldmatrix = false, wgmma = false, tiles = 2>}
// TF32 cores are not on tensor cores, and a bf16 one without them has no
// f32 schedule either (expand-attention-core refuses it): no record.
// NONE-LABEL: func.func @core
// NONE-NOT: cuda_core_schedule
// NONE-NOT: cuda_schedules
// NONE: return
// BADSLOTS: error: core-slots 48 is not a step the tensor-core core takes (16, 32 or 64)
// BADWARPS: error: core-warps must be 1 to 32 and core-groups at least 1, not 0 and 1
// BADTILES: error: core-tiles must be 1 or 2 (query tiles a warp), not 3
func.func @core(%q: memref<1x2x128x64xbf16>, %k: memref<1x2x64x64xbf16>,
                %v: memref<1x2x64x64xbf16>, %o: memref<1x2x128x64xf32>) {
  linformer.attention_core %q, %k, %v scale(0.125) outs(%o)
    : (memref<1x2x128x64xbf16>, memref<1x2x64x64xbf16>,
       memref<1x2x64x64xbf16>, memref<1x2x128x64xf32>) -> ()
  return
}

// -----

// k = 48: three 16-slot blocks, so 32 slots a step halve to 16.
// DEFAULT-LABEL: func.func @odd_k
// DEFAULT: linformer.attention_core {{.*}} {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
func.func @odd_k(%q: memref<1x1x32x16xbf16>, %k: memref<1x1x48x16xbf16>,
                 %v: memref<1x1x48x16xbf16>, %o: memref<1x1x32x16xbf16>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x1x32x16xbf16>, memref<1x1x48x16xbf16>,
       memref<1x1x48x16xbf16>, memref<1x1x32x16xbf16>) -> ()
  return
}

// -----

// A core that cannot run on tensor cores (8 query rows: not a whole
// tile) keeps no schedule; expand-attention-core runs it a thread a row.
// DEFAULT-LABEL: func.func @short
// DEFAULT-NOT: cuda_core_schedule
// DEFAULT: return
func.func @short(%q: memref<1x1x8x16xf32>, %k: memref<1x1x16x16xf32>,
                 %v: memref<1x1x16x16xf32>, %o: memref<1x1x8x16xf32>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x1x8x16xf32>, memref<1x1x16x16xf32>,
       memref<1x1x16x16xf32>, memref<1x1x8x16xf32>) -> ()
  return
}
