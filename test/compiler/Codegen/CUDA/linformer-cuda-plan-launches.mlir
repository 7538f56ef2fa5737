// RUN: linformer-opt %s --linformer-cuda-plan-launches | FileCheck %s

// The host function is the runtime's plan: buffer ids are the arguments
// (0, 1), then each alloc (2); a view binds its source; kernels take buffers
// only. Both kernels move into one module, named after their launch. A
// kernel that views dynamic shared memory is launched with as many bytes as
// its furthest view reaches (@a: 16 floats at byte 64, 128 bytes).
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: linformer.intermediates = [512]
// CHECK-SAME: linformer.kernels = [{block = [32, 4, 1], buffers = [0, 2], grid = [1, 1, 1], name = "entry_kernel_0", shared = 128 : i64, workgroups = 1 : i64}, {block = [32, 1, 1], buffers = [2, 1], grid = [2, 2, 1], name = "entry_kernel_1", shared = 256 : i64, workgroups = 4 : i64}]
// CHECK: %[[BYTES:.*]] = arith.constant 128 : i32
// CHECK: gpu.launch_func @entry_kernels::@entry_kernel_0 {{.*}} dynamic_shared_memory_size %[[BYTES]]
// CHECK: gpu.launch_func @entry_kernels::@entry_kernel_1
// CHECK: gpu.module @entry_kernels {
// CHECK: gpu.func @entry_kernel_0(
// CHECK: gpu.func @entry_kernel_1(
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @entry(%x: memref<4x32xf32>, %y: memref<128xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : i32
    %t = memref.alloc() {alignment = 64 : i64} : memref<4x32xf32>
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c4, %c1)
        args(%x : memref<4x32xf32>, %t : memref<4x32xf32>)
    %v = memref.collapse_shape %t [[0, 1]] : memref<4x32xf32> into memref<128xf32>
    gpu.launch_func @b::@k blocks in (%c2, %c2, %c1) threads in (%c32, %c1, %c1)
        dynamic_shared_memory_size %c256
        args(%v : memref<128xf32>, %y : memref<128xf32>)
    memref.dealloc %t : memref<4x32xf32>
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<4x32xf32>, %b: memref<4x32xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s0 = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
      %s1 = memref.view %raw[%c64][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k(%a: memref<128xf32>, %b: memref<128xf32>) kernel { gpu.return }
  }
}
