// RUN: linformer-opt %s --split-input-file --linformer-cpu-scratch-hooks | FileCheck %s

// The memref lowering's generic functions get bodies: each calls the
// function its exported hook points to (the runtime's per-thread cache of
// blocks), or malloc / free while the hook is null.
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_alloc(
// CHECK-SAME: %[[SIZE:.*]]: i64) -> !llvm.ptr
// CHECK: %[[AT:.*]] = llvm.mlir.addressof @linformer_scratch_alloc : !llvm.ptr
// CHECK: %[[HOOK:.*]] = llvm.load %[[AT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[UNSET:.*]] = llvm.icmp "eq" %[[HOOK]], %[[NULL]] : !llvm.ptr
// CHECK: llvm.cond_br %[[UNSET]], ^[[MALLOC:.*]], ^[[CALL:.*]]
// CHECK: ^[[CALL]]:
// CHECK: %[[P:.*]] = llvm.call %[[HOOK]](%[[SIZE]]) : !llvm.ptr, (i64) -> !llvm.ptr
// CHECK: llvm.return %[[P]] : !llvm.ptr
// CHECK: ^[[MALLOC]]:
// CHECK: %[[Q:.*]] = llvm.call @malloc(%[[SIZE]]) : (i64) -> !llvm.ptr
// CHECK: llvm.return %[[Q]] : !llvm.ptr
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_free(
// CHECK: llvm.mlir.addressof @linformer_scratch_free
// CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK: llvm.call @free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-DAG: llvm.mlir.global external @linformer_scratch_alloc() {{.*}} : !llvm.ptr {
// CHECK-DAG: llvm.mlir.global external @linformer_scratch_free() {{.*}} : !llvm.ptr {
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
module {
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @kernel() {
    %c = llvm.mlir.constant(4194304 : i64) : i64
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%c) : (i64) -> !llvm.ptr
    llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// A module that allocates nothing on the heap gets no hooks.
// CHECK-LABEL: llvm.func @stack_only
// CHECK-NOT: linformer_scratch
module {
  llvm.func @stack_only() {
    llvm.return
  }
}
