// RUN: linformer-opt %s --split-input-file --linformer-cuda-plan-launches | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cuda-plan-launches='sm=90 blocks-per-sm=2' | FileCheck %s --check-prefix=TWO
// RUN: linformer-opt %s --split-input-file --linformer-cuda-plan-launches='sm=86 blocks-per-sm=4' | FileCheck %s --check-prefix=SM86

// The host function is the runtime's plan: buffer ids are the arguments
// (0, 1), then each alloc (2); a view binds its source; kernels take buffers
// only. Both kernels move into one module, named after their launch. A
// kernel that views dynamic shared memory is launched with as many bytes as
// its furthest view reaches (@a: 16 floats at byte 64, 128 bytes). Each
// kernel records the buffers it may write (`writes`, traced through views;
// stores into its shared memory write none of them): @a none, @b its
// second argument (buffer 1) and not the first, which it reads.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME: linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"entry_kernel_0", workgroups = 1, buffers = [0, 2], grid = [1, 1, 1], block = [32, 4, 1], shared = 128>, #linformer.kernel<"entry_kernel_1", workgroups = 4, buffers = [2, 1], writes = [1], grid = [2, 2, 1], block = [32, 1, 1], shared = 256>], intermediates = [512]>
// CHECK: %[[BYTES:.*]] = arith.constant 128 : i32
// CHECK: gpu.launch_func @entry_kernels::@entry_kernel_0 {{.*}} dynamic_shared_memory_size %[[BYTES]]
// CHECK: gpu.launch_func @entry_kernels::@entry_kernel_1
// CHECK: gpu.module @entry_kernels {
// CHECK: gpu.func @entry_kernel_0(
// CHECK-NOT: nvvm.minctasm
// CHECK: gpu.func @entry_kernel_1(
// CHECK-NOT: nvvm.minctasm
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @occupancy(
// CHECK-NOT: blocks_per_sm
// CHECK-NOT: nvvm.minctasm
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
    gpu.func @k(%a: memref<128xf32>, %b: memref<128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<128xf32>
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %v, %s[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.expand_shape %b [[0, 1]] output_shape [4, 32] : memref<128xf32> into memref<4x32xf32>
      memref.store %v, %w[%c0, %c0] : memref<4x32xf32>
      gpu.return
    }
  }
}

// -----

// Occupancy: with blocks-per-sm = 2 each kernel asks ptxas to fit two
// blocks an SM (nvvm.minctasm), where threads and shared memory allow:
// @small (256 threads, 1 KiB) gets 2; @wide (1024 threads) gets 2 on
// sm_90 (2048 threads an SM); @big (120 KiB of dynamic shared memory, plus
// the driver's 1 KiB, of 228 KiB an SM) only 1, so no request. sm_86
// holds 1536 threads and 100 KiB an SM: @small gets 4 (shared for 50, threads
// for 6), @wide and @big 1.
// TWO-LABEL: func.func @occupancy(
// TWO-SAME: #linformer.kernel<"occupancy_kernel_0", {{.*}}, block = [32, 8, 1], shared = 1024, blocks_per_sm = 2>
// TWO-SAME: #linformer.kernel<"occupancy_kernel_1", {{.*}}, block = [32, 32, 1], blocks_per_sm = 2>
// TWO-SAME: #linformer.kernel<"occupancy_kernel_2", {{.*}}, block = [32, 8, 1], shared = 122880>
// TWO: gpu.func @occupancy_kernel_0({{.*}}) kernel attributes {nvvm.minctasm = 2 : i32}
// TWO: gpu.func @occupancy_kernel_1({{.*}}) kernel attributes {nvvm.minctasm = 2 : i32}
// TWO: gpu.func @occupancy_kernel_2({{[^)]*}}) kernel {
// SM86-LABEL: func.func @occupancy(
// SM86-SAME: #linformer.kernel<"occupancy_kernel_0", {{.*}}, block = [32, 8, 1], shared = 1024, blocks_per_sm = 4>
// SM86-SAME: #linformer.kernel<"occupancy_kernel_1", {{.*}}, block = [32, 32, 1]>
// SM86-SAME: #linformer.kernel<"occupancy_kernel_2", {{.*}}, block = [32, 8, 1], shared = 122880>
// SM86: gpu.func @occupancy_kernel_0({{.*}}) kernel attributes {nvvm.minctasm = 4 : i32}
module attributes {gpu.container_module} {
  func.func @occupancy(%x: memref<256xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %small = arith.constant 1024 : i32
    %big = arith.constant 122880 : i32
    gpu.launch_func @small::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c8, %c1)
        dynamic_shared_memory_size %small args(%x : memref<256xf32>)
    gpu.launch_func @wide::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c32, %c1)
        args(%x : memref<256xf32>)
    gpu.launch_func @big::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c8, %c1)
        dynamic_shared_memory_size %big args(%x : memref<256xf32>)
    return
  }
  gpu.module @small {
    gpu.func @k(%a: memref<256xf32>) kernel { gpu.return }
  }
  gpu.module @wide {
    gpu.func @k(%a: memref<256xf32>) kernel { gpu.return }
  }
  gpu.module @big {
    gpu.func @k(%a: memref<256xf32>) kernel { gpu.return }
  }
}

// -----

// Length variants: the kernels of each branch of a linformer.length_guard
// scf.if record the longest lengths they run for (then: at most T; else:
// more), nested guards narrowing the range; the ops computing the
// condition from the lengths are the runtime's to evaluate, not host code.
// Kernels outside every guard run always (no max_length).
// CHECK-LABEL: func.func @variants(
// CHECK-SAME: #linformer.kernel<"variants_kernel_0", workgroups = 1, buffers = [0, 2], grid = [1, 1, 1], block = [32, 1, 1], max_length = [0, 64]>
// CHECK-SAME: #linformer.kernel<"variants_kernel_1", workgroups = 1, buffers = [0, 2], grid = [1, 1, 1], block = [32, 1, 1], max_length = [64, 128]>
// CHECK-SAME: #linformer.kernel<"variants_kernel_2", workgroups = 1, buffers = [0, 2], grid = [1, 1, 1], block = [32, 1, 1], max_length = [128, 512]>
// CHECK-SAME: #linformer.kernel<"variants_kernel_3", workgroups = 1, buffers = [2], grid = [1, 1, 1], block = [32, 1, 1]>
module attributes {gpu.container_module} {
  func.func @variants(%x: memref<2x512x4xf32> {linformer.sequence},
                      %len: memref<2xi32> {linformer.lengths},
                      %y: memref<2x512x4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %none = arith.constant 0 : i32
    %longest = scf.for %i = %c0 to %c2 step %c1 iter_args(%m = %none) -> (i32) {
      %l = memref.load %len[%i] : memref<2xi32>
      %n = arith.maxsi %m, %l : i32
      scf.yield %n : i32
    }
    %t128 = arith.constant 128 : i32
    %short = arith.cmpi sle, %longest, %t128 : i32
    scf.if %short {
      %t64 = arith.constant 64 : i32
      %shorter = arith.cmpi sle, %longest, %t64 : i32
      scf.if %shorter {
        gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
            args(%x : memref<2x512x4xf32>, %y : memref<2x512x4xf32>)
      } else {
        gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
            args(%x : memref<2x512x4xf32>, %y : memref<2x512x4xf32>)
      } {linformer.length_guard = 64 : i64}
    } else {
      gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
          args(%x : memref<2x512x4xf32>, %y : memref<2x512x4xf32>)
    } {linformer.length_guard = 128 : i64}
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%y : memref<2x512x4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<2x512x4xf32>, %b: memref<2x512x4xf32>) kernel { gpu.return }
  }
  gpu.module @b {
    gpu.func @k(%a: memref<2x512x4xf32>) kernel { gpu.return }
  }
}

// -----

// A kernel with an op whose effects on memory are unknown (inline assembly
// with side effects) may write every buffer it binds.
// CHECK-LABEL: func.func @opaque(
// CHECK-SAME: #linformer.kernel<"opaque_kernel_0", workgroups = 1, buffers = [0, 1], writes = [0, 1],
module attributes {gpu.container_module} {
  func.func @opaque(%x: memref<32xf32>, %y: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<32xf32>, %y : memref<32xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<32xf32>, %b: memref<32xf32>) kernel {
      llvm.inline_asm has_side_effects "membar.gl;", "" : () -> ()
      gpu.return
    }
  }
}

// -----

// The warpgroup MMA this compiler writes as inline assembly (marked
// linformer.cuda_host_wgmma) reads registers and shared memory only: the
// kernel writes the one buffer it stores into.
// CHECK-LABEL: func.func @wgmma(
// CHECK-SAME: #linformer.kernel<"wgmma_kernel_0", workgroups = 1, buffers = [0, 1], writes = [1],
module attributes {gpu.container_module} {
  func.func @wgmma(%x: memref<32xf32>, %y: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<32xf32>, %y : memref<32xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<32xf32>, %b: memref<32xf32>) kernel {
      %c0 = arith.constant 0 : index
      %d = arith.constant 0 : i64
      %r = llvm.inline_asm has_side_effects asm_dialect = att {linformer.cuda_host_wgmma = array<i64: 8, 0, 1>} "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $4, $5, 0, 1, 1, 0, 0;", "=f,=f,=f,=f,l,l" %d, %d : (i64, i64) -> !llvm.struct<(f32, f32, f32, f32)>
      %v = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
      %w = memref.load %a[%c0] : memref<32xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %b[%c0] : memref<32xf32>
      gpu.return
    }
  }
}
