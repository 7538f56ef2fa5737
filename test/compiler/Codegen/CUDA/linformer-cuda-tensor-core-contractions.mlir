// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules,linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions,canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{pair-stores=false},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions,canonicalize,cse))' | FileCheck %s --check-prefix=NOPAIR
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{precision=bf16},linformer-cuda-select-schedules{precision=bf16},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=BF16
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{precision=f16},linformer-cuda-select-schedules{precision=f16},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=f16},canonicalize,cse))' | FileCheck %s --check-prefix=F16
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{precision=bf16},linformer-cuda-select-schedules{precision=bf16},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 emulate},canonicalize,cse))' | FileCheck %s --check-prefix=EMU
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32 emulate},linformer-cuda-emulate-instructions,canonicalize,cse))' | FileCheck %s --check-prefix=TF32EMU
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{warp-tiles-m=1 warp-tiles-n=1},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions,canonicalize,cse))' | FileCheck %s --check-prefix=ONE
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{split-k-warps=0},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions,canonicalize,cse))' | FileCheck %s --check-prefix=NOSPLIT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{split-k-warps=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions,canonicalize,cse))' | FileCheck %s --check-prefix=SPLIT3
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{split-k-warps=4},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions,canonicalize,cse))' | FileCheck %s --check-prefix=SPLIT4
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=fp8}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{warp-tiles-m=16}))' 2>&1 | FileCheck %s --check-prefix=BADTILES

// A head-split projection [b, h, n, dh] += X[b, n, c] * W[c, h, dh]
// (reductions innermost, as linformer-cuda-prepare-loops leaves them):
// m = n (32 rows: a warp takes both 16-row tiles), n = dh (16 columns: both
// 8-column tiles), k = c. The batch folds into the warp rows (2), the head
// (an n dimension: it indexes W and Y, not X) into the warp columns (4);
// 32 lanes. Each warp holds 2 x 2 accumulator fragments, loads each A
// fragment once per k step for both column tiles and each B fragment once
// for both row tiles.
// CHECK-LABEL: func.func @projection
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[ROW:.*]], %[[COL:.*]], %[[LANE:.*]]) = (%c0, %c0, %c0) to (%c2, %c4, %c32)
// CHECK: %[[G:.*]] = arith.divui %[[LANE]], %c4
// CHECK: %[[T:.*]] = arith.remui %[[LANE]], %c4
// The accumulator fragments start as C (the bias the fill wrote).
// CHECK-COUNT-16: memref.load %arg2
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 step %c4 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK: %[[KT:.*]] = arith.addi %[[K]], %[[T]]
// CHECK: %[[A0:.*]] = memref.load %arg0[%{{.*}}, %[[G]], %[[KT]]] : memref<2x32x64xf32>
// Every operand rounded to TF32 (cvt.rna.tf32.f32) before the mma: 2 A
// elements of each of 2 row tiles, 1 B element of each of 2 column tiles.
// CHECK: nvvm.convert.float.to.tf32 %[[A0]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-COUNT-5: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-NOT: nvvm.convert.float.to.tf32
// CHECK-COUNT-4: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 4], tf32Enabled} : (vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.yield
// Each lane's columns 2t and 2t + 1 of a tile row are adjacent in C (its
// last dimension is n): one aligned 2-element store for two elements.
// With pair-stores off (the selection's option: the schedule's
// pair_stores = false), one store an element.
// CHECK-COUNT-8: vector.store %{{.*}}, %arg2[{{.*}}] {alignment = 8 : i64} : memref<2x4x32x16xf32>, vector<2xf32>
// CHECK-NOT: memref.store %{{.*}}, %arg2
// NOPAIR-LABEL: func.func @projection
// NOPAIR-COUNT-16: memref.store %{{.*}}, %arg2
// NOPAIR-NOT: vector.store
// CHECK: {linformer.tensor_core}
// TF32 on the host: each operand (a fragment's loads first) rounded by the kernels' own cvt.rna,
// which linformer-cuda-emulate-instructions computes in integer ops (half
// a TF32 ulp added, the 13 low bits cleared, NaN kept); the tiles are the
// GPU's (`emulate` leaves unstaged tiles alone: linformer-cuda-emulate-warps
// lowers their mma.sync once the loops are mapped).
// TF32EMU-LABEL: func.func @projection
// TF32EMU-NOT: nvvm.
// TF32EMU: %[[X:.*]] = memref.load %arg0
// TF32EMU: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// TF32EMU-NEXT: %[[UP:.*]] = arith.addi %[[BITS]], %c4096_i32
// TF32EMU-NEXT: %[[CLEAR:.*]] = arith.andi %[[UP]], %c-8192_i32
// TF32EMU-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]]
// TF32EMU-NEXT: %[[R:.*]] = arith.select %[[NAN]], %[[BITS]], %[[CLEAR]] : i32
// TF32EMU-NEXT: arith.bitcast %[[R]] : i32 to f32
// TF32EMU: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 4], tf32Enabled}
// m16n8k16 on bf16: two operands a register (the lower k in the low half),
// A from rows g and g + 8 at k + 2t and k + 2t + 8, B at column g.
// BF16-LABEL: func.func @projection
// BF16: scf.for %[[K:.*]] = %c0 to %c64 step %c16
// BF16: %[[K2T:.*]] = arith.addi %[[K]], %[[TT:.*]] : index
// BF16: %[[K2T1:.*]] = arith.addi %[[K2T]], %c1
// The B fragments of all the warp's column tiles first, then each A
// fragment right before its row of mma (fewer registers live).
// BF16: memref.load %arg1[%[[K2T1]], %{{.*}}, %[[G:.*]]] : memref<64x4x16xf32>
// BF16-NOT: memref.load %arg0
// BF16: %[[HI:.*]] = memref.load %arg0[%{{.*}}, %[[G]], %[[K2T1]]]
// BF16: %[[LO:.*]] = memref.load %arg0[%{{.*}}, %[[G]], %[[K2T]]]
// BF16: %[[LO16:.*]] = arith.truncf %[[LO]] : f32 to bf16
// BF16: %[[HI16:.*]] = arith.truncf %[[HI]] : f32 to bf16
// BF16: %[[PAIR:.*]] = vector.from_elements %[[LO16]], %[[HI16]] : vector<2xbf16>
// BF16: vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// BF16: nvvm.mma.sync A[{{.*}}, {{.*}}, {{.*}}, {{.*}}]  B[{{.*}}, {{.*}}]  C[{{.*}}, {{.*}}, {{.*}}, {{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// BF16-COUNT-3: nvvm.mma.sync
// BF16-NOT: nvvm.mma.sync
// BF16: scf.yield
// F16-LABEL: func.func @projection
// F16: arith.truncf %{{.*}} : f32 to f16
// F16: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// On the host the same tiles and mma.sync as on the GPU (2 x 2 a k step).
// EMU-LABEL: func.func @projection
// EMU: scf.parallel {{.*}} to (%c2, %c4, %c32)
// EMU: scf.for {{.*}} step %c16 iter_args
// EMU-COUNT-4: nvvm.mma.sync
// EMU-NOT: nvvm.mma.sync
// EMU: {linformer.tensor_core}
// One 16x8 tile a warp: 2 x 2 row tiles, 2 x 4 column tiles.
// ONE-LABEL: func.func @projection
// ONE: scf.parallel {{.*}} to (%c4, %c8, %c32)
// ONE: nvgpu.mma.sync
// ONE-NOT: nvgpu.mma.sync
// ONE: scf.yield
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @projection(%x: memref<2x32x64xf32>, %w: memref<64x4x16xf32>,
                      %y: memref<2x4x32x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x32x64xf32>, memref<64x4x16xf32>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The output projection reduces over heads and head dims: the head loop is
// sequential around the stepped dh loop (bf16: dh = 8 does not divide into
// k steps of 16, so that contraction stays plain).
// CHECK-LABEL: func.func @two_reductions
// CHECK: scf.parallel {{.*}} to (%c2, %c32)
// CHECK: scf.for {{.*}} = %c0 to %c4 step %c1 iter_args
// CHECK: scf.for {{.*}} = %c0 to %c8 step %c4 iter_args
// CHECK: nvgpu.mma.sync
// BF16-LABEL: func.func @two_reductions
// BF16: linalg.generic
// BF16-NOT: mma.sync
#a = affine_map<(b, n, d, h, e) -> (b, h, n, e)>
#o = affine_map<(b, n, d, h, e) -> (h, e, d)>
#r = affine_map<(b, n, d, h, e) -> (b, n, d)>
func.func @two_reductions(%v: memref<2x4x32x8xf32>, %wo: memref<4x8x32xf32>,
                          %y: memref<2x32x32xf32>) {
  linalg.generic {indexing_maps = [#a, #o, #r],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%v, %wo : memref<2x4x32x8xf32>, memref<4x8x32xf32>) outs(%y : memref<2x32x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Sizes that do not divide into 16 x 8 x 4 tiles, and ops that are not
// contractions, stay as they are (the plain path takes them).
// CHECK-LABEL: func.func @not_divisible
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK-NOT: nvgpu.mma.sync
func.func @not_divisible(%a: memref<20x12xf32>, %b: memref<12x8xf32>, %c: memref<20x8xf32>) {
  linalg.matmul ins(%a, %b : memref<20x12xf32>, memref<12x8xf32>) outs(%c : memref<20x8xf32>)
  %d = memref.alloc() : memref<20x8xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<20x12xf32>, memref<12x8xf32>) outs(%d : memref<20x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// BAD: error: precision 'fp8' is not one the warp tiles have (tf32: m16n8k4 on f32 data with TF32 products; tf32x3: the same on each operand's TF32 head and tail, three products a pair; bf16 or f16: m16n8k16 on operands rounded to that type; all accumulate in f32; f32: staged f32 pairs multiplied by each lane with fma, no tensor cores)
// BADTILES: error: warp-tiles-m and warp-tiles-n must be 1, 2, 4 or 8 (mma tiles a warp computes along m and n), not 16 and 4

// -----

// Split-K: E X with a 16 x 64 output has two warp blocks but a 4096-long
// reduction. Its k loop is cut into 64 parts of 64 (16 mma steps each);
// each part's warps start from zero and write a slice of a new partials
// buffer, and one more loop adds the parts to C in order.
// CHECK-LABEL: func.func @split_k
// CHECK: %[[P:.*]] = memref.alloc() : memref<64x16x64xf32>
// CHECK: scf.parallel (%[[PART:.*]], %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c64, %c2, %c32)
// CHECK: %[[LB:.*]] = arith.muli %[[PART]], %c64
// CHECK: %[[UB:.*]] = arith.addi %[[LB]], %c64
// CHECK: scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c4
// CHECK-COUNT-4: nvgpu.mma.sync
// CHECK: vector.store %{{.*}}, %[[P]][%[[PART]], %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<64x16x64xf32>, vector<2xf32>
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c16, %c64)
// CHECK: %[[C0:.*]] = memref.load %arg2[%[[I]], %[[J]]]
// CHECK: scf.for %[[S:.*]] = %c0 to %c64 step %c1 iter_args(%[[ACC:.*]] = %[[C0]])
// CHECK: memref.load %[[P]][%[[S]], %[[I]], %[[J]]]
// CHECK: memref.store %{{.*}}, %arg2[%[[I]], %[[J]]]
// CHECK: memref.dealloc %[[P]]
// bf16 steps k by 16: 256 steps, 16 parts of 16.
// BF16-LABEL: func.func @split_k
// BF16: memref.alloc() : memref<16x16x64xf32>
// Asked not to split, it does not.
// ONE-LABEL: func.func @split_k
// ONE: memref.alloc
// The parts' warps stay within split-k-warps: 2 warps split in 2 fill 4
// but would overshoot 3, which 2 alone nearly fill (no split).
// SPLIT3-LABEL: func.func @split_k
// SPLIT3-NOT: memref.alloc
// SPLIT3: scf.for %{{.*}} = %c0 to %c4096 step %c4
// SPLIT4-LABEL: func.func @split_k
// SPLIT4: memref.alloc() : memref<2x16x64xf32>
// NOSPLIT-LABEL: func.func @split_k
// NOSPLIT-NOT: memref.alloc
// NOSPLIT: scf.for %{{.*}} = %c0 to %c4096 step %c4
func.func @split_k(%e: memref<16x4096xf32>, %x: memref<4096x64xf32>, %c: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<16x4096xf32>, memref<4096x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bf16 weight whose extension was fused into its projection
// (linformer-cuda-fuse-elementwise): the warps read the bf16 data itself;
// rounding an extended bf16 back to bf16 for a fragment is the identity
// (the canonicalizer folds the pair away: B's pairs are the loaded bf16
// values), and emulated it is exact.
// BF16-LABEL: func.func @bf16_weight
// BF16: %[[HI:.*]] = memref.load %arg1[{{.*}}] : memref<64x4x16xbf16>
// BF16-NEXT: %[[LO:.*]] = memref.load %arg1[{{.*}}] : memref<64x4x16xbf16>
// BF16-NEXT: vector.from_elements %[[LO]], %[[HI]] : vector<2xbf16>
// BF16: nvvm.mma.sync
// BF16: {linformer.tensor_core}
// EMU-LABEL: func.func @bf16_weight
// EMU: memref.load %arg1[{{.*}}] : memref<64x4x16xbf16>
// EMU: {linformer.tensor_core}
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @bf16_weight(%x: memref<2x32x64xf32>, %w: memref<64x4x16xbf16>,
                       %y: memref<2x4x32x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x32x64xf32>, memref<64x4x16xbf16>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Any other operation in the body (here a negation) is not a plain
// multiply-add of extended operands: the contraction stays as it is.
// BF16-LABEL: func.func @negated
// BF16-NOT: nvvm.mma.sync
// BF16: linalg.generic
// BF16: arith.negf
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @negated(%x: memref<2x32x64xf32>, %w: memref<64x4x16xf32>,
                   %y: memref<2x4x32x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x32x64xf32>, memref<64x4x16xf32>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %nb = arith.negf %b : f32
    %m = arith.mulf %a, %nb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bias broadcast right before its projection (what bufferization leaves
// of `outs(broadcast(b))`) writes all of C for the projection to read back.
// The accumulators start from the bias itself, loaded at each element's
// (h, d) and extended, and the broadcast (a kernel writing 2 x 4 x 32 x 16
// floats) goes. Constants and views between the two are looked past.
// CHECK-LABEL: func.func @bias_init
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%{{.*}}, %[[COL:.*]], %[[LANE:.*]]) = (%c0, %c0, %c0) to (%c2, %c4, %c32)
// CHECK: %[[H:.*]] = arith.remui %[[COL]], %c4
// CHECK: %[[T:.*]] = arith.remui %[[LANE]], %c4
// CHECK: %[[T2:.*]] = arith.muli %[[T]], %c2
// CHECK: %[[B0:.*]] = memref.load %arg3[%[[H]], %[[T2]]] : memref<4x16xbf16>
// CHECK: arith.extf %[[B0]] : bf16 to f32
// CHECK-NOT: memref.load %arg2
// CHECK: scf.for
// CHECK: nvgpu.mma.sync
// CHECK-COUNT-8: vector.store %{{.*}}, %arg2
// EMU-LABEL: func.func @bias_init
// EMU-NOT: linalg.generic
// EMU: memref.load %arg3[{{.*}}] : memref<4x16xbf16>
// EMU-NOT: memref.load %arg2
// EMU: {linformer.tensor_core}
#b = affine_map<(b, h, n, d) -> (h, d)>
#c = affine_map<(b, h, n, d) -> (b, h, n, d)>
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @bias_init(%x: memref<2x32x64xf32>, %w: memref<64x4x16xf32>,
                     %y: memref<2x4x32x16xf32>, %bias: memref<4x16xbf16>) {
  linalg.generic {indexing_maps = [#b, #c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<4x16xbf16>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  %unused = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x32x64xf32>, memref<64x4x16xf32>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A zero fill before a split-K reduction: the parts' sum starts from the
// fill's constant instead of C, and the fill goes.
// CHECK-LABEL: func.func @fill_init
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c16, %c64)
// CHECK-NOT: memref.load %arg2
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%{{.*}} = %[[ZERO]])
// CHECK: memref.store %{{.*}}, %arg2[%[[I]], %[[J]]]
func.func @fill_init(%e: memref<16x4096xf32>, %x: memref<4096x64xf32>, %c: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<16x4096xf32>, memref<4096x64xf32>) outs(%c : memref<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Producers whose values the accumulators cannot compute stay kernels, and
// the accumulators load C: one that reads C (a residual added to the
// bias); one separated from the contraction by a write to memory (which
// might be to C); one whose body uses a value from outside that is not a
// constant (a kernel would take it as an argument).
// CHECK-LABEL: func.func @init_kept
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg3 : memref<16xf32>) outs(%arg2 : memref<32x16xf32>)
// CHECK: scf.parallel
// CHECK: memref.load %arg2
// CHECK: nvgpu.mma.sync
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg3 : memref<16xf32>) outs(%arg2 : memref<32x16xf32>)
// CHECK: memref.store %arg5, %arg4
// CHECK: scf.parallel
// CHECK: memref.load %arg2
// CHECK: nvgpu.mma.sync
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg3 : memref<16xf32>) outs(%arg2 : memref<32x16xf32>)
// CHECK: arith.mulf %{{.*}}, %arg5
// CHECK: scf.parallel
// CHECK: memref.load %arg2
// CHECK: nvgpu.mma.sync
#bias = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @init_kept(%a: memref<32x16xf32>, %b: memref<16x16xf32>, %c: memref<32x16xf32>,
                     %bias: memref<16xf32>, %other: memref<f32>, %s: f32) {
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<16xf32>) outs(%c : memref<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x16xf32>, memref<16x16xf32>) outs(%c : memref<32x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<16xf32>) outs(%c : memref<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.store %s, %other[] : memref<f32>
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x16xf32>, memref<16x16xf32>) outs(%c : memref<32x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<16xf32>) outs(%c : memref<32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %s : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x16xf32>, memref<16x16xf32>) outs(%c : memref<32x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The FFN: H = 0, H += X W1, GELU in place, Y = H W2. GELU reads H only at the
// element it writes: it runs on the accumulators as they are stored and its
// kernel goes. The only reader of H after that is the second projection,
// which rounds H to its operand type as it loads it; so with bf16 the first
// stores H rounded (the same bits, half the bytes) into a new bf16 buffer,
// which the second reads as it reads a bf16 weight. TF32 rounds nothing
// (H stays f32); the exact emulation neither.
// CHECK-LABEL: func.func @ffn
// CHECK-NOT: linalg.
// CHECK-NOT: bf16
// CHECK: math.erf
// CHECK: memref.store %{{.*}}, %[[H:.*]][%{{.*}}, %{{.*}}] : memref<64x32xf32>
// CHECK: memref.load %[[H]]
// BF16-LABEL: func.func @ffn
// BF16-NOT: linalg.
// BF16: %[[H16:.*]] = memref.alloc() : memref<64x32xbf16>
// BF16-NOT: memref.alloc
// BF16: math.erf
// BF16: memref.store %{{.*}}, %[[H16]]{{.*}} : memref<64x32xbf16>
// BF16: memref.load %[[H16]]{{.*}} : memref<64x32xbf16>
// BF16: nvvm.mma.sync
// BF16: memref.dealloc %[[H16]]
// BF16-NOT: memref.dealloc
// EMU-LABEL: func.func @ffn
// EMU: memref.alloc() : memref<64x32xbf16>
// EMU-NOT: linalg.generic
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @ffn(%x: memref<64x16xf32>, %w1: memref<16x32xf32>, %w2: memref<32x16xf32>,
               %y: memref<64x16xf32>) {
  %h = memref.alloc() : memref<64x32xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %e = math.erf %in : f32
    %r = arith.mulf %e, %half : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w2 : memref<64x32xf32>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %h : memref<64x32xf32>
  return
}

// -----

// One buffer, two values (every layer's FFN reuses its hidden buffer): the
// first is read only by a contraction, so it is stored rounded into a
// 16-bit twin; the second, which the fill before the third contraction
// starts, is read by a plain op (which does not round it; transposed, so
// not an epilogue) and stays f32.
// CHECK-LABEL: func.func @reused
// CHECK-NOT: bf16
// EMU-LABEL: func.func @reused
// EMU: memref.alloc() : memref<64x32xbf16>
// BF16-LABEL: func.func @reused
// BF16-DAG: %[[H:.*]] = memref.alloc() : memref<64x32xf32>
// BF16-DAG: %[[H16:.*]] = memref.alloc() : memref<64x32xbf16>
// BF16: vector.store %{{.*}}, %[[H16]]{{.*}} : memref<64x32xbf16>, vector<2xbf16>
// BF16: memref.load %[[H16]]{{.*}} : memref<64x32xbf16>
// BF16: nvvm.mma.sync
// BF16: vector.store %{{.*}}, %[[H]]{{.*}} : memref<64x32xf32>, vector<2xf32>
// BF16: linalg.generic {{.*}} ins(%[[H]] : memref<64x32xf32>)
// BF16: memref.dealloc %[[H]]
// BF16: memref.dealloc %[[H16]]
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @reused(%x: memref<64x16xf32>, %w1: memref<16x32xf32>, %w2: memref<32x16xf32>,
                  %y: memref<64x16xf32>, %z: memref<32x64xf32>) {
  %h = memref.alloc() : memref<64x32xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w2 : memref<64x32xf32>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%z : memref<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %h : memref<64x32xf32>
  return
}

// -----

// The attention core's q comes from a projection and its output goes to
// one; the core on tensor cores rounds q as it loads it, the projection
// its input: both buffers become bf16. The core (expanded later) reads
// q as bf16 and writes bf16; its keys and values, arguments here, stay as
// they are. Select-schedules gives it its schedule (2 warps for its 2
// query tiles; 16 slots, k = 16).
// CHECK-LABEL: func.func @core_io
// CHECK-NOT: bf16
// EMU-LABEL: func.func @core_io
// EMU: linformer.attention_core {{.*}} outs(%{{.*}}) {linformer.cuda_core_schedule = {{.*}}} : ({{.*}}, memref<1x1x32x16xbf16>) -> ()
// BF16-LABEL: func.func @core_io
// BF16-NOT: memref.alloc() : memref<1x1x32x16xf32>
// BF16: %[[Q:.*]] = memref.alloc() : memref<1x1x32x16xbf16>
// BF16-NOT: memref.alloc() : memref<1x1x32x16xf32>
// BF16: vector.store %{{.*}}, %[[Q]]{{.*}} : memref<1x1x32x16xbf16>, vector<2xbf16>
// BF16-NOT: memref.alloc() : memref<1x1x32x16xf32>
// BF16: %[[O:.*]] = memref.alloc() : memref<1x1x32x16xbf16>
// BF16: linformer.attention_core %[[Q]], %arg2, %arg3 scale(2.500000e-01) outs(%[[O]]) {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>} : (memref<1x1x32x16xbf16>, memref<1x1x16x16xf32>, memref<1x1x16x16xf32>, memref<1x1x32x16xbf16>) -> ()
// BF16: memref.load %[[O]]{{.*}} : memref<1x1x32x16xbf16>
// BF16: nvvm.mma.sync
func.func @core_io(%x: memref<1x32x16xf32>, %wq: memref<16x1x16xf32>,
                   %k: memref<1x1x16x16xf32>, %v: memref<1x1x16x16xf32>,
                   %wo: memref<1x16x16xf32>, %y: memref<1x32x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %q = memref.alloc() : memref<1x1x32x16xf32>
  linalg.fill ins(%zero : f32) outs(%q : memref<1x1x32x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, n, d, c) -> (b, n, c)>,
                                   affine_map<(b, h, n, d, c) -> (c, h, d)>,
                                   affine_map<(b, h, n, d, c) -> (b, h, n, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wq : memref<1x32x16xf32>, memref<16x1x16xf32>) outs(%q : memref<1x1x32x16xf32>) {
  ^bb0(%p: f32, %w: f32, %acc: f32):
    %m = arith.mulf %p, %w : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  %o = memref.alloc() : memref<1x1x32x16xf32>
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x1x32x16xf32>, memref<1x1x16x16xf32>, memref<1x1x16x16xf32>,
       memref<1x1x32x16xf32>) -> ()
  linalg.fill ins(%zero : f32) outs(%y : memref<1x32x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, n, c, h, d) -> (b, h, n, d)>,
                                   affine_map<(b, n, c, h, d) -> (h, d, c)>,
                                   affine_map<(b, n, c, h, d) -> (b, n, c)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%o, %wo : memref<1x1x32x16xf32>, memref<1x16x16xf32>) outs(%y : memref<1x32x16xf32>) {
  ^bb0(%p: f32, %w: f32, %acc: f32):
    %m = arith.mulf %p, %w : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %q : memref<1x1x32x16xf32>
  memref.dealloc %o : memref<1x1x32x16xf32>
  return
}

// -----

// E X under the padding mask: E broadcast over the batch with the
// positions past each sequence's length zeroed (a guarded extension,
// E[k, n] if n < lengths[b] else 0) into an f32 buffer of [b, k, n] that
// only the contraction reads. The loads compute the mask instead (a
// compare and a select on E and the length); the op and its buffer go.
// In @guarded_kept, something writes E after the mask was taken, so the
// values in the buffer are not those the loads would compute: both stay.
// CHECK-LABEL: func.func @guarded
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel
// CHECK-DAG: memref.load %arg0
// CHECK-DAG: memref.load %arg1
// CHECK-DAG: arith.select
// CHECK: nvgpu.mma.sync
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
// CHECK-LABEL: func.func @guarded_kept
// CHECK: %[[M:.*]] = memref.alloc() : memref<2x16x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[M]] : memref<2x16x64xf32>)
// CHECK: memref.load %[[M]]
// BF16-LABEL: func.func @guarded
// BF16-NOT: memref.alloc
// BF16: scf.parallel
// BF16-DAG: memref.load %arg0
// BF16-DAG: memref.load %arg1
// BF16-DAG: arith.select
// BF16: nvvm.mma.sync
// EMU-LABEL: func.func @guarded
// EMU-NOT: memref.alloc() : memref<2x16x64xf32>
// EMU: arith.select
#mask = [affine_map<(b, k, n) -> (k, n)>, affine_map<(b, k, n) -> (b)>, affine_map<(b, k, n) -> (b, k, n)>]
#ex = [affine_map<(b, k, d, n) -> (b, k, n)>, affine_map<(b, k, d, n) -> (b, n, d)>, affine_map<(b, k, d, n) -> (b, k, d)>]
func.func @guarded(%E: memref<16x64xbf16>, %lengths: memref<2xi32>, %x: memref<2x64x16xbf16>,
                   %c: memref<2x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<2x16x64xf32>
  linalg.generic {indexing_maps = #mask, iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%E, %lengths : memref<16x64xbf16>, memref<2xi32>) outs(%m : memref<2x16x64xf32>) {
  ^bb0(%v: bf16, %l: i32, %o: f32):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i32
    %in = arith.cmpi slt, %ni, %l : i32
    %f = arith.extf %v : bf16 to f32
    %s = arith.select %in, %f, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = #ex, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%m, %x : memref<2x16x64xf32>, memref<2x64x16xbf16>) outs(%c : memref<2x16x16xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %m : memref<2x16x64xf32>
  return
}
func.func @guarded_kept(%E: memref<16x64xbf16>, %lengths: memref<2xi32>, %x: memref<2x64x16xbf16>,
                        %c: memref<2x16x16xf32>, %other: memref<16x64xbf16>) {
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<2x16x64xf32>
  linalg.generic {indexing_maps = #mask, iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%E, %lengths : memref<16x64xbf16>, memref<2xi32>) outs(%m : memref<2x16x64xf32>) {
  ^bb0(%v: bf16, %l: i32, %o: f32):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i32
    %in = arith.cmpi slt, %ni, %l : i32
    %f = arith.extf %v : bf16 to f32
    %s = arith.select %in, %f, %zero : f32
    linalg.yield %s : f32
  }
  memref.copy %other, %E : memref<16x64xbf16> to memref<16x64xbf16>
  linalg.generic {indexing_maps = #ex, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%m, %x : memref<2x16x64xf32>, memref<2x64x16xbf16>) outs(%c : memref<2x16x16xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %m : memref<2x16x64xf32>
  return
}

// -----

// Layerwise sharing: two layers' E X read the one masked E. Each computes
// the mask as it loads it; the op and its buffer go with the second.
// CHECK-LABEL: func.func @guarded_two_readers
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: arith.select
// CHECK: nvgpu.mma.sync
// CHECK: arith.select
// CHECK: nvgpu.mma.sync
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
#mask = [affine_map<(b, k, n) -> (k, n)>, affine_map<(b, k, n) -> (b)>, affine_map<(b, k, n) -> (b, k, n)>]
#ex = [affine_map<(b, k, d, n) -> (b, k, n)>, affine_map<(b, k, d, n) -> (b, n, d)>, affine_map<(b, k, d, n) -> (b, k, d)>]
func.func @guarded_two_readers(%E: memref<16x64xbf16>, %lengths: memref<2xi32>, %x: memref<2x64x16xbf16>,
                               %c: memref<2x16x16xf32>, %x2: memref<2x64x16xbf16>, %c2: memref<2x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<2x16x64xf32>
  linalg.generic {indexing_maps = #mask, iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%E, %lengths : memref<16x64xbf16>, memref<2xi32>) outs(%m : memref<2x16x64xf32>) {
  ^bb0(%v: bf16, %l: i32, %o: f32):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i32
    %in = arith.cmpi slt, %ni, %l : i32
    %f = arith.extf %v : bf16 to f32
    %s = arith.select %in, %f, %zero : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = #ex, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%m, %x : memref<2x16x64xf32>, memref<2x64x16xbf16>) outs(%c : memref<2x16x16xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = #ex, iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%m, %x2 : memref<2x16x64xf32>, memref<2x64x16xbf16>) outs(%c2 : memref<2x16x16xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %m : memref<2x16x64xf32>
  return
}
