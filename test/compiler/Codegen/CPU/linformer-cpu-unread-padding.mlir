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
