// RUN: linformer-opt %s --split-input-file --linformer-cpu-vectorize | FileCheck %s

// Register-sized linalg ops (what --linformer-cpu-tile-for-vectors leaves)
// become vector ops: a contraction becomes vector.contract, elementwise
// bodies vector arithmetic, a row reduction vector.multi_reduction, with
// transfer reads/writes at the boundary. An op with an i1 operand stays a
// scalar linalg.generic on purpose: vectors of i1 are stored bit-packed but
// a scalar i1 takes a byte, so vector and scalar accesses to one i1 buffer
// would disagree (see Vectorize.cpp). i1 values inside a body are fine.

// One outer-product step of S = Q K^T: 8 rows x 16 channels, reduction 1.
// The unit loops (batch, head) are dropped from the contraction with
// shape_casts, so that it has the canonical (m, k) x (k, n) form that the
// outer-product lowering takes; the transfers keep their full rank, so the
// accumulator's read/write pair still matches for subset hoisting.
// CHECK-DAG: #[[$A_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$B_MAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C_MAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @contraction(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<1x1x8x1xf32>, %[[B:[a-z0-9]+]]: tensor<1x1x1x16xf32>, %[[C:[a-z0-9]+]]: tensor<1x1x8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[VA:.*]] = vector.transfer_read %[[A]]{{.*}} : tensor<1x1x8x1xf32>, vector<1x1x8x1xf32>
// CHECK-DAG: %[[VB:.*]] = vector.transfer_read %[[B]]{{.*}} : tensor<1x1x1x16xf32>, vector<1x1x1x16xf32>
// CHECK-DAG: %[[VC:.*]] = vector.transfer_read %[[C]]{{.*}} : tensor<1x1x8x16xf32>, vector<1x1x8x16xf32>
// CHECK-DAG: %[[SA:.*]] = vector.shape_cast %[[VA]] : vector<1x1x8x1xf32> to vector<8x1xf32>
// CHECK-DAG: %[[SB:.*]] = vector.shape_cast %[[VB]] : vector<1x1x1x16xf32> to vector<1x16xf32>
// CHECK-DAG: %[[SC:.*]] = vector.shape_cast %[[VC]] : vector<1x1x8x16xf32> to vector<8x16xf32>
// CHECK: %[[R:.*]] = vector.contract {indexing_maps = [#[[$A_MAP]], #[[$B_MAP]], #[[$C_MAP]]], iterator_types = ["parallel", "reduction", "parallel"], kind = #vector.kind<add>} %[[SA]], %[[SB]], %[[SC]] : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
// CHECK: %[[RC:.*]] = vector.shape_cast %[[R]] : vector<8x16xf32> to vector<1x1x8x16xf32>
// CHECK: %[[W:.*]] = vector.transfer_write %[[RC]], %[[C]]{{.*}} : vector<1x1x8x16xf32>, tensor<1x1x8x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[W]]
#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#kt = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @contraction(%q: tensor<1x1x8x1xf32>, %kt: tensor<1x1x1x16xf32>,
    %init: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %r = linalg.generic {indexing_maps = [#q, #kt, #s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<1x1x8x1xf32>, tensor<1x1x1x16xf32>)
      outs(%init : tensor<1x1x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x8x16xf32>
  return %r : tensor<1x1x8x16xf32>
}

// -----

// A user's i1 mask converted to bytes: not vectorized.
// CHECK-LABEL: func.func @i1_operand_stays_scalar(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<1x16xi1>)
// CHECK-NOT: vector.
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<1x16xi1>) outs(%{{.*}} : tensor<1x16xi8>)
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK-NOT: vector.
// CHECK: return %[[R]]
func.func @i1_operand_stays_scalar(%m: tensor<1x16xi1>) -> tensor<1x16xi8> {
  %e = tensor.empty() : tensor<1x16xi8>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<1x16xi1>) outs(%e : tensor<1x16xi8>) {
  ^bb0(%in: i1, %out: i8):
    %b = arith.extui %in : i1 to i8
    linalg.yield %b : i8
  } -> tensor<1x16xi8>
  return %r : tensor<1x16xi8>
}

// -----

// The same with an i1 output: not vectorized either.
// CHECK-LABEL: func.func @i1_result_stays_scalar(
// CHECK-NOT: vector.
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16xi1>)
// CHECK-NOT: vector.
func.func @i1_result_stays_scalar(%m: tensor<1x16xi8>) -> tensor<1x16xi1> {
  %c0 = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x16xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<1x16xi8>) outs(%e : tensor<1x16xi1>) {
  ^bb0(%in: i8, %out: i1):
    %c = arith.cmpi ne, %in, %c0 : i8
    linalg.yield %c : i1
  } -> tensor<1x16xi1>
  return %r : tensor<1x16xi1>
}

// -----

// Byte masks vectorize; the i1 vector only lives in registers.
// CHECK-LABEL: func.func @i8_mask_vectorized(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<1x16xi8>)
// CHECK-NOT: linalg.generic
// CHECK: %[[V:.*]] = vector.transfer_read %[[M]]{{.*}} : tensor<1x16xi8>, vector<1x16xi8>
// CHECK: %[[B:.*]] = arith.cmpi ne, %[[V]], %{{.*}} : vector<1x16xi8>
// CHECK: %[[E:.*]] = arith.extui %[[B]] : vector<1x16xi1> to vector<1x16xi8>
// CHECK: vector.transfer_write %[[E]], {{.*}} : vector<1x16xi8>, tensor<1x16xi8>
func.func @i8_mask_vectorized(%m: tensor<1x16xi8>) -> tensor<1x16xi8> {
  %c0 = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x16xi8>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<1x16xi8>) outs(%e : tensor<1x16xi8>) {
  ^bb0(%in: i8, %out: i8):
    %c = arith.cmpi ne, %in, %c0 : i8
    %b = arith.extui %c : i1 to i8
    linalg.yield %b : i8
  } -> tensor<1x16xi8>
  return %r : tensor<1x16xi8>
}

// -----

// Softmax parts: exp(L - m) with the row maximum broadcast along the row,
// and the row maximum itself as a multi-reduction.
// CHECK-LABEL: func.func @softmax_parts(
// CHECK-SAME: %[[L:[a-z0-9]+]]: tensor<1x1x8x16xf32>, %[[M:[a-z0-9]+]]: tensor<1x1x8xf32>, %[[INIT:[a-z0-9]+]]: tensor<1x1x8x16xf32>, %[[ROW:[a-z0-9]+]]: tensor<1x1x1x16xf32>, %[[MINIT:[a-z0-9]+]]: tensor<1x1x1xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[VL:.*]] = vector.transfer_read %[[L]]{{.*}} : tensor<1x1x8x16xf32>, vector<1x1x8x16xf32>
// CHECK-DAG: %[[VM:.*]] = vector.transfer_read %[[M]]{{.*}} : tensor<1x1x8xf32>, vector<1x1x8xf32>
// CHECK: %[[BM:.*]] = vector.broadcast %[[VM]] : vector<1x1x8xf32> to vector<16x1x1x8xf32>
// CHECK: %[[TM:.*]] = vector.transpose %[[BM]], [1, 2, 3, 0] : vector<16x1x1x8xf32> to vector<1x1x8x16xf32>
// CHECK: %[[D:.*]] = arith.subf %[[VL]], %[[TM]] : vector<1x1x8x16xf32>
// CHECK: %[[E:.*]] = math.exp %[[D]] : vector<1x1x8x16xf32>
// CHECK: vector.transfer_write %[[E]], %[[INIT]]
// CHECK-DAG: %[[VR:.*]] = vector.transfer_read %[[ROW]]{{.*}} : tensor<1x1x1x16xf32>, vector<1x1x1x16xf32>
// CHECK-DAG: %[[VA:.*]] = vector.transfer_read %[[MINIT]]{{.*}} : tensor<1x1x1xf32>, vector<1x1x1xf32>
// CHECK: %[[MAX:.*]] = vector.multi_reduction <maxnumf>, %[[VR]], %[[VA]] [3] : vector<1x1x1x16xf32> to vector<1x1x1xf32>
// CHECK: vector.transfer_write %[[MAX]], %[[MINIT]]
// CHECK-NOT: linalg.generic
func.func @softmax_parts(%l: tensor<1x1x8x16xf32>, %m: tensor<1x1x8xf32>,
    %init: tensor<1x1x8x16xf32>, %row: tensor<1x1x1x16xf32>,
    %minit: tensor<1x1x1xf32>) -> (tensor<1x1x8x16xf32>, tensor<1x1x1xf32>) {
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%l, %m : tensor<1x1x8x16xf32>, tensor<1x1x8xf32>)
      outs(%init : tensor<1x1x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<1x1x8x16xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                         affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%row : tensor<1x1x1x16xf32>) outs(%minit : tensor<1x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = arith.maxnumf %a, %o : f32
    linalg.yield %x : f32
  } -> tensor<1x1x1xf32>
  return %e, %mx : tensor<1x1x8x16xf32>, tensor<1x1x1xf32>
}

// -----

// One step of the output projection, loops (b, i, h, c, o) with two
// reductions (heads, channels): unit loops sit between the rows and the
// columns, not only in front. All but the innermost reduction are dropped,
// which leaves the canonical (rows, 1) x (1, columns) contraction; without
// that, the outer-product lowering does not apply and the contraction was
// unrolled to scalars (the AVX2 output projection ran at 5% of peak).
// CHECK-LABEL: func.func @output_projection_step(
// CHECK: vector.contract {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} : vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// CHECK-NOT: vector.contract
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
func.func @output_projection_step(%a: tensor<1x1x4x1xf32>, %w: tensor<1x1x16xf32>,
    %init: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %r = linalg.generic {indexing_maps = [#a, #w, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%a, %w : tensor<1x1x4x1xf32>, tensor<1x1x16xf32>)
      outs(%init : tensor<1x4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}
