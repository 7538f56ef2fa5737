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

// -----

// The softmax's exponential, exp(c (x - m)) with a constant c > 0 (the
// attention core's lowering), on a target without AVX-512, becomes 2^t with the scale and log2(e) in one
// constant: t = (x - m) * c log2(e) (0.125 * 1.4427 = 0.180337) and what
// its rounding lost (two FMAs), x - m clamped so that t lies in [-127,
// 127] (the FMAs would make -inf NaN), n = roundeven(t),
// 2^(t - n) by six FMAs, 2^n from exponent bits; no floor and none of
// upstream's Cody-Waite FMAs.
// CHECK-LABEL: func.func @softmax_exp(
// CHECK-NOT: math.exp
// CHECK: %[[X:.*]] = arith.subf
// CHECK: arith.cmpf uge, %[[X]]
// CHECK: arith.cmpf ule
// CHECK: %[[D:.*]] = arith.select
// CHECK: %[[T:.*]] = arith.mulf %[[D]], %{{.*}} : vector<4x16xf32>
// CHECK: %[[NT:.*]] = arith.negf %[[T]]
// CHECK: %[[E:.*]] = math.fma %[[D]], %{{.*}}, %[[NT]]
// CHECK: %[[LOW:.*]] = math.fma %[[D]], %{{.*}}, %[[E]]
// CHECK: %[[N:.*]] = math.roundeven %[[T]]
// CHECK: %[[F:.*]] = arith.subf %{{.*}}, %[[N]]
// CHECK: arith.addf %[[F]], %[[LOW]]
// CHECK-COUNT-6: math.fma
// CHECK-NOT: math.fma
// CHECK: arith.fptosi %[[N]]
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : vector<4x16xi32> to vector<4x16xf32>
// CHECK: arith.mulf
// CHECK-NOT: math.floor
// CHECK-NOT: math.exp
module attributes {linformer.target = #linformer.cpu_target<cpu = "haswell",
    features = "+avx2,+fma", isa = "avx2", vector_bits = 256, vector_registers = 16,
    fma_units = 2, fma_latency = 5, l1_bytes = 32768, l2_bytes = 262144,
    l3_bytes = 8388608, cores = 2>} {
func.func @softmax_exp(%x: vector<4x16xf32>, %m: vector<4x16xf32>) -> vector<4x16xf32> {
  %c = arith.constant dense<0.125> : vector<4x16xf32>
  %d = arith.subf %x, %m : vector<4x16xf32>
  %t = arith.mulf %d, %c : vector<4x16xf32>
  %e = math.exp %t : vector<4x16xf32>
  return %e : vector<4x16xf32>
}
}

// -----

// A negative scale is not a softmax's: upstream's approximation.
// CHECK-LABEL: func.func @negative_scale(
// CHECK: math.floor
// CHECK-NOT: math.roundeven
func.func @negative_scale(%x: vector<16xf32>, %m: vector<16xf32>) -> vector<16xf32> {
  %c = arith.constant dense<-0.125> : vector<16xf32>
  %d = arith.subf %x, %m : vector<16xf32>
  %t = arith.mulf %d, %c : vector<16xf32>
  %e = math.exp %t : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// erf (GELU's) becomes x P(x^2) / Q(x^2) on x clamped to [-4, 4]: two
// clamps, x^2, five FMAs for each polynomial, one division; none of
// upstream's interval selects (its coefficients chosen per lane).
// CHECK-LABEL: func.func @erf(
// CHECK-NOT: math.erf
// CHECK: arith.cmpf uge
// CHECK: arith.cmpf ule
// CHECK: %[[X:.*]] = arith.select
// CHECK: arith.mulf %[[X]], %[[X]] : vector<16xf32>
// CHECK-COUNT-5: math.fma
// CHECK: arith.mulf %[[X]]
// CHECK-COUNT-5: math.fma
// CHECK: arith.divf %{{[^ ]*}}, %{{[^ ]*}} : vector<16xf32>
// CHECK-NOT: arith.select
// CHECK-NOT: math.erf
func.func @erf(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.erf %x : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// Approximate (afn: the probabilities are rounded to bf16 for P V, see
// the core's lowering): no low part of t (no negf, no FMA before the
// rounding), 2^(t - n) by four FMAs.
// CHECK-LABEL: func.func @softmax_exp_afn(
// CHECK-NOT: math.exp
// CHECK: %[[T:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: arith.negf
// CHECK-NEXT: %[[N:.*]] = math.roundeven %[[T]]
// CHECK-NEXT: %[[F:.*]] = arith.subf %[[T]], %[[N]]
// CHECK-NOT: arith.addf
// CHECK-COUNT-4: math.fma %[[F]]
// CHECK-NOT: math.fma
// CHECK: arith.fptosi %[[N]]
// CHECK-NOT: math.exp
module attributes {linformer.target = #linformer.cpu_target<cpu = "haswell",
    features = "+avx2,+fma", isa = "avx2", vector_bits = 256, vector_registers = 16,
    fma_units = 2, fma_latency = 5, l1_bytes = 32768, l2_bytes = 262144,
    l3_bytes = 8388608, cores = 2>} {
func.func @softmax_exp_afn(%x: vector<16xf32>, %m: vector<16xf32>) -> vector<16xf32> {
  %c = arith.constant dense<0.125> : vector<16xf32>
  %d = arith.subf %x, %m : vector<16xf32>
  %t = arith.mulf %d, %c : vector<16xf32>
  %e = math.exp %t fastmath<afn> : vector<16xf32>
  return %e : vector<16xf32>
}
}

// -----

// Approximate erf (afn: a bf16 epilogue's, rounded to bf16 after): P and
// Q of degree 3, three FMAs each, and a division LLVM may make a
// reciprocal estimate refined by a Newton step (arcp; ninf: Q >= 1).
// CHECK-LABEL: func.func @erf_afn(
// CHECK-NOT: math.erf
// CHECK: arith.cmpf ule
// CHECK: %[[X:.*]] = arith.select
// CHECK: arith.mulf %[[X]], %[[X]] : vector<16xf32>
// CHECK-COUNT-3: math.fma
// CHECK-NEXT: arith.mulf %[[X]]
// CHECK-COUNT-3: math.fma
// CHECK-NEXT: arith.divf {{.*}} fastmath<ninf,arcp>
// CHECK-NOT: math.erf
func.func @erf_afn(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.erf %x fastmath<afn> : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// With AVX-512, 2^n is vscalefps (x86vector.avx512.mask.scalef, whose
// operands reach the intrinsic in order: p, n, p as pass-through), 16 lanes
// at a time: no integer conversion, shift or bitcast, no upper clamp, the
// lower one at t = -160 (0.125 log2(e) = 0.180337: -160 / 0.180337 =
// -887.22) so that a masked score (-inf) still gives 0.
// CHECK-LABEL: func.func @softmax_exp_scalef(
// CHECK-NOT: math.exp
// CHECK: %[[X:.*]] = arith.subf
// CHECK: arith.cmpf uge, %[[X]], %{{.*}} : vector<2x16xf32>
// CHECK-NOT: arith.cmpf
// CHECK: %[[T:.*]] = arith.mulf
// CHECK-NEXT: %[[N:.*]] = math.roundeven %[[T]]
// CHECK-NEXT: %[[F:.*]] = arith.subf %[[T]], %[[N]]
// CHECK-COUNT-3: math.fma %[[F]]
// CHECK-NOT: arith.fptosi
// CHECK-NOT: arith.shli
// CHECK: %[[P:.*]] = math.fma %[[F]]
// CHECK-DAG: %[[P0:.*]] = vector.extract %[[P]][0] : vector<16xf32> from vector<2x16xf32>
// CHECK-DAG: %[[P1:.*]] = vector.extract %[[P]][1] : vector<16xf32> from vector<2x16xf32>
// CHECK-DAG: %[[N0:.*]] = vector.extract %[[N]][0] : vector<16xf32> from vector<2x16xf32>
// CHECK-DAG: %[[N1:.*]] = vector.extract %[[N]][1] : vector<16xf32> from vector<2x16xf32>
// CHECK: %[[S0:.*]] = x86vector.avx512.mask.scalef %[[P0]], %[[N0]], %[[P0]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[S1:.*]] = x86vector.avx512.mask.scalef %[[P1]], %[[N1]], %[[P1]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[I0:.*]] = vector.insert %[[S0]], %{{.*}} [0]
// CHECK: vector.insert %[[S1]], %[[I0]] [1]
// CHECK-NOT: math.exp
module attributes {linformer.target = #linformer.cpu_target<cpu = "skylake-avx512",
    features = "+avx512f,+avx2,+fma", isa = "avx512", vector_bits = 512,
    vector_registers = 32, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 1048576, l3_bytes = 8388608, cores = 2>} {
func.func @softmax_exp_scalef(%x: vector<2x16xf32>, %m: vector<2x16xf32>) -> vector<2x16xf32> {
  %c = arith.constant dense<0.125> : vector<2x16xf32>
  %d = arith.subf %x, %m : vector<2x16xf32>
  %t = arith.mulf %d, %c : vector<2x16xf32>
  %e = math.exp %t fastmath<afn> : vector<2x16xf32>
  return %e : vector<2x16xf32>
}
}

// -----

// GELU, 0.5 x (1 + erf(x c)) with c = 1 / sqrt(2): c goes into the
// rational's coefficients (no product of x and c; the clamp at 4 / c =
// 5.65685), and the product with 1 + erf is one FMA, h erf + h.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME: %[[X:[^:]*]]: vector<16xf32>
// CHECK-NOT: math.erf
// CHECK: arith.cmpf uge, %[[X]], %{{.*}} : vector<16xf32>
// CHECK: arith.cmpf ule
// CHECK: %[[XC:.*]] = arith.select
// CHECK: arith.mulf %[[XC]], %[[XC]] : vector<16xf32>
// CHECK-COUNT-5: math.fma
// CHECK: arith.mulf %[[XC]]
// CHECK-COUNT-5: math.fma
// CHECK: %[[E:.*]] = arith.divf
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[X]], %{{.*}} : vector<16xf32>
// CHECK-NEXT: math.fma %[[H]], %[[E]], %[[H]] : vector<16xf32>
// CHECK-NOT: arith.addf
// CHECK-NOT: math.erf
func.func @gelu(%x: vector<16xf32>) -> vector<16xf32> {
  %half = arith.constant dense<0.5> : vector<16xf32>
  %one = arith.constant dense<1.0> : vector<16xf32>
  %c = arith.constant dense<0.70710678> : vector<16xf32>
  %s = arith.mulf %x, %c : vector<16xf32>
  %e = math.erf %s : vector<16xf32>
  %p = arith.addf %one, %e : vector<16xf32>
  %h = arith.mulf %half, %x : vector<16xf32>
  %g = arith.mulf %h, %p : vector<16xf32>
  return %g : vector<16xf32>
}
