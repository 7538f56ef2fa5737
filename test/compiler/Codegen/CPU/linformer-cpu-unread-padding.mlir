// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-and-fuse | FileCheck %s

// E' (E with the columns of padded tokens zeroed) is marked
// linformer.unread_padding = [batch dim, token dim]: its one reader, E X,
// stops at each sequence's length (linformer.token_bound). Its workgroups
// then tile its tokens (16 tiles of at least 32 tokens) and carry a length rule, so the runtime
// skips the tiles past the lengths: E' costs a short run about its length.
// CHECK-LABEL: func.func @bounded_reader(
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (2, 8, 512) step (1, 8, 32)
// CHECK: arith.select
// CHECK: } {linformer.root, linformer.token_rows = array<i64: 0, 2, 32>
// CHECK: linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>
// CHECK: } {linformer.root, mapping
#ein = affine_map<(b, j, t) -> (j, t)>
#vin = affine_map<(b, j, t) -> (b, t)>
#eout = affine_map<(b, j, t) -> (b, j, t)>
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @bounded_reader(%x: tensor<2x512x16xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %e: tensor<8x512xf32>,
    %valid: tensor<2x512xi8>) -> tensor<2x8x16xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x512xf32>
  %ep = linalg.generic {indexing_maps = [#ein, #vin, #eout],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %valid : tensor<8x512xf32>, tensor<2x512xi8>) outs(%empty : tensor<2x8x512xf32>)
      attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<2x8x512xf32>
  %e2 = tensor.empty() : tensor<2x8x16xf32>
  %init = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%ep, %x : tensor<2x8x512xf32>, tensor<2x512x16xf32>)
      outs(%init : tensor<2x8x16xf32>) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// With biases E' has a second reader, E's row sums over the real tokens.
// Their bound is `masked`: they may read past the lengths (their register
// tiles are vectors along the tokens), and their body selects those tokens
// away with the valid flags. That is a reader that stops at the lengths
// too, so E' keeps its rule. The same sums without a bound read every
// column: E' then gets no rule (the second function).
// CHECK-LABEL: func.func @masked_reader(
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (2, 8, 512) step (1, 8, 32)
// CHECK: arith.select
// CHECK: } {linformer.root, linformer.token_rows = array<i64: 0, 2, 32>
// CHECK-LABEL: func.func @unbounded_reader(
// CHECK-NOT: token_rows
// CHECK: return
#ein = affine_map<(b, j, t) -> (j, t)>
#vin = affine_map<(b, j, t) -> (b, t)>
#eout = affine_map<(b, j, t) -> (b, j, t)>
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
#sout = affine_map<(b, j, t) -> (b, j)>
func.func @masked_reader(%x: tensor<2x512x16xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %e: tensor<8x512xf32>,
    %valid: tensor<2x512xi8>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>) {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x512xf32>
  %ep = linalg.generic {indexing_maps = [#ein, #vin, #eout],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %valid : tensor<8x512xf32>, tensor<2x512xi8>) outs(%empty : tensor<2x8x512xf32>)
      attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<2x8x512xf32>
  %e2 = tensor.empty() : tensor<2x8x16xf32>
  %init = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%ep, %x : tensor<2x8x512xf32>, tensor<2x512x16xf32>)
      outs(%init : tensor<2x8x16xf32>) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  %e3 = tensor.empty() : tensor<2x8xf32>
  %sinit = linalg.fill ins(%z : f32) outs(%e3 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sums = linalg.generic {indexing_maps = [#eout, #vin, #sout],
                          iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ep, %valid : tensor<2x8x512xf32>, tensor<2x512xi8>)
      outs(%sinit : tensor<2x8xf32>) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true>} {
  ^bb0(%a: f32, %v: i8, %acc: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    %t = arith.addf %acc, %s : f32
    linalg.yield %t : f32
  } -> tensor<2x8xf32>
  return %r, %sums : tensor<2x8x16xf32>, tensor<2x8xf32>
}

func.func @unbounded_reader(%len: tensor<2xi32> {linformer.lengths},
    %e: tensor<8x512xf32>, %valid: tensor<2x512xi8>) -> tensor<2x8xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x512xf32>
  %ep = linalg.generic {indexing_maps = [#ein, #vin, #eout],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %valid : tensor<8x512xf32>, tensor<2x512xi8>) outs(%empty : tensor<2x8x512xf32>)
      attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<2x8x512xf32>
  %e3 = tensor.empty() : tensor<2x8xf32>
  %sinit = linalg.fill ins(%z : f32) outs(%e3 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sums = linalg.generic {indexing_maps = [#eout, #sout],
                          iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ep : tensor<2x8x512xf32>)
      outs(%sinit : tensor<2x8xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  } -> tensor<2x8xf32>
  return %sums : tensor<2x8xf32>
}

// -----

// A reader whose workgroups hold two sequences cannot stop at one length
// (its bound needs one sequence a workgroup): E' gets no rule, and every
// workgroup writes its tile.
// CHECK-LABEL: func.func @two_sequence_reader(
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (2, 8, 512) step (1, 8, 32)
// CHECK: arith.select
// CHECK-NOT: token_rows
// CHECK: return
#ein = affine_map<(b, j, t) -> (j, t)>
#vin = affine_map<(b, j, t) -> (b, t)>
#eout = affine_map<(b, j, t) -> (b, j, t)>
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @two_sequence_reader(%x: tensor<2x512x16xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %e: tensor<8x512xf32>,
    %valid: tensor<2x512xi8>) -> tensor<2x8x16xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x512xf32>
  %ep = linalg.generic {indexing_maps = [#ein, #vin, #eout],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %valid : tensor<8x512xf32>, tensor<2x512xi8>) outs(%empty : tensor<2x8x512xf32>)
      attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<2x8x512xf32>
  %e2 = tensor.empty() : tensor<2x8x16xf32>
  %init = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%ep, %x : tensor<2x8x512xf32>, tensor<2x512x16xf32>)
      outs(%init : tensor<2x8x16xf32>) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>, linformer.tile_sizes = array<i64: 2, 4, 0, 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// Pooled slots: the window sums of X (linformer.token_bound with parts,
// masked: token = j * 16 + r) hold windows of 16 tokens along j, and so
// does their projection. Both get a length rule whose tile counts tokens:
// a workgroup of T slots covers 16 T tokens, so the runtime skips it when
// its first window starts past the length.
// Workgroups of 8 slots: rule tiles of 128 tokens.
// CHECK-LABEL: func.func @pooled_slots(
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 32) step (1, 8)
// CHECK: linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, part = 1, per_part = 16, masked = true>
// CHECK: } {linformer.root, linformer.token_rows = array<i64: 0, 1, 128>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 32) step (1, 8)
// CHECK: } {linformer.root, linformer.token_rows = array<i64: 0, 1, 128>
#win = affine_map<(b, j, r, m) -> (b, j, r, m)>
#flag = affine_map<(b, j, r, m) -> (b, j, r)>
#sum = affine_map<(b, j, r, m) -> (b, j, m)>
#pin = affine_map<(b, j, c, m) -> (b, j, m)>
#pw = affine_map<(b, j, c, m) -> (m, c)>
#pout = affine_map<(b, j, c, m) -> (b, j, c)>
func.func @pooled_slots(%x: tensor<2x512x64xf32> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %valid: tensor<2x32x16xi8>,
    %w: tensor<64x64xf32>) -> tensor<2x32x64xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %windows = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 32, 16, 64]
      : tensor<2x512x64xf32> into tensor<2x32x16x64xf32>
  %e = tensor.empty() : tensor<2x32x64xf32>
  %zeros = linalg.fill ins(%z : f32) outs(%e : tensor<2x32x64xf32>) -> tensor<2x32x64xf32>
  %sums = linalg.generic {indexing_maps = [#win, #flag, #sum],
                          iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%windows, %valid : tensor<2x32x16x64xf32>, tensor<2x32x16xi8>)
      outs(%zeros : tensor<2x32x64xf32>)
      attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, part = 1, per_part = 16, masked = true>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    %t = arith.addf %out, %s : f32
    linalg.yield %t : f32
  } -> tensor<2x32x64xf32>
  %p = linalg.generic {indexing_maps = [#pin, #pw, #pout],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%sums, %w : tensor<2x32x64xf32>, tensor<64x64xf32>)
      outs(%zeros : tensor<2x32x64xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %out, %m : f32
    linalg.yield %t : f32
  } -> tensor<2x32x64xf32>
  return %p : tensor<2x32x64xf32>
}

// -----

// E' read through an elementwise op (the bf16 rounding that
// linformer-bf16-products puts before E X): its reader stops at the
// lengths, and so does the rounding (register tiling bounds it), so E'
// keeps its rule.
// CHECK-LABEL: func.func @rounded_reader(
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (2, 8, 512) step (1, 8, 32)
// CHECK: arith.select
// CHECK: } {linformer.root, linformer.token_rows = array<i64: 0, 2, 32>
// CHECK: arith.truncf
// CHECK: linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>
#ein = affine_map<(b, j, t) -> (j, t)>
#vin = affine_map<(b, j, t) -> (b, t)>
#eout = affine_map<(b, j, t) -> (b, j, t)>
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @rounded_reader(%x: tensor<2x512x16xbf16> {linformer.sequence},
    %len: tensor<2xi32> {linformer.lengths}, %e: tensor<8x512xf32>,
    %valid: tensor<2x512xi8>) -> tensor<2x8x16xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x512xf32>
  %ep = linalg.generic {indexing_maps = [#ein, #vin, #eout],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %valid : tensor<8x512xf32>, tensor<2x512xi8>) outs(%empty : tensor<2x8x512xf32>)
      attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 2>} {
  ^bb0(%a: f32, %v: i8, %out: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    linalg.yield %s : f32
  } -> tensor<2x8x512xf32>
  %be = tensor.empty() : tensor<2x8x512xbf16>
  %epr = linalg.generic {indexing_maps = [#eout, #eout],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ep : tensor<2x8x512xf32>) outs(%be : tensor<2x8x512xbf16>) {
  ^bb0(%a: f32, %out: bf16):
    %r = arith.truncf %a : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x8x512xbf16>
  %e2 = tensor.empty() : tensor<2x8x16xf32>
  %init = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%epr, %x : tensor<2x8x512xbf16>, tensor<2x512x16xbf16>)
      outs(%init : tensor<2x8x16xf32>) attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: bf16, %c: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ce = arith.extf %c : bf16 to f32
    %m = arith.mulf %ae, %ce : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}
