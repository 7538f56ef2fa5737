// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3}))' | FileCheck %s --check-prefix=CONFIG
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-length-variants))' | FileCheck %s --check-prefix=VARIANTS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-length-variants,linformer-cuda-tensor-core-contractions{precision=bf16}))' | FileCheck %s

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

// The variants (linformer-cuda-length-variants): the longest length once at
// the function's start, then nested scf.ifs marked with their guard, a copy
// of the contraction in each branch with that branch's split and its
// variant number; the schedule's split in the outermost else.
// VARIANTS-LABEL: func.func @ffn_down(
// VARIANTS: %[[LONGEST:.*]] = scf.for
// VARIANTS: arith.maxsi
// VARIANTS: arith.cmpi sle, %[[LONGEST]], %c256_i32
// VARIANTS-NEXT: scf.if
// VARIANTS: arith.cmpi sle, %[[LONGEST]], %c128_i32
// VARIANTS-NEXT: scf.if
// VARIANTS-NEXT: linalg.generic
// VARIANTS-SAME: attrs =  {linformer.cuda_absorbs = #linformer.cuda_absorption<init = false, epilogue = false>, linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 4,
// VARIANTS-SAME: linformer.length_variant = 2 : i64
// VARIANTS: } else {
// VARIANTS-NEXT: linalg.generic
// VARIANTS-SAME: attrs =  {linformer.cuda_absorbs = #linformer.cuda_absorption<init = false, epilogue = false>, linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 2,
// VARIANTS-SAME: linformer.length_variant = 1 : i64
// VARIANTS: } {linformer.length_guard = 128 : i64}
// VARIANTS-NEXT: } else {
// VARIANTS-NEXT: linalg.generic
// VARIANTS-SAME: attrs =  {linformer.cuda_absorbs = #linformer.cuda_absorption<init = false, epilogue = false>, linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1,
// VARIANTS-SAME: linformer.length_variant = 0 : i64
// VARIANTS: } {linformer.length_guard = 256 : i64}
// VARIANTS-NEXT: return

// Applied (linformer-cuda-tensor-core-contractions): the partial sums of
// each split allocated before the guards, in variant order, and freed after
// them. Each split variant's block loop goes (sequence, token tile, part,
// column block) with its length rule, and its sums' loop carries the
// (batch, token) dims.
// CHECK-LABEL: func.func @ffn_down(
// CHECK: %[[LONGEST:.*]] = scf.for
// CHECK: memref.load %{{.*}} : memref<1xi32>
// CHECK: arith.maxsi
// CHECK: arith.cmpi sle, %[[LONGEST]], %c256_i32
// CHECK: %[[P2:.*]] = memref.alloc() : memref<2x1x512x128xf32>
// CHECK: %[[P4:.*]] = memref.alloc() : memref<4x1x512x128xf32>
// CHECK-NEXT: scf.if
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

// -----

// A bias before the contraction and an activation after it (into a buffer
// of their own): each branch gets its own copy of both, which the rewrite
// absorbs into that variant's accumulators and stores; none is left.
// VARIANTS-LABEL: func.func @ffn_up(
// VARIANTS: scf.if
// VARIANTS: scf.if
// VARIANTS-NEXT: linalg.generic {{.*}} ins(%arg3 : memref<128xf32>) outs(%arg4 : memref<1x512x128xf32>)
// VARIANTS-NEXT: ^bb0
// VARIANTS-NEXT: linalg.yield
// VARIANTS-NEXT: }
// VARIANTS-NEXT: linalg.generic {{.*}} ins(%arg0, %arg2
// VARIANTS-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = true>
// VARIANTS-SAME: linformer.length_variant = 2 : i64
// VARIANTS: linalg.generic {{.*}} ins(%arg4 : memref<1x512x128xf32>) outs(%arg5 : memref<1x512x128xf32>)
// VARIANTS: } else {
// VARIANTS: linformer.length_variant = 1
// VARIANTS: } else {
// VARIANTS: linformer.length_variant = 0
// VARIANTS: arith.maximumf
// VARIANTS: } {linformer.length_guard = 256 : i64}
// VARIANTS-NEXT: return
// CHECK-LABEL: func.func @ffn_up(
// CHECK-NOT: linalg.generic
// CHECK: memref.alloc() : memref<2x1x512x128xf32>
// CHECK: scf.if
// CHECK-NOT: linalg.generic
// CHECK: } {linformer.length_guard = 256 : i64}
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
#xu = affine_map<(b, n, d, c) -> (b, n, c)>
#wu = affine_map<(b, n, d, c) -> (c, d)>
#yu = affine_map<(b, n, d, c) -> (b, n, d)>
#bias = affine_map<(b, n, d) -> (d)>
#id = affine_map<(b, n, d) -> (b, n, d)>
func.func @ffn_up(%x: memref<1x512x1024xbf16> {linformer.sequence},
                  %len: memref<1xi32> {linformer.lengths},
                  %w: memref<1024x128xbf16>, %bias: memref<128xf32>,
                  %c: memref<1x512x128xf32>, %y: memref<1x512x128xf32>) {
  linalg.generic {indexing_maps = [#bias, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias : memref<128xf32>) outs(%c : memref<1x512x128xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [#xu, #wu, #yu],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x512x1024xbf16>, memref<1024x128xbf16>)
      outs(%c : memref<1x512x128xf32>) attrs = {linformer.token_loops = array<i64: 0, 1>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<1x512x128xf32>) outs(%y : memref<1x512x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

