// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-mark-token-loops))' | FileCheck %s

// In a function with a lengths argument, the ops whose results hold the
// sequence argument's tokens are marked with their (batch, token) loops:
// an elementwise op keeps them (loops 0, 1), a projection keeps them where
// its batch and token loops are (here 0 and 1 of (b, n, e, d)), and a
// reduction over the tokens (E X) ends them.
#id = affine_map<(b, n, d) -> (b, n, d)>
#x = affine_map<(b, n, e, d) -> (b, n, d)>
#w = affine_map<(b, n, e, d) -> (d, e)>
#y = affine_map<(b, n, e, d) -> (b, n, e)>
#ex_e = affine_map<(b, j, d, n) -> (j, n)>
#ex_x = affine_map<(b, j, d, n) -> (b, n, d)>
#ex_o = affine_map<(b, j, d, n) -> (b, j, d)>
// CHECK-LABEL: func.func @tokens
func.func @tokens(%x: tensor<2x64x8xf32> {linformer.sequence},
                  %len: tensor<2xi32> {linformer.lengths},
                  %w: tensor<8x16xf32>, %e: tensor<4x64xf32>)
    -> (tensor<2x64x16xf32>, tensor<2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  // CHECK: linalg.generic
  // CHECK-SAME: linformer.token_loops = array<i64: 0, 1>
  %init = tensor.empty() : tensor<2x64x8xf32>
  %gelu = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x64x8xf32>) outs(%init : tensor<2x64x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x64x8xf32>
  // CHECK: linalg.fill
  // CHECK-NOT: token_loops
  // CHECK: linalg.generic
  // CHECK-SAME: linformer.token_loops = array<i64: 0, 1>
  %yinit = tensor.empty() : tensor<2x64x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%yinit : tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%gelu, %w : tensor<2x64x8xf32>, tensor<8x16xf32>)
      outs(%yz : tensor<2x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x64x16xf32>
  // CHECK: linalg.generic
  // CHECK-NOT: token_loops
  // CHECK: return
  %einit = tensor.empty() : tensor<2x4x8xf32>
  %ez = linalg.fill ins(%zero : f32) outs(%einit : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ex = linalg.generic {indexing_maps = [#ex_e, #ex_x, #ex_o],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %gelu : tensor<4x64xf32>, tensor<2x64x8xf32>)
      outs(%ez : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  return %y, %ex : tensor<2x64x16xf32>, tensor<2x4x8xf32>
}

// Without a lengths argument the runtime cannot skip anything: no marks.
// CHECK-LABEL: func.func @no_lengths
// CHECK-NOT: token_loops
func.func @no_lengths(%x: tensor<2x64x8xf32> {linformer.sequence}) -> tensor<2x64x8xf32> {
  %init = tensor.empty() : tensor<2x64x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x64x8xf32>) outs(%init : tensor<2x64x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x64x8xf32>
  return %r : tensor<2x64x8xf32>
}

// Pooled slots (windows of 4 tokens, 128 slots covering n = 512) that only
// a fused attention core reads, as keys and values, stopping at the slots
// that can be valid (its token bound's per_step is their window): the
// window sums and the op that spreads them over the heads get their token
// loops and `linformer.cuda_slot_rows` [tokens a slot, slots a granule].
// The core walks the slots 16 to 64 at a time, within granules of 64 (the
// largest of 64, 32, 16 dividing k = 128), so the slots' length rules
// launch whole granules.
#win = affine_map<(b, j, r, c) -> (b, j, r, c)>
#flag = affine_map<(b, j, r, c) -> (b, j, r)>
#sum = affine_map<(b, j, r, c) -> (b, j, c)>
#sp_in = affine_map<(b, h, j, c) -> (b, j, c)>
#sp_out = affine_map<(b, h, j, c) -> (b, h, j, c)>
// CHECK-LABEL: func.func @slots
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_slot_rows = array<i64: 4, 64>
// CHECK-SAME: linformer.token_loops = array<i64: 0, 1>
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_slot_rows = array<i64: 4, 64>
// CHECK-SAME: linformer.token_loops = array<i64: 0, 2>
// CHECK: linformer.attention_core
func.func @slots(%x: tensor<2x512x16xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %valid: tensor<2x128x4xi8>,
    %q: tensor<2x1x64x16xf32>, %m: tensor<2x128xi8>) -> tensor<2x1x64x16xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %windows = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 128, 4, 16]
      : tensor<2x512x16xf32> into tensor<2x128x4x16xf32>
  %e = tensor.empty() : tensor<2x128x16xf32>
  %zeros = linalg.fill ins(%z : f32) outs(%e : tensor<2x128x16xf32>) -> tensor<2x128x16xf32>
  %sums = linalg.generic {indexing_maps = [#win, #flag, #sum],
                          iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%windows, %valid : tensor<2x128x4x16xf32>, tensor<2x128x4xi8>)
      outs(%zeros : tensor<2x128x16xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, part = 1, per_part = 4, masked = true>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    %t = arith.addf %out, %s : f32
    linalg.yield %t : f32
  } -> tensor<2x128x16xf32>
  %se = tensor.empty() : tensor<2x1x128x16xf32>
  %kv = linalg.generic {indexing_maps = [#sp_in, #sp_out],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sums : tensor<2x128x16xf32>) outs(%se : tensor<2x1x128x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<2x1x128x16xf32>
  %init = tensor.empty() : tensor<2x1x64x16xf32>
  %o = linformer.attention_core %q, %kv, %kv scale(0.25) key_mask(%m)
         outs(%init) {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
         : (tensor<2x1x64x16xf32>, tensor<2x1x128x16xf32>, tensor<2x1x128x16xf32>,
            tensor<2x128xi8>, tensor<2x1x64x16xf32>) -> tensor<2x1x64x16xf32>
  return %o : tensor<2x1x64x16xf32>
}

// The window sums also returned (a reader that takes every slot): no rule
// may skip any of them; the op after them still feeds the core alone.
// CHECK-LABEL: func.func @slots_read_elsewhere
// CHECK: linalg.generic
// CHECK-SAME: attrs = {linformer.token_bound = #linformer.token_bound<{{[^>]*}}>} {
// CHECK: linalg.generic
// CHECK-SAME: linformer.cuda_slot_rows = array<i64: 4, 64>
// CHECK-SAME: linformer.token_loops = array<i64: 0, 2>
// CHECK: return
func.func @slots_read_elsewhere(%x: tensor<2x512x16xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %valid: tensor<2x128x4xi8>,
    %q: tensor<2x1x64x16xf32>, %m: tensor<2x128xi8>) -> (tensor<2x1x64x16xf32>, tensor<2x128x16xf32>) {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %windows = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 128, 4, 16]
      : tensor<2x512x16xf32> into tensor<2x128x4x16xf32>
  %e = tensor.empty() : tensor<2x128x16xf32>
  %zeros = linalg.fill ins(%z : f32) outs(%e : tensor<2x128x16xf32>) -> tensor<2x128x16xf32>
  %sums = linalg.generic {indexing_maps = [#win, #flag, #sum],
                          iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%windows, %valid : tensor<2x128x4x16xf32>, tensor<2x128x4xi8>)
      outs(%zeros : tensor<2x128x16xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, part = 1, per_part = 4, masked = true>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    %t = arith.addf %out, %s : f32
    linalg.yield %t : f32
  } -> tensor<2x128x16xf32>
  %se = tensor.empty() : tensor<2x1x128x16xf32>
  %kv = linalg.generic {indexing_maps = [#sp_in, #sp_out],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sums : tensor<2x128x16xf32>) outs(%se : tensor<2x1x128x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<2x1x128x16xf32>
  %init = tensor.empty() : tensor<2x1x64x16xf32>
  %o = linformer.attention_core %q, %kv, %kv scale(0.25) key_mask(%m)
         outs(%init) {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
         : (tensor<2x1x64x16xf32>, tensor<2x1x128x16xf32>, tensor<2x1x128x16xf32>,
            tensor<2x128xi8>, tensor<2x1x64x16xf32>) -> tensor<2x1x64x16xf32>
  return %o, %sums : tensor<2x1x64x16xf32>, tensor<2x128x16xf32>
}

// A core without the bound reads every slot: no marks either.
// CHECK-LABEL: func.func @slots_core_reads_all
// CHECK-NOT: token_loops
// CHECK-NOT: cuda_slot_rows
// CHECK: return
func.func @slots_core_reads_all(%x: tensor<2x512x16xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %valid: tensor<2x128x4xi8>,
    %q: tensor<2x1x64x16xf32>, %m: tensor<2x128xi8>) -> tensor<2x1x64x16xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %windows = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 128, 4, 16]
      : tensor<2x512x16xf32> into tensor<2x128x4x16xf32>
  %e = tensor.empty() : tensor<2x128x16xf32>
  %zeros = linalg.fill ins(%z : f32) outs(%e : tensor<2x128x16xf32>) -> tensor<2x128x16xf32>
  %sums = linalg.generic {indexing_maps = [#win, #flag, #sum],
                          iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%windows, %valid : tensor<2x128x4x16xf32>, tensor<2x128x4xi8>)
      outs(%zeros : tensor<2x128x16xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, part = 1, per_part = 4, masked = true>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    %t = arith.addf %out, %s : f32
    linalg.yield %t : f32
  } -> tensor<2x128x16xf32>
  %se = tensor.empty() : tensor<2x1x128x16xf32>
  %kv = linalg.generic {indexing_maps = [#sp_in, #sp_out],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sums : tensor<2x128x16xf32>) outs(%se : tensor<2x1x128x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<2x1x128x16xf32>
  %init = tensor.empty() : tensor<2x1x64x16xf32>
  %o = linformer.attention_core %q, %kv, %kv scale(0.25) key_mask(%m)
         outs(%init)
         : (tensor<2x1x64x16xf32>, tensor<2x1x128x16xf32>, tensor<2x1x128x16xf32>,
            tensor<2x128xi8>, tensor<2x1x64x16xf32>) -> tensor<2x1x64x16xf32>
  return %o : tensor<2x1x64x16xf32>
}
