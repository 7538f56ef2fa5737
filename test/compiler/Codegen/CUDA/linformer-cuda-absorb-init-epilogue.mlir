// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules,linformer-cuda-absorb-init-epilogue))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{precision=bf16},linformer-cuda-select-schedules{precision=bf16},linformer-cuda-absorb-init-epilogue))' | FileCheck %s --check-prefix=BF16

// What each scheduled contraction's warp tiles take over (the config test:
// linformer-cuda-tensor-core-contractions' own tests show it applied).

// A bias broadcast before the projection and GELU after it, into a buffer
// of its own that nothing else reads C beside: both absorbed.
// CHECK-LABEL: func.func @bias_gelu
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg3 : memref<32xf32>)
// CHECK-NOT: linformer.cuda_absorbs
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = true>
// CHECK-SAME: linformer.cuda_schedule
// CHECK: math.erf
#b = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @bias_gelu(%x: memref<64x16xf32>, %w: memref<16x32xf32>,
                     %g: memref<64x32xf32>, %bias: memref<32xf32>) {
  %h = memref.alloc() : memref<64x32xf32>
  linalg.generic {indexing_maps = [#b, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%g : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %h : memref<64x32xf32>
  return
}

// -----

// Neither: the op before reads C (a residual added to the bias, so the
// accumulators would need C anyway), and the op after writes a buffer of its
// own while C's values are read again later (by the copy into %z).
// CHECK-LABEL: func.func @neither
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = false, epilogue = false>
#b = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @neither(%x: memref<64x16xf32>, %w: memref<16x32xf32>, %c: memref<64x32xf32>,
                   %g: memref<64x32xf32>, %z: memref<64x32xf32>, %bias: memref<32xf32>) {
  linalg.generic {indexing_maps = [#b, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<32xf32>) outs(%c : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x16xf32>, memref<16x32xf32>) outs(%c : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%g : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  }
  memref.copy %c, %z : memref<64x32xf32> to memref<64x32xf32>
  return
}

// -----

// A zero fill and GELU in place: both absorbed. A stale attribute is
// replaced, and a contraction without a schedule (its m, 20, is no
// multiple of 16) gets none.
// CHECK-LABEL: func.func @fill_in_place
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = true>
// CHECK: math.erf
// CHECK: linalg.generic
// CHECK-NOT: linformer.cuda_absorbs
// CHECK: return
#b = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @fill_in_place(%x: memref<64x16xf32>, %w: memref<16x32xf32>, %h: memref<64x32xf32>,
                         %a: memref<20x16xf32>, %d: memref<20x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>)
      attrs = {linformer.cuda_absorbs = #linformer.cuda_absorption<init = false, epilogue = false>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<20x16xf32>, memref<16x32xf32>) outs(%d : memref<20x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// One buffer, two values (every layer's FFN reuses its hidden buffer):
// without narrowing the op after the first contraction is the second, no
// epilogue; with bf16, narrowing stores the first one's values through a
// rounding copy into a bf16 twin (`linformer.narrowed`), which only the
// second reads: that copy is its epilogue, although the f32 buffer is
// written and read again after it.
// CHECK-LABEL: func.func @reused
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = false>
// BF16-LABEL: func.func @reused
// BF16: linalg.fill
// BF16-NEXT: linalg.generic
// BF16-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = true>
// BF16-NEXT: ^bb0
// BF16: linalg.generic
// BF16-SAME: linformer.narrowed
#b = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @reused(%x: memref<64x16xf32>, %w1: memref<16x32xf32>, %w2: memref<32x16xf32>,
                  %y: memref<64x16xf32>, %z: memref<64x32xf32>) {
  %h = memref.alloc() : memref<64x32xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w2 : memref<64x32xf32>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  memref.copy %h, %z : memref<64x32xf32> to memref<64x32xf32>
  memref.dealloc %h : memref<64x32xf32>
  return
}

// -----

// The op after writes the contraction's own input (bufferization gave GELU
// the buffer of the LayerNorm output it reads, dead once the projection is
// done: an FFN whose hidden layer is as wide as the model). Absorbed, a
// lane's stores would overwrite the rows of %x other lanes and warps still
// read: the init is absorbed, the epilogue stays an op of its own (random
// models seed 20261278 case 335: 0.42 off under exact emulation).
// CHECK-LABEL: func.func @epilogue_into_input
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = false>
// CHECK: math.erf
// BF16-LABEL: func.func @epilogue_into_input
// BF16: linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = false>
#id = affine_map<(i, j) -> (i, j)>
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
func.func @epilogue_into_input(%x: memref<64x32xf32>, %w: memref<32x32xf32>) {
  %h = memref.alloc() : memref<64x32xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%h : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x32xf32>, memref<32x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%x : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %h : memref<64x32xf32>
  return
}
