// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules))' | FileCheck %s --check-prefix=TF32
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3}))' | FileCheck %s --check-prefix=BF16
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3 wgmma}))' | FileCheck %s --check-prefix=WGMMA
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3 wgmma wgmma-swizzle=0}))' | FileCheck %s --check-prefix=UNSWIZZLED
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=116736 async-copy wgmma wgmma-swizzle=16}))' 2>&1 | FileCheck %s --check-prefix=SWIZZLEBAD
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 shared-bytes=49152}))' | FileCheck %s --check-prefix=SIMT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32}))' | FileCheck %s --check-prefix=NOROOM
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=fp8}))' 2>&1 | FileCheck %s --check-prefix=BAD

// What is chosen (config tests): each contraction's #linformer.cuda_schedule
// for the options the pipeline derives from the target. What a schedule
// builds is checked in linformer-cuda-tensor-core-contractions*.mlir, on the
// same contractions under the same options.

// BAD: error: precision 'fp8' is not one the warp tiles have

// A head-split projection, X [2, 128, 64] f32 by W [64, 2, 32] bf16: warp
// blocks of 4 x 4 tiles. TF32 is not staged. bf16: 2 warps a block (the
// 128 query rows hold 2 warp blocks, dh = 32 one); X is f32, so it goes
// through registers (rounded as copied, no cp.async), W by cp.async into
// its natural [k][n] layout (ldmatrix.trans); two buffers, since only one
// operand is async. wgmma needs both by cp.async: the same. SIMT has f32
// words, no cp.async, no ldmatrix, one buffer (prefetch not asked).
// TF32-LABEL: func.func @projection
// TF32: linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [0, 0], chunk = 0, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>
// BF16-LABEL: func.func @projection
// BF16: #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 1], chunk = 16, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false>
// WGMMA-LABEL: func.func @projection
// WGMMA: #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 1], chunk = 16, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false>
// SIMT-LABEL: func.func @projection
// SIMT: #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 1], chunk = 16, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>
// Without shared memory SIMT has no tiles: no schedule, the plain path.
// NOROOM-LABEL: func.func @projection
// NOROOM-NOT: linformer.cuda_schedule
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

// E X: 32 x 64 outputs over n = 1024, 16 warp blocks at 2 x 4 tiles. Split
// into parts while the parts' warps stay within split-k-warps (1024, the
// default): 16 parts of 64 k steps for TF32; staged blocks of 2 warps keep
// parts of at least 16 chunks, so 4 for the others. Neither operand is a
// 16-bit buffer: no cp.async.
// TF32-LABEL: func.func @sequence_projection
// TF32: #linformer.cuda_schedule<warp_tiles = [2, 4], split = 16, warps = [0, 0]
// BF16-LABEL: func.func @sequence_projection
// BF16: #linformer.cuda_schedule<warp_tiles = [2, 4], split = 4, warps = [1, 2], chunk = 16, buffers = 2, async = [false, false], natural_b = true, ldmatrix_a = true, wgmma = false>
// SIMT-LABEL: func.func @sequence_projection
// SIMT: #linformer.cuda_schedule<warp_tiles = [2, 4], split = 4, warps = [1, 2], chunk = 16, buffers = 1, async = [false, false]
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

// Both operands bf16 buffers: both by cp.async, 3 buffers (async-stages).
// With wgmma: one row tile a warp by the 8 column tiles of n = 64, the 8
// warps of a block along m (two warpgroups), chunks of 64 k.
// BF16-LABEL: func.func @bf16_gemm
// BF16: #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 2], chunk = 16, buffers = 3, async = [true, true], natural_b = true, ldmatrix_a = true, wgmma = false>
// WGMMA-LABEL: func.func @bf16_gemm
// WGMMA: #linformer.cuda_schedule<warp_tiles = [1, 8], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true, swizzle = 128>
// UNSWIZZLED-LABEL: func.func @bf16_gemm
// UNSWIZZLED: #linformer.cuda_schedule<warp_tiles = [1, 8], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true>
// SWIZZLEBAD: error: wgmma-swizzle must be 0, 32, 64 or 128 (bytes), not 16
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

// B k-major (W [n, k]): no natural layout.
// BF16-LABEL: func.func @wgmma_kmajor
// BF16: #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 2], chunk = 16, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = true, wgmma = false>
// WGMMA-LABEL: func.func @wgmma_kmajor
// WGMMA: #linformer.cuda_schedule<warp_tiles = [1, 8], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, swizzle = 128>
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
