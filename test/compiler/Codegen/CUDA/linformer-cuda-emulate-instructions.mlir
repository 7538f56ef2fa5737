// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-emulate-instructions))' | FileCheck %s

// The GPU instructions the kernels call, as the host computes them:
// cvt.rna.tf32.f32 in integer ops (half a TF32 ulp added to the magnitude,
// the 13 low bits cleared, a NaN's bits kept), ex2.approx.ftz as exp2.
// CHECK-LABEL: func.func @lowered
// CHECK-NOT: nvvm.
// CHECK-NOT: llvm.call_intrinsic
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : f32 to i32
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %{{.*}} : i32
// CHECK: %[[CLEAR:.*]] = arith.andi %[[UP]], %{{.*}} : i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK: %[[R:.*]] = arith.select %[[NAN]], %[[BITS]], %[[CLEAR]] : i32
// CHECK: arith.bitcast %[[R]] : i32 to f32
// CHECK: math.exp2 %arg1 : f32
func.func @lowered(%v: f32, %y: f32) -> (f32, f32) {
  %r = nvvm.convert.float.to.tf32 %v {rnd = #nvvm.fp_rnd_mode<rna>}
  %f = arith.bitcast %r : i32 to f32
  %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%y) : (f32) -> f32
  return %f, %e : f32, f32
}

// -----

// The other roundings of the cvt are not emulated.
func.func @rn(%v: f32) -> i32 {
  // expected-error @below {{is emulated on the host only as cvt.rna.tf32.f32 (no saturation, no relu)}}
  %r = nvvm.convert.float.to.tf32 %v {rnd = #nvvm.fp_rnd_mode<rn>}
  return %r : i32
}

// -----

// Any other GPU instruction left is an error that names it.
func.func @other() -> i32 {
  // expected-error @below {{is a GPU instruction the host has no lowering for}}
  %t = nvvm.read.ptx.sreg.tid.x : i32
  return %t : i32
}
