// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=16 unroll=8 reduction-tile=256" --cse | FileCheck %s --check-prefixes=CHECK,DEF
// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors --cse | FileCheck %s --check-prefix=DEFAULTS
// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=8 unroll=4 reduction-tile=256" --cse | FileCheck %s --check-prefixes=CHECK,OPT
// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=16 unroll=8 reduction-tile=256" --canonicalize --cse | FileCheck %s --check-prefix=PEEL

// Register-level tiling of what one workgroup computes. A contraction with
// contiguous output channels innermost is tiled to `unroll` rows by
// `vector-width` channels, one reduction step at a time (one outer product
// per step); a row reduction (innermost loop a reduction) keeps its
// reduction whole and takes one row at a time. linalg.softmax is decomposed
// first (max, exp, sum, divide) and its parts tiled the same way. A size
// that does not divide its loop leaves a partial last tile, which is peeled
// into a copy of its own static size; an op that already is one tile is
// left alone. (--cse only merges the loop bound constants.)

// The scores of one query tile, S = Q K^T: loops (b, h, i, c, j),
// reduction over c. Default tiles (1, 1, 8, 1, 16); with vector-width=8
// unroll=4, (1, 1, 4, 1, 8). The reduction loop is innermost, so that one
// register tile of accumulators is live across it.
// The defaults: 8 rows x 32 channels (two AVX-512 registers per row).
// DEFAULTS-LABEL: func.func @contraction(
// DEFAULTS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x8x1xf32>, tensor<1x1x1x32xf32>) outs(%{{.*}} : tensor<1x1x8x32xf32>)
// CHECK-LABEL: func.func @contraction(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x1x32x8xf32>, %[[KT:[a-z0-9]+]]: tensor<1x1x8x64xf32>, %[[INIT:[a-z0-9]+]]: tensor<1x1x32x64xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// DEF-DAG: %[[C16:.*]] = arith.constant 16 : index
// OPT-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[R:.*]] = scf.for %[[B:.*]] = %[[C0]] to %[[C1]] step %[[C1]] iter_args(%{{.*}} = %[[INIT]])
// CHECK: scf.for %[[H:.*]] = %[[C0]] to %[[C1]] step %[[C1]]
// DEF: scf.for %[[I:.*]] = %[[C0]] to %[[C32]] step %[[C8]]
// OPT: scf.for %[[I:.*]] = %[[C0]] to %[[C32]] step %[[C4]]
// DEF: scf.for %[[J:.*]] = %[[C0]] to %[[C64]] step %[[C16]]
// OPT: scf.for %[[J:.*]] = %[[C0]] to %[[C64]] step %[[C8]]
// CHECK: scf.for %[[C:.*]] = %[[C0]] to %[[C8]] step %[[C1]] iter_args(%[[ACC:.*]] = %{{.*}})
// DEF: %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[I]], %[[C]]] [1, 1, 8, 1] [1, 1, 1, 1]
// DEF: %[[KS:.*]] = tensor.extract_slice %[[KT]][%[[B]], %[[H]], %[[C]], %[[J]]] [1, 1, 1, 16] [1, 1, 1, 1]
// DEF: %[[OS:.*]] = tensor.extract_slice %[[ACC]][%[[B]], %[[H]], %[[I]], %[[J]]] [1, 1, 8, 16] [1, 1, 1, 1]
// DEF: %[[T:.*]] = linalg.generic {{.*}} ins(%[[QS]], %[[KS]] : tensor<1x1x8x1xf32>, tensor<1x1x1x16xf32>) outs(%[[OS]] : tensor<1x1x8x16xf32>)
// OPT: %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[I]], %[[C]]] [1, 1, 4, 1] [1, 1, 1, 1]
// OPT: %[[KS:.*]] = tensor.extract_slice %[[KT]][%[[B]], %[[H]], %[[C]], %[[J]]] [1, 1, 1, 8] [1, 1, 1, 1]
// OPT: %[[OS:.*]] = tensor.extract_slice %[[ACC]][%[[B]], %[[H]], %[[I]], %[[J]]] [1, 1, 4, 8] [1, 1, 1, 1]
// OPT: %[[T:.*]] = linalg.generic {{.*}} ins(%[[QS]], %[[KS]] : tensor<1x1x4x1xf32>, tensor<1x1x1x8xf32>) outs(%[[OS]] : tensor<1x1x4x8xf32>)
// CHECK: tensor.insert_slice %[[T]] into %[[ACC]][%[[B]], %[[H]], %[[I]], %[[J]]]
// CHECK: return %[[R]]
#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#kt = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @contraction(%q: tensor<1x1x32x8xf32>, %kt: tensor<1x1x8x64xf32>,
    %init: tensor<1x1x32x64xf32>) -> tensor<1x1x32x64xf32> {
  %r = linalg.generic {indexing_maps = [#q, #kt, #s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<1x1x32x8xf32>, tensor<1x1x8x64xf32>)
      outs(%init : tensor<1x1x32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x32x64xf32>
  return %r : tensor<1x1x32x64xf32>
}

// -----

// A contraction whose accumulators a fill (used by nothing else) sets:
// the fill moves into each register tile, ahead of the reduction loop, so
// that a tile's accumulators start from the fill's value (zeros in
// registers once vectorized) instead of reading back a filled output (the
// attention core's 64 KiB of scores per query tile). No whole-size fill
// is left.
// CHECK-LABEL: func.func @contraction_fill(
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x32x64xf32>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[OS:.*]] = tensor.extract_slice %[[ACC]]
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OS]] : tensor<1x1x{{8|4}}x{{16|8}}xf32>)
// CHECK: %[[T:.*]] = scf.for %{{.*}} iter_args(%[[TACC:.*]] = %[[F]])
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x{{8|4}}x{{16|8}}xf32>)
// CHECK: tensor.insert_slice %[[T]] into %[[ACC]]
// CHECK: return
func.func @contraction_fill(%q: tensor<1x1x32x8xf32>, %kt: tensor<1x1x8x64xf32>)
    -> tensor<1x1x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x32x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x32x64xf32>) -> tensor<1x1x32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<1x1x32x8xf32>, tensor<1x1x8x64xf32>)
      outs(%init : tensor<1x1x32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x32x64xf32>
  return %r : tensor<1x1x32x64xf32>
}

// -----

// A fill that something else reads too stays whole, tiled on its own, and
// the contraction reads it back.
// CHECK-LABEL: func.func @contraction_fill_shared(
// CHECK: %[[FILLED:.*]] = scf.for
// CHECK: linalg.fill
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[FILLED]])
// CHECK-NOT: linalg.fill
// CHECK: return %[[R]], %[[FILLED]]
func.func @contraction_fill_shared(%q: tensor<1x1x32x8xf32>, %kt: tensor<1x1x8x64xf32>)
    -> (tensor<1x1x32x64xf32>, tensor<1x1x32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x32x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x32x64xf32>) -> tensor<1x1x32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<1x1x32x8xf32>, tensor<1x1x8x64xf32>)
      outs(%init : tensor<1x1x32x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x32x64xf32>
  return %r, %init : tensor<1x1x32x64xf32>, tensor<1x1x32x64xf32>
}

// -----

// Softmax over the k = 16 scores of each of 32 rows:
//   m = max_j(L)             one row at a time, the row whole
//   E = exp(L - m)           8 (4) rows x 16 (8) columns
//   s = sum_j(E)             one row at a time, the row whole
//   P = E / s                8 (4) rows x 16 (8) columns
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[L:[a-z0-9]+]]: tensor<1x1x32x16xf32>)
// CHECK-NOT: linalg.softmax
// The max accumulator's init (a fill, tiled like any op).
// CHECK: %[[MAXINIT:.*]] = scf.for
// CHECK: linalg.fill
// Row maximum: rows one at a time, the reduction over 16 whole.
// CHECK: %[[MAX:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[MAXINIT]])
// CHECK: scf.for
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %[[C1:[a-z0-9_]+]]
// CHECK: %[[LS:.*]] = tensor.extract_slice %[[L]][%{{.*}}, %{{.*}}, %[[I]], 0] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<1x1x32x16xf32> to tensor<1x1x1x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[LS]] : tensor<1x1x1x16xf32>) outs(%{{.*}} : tensor<1x1x1xf32>)
// CHECK: arith.maxnumf
// Exponentials: register tiles.
// CHECK: %[[EXP:.*]] = scf.for
// DEF: tensor.extract_slice %[[L]][{{.*}}] [1, 1, 8, 16] [1, 1, 1, 1]
// DEF: tensor.extract_slice %[[MAX]][{{.*}}] [1, 1, 8] [1, 1, 1]
// DEF: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x8x16xf32>, tensor<1x1x8xf32>) outs(%{{.*}} : tensor<1x1x8x16xf32>)
// OPT: tensor.extract_slice %[[L]][{{.*}}] [1, 1, 4, 8] [1, 1, 1, 1]
// OPT: tensor.extract_slice %[[MAX]][{{.*}}] [1, 1, 4] [1, 1, 1]
// OPT: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x4x8xf32>, tensor<1x1x4xf32>) outs(%{{.*}} : tensor<1x1x4x8xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// Row sum of the exponentials.
// CHECK: %[[SUMINIT:.*]] = scf.for
// CHECK: linalg.fill
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[SUMINIT]])
// CHECK: tensor.extract_slice %[[EXP]][{{.*}}] [1, 1, 1, 16] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<1x1x1x16xf32>) outs(%{{.*}} : tensor<1x1x1xf32>)
// CHECK: arith.addf
// Normalisation.
// CHECK: %[[P:.*]] = scf.for
// DEF: tensor.extract_slice %[[EXP]][{{.*}}] [1, 1, 8, 16] [1, 1, 1, 1]
// DEF: tensor.extract_slice %[[SUM]][{{.*}}] [1, 1, 8] [1, 1, 1]
// OPT: tensor.extract_slice %[[EXP]][{{.*}}] [1, 1, 4, 8] [1, 1, 1, 1]
// OPT: tensor.extract_slice %[[SUM]][{{.*}}] [1, 1, 4] [1, 1, 1]
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
// CHECK: return %[[P]]
func.func @softmax(%l: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %e = tensor.empty() : tensor<1x1x32x16xf32>
  %p = linalg.softmax dimension(3) ins(%l : tensor<1x1x32x16xf32>)
         outs(%e : tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32>
  return %p : tensor<1x1x32x16xf32>
}

// -----

// A row reduction keeps its reduction whole whatever the vector width: one
// row (of 64) per step.
// CHECK-LABEL: func.func @row_reduction(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<32x64xf32>, %[[INIT:[a-z0-9]+]]: tensor<32xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[C32]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<32xf32>) {
// CHECK-NEXT: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 64] [1, 1] : tensor<32x64xf32> to tensor<1x64xf32>
// CHECK-NEXT: %[[OS:.*]] = tensor.extract_slice %[[ACC]][%[[I]]] [1] [1] : tensor<32xf32> to tensor<1xf32>
// CHECK-NEXT: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[XS]] : tensor<1x64xf32>) outs(%[[OS]] : tensor<1xf32>)
// CHECK: tensor.insert_slice %[[T]] into %[[ACC]][%[[I]]] [1] [1]
// CHECK-NOT: scf.for
// CHECK: return %[[R]]
func.func @row_reduction(%x: tensor<32x64xf32>, %init: tensor<32xf32>)
    -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x64xf32>) outs(%init : tensor<32xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// Sizes that do not divide their loops: the last partial tile of each loop
// is peeled, so that every tile keeps a static shape (vectorizable): with
// 8 rows x 16 columns over 12 x 24, tiles of 8x16, 8x8, 4x16 and 4x8 (after
// canonicalization folds the single-iteration loops); with 4 x 8, no
// remainder.
// CHECK-LABEL: func.func @divisors(
// PEEL-LABEL: func.func @divisors(
// PEEL: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// PEEL: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf32>)
// PEEL: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// PEEL: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// PEEL-NOT: linalg.generic
// PEEL: return
// OPT-DAG: %[[C4:.*]] = arith.constant 4 : index
// OPT-DAG: %[[C8:.*]] = arith.constant 8 : index
// OPT-DAG: %[[C12:.*]] = arith.constant 12 : index
// OPT-DAG: %[[C24:.*]] = arith.constant 24 : index
// OPT: scf.for %{{.*}} = %{{.*}} to %[[C12]] step %[[C4]]
// OPT: scf.for %{{.*}} = %{{.*}} to %[[C24]] step %[[C8]]
// OPT: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: math.exp
func.func @divisors(%x: tensor<12x24xf32>, %init: tensor<12x24xf32>)
    -> tensor<12x24xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x24xf32>) outs(%init : tensor<12x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<12x24xf32>
  return %r : tensor<12x24xf32>
}

// -----

// An op that already is one register tile is left as it is.
// CHECK-LABEL: func.func @one_tile(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[INIT:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-NOT: scf.for
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NOT: scf.for
// CHECK: return %[[R]]
func.func @one_tile(%x: tensor<4x8xf32>, %init: tensor<4x8xf32>)
    -> tensor<4x8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// With the defaults the 1024-long reduction is cut into 64-blocks.
// DEFAULTS-LABEL: func.func @long_reduction(
// DEFAULTS: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c64 iter_args
// A reduction longer than reduction-tile (256 here) is cut into cache blocks
// first: the block loop is outermost and carries the whole output, and
// each block is then register-tiled like any contraction.
// CHECK-LABEL: func.func @long_reduction(
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C1024]] step %[[C256]] iter_args
// DEF: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x1x16xf32>) outs(%{{.*}} : tensor<1x8x16xf32>)
// OPT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x1x8xf32>) outs(%{{.*}} : tensor<1x4x8xf32>)
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#e = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @long_reduction(%x: tensor<1x1024x32xf32>, %e: tensor<16x1024xf32>,
    %init: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %x : tensor<16x1024xf32>, tensor<1x1024x32xf32>)
      outs(%init : tensor<1x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x32xf32>
  return %r : tensor<1x16x32xf32>
}

// -----

// Two reduction loops (heads x channels, the output projection): the block
// budget counts both, so with the default 64 the inner 64 channels fill it
// and the heads are taken one at a time.
// DEFAULTS-LABEL: func.func @two_reductions(
// DEFAULTS: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args
// DEFAULTS: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// DEFAULTS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x8x1xf32>, tensor<1x1x32xf32>)
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
func.func @two_reductions(%a: tensor<1x4x32x64xf32>, %w: tensor<4x64x32xf32>,
    %init: tensor<1x32x32xf32>) -> tensor<1x32x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #w, #y],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%a, %w : tensor<1x4x32x64xf32>, tensor<4x64x32xf32>)
      outs(%init : tensor<1x32x32xf32>) {
  ^bb0(%x: f32, %v: f32, %acc: f32):
    %m = arith.mulf %x, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32x32xf32>
  return %r : tensor<1x32x32xf32>
}

// -----

// A matmul written with the reduction innermost, loops (i, n, k): rows and
// columns are found from the indexing maps (upstream inferContractionDims),
// not from the loop order, so it is still tiled into 8 x 16 outer products
// (a row-reduction tiling would make dot products: 1.7 GFLOP/s).
// CHECK-LABEL: func.func @matmul_reduction_innermost(
// DEF: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// OPT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @matmul_reduction_innermost(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>,
    %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, n, k) -> (i, k)>,
                                        affine_map<(i, n, k) -> (k, n)>,
                                        affine_map<(i, n, k) -> (i, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<16x8xf32>, tensor<8x32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// The attention core's query tile transposed (Q^T): a transpose of the two
// innermost dimensions of f32 is tiled to square blocks, whatever the
// register tile, which linformer-cpu-lower-vectors transposes in registers:
// 8 x 8 on a target with 256-bit vectors (the module's target; the host's
// without one),
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @transpose_blocks(
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64]] step %[[C8]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C16]] step %[[C8]]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x8x8xf32>) outs(%{{.*}} : tensor<1x1x8x8xf32>) permutation = [0, 1, 3, 2]
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @transpose_blocks(%q: tensor<1x1x16x64xf32>) -> tensor<1x1x64x16xf32> {
  %e = tensor.empty() : tensor<1x1x64x16xf32>
  %t = linalg.transpose ins(%q : tensor<1x1x16x64xf32>)
      outs(%e : tensor<1x1x64x16xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<1x1x64x16xf32>
}
}

// -----

// 16 x 16 with 512-bit vectors; 8 x 8 where a dim does not divide by 16.
module attributes {linformer.target = #linformer.cpu_target<cpu = "sapphirerapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @transpose_blocks_avx512(
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64]] step %[[C16]]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x16x16xf32>) outs(%{{.*}} : tensor<1x1x16x16xf32>) permutation = [0, 1, 3, 2]
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @transpose_blocks_avx512(%q: tensor<1x1x16x64xf32>) -> tensor<1x1x64x16xf32> {
  %e = tensor.empty() : tensor<1x1x64x16xf32>
  %t = linalg.transpose ins(%q : tensor<1x1x16x64xf32>)
      outs(%e : tensor<1x1x64x16xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<1x1x64x16xf32>
}
// CHECK-LABEL: func.func @transpose_blocks_avx512_8(
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x1x8x8xf32>) outs(%{{.*}} : tensor<1x1x8x8xf32>) permutation = [0, 1, 3, 2]
// CHECK: return
func.func @transpose_blocks_avx512_8(%q: tensor<1x1x24x64xf32>) -> tensor<1x1x64x24xf32> {
  %e = tensor.empty() : tensor<1x1x64x24xf32>
  %t = linalg.transpose ins(%q : tensor<1x1x24x64xf32>)
      outs(%e : tensor<1x1x64x24xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<1x1x64x24xf32>
}
// A transpose of rank 1 (the identity) is no block transpose: it is tiled
// as elementwise work (an earlier draft read a second dim it has not).
// CHECK-LABEL: func.func @transpose_rank1(
// CHECK: scf.for
// CHECK: linalg.transpose ins(%{{.*}} : tensor<{{[0-9]+}}xf32>)
// CHECK: return
func.func @transpose_rank1(%q: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %t = linalg.transpose ins(%q : tensor<64xf32>) outs(%e : tensor<64xf32>)
      permutation = [0]
  return %t : tensor<64xf32>
}
}

// -----

// The attention core's values on AMX tiles (linformer-lower-to-linalg):
// two rows of bf16 interleaved into pairs, a copy whose input swaps the
// last two loops (the innermost of 2), takes 64 columns of pairs at a time
// (one interleave per 16 in linformer-cpu-lower-vectors).
// CHECK-LABEL: func.func @pair_rows(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x64xbf16>) outs(%{{.*}} : tensor<1x64x2xbf16>)
// CHECK: return
func.func @pair_rows(%v: tensor<16x2x128xbf16>) -> tensor<16x128x2xbf16> {
  %e = tensor.empty() : tensor<16x128x2xbf16>
  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<16x2x128xbf16>) outs(%e : tensor<16x128x2xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<16x128x2xbf16>
  return %rows : tensor<16x128x2xbf16>
}

// -----

// One whose inner sizes are not multiples of 8 keeps the rows x vector
// tiles of any elementwise op: 8 rows x 16 over 12 x 20, peeled.
// PEEL-LABEL: func.func @transpose_odd(
// PEEL: linalg.transpose ins(%{{.*}} : tensor<1x1x16x8xf32>) outs(%{{.*}} : tensor<1x1x8x16xf32>)
// PEEL: linalg.transpose ins(%{{.*}} : tensor<1x1x4x8xf32>) outs(%{{.*}} : tensor<1x1x8x4xf32>)
// PEEL: linalg.transpose ins(%{{.*}} : tensor<1x1x16x4xf32>) outs(%{{.*}} : tensor<1x1x4x16xf32>)
// PEEL: linalg.transpose ins(%{{.*}} : tensor<1x1x4x4xf32>) outs(%{{.*}} : tensor<1x1x4x4xf32>)
// PEEL-NOT: linalg.transpose
// PEEL: return
func.func @transpose_odd(%q: tensor<1x1x20x12xf32>) -> tensor<1x1x12x20xf32> {
  %e = tensor.empty() : tensor<1x1x12x20xf32>
  %t = linalg.transpose ins(%q : tensor<1x1x20x12xf32>)
      outs(%e : tensor<1x1x12x20xf32>) permutation = [0, 1, 3, 2]
  return %t : tensor<1x1x12x20xf32>
}

// -----

// bf16 pairs (linformer-bf16-products with dot): both factors bf16, so the
// register tile steps the broadcast operand's innermost loop (the
// reduction over 7 channels) two at a time, each row's pair one dot
// product; the odd last step is peeled into a one-step copy.
#pa = affine_map<(d0, d1, d2) -> (d0, d2)>
#pb = affine_map<(d0, d1, d2) -> (d2, d1)>
#pc = affine_map<(d0, d1, d2) -> (d0, d1)>
// PEEL-LABEL: func.func @bf16_pairs(
// PEEL: scf.for %{{.*}} = %c0 to %c6 step %c2
// PEEL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x2xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<8x16xf32>)
// PEEL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x1xbf16>, tensor<1x16xbf16>) outs(%{{.*}} : tensor<8x16xf32>)
// PEEL: return
func.func @bf16_pairs(%x: tensor<8x7xbf16>, %w: tensor<7x16xbf16>,
                      %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x7xbf16>, tensor<7x16xbf16>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A packed streamed operand (pack = true) whose columns (64) the register
// tile (48) does not divide: the panels' loop ends in a partial panel of
// dynamic size, and tiling it with its bias (the accumulators' init) left
// shape queries of the init, which was then erased under them (an
// internal "operand does not dominate this use", from a user's schedule
// file). They read its destination now, and the partial panel's register
// tile takes the width asked for (it took one column at a time): peeled,
// a 48-column panel of 8 x 48 tiles and a 16-column one of 8 x 16, each
// starting from its bias.
// PEEL-LABEL: func.func @packed_partial_panel(
// PEEL: linalg.generic {{.*}} ins(%{{.*}} : tensor<48xf32>) outs(%{{.*}} : tensor<1x8x48xf32>)
// PEEL: scf.for %{{.*}} = %c0 to %c64 step %c1
// PEEL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x1xf32>, tensor<1x48xf32>) outs(%{{.*}} : tensor<1x8x48xf32>)
// PEEL: linalg.generic {{.*}} ins(%{{.*}} : tensor<16xf32>) outs(%{{.*}} : tensor<1x8x16xf32>)
// PEEL: scf.for %{{.*}} = %c0 to %c64 step %c1
// PEEL: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x1xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<1x8x16xf32>)
// PEEL: return
func.func @packed_partial_panel(%x: tensor<2x128x64xf32>, %w: tensor<64x128xf32>,
                                %bias: tensor<128xf32>) -> tensor<2x128x128xf32> {
  %empty = tensor.empty() : tensor<2x128x128xf32>
  %r = scf.forall (%b, %i, %j) = (0, 0, 0) to (2, 128, 128) step (1, 8, 64) shared_outs(%out = %empty) -> (tensor<2x128x128xf32>) {
    %xs = tensor.extract_slice %x[%b, %i, 0] [1, 8, 64] [1, 1, 1] : tensor<2x128x64xf32> to tensor<1x8x64xf32>
    %ws = tensor.extract_slice %w[0, %j] [64, 64] [1, 1] : tensor<64x128xf32> to tensor<64x64xf32>
    %bs = tensor.extract_slice %bias[%j] [64] [1] : tensor<128xf32> to tensor<64xf32>
    %os = tensor.extract_slice %out[%b, %i, %j] [1, 8, 64] [1, 1, 1] : tensor<2x128x128xf32> to tensor<1x8x64xf32>
    %init = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bs : tensor<64xf32>) outs(%os : tensor<1x8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      linalg.yield %in : f32
    } -> tensor<1x8x64xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%xs, %ws : tensor<1x8x64xf32>, tensor<64x64xf32>) outs(%init : tensor<1x8x64xf32>) {
    ^bb0(%in: f32, %in2: f32, %o: f32):
      %m = arith.mulf %in, %in2 : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x8x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %out[%b, %i, %j] [1, 8, 64] [1, 1, 1] : tensor<1x8x64xf32> into tensor<2x128x128xf32>
    }
  } {linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 8, 0, 64], register = [8, 48], reduction = 0, pack = true>}
  return %r : tensor<2x128x128xf32>
}
