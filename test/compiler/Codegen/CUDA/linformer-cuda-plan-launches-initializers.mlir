// RUN: linformer-opt %s --linformer-cuda-plan-launches='initializers=true' | FileCheck %s
// RUN: linformer-opt %s --linformer-cuda-plan-launches | FileCheck %s --check-prefix=OFF

// Initializers: the launches that compute the same values in every run,
// from the weights alone (buffer ids: x 0, the sequence; e 1 and w 2,
// weights; y 3, the output; then t0..t3, 4..7).
// - kernel 0 reads the weight e into t0, and kernel 1 t0 into t1: both
//   initializers (t1 is then a constant that kernel 2 reads in every run);
// - kernel 2 reads the sequence x: not one;
// - kernels 3 and 5 both write w into t3, which kernel 4 (a run's kernel:
//   it writes the output) reads in between: made once, it would see the
//   second write, so neither is one;
// - kernel 4 writes the output.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: #linformer.kernel<"entry_kernel_0", workgroups = 1, buffers = [1, 4], writes = [4], grid = [1, 1, 1], block = [32, 1, 1], initializer>
// CHECK-SAME: #linformer.kernel<"entry_kernel_1", workgroups = 1, buffers = [4, 5], writes = [5], grid = [1, 1, 1], block = [32, 1, 1], initializer>
// CHECK-SAME: #linformer.kernel<"entry_kernel_2", workgroups = 1, buffers = [0, 5, 6], writes = [6], grid = [1, 1, 1], block = [32, 1, 1]>
// CHECK-SAME: #linformer.kernel<"entry_kernel_3", workgroups = 1, buffers = [2, 7], writes = [7], grid = [1, 1, 1], block = [32, 1, 1]>
// CHECK-SAME: #linformer.kernel<"entry_kernel_4", workgroups = 1, buffers = [6, 7, 3], writes = [3], grid = [1, 1, 1], block = [32, 1, 1]>
// CHECK-SAME: #linformer.kernel<"entry_kernel_5", workgroups = 1, buffers = [2, 7], writes = [7], grid = [1, 1, 1], block = [32, 1, 1]>
// Without the option (the bare pass's default), none is.
// OFF-LABEL: func.func @entry(
// OFF-NOT: initializer
module attributes {gpu.container_module} {
  func.func @entry(%x: memref<32xf32> {linformer.sequence}, %e: memref<32xf32>,
                   %w: memref<32xf32>, %y: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %t0 = memref.alloc() : memref<32xf32>
    %t1 = memref.alloc() : memref<32xf32>
    %t2 = memref.alloc() : memref<32xf32>
    %t3 = memref.alloc() : memref<32xf32>
    gpu.launch_func @copy::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%e : memref<32xf32>, %t0 : memref<32xf32>)
    gpu.launch_func @copy::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%t0 : memref<32xf32>, %t1 : memref<32xf32>)
    gpu.launch_func @add::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<32xf32>, %t1 : memref<32xf32>, %t2 : memref<32xf32>)
    gpu.launch_func @copy::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%w : memref<32xf32>, %t3 : memref<32xf32>)
    gpu.launch_func @add::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%t2 : memref<32xf32>, %t3 : memref<32xf32>, %y : memref<32xf32>)
    gpu.launch_func @copy::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%w : memref<32xf32>, %t3 : memref<32xf32>)
    memref.dealloc %t0 : memref<32xf32>
    memref.dealloc %t1 : memref<32xf32>
    memref.dealloc %t2 : memref<32xf32>
    memref.dealloc %t3 : memref<32xf32>
    return
  }
  gpu.module @copy {
    gpu.func @k(%a: memref<32xf32>, %b: memref<32xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<32xf32>
      memref.store %v, %b[%i] : memref<32xf32>
      gpu.return
    }
  }
  gpu.module @add {
    gpu.func @k(%a: memref<32xf32>, %b: memref<32xf32>, %c: memref<32xf32>) kernel {
      %i = gpu.thread_id x
      %u = memref.load %a[%i] : memref<32xf32>
      %v = memref.load %b[%i] : memref<32xf32>
      %s = arith.addf %u, %v : f32
      memref.store %s, %c[%i] : memref<32xf32>
      gpu.return
    }
  }
}
