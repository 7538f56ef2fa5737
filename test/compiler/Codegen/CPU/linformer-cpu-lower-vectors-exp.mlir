// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors | FileCheck %s

// math.exp on vectors must become its polynomial approximation (so that
// exp vectorises instead of calling libm per lane): range reduction with
// fma/floor, the polynomial, and 2^n built with integer shifts and a
// bitcast. No math.exp may be left, for 1-D and n-D vectors alike (the
// upstream approximation handles any vector shape).
//
// This once failed: LowerVectors.cpp passed the predicate
// `[](StringRef name) { return name == "exp"; }` to
// populateMathPolynomialApproximationPatterns, but upstream calls the
// predicate with the full operation name ("math.exp",
// math::ExpOp::getOperationName()), so the exp pattern was never added; it
// compares against math::ExpOp::getOperationName().

// CHECK-LABEL: func.func @exp_1d(
// CHECK-NOT: math.exp
// CHECK: math.floor
// CHECK: math.fma
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.mulf
// CHECK-NOT: math.exp
func.func @exp_1d(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// CHECK-LABEL: func.func @exp_2d(
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: arith.bitcast %{{.*}} : vector<8x16xi32> to vector<8x16xf32>
// CHECK-NOT: math.exp
func.func @exp_2d(%x: vector<8x16xf32>) -> vector<8x16xf32> {
  %e = math.exp %x : vector<8x16xf32>
  return %e : vector<8x16xf32>
}
