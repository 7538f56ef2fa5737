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
