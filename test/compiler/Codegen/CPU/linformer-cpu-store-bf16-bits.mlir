// RUN: linformer-opt %s --linformer-cpu-store-bf16-bits | FileCheck %s

// A bf16 rounding expanded into integer arithmetic (linformer-cpu-expand-
// bf16) ends in a bitcast of its bits; stored whole or element by element,
// the bits themselves are stored, so no <N x bfloat> value is left for
// LLVM's InstCombine to move above the rounding's selects (which a CPU
// without bf16 conversion would then legalize through __truncsfbf2). A
// bf16 value not made of bits (a load) is stored as it is.
// CHECK-LABEL: llvm.func @bits(
// CHECK-SAME: %[[BITS:[^:]*]]: vector<3xi16>, %[[P:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: !llvm.ptr
// CHECK: llvm.store %[[BITS]], %[[P]] : vector<3xi16>, !llvm.ptr
// CHECK: %[[E:.*]] = llvm.extractelement %[[BITS]][%{{.*}} : i64] : vector<3xi16>
// CHECK: llvm.store %[[E]], %[[Q]] : i16, !llvm.ptr
// CHECK: %[[L:.*]] = llvm.load %[[Q]] : !llvm.ptr -> vector<3xbf16>
// CHECK: llvm.store %[[L]], %[[P]] : vector<3xbf16>, !llvm.ptr
llvm.func @bits(%bits: vector<3xi16>, %p: !llvm.ptr, %q: !llvm.ptr) {
  %b = llvm.bitcast %bits : vector<3xi16> to vector<3xbf16>
  llvm.store %b, %p : vector<3xbf16>, !llvm.ptr
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %e = llvm.extractelement %b[%c1 : i64] : vector<3xbf16>
  llvm.store %e, %q : bf16, !llvm.ptr
  %l = llvm.load %q : !llvm.ptr -> vector<3xbf16>
  llvm.store %l, %p : vector<3xbf16>, !llvm.ptr
  llvm.return
}
