// RUN: linformer-opt %s --pass-pipeline='builtin.module(gpu.module(linformer-cuda-extern-dynamic-shared))' | FileCheck %s

// What gpu.dynamic_shared_memory lowers to (a zero-length array in the
// shared address space) becomes an external declaration aligned to 1024
// bytes (a 128-byte swizzle's repeat, wgmma's staged buffers); a sized shared
// array and a zero-length array elsewhere stay as they are. (The PTX this
// becomes, `.extern .shared ... []`, is checked in linformer-compile-cuda.test.)
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @empty() {addr_space = 1 : i32} : !llvm.array<0 x i8>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
    llvm.mlir.global internal @empty() {addr_space = 1 : i32} : !llvm.array<0 x i8>
  }
}
