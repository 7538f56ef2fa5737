// RUN: linformer-opt %s --split-input-file --verify-diagnostics

// A dispatch plan the runtime could not run is refused where it is
// written, with the kernel and the value named.

// expected-error @+1 {{kernel 'k' has 0 workgroups; a kernel runs at least one}}
func.func @zero() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 0, buffers = [0]>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{kernel 'k' writes buffer 2, which is not one it takes}}
func.func @writes() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [0, 1], writes = [2]>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{kernel 'k' names buffer -1; buffer ids are >= 0}}
func.func @negative() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [-1]>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{kernel 'k': a CUDA launch has a grid and a block of 3 sizes each; got 3 and 0}}
func.func @grid() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [0], grid = [1, 1, 1]>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{kernel 'k' appears twice in the dispatch plan}}
func.func @twice() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [0]>, #linformer.kernel<"k", workgroups = 1, buffers = [0]>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{intermediate 1 has -8 bytes; sizes are >= 0}}
func.func @bytes() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [], intermediates = [16, -8]>} {
  return
}

// -----

// expected-error @+1 {{a kernel of a dispatch plan has no field 'threads'}}
func.func @field() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", threads = 1, workgroups = 1, buffers = [0]>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{a kernel of a dispatch plan needs its workgroups and buffers}}
func.func @missing() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 1>], intermediates = []>} {
  return
}

// -----

// The cost model's facts about a kernel are checked too: one iterator a
// loop, dims within the loops.
// expected-error @+1 {{iterators 'pRx' must be one p (parallel) or R (reduction) per loop; there are 2 loops}}
func.func @iterators() attributes {linformer.kernel = #linformer.kernel_shape<key = "c", kind = "contraction", loops = [4, 4], iterators = "pRx", output_dims = [0], flops = 32, source = "cost-model">} {
  return
}

// -----

// expected-error @+1 {{output dim 2 is not one of the 2 loops}}
func.func @dims() attributes {linformer.kernel = #linformer.kernel_shape<key = "c", kind = "contraction", loops = [4, 4], iterators = "pR", output_dims = [2], flops = 32, source = "cost-model">} {
  return
}

// -----

// expected-error @+1 {{kernel kind 'gemm' is not contraction, attention_core or other}}
func.func @kind() attributes {linformer.kernel = #linformer.kernel_shape<key = "c", kind = "gemm", loops = [4, 4], iterators = "pR", output_dims = [0], flops = 32, source = "cost-model">} {
  return
}

// -----

// expected-error @+1 {{kernel 'k': its length rule enumerates 16 workgroups, but the kernel has 32}}
func.func @rows_count() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 32, buffers = [0], rows = #linformer.token_rows<grid = [1, 4, 4], batch = 0, row = 2, tile = 32>>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{token_rows: needs 0 <= batch < row < 3 (the grid's rank), got batch = 2, row = 1}}
func.func @rows_order() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 32, buffers = [0], rows = #linformer.token_rows<grid = [1, 8, 4], batch = 2, row = 1, tile = 32>>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{token_rows: a row tile holds at least one token, got tile = 0}}
func.func @rows_tile() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 32, buffers = [0], rows = #linformer.token_rows<grid = [1, 8, 4], batch = 0, row = 2, tile = 0>>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{kernel 'k': an initializer runs once per session, for no run's lengths; it takes no length rule or length variant}}
func.func @initializer_rows() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 32, buffers = [0], initializer, rows = #linformer.token_rows<grid = [1, 8, 4], batch = 0, row = 2, tile = 32>>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{'linformer.initializer' must be a unit attribute, not 1 : i64}}
func.func @initializer_attr() attributes {linformer.initializer = 1} {
  return
}

// -----

// expected-error @+1 {{sequence buffers must be argument ids >= 0 in increasing order, but entry 1 is 0}}
func.func @sequences() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"k", workgroups = 1, buffers = [0]>], intermediates = [], sequences = [2, 0]>} {
  return
}

// -----

// expected-error @+1 {{engine 'vnni' is none of fma, dot, amx (each may be ", emulated" but fma)}}
func.func @engine() attributes {linformer.kernel = #linformer.kernel_shape<key = "c", kind = "contraction", loops = [4, 4], iterators = "pR", output_dims = [0], flops = 32, source = "cost-model", engine = "vnni">} {
  return
}

// -----

// An all-reduce step sums one buffer and has no code to launch.
// expected-error @+1 {{'s': an all-reduce step sums one buffer over 2 or more ranks: all_reduce >= 2, one workgroup, that buffer in buffers and writes, and no schedule, generator, launch, length rule or initializer}}
func.func @all_reduce_two() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"s", workgroups = 1, buffers = [0, 1], writes = [0, 1], all_reduce = 2>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{'s': an all-reduce step sums one buffer over 2 or more ranks}}
func.func @all_reduce_one_rank() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"s", workgroups = 1, buffers = [0], writes = [0], all_reduce = 1>], intermediates = []>} {
  return
}

// -----

// An all-gather step reads its share and writes the whole: two buffers.
// expected-error @+1 {{'g': an all-gather step (gather = 2) is an all-reduce step with gather >= 1 blocks and two buffers, [share, whole], writing the whole}}
func.func @all_gather_writes_share() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"g", workgroups = 1, buffers = [0, 1], writes = [0], all_reduce = 2, gather = 2>], intermediates = []>} {
  return
}

// -----

// expected-error @+1 {{'g': an all-gather step (gather = 1) is an all-reduce step}}
func.func @gather_without_ranks() attributes {linformer.dispatch_plan = #linformer.dispatch_plan<kernels = [#linformer.kernel<"g", workgroups = 1, buffers = [0, 1], writes = [1], gather = 1>], intermediates = []>} {
  return
}
