// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-packed-sequences))' -verify-diagnostics | FileCheck %s

// A kernel of a batch of 2: its packed input is read through a tile's
// subview (folded first) and its packed output written. Sequence %s starts
// at the lengths before it (a loop to %s), computed once after %s; a load's
// row is clamped to the sequence's last real one (row 0 for an empty
// sequence; the last row and the emptiness once, with the start), a store
// only happens below the length.
// CHECK-LABEL: func.func @batch_of_two(
// CHECK-SAME: %[[X:[^:]*]]: memref<2x64x16xf32>, %[[Y:[^:]*]]: memref<2x64x16xf32>, %[[LEN:[^:]*]]: memref<2xi32>, %[[WG:[^:]*]]: index)
// CHECK-NOT: linformer.packed_sequence
// CHECK-SAME: linformer.packed_buffers = array<i64: 1, 1, 0>
// CHECK-DAG: %[[XROWS:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<2x64x16xf32> into memref<128x16xf32>
// CHECK-DAG: %[[YROWS:.*]] = memref.collapse_shape %[[Y]] {{\[\[}}0, 1], [2]] : memref<2x64x16xf32> into memref<128x16xf32>
// CHECK: %[[S:.*]]:2 = affine.delinearize_index %[[WG]]
// CHECK: %[[L32:.*]] = memref.load %[[LEN]][%[[S]]#0]
// CHECK: %[[L:.*]] = arith.index_cast %[[L32]]
// CHECK: %[[LAST:.*]] = arith.subi %[[L]], %{{.*}}
// CHECK: %[[EMPTY:.*]] = arith.cmpi slt, %[[LAST]], %{{.*}}
// CHECK: %[[START:.*]] = scf.for %{{.*}} = %{{.*}} to %[[S]]#0 step %{{.*}} iter_args
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[MIN:.*]] = arith.minsi %{{.*}}, %[[LAST]]
// CHECK: %[[IN:.*]] = arith.addi %[[START]], %[[MIN]]
// CHECK: %[[ROW:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[IN]]
// CHECK: %[[V:.*]] = vector.load %[[XROWS]][%[[ROW]], %{{.*}}] : memref<128x16xf32>, vector<16xf32>
// CHECK: %[[REAL:.*]] = arith.cmpi slt, %{{.*}}, %[[L]]
// CHECK: scf.if %[[REAL]] {
// CHECK:   %[[OUT:.*]] = arith.addi %[[START]], %{{.*}}
// CHECK:   vector.transfer_write %{{.*}}, %[[YROWS]][%[[OUT]], %{{.*}}] {in_bounds = [true]} : vector<16xf32>, memref<128x16xf32>
// CHECK: }
func.func @batch_of_two(%x: memref<2x64x16xf32> {linformer.packed_sequence},
    %y: memref<2x64x16xf32> {linformer.packed_sequence},
    %len: memref<2xi32> {linformer.lengths}, %wg: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %ids:2 = affine.delinearize_index %wg into (2, 2) : index, index
  %r0 = arith.muli %ids#1, %c32 : index
  %tile = memref.subview %x[%ids#0, %r0, 0] [1, 32, 16] [1, 1, 1]
      : memref<2x64x16xf32> to memref<1x32x16xf32, strided<[1024, 16, 1], offset: ?>>
  scf.for %i = %c0 to %c32 step %c1 {
    %v = vector.load %tile[%c0, %i, %c0]
        : memref<1x32x16xf32, strided<[1024, 16, 1], offset: ?>>, vector<16xf32>
    %r = arith.addi %r0, %i : index
    vector.transfer_write %v, %y[%ids#0, %r, %c0] {in_bounds = [true]}
        : vector<16xf32>, memref<2x64x16xf32>
  }
  return
}

// -----

// A batch of one: the sequence starts at row 0, and its length is loaded
// once at the entry, whatever constant 0 each access had. A bf16 store's
// conversion of a tile moves into the guard, per row: a bf16 vector live
// across blocks would cost a libgcc call without AVX512_BF16.
// CHECK-LABEL: func.func @batch_of_one(
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<1xi32>
// CHECK-NOT: memref.load %{{.*}} : memref<1xi32>
// CHECK: scf.if
// CHECK-NEXT: vector.extract %{{.*}}[0] : vector<16xf32> from vector<2x16xf32>
// CHECK-NEXT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %{{.*}} : memref<64x16xbf16>, vector<16xbf16>
// CHECK: scf.if
// CHECK-NEXT: vector.extract %{{.*}}[1] : vector<16xf32> from vector<2x16xf32>
// CHECK-NEXT: arith.truncf
// CHECK: vector.store
func.func @batch_of_one(%y: memref<1x64x16xbf16> {linformer.packed_sequence},
    %len: memref<1xi32> {linformer.lengths}, %wg: index, %t: vector<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c0b = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = arith.truncf %t : vector<2x16xf32> to vector<2x16xbf16>
  %b0 = vector.extract %b[0] : vector<16xbf16> from vector<2x16xbf16>
  %b1 = vector.extract %b[1] : vector<16xbf16> from vector<2x16xbf16>
  vector.store %b0, %y[%c0, %wg, %c0] : memref<1x64x16xbf16>, vector<16xbf16>
  %r1 = arith.addi %wg, %c1 : index
  vector.store %b1, %y[%c0b, %r1, %c0] : memref<1x64x16xbf16>, vector<16xbf16>
  return
}

// -----

// expected-error @+1 {{has packed sequence arguments (linformer.packed_sequence) but no i32 [b] argument marked linformer.lengths to find them with}}
func.func @no_lengths(%x: memref<2x64x16xf32> {linformer.packed_sequence},
    %wg: index) {
  return
}

// -----

// expected-error @+1 {{packed sequence argument 0 has type 'memref<2x64xf32>'; expected a static [b, n, ...] memref (rank 3 or more, identity layout) with the lengths' b = 2}}
func.func @rank_two(%x: memref<2x64xf32> {linformer.packed_sequence},
    %len: memref<2xi32> {linformer.lengths}, %wg: index) {
  return
}

// -----

// A vector along the tokens would span two sequences' rows.
func.func @vector_along_tokens(%x: memref<2x64x16xf32> {linformer.packed_sequence},
    %len: memref<2xi32> {linformer.lengths}, %wg: index) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %p = arith.constant 0.0 : f32
  // expected-error @+1 {{transfers a vector along the batch or the tokens of packed sequence argument 0; packed sequences take vectors along their inner dimensions only}}
  %v = vector.transfer_read %x[%c0, %wg, %c0], %p {permutation_map = affine_map<(d0, d1, d2) -> (d1)>}
      : memref<2x64x16xf32>, vector<8xf32>
  return %v : vector<8xf32>
}

// -----

// A copy of the buffer has no row to rewrite.
func.func @copied(%x: memref<2x64x16xf32> {linformer.packed_sequence},
    %len: memref<2xi32> {linformer.lengths}, %wg: index,
    %to: memref<2x64x16xf32>) {
  // expected-error @+1 {{uses packed sequence argument 0 of kernel @copied in a way linformer-packed-sequences cannot index (only loads and stores of it, directly or through views that fold into them)}}
  memref.copy %x, %to : memref<2x64x16xf32> to memref<2x64x16xf32>
  return
}

// -----

// A register tile's whole rows stored (and read back) as one vector through
// a collapsed view of the tile (5 rows of 24 as vector<120xf32>): it spans
// tokens, and once packed the rows past a sequence's length are the next
// sequence's first rows. Each access becomes one a row, each guarded (the
// store) or clamped (the load) on its own row. Found by the randomized
// test: a 5 x 64 tile of the output projection over a whole batch wrote
// rows past a length of 127 over the next sequence's first four.
// CHECK-LABEL: func.func @whole_rows(
// CHECK-NOT: vector<120xf32>, memref
// CHECK-COUNT-5: vector.load %{{.*}} : memref<384x24xf32>, vector<24xf32>
// CHECK-NOT: vector<120xf32>, memref
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<384x24xf32>, vector<24xf32>
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<384x24xf32>, vector<24xf32>
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<384x24xf32>, vector<24xf32>
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<384x24xf32>, vector<24xf32>
// CHECK: scf.if
// CHECK: vector.store %{{.*}} : memref<384x24xf32>, vector<24xf32>
// CHECK-NOT: scf.if
// CHECK: return
func.func @whole_rows(%y: memref<3x128x24xf32> {linformer.packed_sequence},
    %len: memref<3xi32> {linformer.lengths}, %s: index, %r: index) {
  %c0 = arith.constant 0 : index
  %tile = memref.subview %y[%s, %r, 0] [1, 5, 24] [1, 1, 1]
      : memref<3x128x24xf32> to memref<1x5x24xf32, strided<[3072, 24, 1], offset: ?>>
  %flat = memref.collapse_shape %tile [[0], [1, 2]]
      : memref<1x5x24xf32, strided<[3072, 24, 1], offset: ?>> into memref<1x120xf32, strided<[3072, 1], offset: ?>>
  %v = vector.load %flat[%c0, %c0] : memref<1x120xf32, strided<[3072, 1], offset: ?>>, vector<120xf32>
  %w = arith.addf %v, %v : vector<120xf32>
  vector.store %w, %flat[%c0, %c0] : memref<1x120xf32, strided<[3072, 1], offset: ?>>, vector<120xf32>
  return
}

// -----

// Past the end of a row from another column: no split, refused by name.
func.func @past_the_row(%y: memref<2x64x16xf32> {linformer.packed_sequence},
    %len: memref<2xi32> {linformer.lengths}, %s: index, %r: index) {
  %c8 = arith.constant 8 : index
  %v = arith.constant dense<1.0> : vector<16xf32>
  // expected-error @+1 {{accesses 16 elements of packed sequence argument 0 from one index, past the end of its row of 16}}
  vector.store %v, %y[%s, %r, %c8] : memref<2x64x16xf32>, vector<16xf32>
  return
}
