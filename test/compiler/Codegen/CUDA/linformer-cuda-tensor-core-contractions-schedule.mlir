// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},canonicalize,cse))' --verify-diagnostics | FileCheck %s

// What a schedule builds (the pipeline test: the options that choose
// one are linformer-cuda-select-schedules', checked in its own test): a
// contraction takes the schedule it carries, here one the selection would
// not choose, and one that does not fit it is an error that says why.

// bf16 128 x 64 x 64 under warp tiles [2, 1] and 2 parts: each part's
// warps cover 128 / 32 x 64 / 8 warp blocks (4 x 8, 32 lanes) and 2 mma a
// k step (one A fragment each, one shared B), over half the k range (32:
// 2 steps of 16) into partial sums [2, 128, 64], which a second loop adds
// to C in part order.
// CHECK-LABEL: func.func @applied
// CHECK: %[[PARTS:.*]] = memref.alloc() : memref<2x128x64xf32>
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0, %c0) to (%c2, %c4, %c8, %c32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.store %{{.*}}, %[[PARTS]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c128, %c64)
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: memref.load %[[PARTS]]
// CHECK-NOT: linformer.cuda_schedule

func.func @applied(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [2, 1], split = 2, warps = [0, 0], chunk = 0, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
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

// A contraction without a schedule stays as it is (the plain path).
// CHECK-LABEL: func.func @unscheduled
// CHECK: linalg.generic
// CHECK-NOT: nvvm.mma.sync

func.func @unscheduled(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
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

// The k range has 4 steps of 16: 64 parts do not divide it.

func.func @split_too_many(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_schedule<{{.*}}>: split 64 does not divide its 4 k steps{{.*}}}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 64, warps = [0, 0], chunk = 0, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
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

// 8 x 8 mma tiles: a wgmma warp block of 16 column tiles does not divide
// them.

func.func @tiles_too_wide(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_schedule<{{.*}}>: warp_tiles [1, 16] do not divide its 8 x 8 mma tiles}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [4, 1], chunk = 16, buffers = 2, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true>} {
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

// Block tiles of 4 x 2 warps at 4 x 4 tiles are 256 rows: more than m.

func.func @block_too_big(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_schedule<{{.*}}>: its block tile 256 x 64 and chunk 16 do not divide its innermost m, n and k extents 128, 64 and 64}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [4, 2], chunk = 16, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
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

// X is f32 here: cp.async copies only 16-bit buffers of the operand type.

func.func @async_f32(%x: memref<128x64xf32>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_schedule<{{.*}}>: operand 0 cannot be copied with cp.async{{.*}}}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xf32>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 2], chunk = 16, buffers = 2, async = [true, true], natural_b = true, ldmatrix_a = true, wgmma = false>} {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// W [n, k] is k-major: it has no natural [k][n] layout.

func.func @natural_kmajor(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                     %y: memref<128x64xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_schedule<{{.*}}>: natural_b needs a B whose contiguous dimension is not k}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 2], chunk = 16, buffers = 1, async = [false, false], natural_b = true, ldmatrix_a = false, wgmma = false>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
