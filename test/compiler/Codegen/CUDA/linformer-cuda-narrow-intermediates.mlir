// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{precision=f16}))' | FileCheck %s --check-prefix=F16
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{elementwise=false}))' | FileCheck %s --check-prefix=OFF
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{precision=tf32}))' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-narrow-intermediates{warp-tiles-n=3}))' 2>&1 | FileCheck %s --check-prefix=BADTILES

// The step before linformer-cuda-tensor-core-contractions (whose test
// checks what it makes of this: the stores into the twin, the kernels that
// go): an f32 buffer whose values only 16-bit readers read becomes a 16-bit
// twin, written by the contraction's epilogue, marked linformer.narrowed.

// BAD: error: precision 'tf32' is not one this pass narrows to (bf16 or f16
// BADTILES: error: warp-tiles-m and warp-tiles-n must be 1, 2, 4 or 8 (as linformer-cuda-tensor-core-contractions takes them), not 4 and 3

// The FFN: GELU in place on the hidden layer H, which only the second
// projection reads (and rounds as it loads it). GELU, the first
// projection's epilogue, now writes H's bf16 twin and rounds what it
// yields; the second projection reads the twin and extends it.
// CHECK-LABEL: func.func @ffn
// CHECK-DAG: %[[H16:.*]] = memref.alloc() : memref<64x32xbf16>
// CHECK-DAG: %[[H:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<64x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[H]] : memref<64x32xf32>) outs(%[[H16]] : memref<64x32xbf16>) attrs =  {linformer.narrowed}
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: bf16):
// CHECK: math.erf
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: linalg.generic {{.*}} ins(%[[H16]], %{{.*}} : memref<64x32xbf16>, memref<32x16xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: bf16,
// CHECK-NEXT: arith.extf %[[E]] : bf16 to f32
// CHECK: memref.dealloc %[[H]]
// CHECK: memref.dealloc %[[H16]]
// F16-LABEL: func.func @ffn
// F16: memref.alloc() : memref<64x32xf16>
// F16: arith.truncf %{{.*}} : f32 to f16
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @ffn(%x: memref<64x16xf32>, %w1: memref<16x32xf32>, %w2: memref<32x16xf32>,
               %y: memref<64x16xf32>) {
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
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %e = math.erf %in : f32
    %r = arith.mulf %e, %half : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %w2 : memref<64x32xf32>, memref<32x16xf32>) outs(%y : memref<64x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %h : memref<64x32xf32>
  return
}

// -----

// One buffer, two values (every layer's FFN reuses its hidden buffer). The
// first is read only by a contraction; its contraction has no epilogue, so
// a rounding copy into the twin becomes one (marked: H's other users are
// the second value's, so only the mark lets the tensor-core pass absorb
// it). The second is read by a plain op (transposed, not an epilogue),
// which does not round it: it stays f32, and nothing is added for it.
// CHECK-LABEL: func.func @reused
// CHECK-DAG: %[[H16:.*]] = memref.alloc() : memref<64x32xbf16>
// CHECK-DAG: %[[H:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<64x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[H]] : memref<64x32xf32>) outs(%[[H16]] : memref<64x32xbf16>) attrs =  {linformer.narrowed}
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[X]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: linalg.generic {{.*}} ins(%[[H16]], %{{.*}} : memref<64x32xbf16>, memref<32x16xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[H]] : memref<64x32xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[H]] : memref<64x32xf32>)
// CHECK-NOT: linformer.narrowed
// CHECK: linalg.generic {{.*}} ins(%[[H]] : memref<64x32xf32>) outs(%{{.*}} : memref<32x64xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: math.exp
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @reused(%x: memref<64x16xf32>, %w1: memref<16x32xf32>, %w2: memref<32x16xf32>,
                  %y: memref<64x16xf32>, %z: memref<32x64xf32>) {
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
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : memref<64x16xf32>, memref<16x32xf32>) outs(%h : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<64x32xf32>) outs(%z : memref<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  memref.dealloc %h : memref<64x32xf32>
  return
}

// -----

// A post-norm LayerNorm's output T: an elementwise op (no contraction
// before it) writes all of it; the next contraction rounds it as it loads
// it, a row sum (the residual and the next LayerNorm's statistics) reads it
// as f32. The op writes both: T as before and T's bf16 twin, rounding what
// it yields; the contraction reads the twin, the row sum T.
// CHECK-LABEL: func.func @layernorm_twin
// CHECK-DAG: %[[T16:.*]] = memref.alloc() : memref<64x16xbf16>
// CHECK-DAG: %[[T:.*]] = memref.alloc() : memref<64x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<64x16xf32>, memref<16xf32>) outs(%[[T]], %[[T16]] : memref<64x16xf32>, memref<64x16xbf16>) attrs =  {linformer.token_loops = array<i64: 0>} {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[V:.*]] = arith.mulf
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[V]], %[[R]] : f32, bf16
// CHECK: linalg.generic {{.*}} ins(%[[T16]], %{{.*}} : memref<64x16xbf16>, memref<16x32xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: bf16,
// CHECK-NEXT: arith.extf %[[E]] : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%[[T]] : memref<64x16xf32>) outs(%{{.*}} : memref<64xf32>)
// CHECK: memref.dealloc %[[T]]
// CHECK: memref.dealloc %[[T16]]
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
// With elementwise=false (the old path), neither op gets a twin:
// OFF-LABEL: func.func @layernorm_twin
// OFF-NOT: bf16
// OFF-LABEL: func.func @mask_only
// OFF-NOT: bf16
// OFF: return
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @layernorm_twin(%x: memref<64x16xf32>, %g: memref<16xf32>, %w: memref<16x32xf32>,
                          %y: memref<64x32xf32>, %s: memref<64xf32>) {
  %t = memref.alloc() : memref<64x16xf32>
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %g : memref<64x16xf32>, memref<16xf32>) outs(%t : memref<64x16xf32>)
      attrs = {linformer.token_loops = array<i64: 0>} {
  ^bb0(%in: f32, %gamma: f32, %out: f32):
    %v = arith.mulf %in, %gamma : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t, %w : memref<64x16xf32>, memref<16x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<64x16xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<64x16xf32>
  return
}

// -----

// E under the padding mask, read only by E X (which rounds it): the op that
// masks it writes the twin alone. A buffer that is read and written after
// its writer (a contraction accumulating into it) keeps f32. The f32
// buffer of the masked E, which nothing reads or writes any more, goes.
// CHECK-LABEL: func.func @mask_only
// CHECK: %[[E16:.*]] = memref.alloc() : memref<64x16xbf16>
// CHECK-NOT: memref.alloc() : memref<64x16xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E16]] : memref<64x16xbf16>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: bf16):
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[C:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[E16]], %{{.*}} : memref<64x16xbf16>, memref<16x32xf32>) outs(%[[C]] : memref<64x32xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[C]] : memref<64x32xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : memref<64x16xf32>, memref<16x32xf32>) outs(%[[C]] : memref<64x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[C]] : memref<64x32xf32>) outs(%{{.*}} : memref<64x32xf32>)
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @mask_only(%e: memref<64x16xf32>, %x: memref<16x32xf32>, %y: memref<64x32xf32>) {
  %e1 = memref.alloc() : memref<64x16xf32>
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e : memref<64x16xf32>) outs(%e1 : memref<64x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }
  %c = memref.alloc() : memref<64x32xf32>
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e1, %x : memref<64x16xf32>, memref<16x32xf32>) outs(%c : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  // C written elementwise, then accumulated into: read and written.
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%c : memref<64x32xf32>) {
  ^bb0(%out: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<64x16xf32>, memref<16x32xf32>) outs(%c : memref<64x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%y : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %c : memref<64x32xf32>
  memref.dealloc %e1 : memref<64x16xf32>
  return
}
