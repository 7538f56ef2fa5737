// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-fuse-elementwise))' | FileCheck %s

// A bf16 weight's extension feeds a contraction and an elementwise add: it
// fuses into both (no f32 copy of the weight is written). The contraction
// stays a multiply-add, now of an extended bf16 operand, which the
// tensor-core path reads as bf16.
// CHECK-LABEL: func.func @mixed
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1 : tensor<16x64xf32>, tensor<64x32xbf16>)
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// The add reads the bf16 weight itself, extended inside.
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<64x32xf32>, tensor<64x32xbf16>)
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @mixed(%x: tensor<16x64xf32>, %w: tensor<64x32xbf16>, %y: tensor<64x32xf32>)
    -> (tensor<16x32xf32>, tensor<64x32xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x32xbf16>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %f = arith.extf %a : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wf : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %wf : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e2 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %mm, %sum : tensor<16x32xf32>, tensor<64x32xf32>
}

// -----

// The head split of a weight ([d, d] -> [d, h, dh]) stands between its
// extension and the projection: the extension is expanded instead, and
// fuses.
// CHECK-LABEL: func.func @head_split
// CHECK: %[[W:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [64, 4, 16] : tensor<64x64xbf16> into tensor<64x4x16xbf16>
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[W]] : tensor<8x64xf32>, tensor<64x4x16xbf16>)
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
func.func @head_split(%x: tensor<8x64xf32>, %w: tensor<64x64xbf16>) -> tensor<8x4x16xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %wf = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x64xbf16>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %f = arith.extf %a : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<64x64xf32>
  %w3 = tensor.expand_shape %wf [[0], [1, 2]] output_shape [64, 4, 16] : tensor<64x64xf32> into tensor<64x4x16xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<8x4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, h, d, k) -> (m, k)>, affine_map<(m, h, d, k) -> (k, h, d)>, affine_map<(m, h, d, k) -> (m, h, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w3 : tensor<8x64xf32>, tensor<64x4x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// Any other elementwise producer (here a scaling) stays out of a
// contraction, which must remain a plain multiply-add; and a reshape is
// not moved for it.
// CHECK-LABEL: func.func @scaled
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: tensor.expand_shape %[[S]]
// CHECK: linalg.generic {{.*}}"reduction"
func.func @scaled(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x4x16xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %two = arith.constant 2.0 : f32
  %ws = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %f = arith.mulf %a, %two : f32
    linalg.yield %f : f32
  } -> tensor<64x64xf32>
  %w3 = tensor.expand_shape %ws [[0], [1, 2]] output_shape [64, 4, 16] : tensor<64x64xf32> into tensor<64x4x16xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<8x4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, h, d, k) -> (m, k)>, affine_map<(m, h, d, k) -> (k, h, d)>, affine_map<(m, h, d, k) -> (m, h, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w3 : tensor<8x64xf32>, tensor<64x4x16xf32>) outs(%c : tensor<8x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// One extension read by two contractions (upstream's fusion would keep the
// extended weight as a second result of the first fused op, which would
// then be no contraction): each contraction gets its own copy, and both
// stay single-result multiply-adds of the bf16 weight.
// CHECK-LABEL: func.func @shared_extension
// CHECK-NOT: linalg.generic {{.*}} ins(%arg2 : tensor<64x32xbf16>)
// CHECK: %[[A:.*]] = linalg.generic {{.*}}"reduction"]} ins(%arg0, %arg2 : tensor<16x64xf32>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}}"reduction"]} ins(%arg1, %arg2 : tensor<16x64xf32>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK: return %[[A]], %[[B]]
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @shared_extension(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>, %w: tensor<64x32xbf16>)
    -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<64x32xbf16>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %f = arith.extf %a : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %a = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wf : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %b = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %wf : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %a, %b : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// A LayerNorm's output is read by the next projection, which needs it in
// memory, and by a residual add and a row sum: it stays one op that both
// read, instead of each recomputing it from its inputs (in an encoder, a
// chain back through every earlier layer's LayerNorms).
// CHECK-LABEL: func.func @materialized
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<16x64xf32>, tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%[[N]], %arg2
// CHECK: linalg.generic {{.*}} ins(%[[N]], %arg3 : tensor<16x64xf32>, tensor<16x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[N]] : tensor<16x64xf32>)
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @materialized(%x: tensor<16x64xf32>, %g: tensor<64xf32>, %w: tensor<64x32xf32>,
                        %r: tensor<16x64xf32>)
    -> (tensor<16x32xf32>, tensor<16x64xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16x64xf32>
  %n = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (j)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %g : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %res = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n, %r : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %s0 = tensor.empty() : tensor<16xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%n : tensor<16x64xf32>) outs(%sf : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %p, %res, %sum : tensor<16x32xf32>, tensor<16x64xf32>, tensor<16xf32>
}

// -----

// The model input's extension feeds the residual add, which both row sums
// of the LayerNorm after it take in: fused twice over, the extension gains
// a reader per sum, is cloned for each and fuses too. Both sums read the
// bf16 input; nothing writes its f32 copy.
// CHECK-LABEL: func.func @input_residual
// CHECK-NOT: ins(%arg0 : tensor<16x64xbf16>)
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%arg0, %arg1 : tensor<16x64xbf16>, tensor<16x64xf32>)
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%arg0, %arg1 : tensor<16x64xbf16>, tensor<16x64xf32>)
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @input_residual(%x: tensor<16x64xbf16>, %a: tensor<16x64xf32>)
    -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16x64xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x64xbf16>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %f = arith.extf %v : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xf, %a : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<16xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<16x64xf32>) outs(%sf : tensor<16xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<16x64xf32>) outs(%sf : tensor<16xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %sum, %sq : tensor<16xf32>, tensor<16xf32>
}

// -----

// The padding mask applied to E (a guarded extension: `n < lengths[b] ?
// extf(E[k, n]) : 0`, broadcast over the batch) is read by E X and by E's
// row sums. It is cloned for each: the sum takes its clone in (and reads E
// and the lengths), the contraction keeps its own, unfused, for the
// tensor-core path to recompute as it loads it. A guarded extension is not
// fused into a contraction. (Several contractions would share the one op:
// on the paths without tensor cores they read it from memory, and a copy
// each would be a kernel each.)
// CHECK-LABEL: func.func @guarded
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<8x64xbf16>, tensor<2xi32>) outs(%{{.*}} : tensor<2x8x64xf32>)
// CHECK: arith.select
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%[[M]], %arg2 : tensor<2x8x64xf32>, tensor<2x64x16xbf16>)
// CHECK-NOT: arith.select
// CHECK: linalg.generic {{.*}}"reduction"]} ins(%arg0, %arg1 : tensor<8x64xbf16>, tensor<2xi32>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: arith.select
#e = affine_map<(b, k, n) -> (k, n)>
#len = affine_map<(b, k, n) -> (b)>
#bkn = affine_map<(b, k, n) -> (b, k, n)>
#bk = affine_map<(b, k, n) -> (b, k)>
func.func @guarded(%E: tensor<8x64xbf16>, %lengths: tensor<2xi32>, %x: tensor<2x64x16xbf16>)
    -> (tensor<2x8x16xf32>, tensor<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x8x64xf32>
  %masked = linalg.generic {indexing_maps = [#e, #len, #bkn], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%E, %lengths : tensor<8x64xbf16>, tensor<2xi32>) outs(%e0 : tensor<2x8x64xf32>) {
  ^bb0(%v: bf16, %l: i32, %o: f32):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i32
    %in = arith.cmpi slt, %ni, %l : i32
    %f = arith.extf %v : bf16 to f32
    %s = arith.select %in, %f, %zero : f32
    linalg.yield %s : f32
  } -> tensor<2x8x64xf32>
  %c0 = tensor.empty() : tensor<2x8x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(b, k, d, n) -> (b, k, n)>, affine_map<(b, k, d, n) -> (b, n, d)>, affine_map<(b, k, d, n) -> (b, k, d)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%masked, %x : tensor<2x8x64xf32>, tensor<2x64x16xbf16>) outs(%c : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %bf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  %s0 = tensor.empty() : tensor<2x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#bkn, #bk], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%masked : tensor<2x8x64xf32>) outs(%sf : tensor<2x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  return %ex, %sum : tensor<2x8x16xf32>, tensor<2x8xf32>
}

// -----

// Two GEMMs write into one zero fill (the projected keys' and values'):
// each gets a fill of its own tensor.empty right before it, which its
// accumulators absorb on the tensor-core path; the shared fill goes. A
// fill that an op only reads keeps the original.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<16x8xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<16x8xf32>)
// CHECK-NEXT: %[[K:.*]] = linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F1]] : tensor<16x8xf32>)
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<16x8xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<16x8xf32>)
// CHECK-NEXT: %[[V:.*]] = linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[F2]] : tensor<16x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return %[[K]], %[[V]]
func.func @shared_fill(%x: tensor<16x32xf32>, %wk: tensor<32x8xf32>,
                       %wv: tensor<32x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %k, %v : tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// CHECK-LABEL: func.func @read_fill
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul ins(%[[F]], %arg0 : {{.*}}) outs(%[[F2]] : tensor<16x16xf32>)
func.func @read_fill(%w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = linalg.matmul ins(%f, %w : tensor<16x16xf32>, tensor<16x16xf32>)
                     outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// E X with a token bound (its token loop stops at the lengths): fusing X's
// bf16 extension into it makes a new op, which keeps the bound (the fused
// op iterates as E X did).
// CHECK-LABEL: func.func @token_bound_kept
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x8x64xf32>, tensor<2x64x16xbf16>)
// CHECK-SAME: linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>
// CHECK: arith.extf
// CHECK-NOT: linalg.generic
#id = affine_map<(b, t, j) -> (b, t, j)>
#e = affine_map<(b, i, t, j) -> (b, i, t)>
#x = affine_map<(b, i, t, j) -> (b, t, j)>
#o = affine_map<(b, i, t, j) -> (b, i, j)>
func.func @token_bound_kept(%e: tensor<2x8x64xf32>, %x: tensor<2x64x16xbf16>)
    -> tensor<2x8x16xf32> {
  %xe = tensor.empty() : tensor<2x64x16xf32>
  %xf = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x64x16xbf16>) outs(%xe : tensor<2x64x16xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %f = arith.extf %a : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<2x64x16xf32>
  %cst = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<2x8x16xf32>
  %y0 = linalg.fill ins(%cst : f32) outs(%ye : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %y = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %xf : tensor<2x8x64xf32>, tensor<2x64x16xf32>)
      outs(%y0 : tensor<2x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}
