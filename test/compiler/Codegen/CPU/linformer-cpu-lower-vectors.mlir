// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors | FileCheck %s

// Vector ops after bufferization, lowered to what LLVM handles well on
// CPUs: a contraction becomes one FMA per output row (a broadcast scalar of
// the left operand times the right operand's row, plus the accumulator
// row), leading unit dimensions are cast away, row reductions become
// vector.reduction, transposes become shuffles, and in-bounds 1-D transfers
// plain loads and stores. (The polynomial approximation of math.exp is
// tested in linformer-cpu-lower-vectors-exp.mlir.)

// One outer-product step of S = Q K^T on a register tile: 8 rows x 16.
// The 8 broadcast elements of Q are contiguous, read as one vector; each
// is read on its own instead (x86: a broadcast from memory, a load, where
// extracting from the vector takes shuffles that compete with the FMAs).
// CHECK-LABEL: func.func @contract(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x1x8x1xf32>, %[[K:[a-z0-9]+]]: memref<1x1x1x16xf32>, %[[S:[a-z0-9]+]]: memref<1x1x8x16xf32>)
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.transfer_read %[[Q]]
// CHECK-DAG: %[[VK:.*]] = vector.load %[[K]]{{.*}} : memref<1x1x1x16xf32>, vector<16xf32>
// CHECK-DAG: %[[VS:.*]] = vector.transfer_read %[[S]]{{.*}} : memref<1x1x8x16xf32>, vector<8x16xf32>
// Row 0:
// CHECK: %[[ACC0:.*]] = vector.extract %[[VS]][0] : vector<16xf32> from vector<8x16xf32>
// CHECK: %[[Q0:.*]] = memref.load %[[Q]][%[[Z:.*]], %[[Z]], %[[Z]], %[[Z]]] : memref<1x1x8x1xf32>
// CHECK: %[[B0:.*]] = vector.broadcast %[[Q0]] : f32 to vector<16xf32>
// CHECK: %[[F0:.*]] = vector.fma %[[VK]], %[[B0]], %[[ACC0]] : vector<16xf32>
// CHECK: %[[R0:.*]] = vector.insert %[[F0]], %{{.*}} [0] : vector<16xf32> into vector<8x16xf32>
// Rows 1 to 7 the same way, row 7's element read at [0, 0, 7, 0]:
// CHECK-COUNT-6: vector.fma %[[VK]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: memref.load %[[Q]][%[[Z]], %[[Z]], %[[C7:.*]], %[[Z]]] : memref<1x1x8x1xf32>
// CHECK: vector.fma %[[VK]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: %[[R7:.*]] = vector.insert %{{.*}}, %{{.*}} [7] : vector<16xf32> into vector<8x16xf32>
// CHECK: vector.transfer_write %[[R7]], %[[S]]{{.*}} : vector<8x16xf32>, memref<1x1x8x16xf32>
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.outerproduct
// CHECK: return
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @contract(%q: memref<1x1x8x1xf32>, %k: memref<1x1x1x16xf32>,
    %s: memref<1x1x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %va = vector.transfer_read %q[%c0, %c0, %c0, %c0], %p
          {in_bounds = [true, true, true, true]}
          : memref<1x1x8x1xf32>, vector<1x1x8x1xf32>
  %vb = vector.transfer_read %k[%c0, %c0, %c0, %c0], %p
          {in_bounds = [true, true, true, true]}
          : memref<1x1x1x16xf32>, vector<1x1x1x16xf32>
  %vc = vector.transfer_read %s[%c0, %c0, %c0, %c0], %p
          {in_bounds = [true, true, true, true]}
          : memref<1x1x8x16xf32>, vector<1x1x8x16xf32>
  %r = vector.contract {indexing_maps = [#a, #b, #c],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %va, %vb, %vc
         : vector<1x1x8x1xf32>, vector<1x1x1x16xf32> into vector<1x1x8x16xf32>
  vector.transfer_write %r, %s[%c0, %c0, %c0, %c0]
    {in_bounds = [true, true, true, true]}
    : vector<1x1x8x16xf32>, memref<1x1x8x16xf32>
  return
}

// -----

// A plain 2-D matmul tile (m = 4, n = 8, k = 2): one FMA per (row, k).
// CHECK-LABEL: func.func @contract_2d(
// CHECK-NOT: vector.contract
// CHECK-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: vector.fma
// CHECK-NOT: vector.contract
// CHECK: return
func.func @contract_2d(%a: vector<4x2xf32>, %b: vector<2x8xf32>,
    %c: vector<4x8xf32>) -> vector<4x8xf32> {
  %r = vector.contract {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                         affine_map<(i, j, k) -> (k, j)>,
                                         affine_map<(i, j, k) -> (i, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"],
                        kind = #vector.kind<add>} %a, %b, %c
         : vector<4x2xf32>, vector<2x8xf32> into vector<4x8xf32>
  return %r : vector<4x8xf32>
}

// -----

// A softmax row maximum: one horizontal reduction of the row, with plain
// loads and stores for the (unit-dimension) transfers; the one-element
// result is stored as the scalar it is.
// CHECK-LABEL: func.func @row_max(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x1x1x16xf32>, %[[M:[a-z0-9]+]]: memref<1x1x1xf32>)
// CHECK-NOT: vector.multi_reduction
// CHECK-NOT: vector.transfer_
// CHECK-DAG: %[[ROW:.*]] = vector.load %[[X]]{{.*}} : memref<1x1x1x16xf32>, vector<16xf32>
// CHECK-DAG: %[[ACC:.*]] = vector.load %[[M]]{{.*}} : memref<1x1x1xf32>, vector<1xf32>
// CHECK: %[[A:.*]] = vector.extract %[[ACC]][0] : f32 from vector<1xf32>
// CHECK: %[[R:.*]] = vector.reduction <maxnumf>, %[[ROW]], %[[A]] : vector<16xf32> into f32
// CHECK: memref.store %[[R]], %[[M]]{{.*}} : memref<1x1x1xf32>
// CHECK-NOT: vector.multi_reduction
func.func @row_max(%x: memref<1x1x1x16xf32>, %m: memref<1x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %v = vector.transfer_read %x[%c0, %c0, %c0, %c0], %p
         {in_bounds = [true, true, true, true]}
         : memref<1x1x1x16xf32>, vector<1x1x1x16xf32>
  %a = vector.transfer_read %m[%c0, %c0, %c0], %p {in_bounds = [true, true, true]}
         : memref<1x1x1xf32>, vector<1x1x1xf32>
  %r = vector.multi_reduction <maxnumf>, %v, %a [3]
         : vector<1x1x1x16xf32> to vector<1x1x1xf32>
  vector.transfer_write %r, %m[%c0, %c0, %c0] {in_bounds = [true, true, true]}
    : vector<1x1x1xf32>, memref<1x1x1xf32>
  return
}

// -----

// The row maximum broadcast along its row (exp(L - m)): broadcast and
// transpose become 1-D shuffles.
// CHECK-LABEL: func.func @broadcast_transpose(
// CHECK-NOT: vector.transpose
// CHECK: vector.shuffle
// CHECK-NOT: vector.transpose
// CHECK: return
func.func @broadcast_transpose(%m: vector<8xf32>) -> vector<8x16xf32> {
  %b = vector.broadcast %m : vector<8xf32> to vector<16x8xf32>
  %t = vector.transpose %b, [1, 0] : vector<16x8xf32> to vector<8x16xf32>
  return %t : vector<8x16xf32>
}

// -----

// The transposed softmax's maximum over keys (S^T[j, i]: the keys j in a
// loop, the queries i in the vector) is an elementwise maximumf: marked nsz
// (the sign of a zero maximum changes nothing; on x86 it saves the blends
// that order -0 below +0), its NaN propagation kept. So is a minimum.
// CHECK-LABEL: func.func @column_max(
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : vector<8xf32>
// CHECK: arith.minimumf %{{.*}}, %{{.*}} fastmath<nsz> : vector<8xf32>
// A scalar one is left alone.
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: return
func.func @column_max(%acc: vector<8xf32>, %s: vector<8xf32>, %a: f32, %b: f32)
    -> (vector<8xf32>, vector<8xf32>, f32) {
  %m = arith.maximumf %acc, %s : vector<8xf32>
  %n = arith.minimumf %acc, %s : vector<8xf32>
  %x = arith.maximumf %a, %b : f32
  return %m, %n, %x : vector<8xf32>, vector<8xf32>, f32
}

// -----

// An 8 x 8 block of a transpose (the attention core's Q^T, tiled so by
// linformer-cpu-tile-for-vectors) on a target with 256-bit vectors:
// upstream's AVX2 sequence, unpacks and shuffles within 128-bit lanes, four
// pairs of blends (inline vblendps, which LLVM would otherwise fold into
// slower shuffles) and 128-bit permutes, 24 instructions for the 8 rows.
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @transpose8x8_avx2(
// CHECK-NOT: vector.transpose
// CHECK-COUNT-8: vector.shuffle %{{.*}}, %{{.*}} [{{0, 8, 1, 9, 4, 12, 5, 13|2, 10, 3, 11, 6, 14, 7, 15}}]
// CHECK-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [2, 3, 8, 9, 6, 7, 12, 13]
// CHECK-COUNT-8: llvm.inline_asm asm_dialect = intel "vblendps $0, $1, $2, {{0xcc|0x33}}"
// CHECK-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [4, 5, 6, 7, 12, 13, 14, 15]
// CHECK-NOT: vector.transpose
// CHECK: return
func.func @transpose8x8_avx2(%m: memref<8x8xf32>) -> vector<8x8xf32> {
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %v = vector.transfer_read %m[%c0, %c0], %p {in_bounds = [true, true]}
      : memref<8x8xf32>, vector<8x8xf32>
  %t = vector.transpose %v, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
  return %t : vector<8x8xf32>
}
}

// -----

// With 512-bit vectors a 16 x 16 block (linformer-cpu-tile-for-vectors'
// blocks there): upstream's AVX-512 sequence, 16 unpacks of 32-bit and 16
// of 64-bit elements, then 32 shuffles of 128-bit lanes, 64 instructions
// for the 16 rows (the AVX2 sequence's 8 x 8 blocks take 96 for as many
// elements); none of the AVX2 sequence's blends.
module attributes {linformer.target = #linformer.cpu_target<cpu = "sapphirerapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @transpose16x16_avx512(
// CHECK-NOT: vector.transpose
// CHECK-NOT: llvm.inline_asm
// CHECK-COUNT-16: vector.shuffle %{{.*}}, %{{.*}} [{{0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29|2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31}}] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.shuffle %{{.*}}, %{{.*}} [{{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29|2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31}}] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-32: vector.shuffle %{{.*}}, %{{.*}} [{{.*}}] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.shuffle
// CHECK-NOT: llvm.inline_asm
// CHECK: return
func.func @transpose16x16_avx512(%m: memref<16x16xf32>) -> vector<16x16xf32> {
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %v = vector.transfer_read %m[%c0, %c0], %p {in_bounds = [true, true]}
      : memref<16x16xf32>, vector<16x16xf32>
  %t = vector.transpose %v, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %t : vector<16x16xf32>
}
}

// -----

// Without 256-bit vectors (an SSE target) the same block is 1-D shuffles,
// no AVX instruction.
module attributes {linformer.target = #linformer.cpu_target<cpu = "x86-64",
    features = "+sse2", isa = "sse", vector_bits = 128,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @transpose8x8_sse(
// CHECK-NOT: llvm.inline_asm
// CHECK: vector.shuffle
// CHECK-NOT: llvm.inline_asm
// CHECK: return
func.func @transpose8x8_sse(%m: memref<8x8xf32>) -> vector<8x8xf32> {
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %v = vector.transfer_read %m[%c0, %c0], %p {in_bounds = [true, true]}
      : memref<8x8xf32>, vector<8x8xf32>
  %t = vector.transpose %v, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
  return %t : vector<8x8xf32>
}
}

// -----

// Two rows of bf16 interleaved into pairs and written to rows of pairs
// (the attention core's values copied into pairs of slots for AMX tiles):
// one shuffle of 16 + 16 elements per 16 columns, and one write of the 128
// elements into the two dims collapsed, not 64 writes of one pair each.
// CHECK-LABEL: func.func @interleave_pair_rows(
// CHECK-SAME: %[[SRC:[a-z0-9]+]]: memref<2x64xbf16>, %[[DST:[a-z0-9]+]]: memref<32x64x2xbf16>, %[[I:[a-z0-9]+]]: index
// CHECK-NOT: vector.transpose
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[DST]] {{\[\[}}0], [1, 2]] : memref<32x64x2xbf16> into memref<32x128xbf16>
// CHECK-COUNT-4: vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.store %{{.*}}, %[[ROWS]][%[[I]], %{{.*}}] : memref<32x128xbf16>, vector<128xbf16>
// CHECK-NOT: vector.store
// CHECK: return
func.func @interleave_pair_rows(%src: memref<2x64xbf16>, %dst: memref<32x64x2xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %p = ub.poison : bf16
  %v = vector.transfer_read %src[%c0, %c0], %p {in_bounds = [true, true]}
      : memref<2x64xbf16>, vector<2x64xbf16>
  %t = vector.transpose %v, [1, 0] : vector<2x64xbf16> to vector<64x2xbf16>
  vector.transfer_write %t, %dst[%i, %c0, %c0] {in_bounds = [true, true]}
      : vector<64x2xbf16>, memref<32x64x2xbf16>
  return
}
