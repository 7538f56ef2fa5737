// RUN: linformer-opt %s --split-input-file --linformer-hoist-in-kernels | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-hoist-in-kernels --canonicalize --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// A 20-wide output row split by register tiling into 16 + 4 lanes, both
// initialized from the bias and accumulated over a reduction loop. Subset
// hoisting lifts the accumulators out of the loop; the 16-wide read then
// follows the 4-wide init write, which it does not overlap: the pass
// forwards the bias stored before it, and bufferization needs no copy of the
// output row (a copy of a kernel's output is what linformer-packed-sequences
// refuses to index).

// CHECK-LABEL: func.func @split_row
//       CHECK:   %[[B16:.+]] = vector.broadcast %{{.+}} : vector<16xf32> to vector<1x16xf32>
//       CHECK:   scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[B16]]
// BUF-LABEL: func.func @split_row
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return
func.func @split_row(%bias: tensor<20xf32>, %w: tensor<4x20xf32>, %x: tensor<4xf32>,
                     %out: tensor<1x20xf32>) -> tensor<1x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %b16 = vector.transfer_read %bias[%c0], %pad {in_bounds = [true]} : tensor<20xf32>, vector<16xf32>
  %b16v = vector.broadcast %b16 : vector<16xf32> to vector<1x16xf32>
  %o1 = vector.transfer_write %b16v, %out[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x20xf32>
  %b4 = vector.transfer_read %bias[%c16], %pad {in_bounds = [true]} : tensor<20xf32>, vector<4xf32>
  %b4v = vector.broadcast %b4 : vector<4xf32> to vector<1x4xf32>
  %o2 = vector.transfer_write %b4v, %o1[%c0, %c16] {in_bounds = [true, true]} : vector<1x4xf32>, tensor<1x20xf32>
  // The reduction, tiled by 2: each tile steps the 16 lanes, then the 4.
  %r = scf.for %t = %c0 to %c4 step %c2 iter_args(%row = %o2) -> (tensor<1x20xf32>) {
    %r1 = scf.for %j = %c0 to %c2 step %c1 iter_args(%acc = %row) -> (tensor<1x20xf32>) {
      %k = arith.addi %t, %j : index
      %xs = vector.transfer_read %x[%k], %pad {in_bounds = [true]} : tensor<4xf32>, vector<1xf32>
      %xb = vector.broadcast %xs : vector<1xf32> to vector<1x16xf32>
      %wv = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true, true]} : tensor<4x20xf32>, vector<1x16xf32>
      %a = vector.transfer_read %acc[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<1x20xf32>, vector<1x16xf32>
      %f = vector.fma %xb, %wv, %a : vector<1x16xf32>
      %n = vector.transfer_write %f, %acc[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x20xf32>
      scf.yield %n : tensor<1x20xf32>
    }
    %r2 = scf.for %j = %c0 to %c2 step %c1 iter_args(%acc = %r1) -> (tensor<1x20xf32>) {
      %k = arith.addi %t, %j : index
      %xs = vector.transfer_read %x[%k], %pad {in_bounds = [true]} : tensor<4xf32>, vector<1xf32>
      %xb = vector.broadcast %xs : vector<1xf32> to vector<1x4xf32>
      %wv = vector.transfer_read %w[%k, %c16], %pad {in_bounds = [true, true]} : tensor<4x20xf32>, vector<1x4xf32>
      %a = vector.transfer_read %acc[%c0, %c16], %pad {in_bounds = [true, true]} : tensor<1x20xf32>, vector<1x4xf32>
      %f = vector.fma %xb, %wv, %a : vector<1x4xf32>
      %n = vector.transfer_write %f, %acc[%c0, %c16] {in_bounds = [true, true]} : vector<1x4xf32>, tensor<1x20xf32>
      scf.yield %n : tensor<1x20xf32>
    }
    scf.yield %r2 : tensor<1x20xf32>
  }
  return %r : tensor<1x20xf32>
}

// -----

// The 4-wide write overlaps the 16-wide read (lanes 12-15): the read stays.

// CHECK-LABEL: func.func @overlap
//       CHECK:   %[[W4:.+]] = vector.transfer_write %{{.+}}, %{{.+}}[%c0, %c12] {{.+}} : vector<1x4xf32>, tensor<1x20xf32>
//       CHECK:   %[[A:.+]] = vector.transfer_read %[[W4]][%c0, %c0]{{.+}} : tensor<1x20xf32>, vector<1x16xf32>
//       CHECK:   scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[A]])
func.func @overlap(%bias: tensor<20xf32>, %w: tensor<5x20xf32>, %x: tensor<5xf32>,
                   %out: tensor<1x20xf32>) -> tensor<1x20xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c12 = arith.constant 12 : index
  %pad = arith.constant 0.0 : f32
  %b16 = vector.transfer_read %bias[%c0], %pad {in_bounds = [true]} : tensor<20xf32>, vector<16xf32>
  %b16v = vector.broadcast %b16 : vector<16xf32> to vector<1x16xf32>
  %o1 = vector.transfer_write %b16v, %out[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x20xf32>
  %b4 = vector.transfer_read %bias[%c12], %pad {in_bounds = [true]} : tensor<20xf32>, vector<4xf32>
  %b4v = vector.broadcast %b4 : vector<4xf32> to vector<1x4xf32>
  %o2 = vector.transfer_write %b4v, %o1[%c0, %c12] {in_bounds = [true, true]} : vector<1x4xf32>, tensor<1x20xf32>
  %r1 = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %o2) -> (tensor<1x20xf32>) {
    %xs = vector.transfer_read %x[%k], %pad {in_bounds = [true]} : tensor<5xf32>, vector<1xf32>
    %xb = vector.broadcast %xs : vector<1xf32> to vector<1x16xf32>
    %wv = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true, true]} : tensor<5x20xf32>, vector<1x16xf32>
    %a = vector.transfer_read %acc[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<1x20xf32>, vector<1x16xf32>
    %f = vector.fma %xb, %wv, %a : vector<1x16xf32>
    %n = vector.transfer_write %f, %acc[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x20xf32>
    scf.yield %n : tensor<1x20xf32>
  }
  return %r1 : tensor<1x20xf32>
}

// -----

// A dynamic column proves nothing: the read stays.

// CHECK-LABEL: func.func @dynamic
//       CHECK:   %[[W4:.+]] = vector.transfer_write %{{.+}}, %{{.+}}[%c0, %arg2] {{.+}} : vector<1x4xf32>, tensor<1x20xf32>
//       CHECK:   vector.transfer_read %[[W4]][%c0, %c0]{{.+}} : tensor<1x20xf32>, vector<1x16xf32>
func.func @dynamic(%bias: tensor<20xf32>, %out: tensor<1x20xf32>, %col: index) -> vector<1x16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %b16 = vector.transfer_read %bias[%c0], %pad {in_bounds = [true]} : tensor<20xf32>, vector<16xf32>
  %b16v = vector.broadcast %b16 : vector<16xf32> to vector<1x16xf32>
  %o1 = vector.transfer_write %b16v, %out[%c0, %c0] {in_bounds = [true, true]} : vector<1x16xf32>, tensor<1x20xf32>
  %b4 = vector.transfer_read %bias[%c0], %pad {in_bounds = [true]} : tensor<20xf32>, vector<4xf32>
  %b4v = vector.broadcast %b4 : vector<4xf32> to vector<1x4xf32>
  %o2 = vector.transfer_write %b4v, %o1[%c0, %col] {in_bounds = [true, true]} : vector<1x4xf32>, tensor<1x20xf32>
  %a = vector.transfer_read %o2[%c0, %c0], %pad {in_bounds = [true, true]} : tensor<1x20xf32>, vector<1x16xf32>
  return %a : vector<1x16xf32>
}
