// RUN: linformer-opt %s --split-input-file | linformer-opt --split-input-file | FileCheck %s

// The typed dispatch plan an entry function carries: printed, parsed back
// and printed again the same (defaults left out: no writes, no CUDA launch,
// shared 0, blocks_per_sm 1).

// CHECK-LABEL: func.func @cpu
// CHECK-SAME: linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"cpu_kernel_0", workgroups = 16, buffers = [0, 1, 3], writes = [3], schedule = #linformer.cpu_schedule<workgroup = [1, 0, 16, 0, 0], register = [6, 16], reduction = 128, pack = false>, shape = #linformer.kernel_shape<key = "contraction/x", kind = "contraction", loops = [16, 8], iterators = "pR", output_dims = [0], flops = 256, source = "cost-model", n_loop = 0>>, #linformer.kernel<"cpu_kernel_1", workgroups = 1, buffers = [3, 2], writes = [2], generator = "halide">], intermediates = [4096]>
func.func @cpu(%x: memref<16xf32>, %w: memref<16xf32>, %y: memref<16xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [
        #linformer.kernel<"cpu_kernel_0", workgroups = 16, buffers = [0, 1, 3],
          writes = [3],
          schedule = #linformer.cpu_schedule<workgroup = [1, 0, 16, 0, 0],
                                             register = [6, 16],
                                             reduction = 128, pack = false>,
          shape = #linformer.kernel_shape<key = "contraction/x",
                    kind = "contraction", loops = [16, 8],
                    iterators = "pR", output_dims = [0],
                    flops = 256, source = "cost-model", n_loop = 0>>,
        #linformer.kernel<"cpu_kernel_1", workgroups = 1, buffers = [3, 2],
          writes = [2], generator = "halide", shared = 0, blocks_per_sm = 1>],
      intermediates = [4096]>} {
  return
}

// -----

// CHECK-LABEL: func.func @cuda
// CHECK-SAME: #linformer.dispatch_plan<kernels = [#linformer.kernel<"cuda_kernel_0", workgroups = 4, buffers = [1, 0], grid = [2, 2, 1], block = [32, 8, 1], shared = 1024, blocks_per_sm = 2>], intermediates = []>
func.func @cuda(%x: memref<16xf32>, %y: memref<16xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [#linformer.kernel<"cuda_kernel_0", blocks_per_sm = 2,
                   shared = 1024, grid = [2, 2, 1], block = [32, 8, 1],
                   workgroups = 4, buffers = [1, 0]>],
      intermediates = []>} {
  return
}

// -----

// A length rule: workgroups (1 sequence x 8 heads x 4 row tiles of 32
// tokens) that the runtime runs only up to each sequence's length.

// CHECK-LABEL: func.func @rows
// CHECK-SAME: #linformer.kernel<"k", workgroups = 32, buffers = [0], rows = #linformer.token_rows<grid = [1, 8, 4], batch = 0, row = 2, tile = 32>>
func.func @rows(%x: memref<16xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [#linformer.kernel<"k", workgroups = 32, buffers = [0],
                   rows = #linformer.token_rows<grid = [1, 8, 4], batch = 0,
                                                row = 2, tile = 32>>],
      intermediates = []>} {
  return
}

// -----

// An initializer (run once per session, writing a constant) and the
// kernel_shape fact of a contraction that streams such a weight.
// CHECK-LABEL: func.func @initializer
// CHECK-SAME: #linformer.kernel<"init_kernel_0", workgroups = 4, buffers = [1, 3], writes = [3], initializer>
// CHECK-SAME: streamed_weight = true
func.func @initializer(%x: memref<16xf32>, %w: memref<16xf32>, %y: memref<16xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [
        #linformer.kernel<"init_kernel_0", workgroups = 4, buffers = [1, 3],
          writes = [3], initializer>,
        #linformer.kernel<"init_kernel_1", workgroups = 1, buffers = [0, 3, 2],
          writes = [2],
          shape = #linformer.kernel_shape<key = "contraction/x",
                    kind = "contraction", loops = [16, 8],
                    iterators = "pR", output_dims = [0],
                    flops = 256, source = "cost-model", n_loop = 0,
                    streamed_weight = true>>],
      intermediates = [64]>} {
  return
}

// -----

// A CUDA kernel may be an initializer too (E's row sums of a model with no
// lengths: weights only, made once per session).
// CHECK-LABEL: func.func @cuda_initializer
// CHECK-SAME: #linformer.kernel<"cuda_kernel_0", workgroups = 8, buffers = [1, 3], writes = [3], grid = [8, 1, 1], block = [32, 4, 1], initializer>
func.func @cuda_initializer(%x: memref<16xf32>, %w: memref<16xf32>, %y: memref<16xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [
        #linformer.kernel<"cuda_kernel_0", workgroups = 8, buffers = [1, 3],
          writes = [3], grid = [8, 1, 1], block = [32, 4, 1], initializer>],
      intermediates = [64]>} {
  return
}

// -----

// The arguments that hold tokens (the sequence input and the output, not
// the weight of their [b, n]), with packed sequence buffers.
// CHECK-LABEL: func.func @sequences
// CHECK-SAME: intermediates = [], sequences = [0, 2], packed_sequences>
// CHECK-LABEL: func.func @sequences_padded
// CHECK-SAME: intermediates = [], sequences = [0, 2]>
func.func @sequences(%x: memref<2x8x4xf32>, %w: memref<2x8x4xf32>, %y: memref<2x8x4xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [0, 1, 2]>],
      intermediates = [], sequences = [0, 2], packed_sequences>} {
  return
}
func.func @sequences_padded(%x: memref<2x8x4xf32>, %w: memref<2x8x4xf32>, %y: memref<2x8x4xf32>)
    attributes {linformer.dispatch_plan = #linformer.dispatch_plan<
      kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [0, 1, 2]>],
      intermediates = [], sequences = [0, 2]>} {
  return
}
