// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-length-variants))'

// linformer-cuda-length-variants refuses length splits it cannot apply.

#a = affine_map<(b, n, d, c) -> (b, n, c)>
#b = affine_map<(b, n, d, c) -> (c, d)>
#o = affine_map<(b, n, d, c) -> (b, n, d)>
func.func @unstaged(%x: memref<1x512x64xf32>, %len: memref<1xi32> {linformer.lengths},
                    %w: memref<64x128xf32>, %y: memref<1x512x128xf32>) {
  // expected-error @+1 {{has linformer.cuda_length_splits but no staged linformer.cuda_schedule: split-K variants for shorter runs are for contractions whose blocks share their operands}}
  linalg.generic {indexing_maps = [#a, #b, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x512x64xf32>, memref<64x128xf32>)
      outs(%y : memref<1x512x128xf32>) attrs = {
        linformer.cuda_length_splits = array<i64: 256, 2>,
        linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [0, 0], chunk = 0, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(b, n, d, c) -> (b, n, c)>
#b = affine_map<(b, n, d, c) -> (c, d)>
#o = affine_map<(b, n, d, c) -> (b, n, d)>
func.func @odd(%x: memref<1x512x64xf32>, %len: memref<1xi32> {linformer.lengths},
               %w: memref<64x128xf32>, %y: memref<1x512x128xf32>) {
  // expected-error @+1 {{linformer.cuda_length_splits must be [T, S] pairs, got 3 values}}
  linalg.generic {indexing_maps = [#a, #b, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x512x64xf32>, memref<64x128xf32>)
      outs(%y : memref<1x512x128xf32>) attrs = {
        linformer.cuda_length_splits = array<i64: 256, 2, 128>,
        linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 16, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(b, n, d, c) -> (b, n, c)>
#b = affine_map<(b, n, d, c) -> (c, d)>
#o = affine_map<(b, n, d, c) -> (b, n, d)>
func.func @no_lengths(%x: memref<1x512x64xf32>, %w: memref<64x128xf32>,
                      %y: memref<1x512x128xf32>) {
  // expected-error @+1 {{has linformer.cuda_length_splits but its function has no linformer.lengths argument to take the longest length from}}
  linalg.generic {indexing_maps = [#a, #b, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x512x64xf32>, memref<64x128xf32>)
      outs(%y : memref<1x512x128xf32>) attrs = {
        linformer.cuda_length_splits = array<i64: 256, 2>,
        linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 16, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
