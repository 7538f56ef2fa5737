// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3}))' | FileCheck %s --check-prefix=CONFIG
// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-tensor-core-contractions{precision=bf16}))' | FileCheck %s

// A token contraction (linformer.token_loops: batch loop 0, token loop 1)
// of 512 tokens x 128 outputs over k = 1024: 32 warps at full length, the
// budget (split-k-warps=32), so no split-K; a run whose longest sequence
// has at most 256 tokens leaves its length rule half the blocks, and split
// 2 fills the budget again; at most 128 tokens, split 4 (at 64, the block's
// 128 rows would still be one block a sequence: no more variants).
// CONFIG-LABEL: func.func @ffn_down(
// CONFIG: linalg.generic
// CONFIG-SAME: linformer.cuda_length_splits = array<i64: 256, 2, 128, 4>
// CONFIG-SAME: linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1,

// Applied: the longest length once at the function's start, then nested
// scf.ifs marked with their guard, the partial sums of each split allocated
// before them; the schedule's split in the outermost else. Each split
// variant's block loop goes (sequence, token tile, part, column block) with
// its length rule, and its sums' loop carries the (batch, token) dims.
// CHECK-LABEL: func.func @ffn_down(
// CHECK: %[[LONGEST:.*]] = scf.for
// CHECK: memref.load %{{.*}} : memref<1xi32>
// CHECK: arith.maxsi
// CHECK: %[[P2:.*]] = memref.alloc() : memref<2x1x512x128xf32>
// CHECK: %[[P4:.*]] = memref.alloc() : memref<4x1x512x128xf32>
// CHECK: arith.cmpi sle, %[[LONGEST]], %c256_i32
// CHECK: scf.if
// CHECK: arith.cmpi sle, %[[LONGEST]], %c128_i32
// CHECK: scf.if
// CHECK: linformer.cuda_token_rows = #linformer.token_rows<grid = [1, 4, 4, 1], batch = 0, row = 1, tile = 128>
// CHECK: memref.load %[[P4]]
// CHECK: } {linformer.token_loops = array<i64: 0, 1>}
// CHECK: } else {
// CHECK: linformer.cuda_token_rows = #linformer.token_rows<grid = [1, 4, 2, 1], batch = 0, row = 1, tile = 128>
// CHECK: memref.load %[[P2]]
// CHECK: } {linformer.token_loops = array<i64: 0, 1>}
// CHECK: } {linformer.length_guard = 128 : i64}
// CHECK: } else {
// CHECK: linformer.cuda_token_rows = #linformer.token_rows<grid = [1, 4, 1], batch = 0, row = 1, tile = 128>
// CHECK: } {linformer.length_guard = 256 : i64}
// CHECK: memref.dealloc %[[P2]]
// CHECK: memref.dealloc %[[P4]]
#x = affine_map<(b, n, d, c) -> (b, n, c)>
#w = affine_map<(b, n, d, c) -> (c, d)>
#y = affine_map<(b, n, d, c) -> (b, n, d)>
func.func @ffn_down(%x: memref<1x512x1024xbf16> {linformer.sequence},
                    %len: memref<1xi32> {linformer.lengths},
                    %w: memref<1024x128xbf16>, %y: memref<1x512x128xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x512x1024xbf16>, memref<1024x128xbf16>)
      outs(%y : memref<1x512x128xf32>) attrs = {linformer.token_loops = array<i64: 0, 1>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
