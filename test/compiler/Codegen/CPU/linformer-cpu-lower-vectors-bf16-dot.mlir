// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors | FileCheck %s

// A register tile of bf16 pairs (linformer-bf16-products' pairs, stepped
// two at a time by linformer-cpu-tile-for-vectors): acc[m, n] += lhs[m, k]
// rhs[k, n], k = 2, both factors extended from bf16. With AVX512_BF16 each
// row's pair (one 32-bit word) is broadcast to every lane, the two rows of
// the streamed operand are interleaved into pairs 16 columns at a time
// (shared by every row), and each 16 columns of a row take one vdpbf16ps.
// The loops' order is the vectorizer's: (m, k, n).
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver5",
    features = "+avx512f,+avx512vl,+avx512bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @native(
// CHECK-SAME: %[[L:.*]]: vector<2x2xbf16>, %[[R:.*]]: vector<2x32xbf16>, %[[ACC:.*]]: vector<2x32xf32>
// CHECK-DAG: %[[R0:.*]] = vector.extract %[[R]][0] : vector<32xbf16> from vector<2x32xbf16>
// CHECK-DAG: %[[R1:.*]] = vector.extract %[[R]][1] : vector<32xbf16> from vector<2x32xbf16>
// CHECK-DAG: %[[W0:.*]] = vector.bitcast %[[R0]] : vector<32xbf16> to vector<32xi16>
// CHECK-DAG: %[[W1:.*]] = vector.bitcast %[[R1]] : vector<32xbf16> to vector<32xi16>
// CHECK: %[[S0:.*]] = vector.shuffle %[[W0]], %[[W1]] [0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39, 8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47]
// CHECK: %[[B0:.*]] = vector.bitcast %[[S0]] : vector<32xi16> to vector<32xbf16>
// CHECK: %[[S1:.*]] = vector.shuffle %[[W0]], %[[W1]] [16, 48, 17, 49,
// CHECK: %[[B1:.*]] = vector.bitcast %[[S1]] : vector<32xi16> to vector<32xbf16>
// CHECK: %[[P:.*]] = vector.extract %[[L]][0] : vector<2xbf16> from vector<2x2xbf16>
// CHECK: %[[PW:.*]] = vector.bitcast %[[P]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[PS:.*]] = vector.extract %[[PW]][0] : i32 from vector<1xi32>
// CHECK: %[[PB:.*]] = vector.broadcast %[[PS]] : i32 to vector<16xi32>
// CHECK: %[[A:.*]] = vector.bitcast %[[PB]] : vector<16xi32> to vector<32xbf16>
// CHECK: %[[D00:.*]] = x86vector.avx512.dot %{{.*}}, %[[A]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: %[[D01:.*]] = x86vector.avx512.dot %{{.*}}, %[[A]], %[[B1]] : vector<32xbf16> -> vector<16xf32>
// CHECK: vector.extract %[[L]][1]
// CHECK-COUNT-2: x86vector.avx512.dot
// CHECK-NOT: vector.fma
// CHECK-NOT: vector.outerproduct
// CHECK: return
func.func @native(%l: vector<2x2xbf16>, %r: vector<2x32xbf16>,
                  %acc: vector<2x32xf32>) -> vector<2x32xf32> {
  %le = arith.extf %l : vector<2x2xbf16> to vector<2x2xf32>
  %re = arith.extf %r : vector<2x32xbf16> to vector<2x32xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<2x2xf32>, vector<2x32xf32> into vector<2x32xf32>
  return %c : vector<2x32xf32>
}

// The streamed operand as a step of a weight's panels of bf16 pairs
// (linformer-cpu-tile-for-vectors, after linformer-cpu-prepack-weights):
// `[n, 2]`, read `(n, k)`, each column's pair adjacent. Its read becomes
// one 1-D load of the 64 elements (the panel's trailing dims collapsed),
// and each 16 columns' pairs are its 32 consecutive elements, sliced as
// they are: no shuffle.
// CHECK-LABEL: func.func @pairs_in_place(
// CHECK-SAME: %[[L:.*]]: vector<2x2xbf16>, %[[M:.*]]: memref<4x32x2xbf16>, %[[I:.*]]: index, %[[ACC:.*]]: vector<2x32xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[M]] {{\[}}[0], [1, 2]] : memref<4x32x2xbf16> into memref<4x64xbf16>
// CHECK: %[[R:.*]] = vector.load %[[FLAT]][%[[I]], %{{.*}}] : memref<4x64xbf16>, vector<64xbf16>
// CHECK: %[[W:.*]] = vector.bitcast %[[R]] : vector<64xbf16> to vector<64xi16>
// CHECK: %[[S0:.*]] = vector.extract_strided_slice %[[W]] {offsets = [0], sizes = [32], strides = [1]} : vector<64xi16> to vector<32xi16>
// CHECK: %[[B0:.*]] = vector.bitcast %[[S0]] : vector<32xi16> to vector<32xbf16>
// CHECK: %[[S1:.*]] = vector.extract_strided_slice %[[W]] {offsets = [32], sizes = [32], strides = [1]} : vector<64xi16> to vector<32xi16>
// CHECK: %[[B1:.*]] = vector.bitcast %[[S1]] : vector<32xi16> to vector<32xbf16>
// CHECK-NOT: vector.shuffle
// CHECK: x86vector.avx512.dot %{{.*}}, %{{.*}}, %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: x86vector.avx512.dot %{{.*}}, %{{.*}}, %[[B1]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-2: x86vector.avx512.dot
// CHECK-NOT: vector.shuffle
// CHECK-NOT: vector.outerproduct
// CHECK: return
func.func @pairs_in_place(%l: vector<2x2xbf16>, %m: memref<4x32x2xbf16>,
                          %i: index, %acc: vector<2x32xf32>)
    -> vector<2x32xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %r = vector.transfer_read %m[%i, %c0, %c0], %pad {in_bounds = [true, true]}
      : memref<4x32x2xbf16>, vector<32x2xbf16>
  %le = arith.extf %l : vector<2x2xbf16> to vector<2x2xf32>
  %re = arith.extf %r : vector<32x2xbf16> to vector<32x2xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<2x2xf32>, vector<32x2xf32> into vector<2x32xf32>
  return %c : vector<2x32xf32>
}

// A tile 8 columns wide (a peeled remainder): 256-bit vdpbf16ps, which
// AVX512VL allows. One step (k = 1) or factors that are not bf16: outer
// products, as for f32.
// CHECK-LABEL: func.func @narrow_and_others(
// CHECK-COUNT-2: x86vector.avx512.dot %{{.*}} : vector<16xbf16> -> vector<8xf32>
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @narrow_and_others(%l: vector<2x2xbf16>, %r: vector<2x8xbf16>,
                             %acc: vector<2x8xf32>, %l1: vector<2x1xbf16>,
                             %r1: vector<1x8xbf16>, %lf: vector<2x2xf32>)
    -> (vector<2x8xf32>, vector<2x8xf32>, vector<2x8xf32>) {
  %le = arith.extf %l : vector<2x2xbf16> to vector<2x2xf32>
  %re = arith.extf %r : vector<2x8xbf16> to vector<2x8xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<2x2xf32>, vector<2x8xf32> into vector<2x8xf32>
  %l1e = arith.extf %l1 : vector<2x1xbf16> to vector<2x1xf32>
  %r1e = arith.extf %r1 : vector<1x8xbf16> to vector<1x8xf32>
  %d = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"],
                        kind = #vector.kind<add>} %l1e, %r1e, %acc
      : vector<2x1xf32>, vector<1x8xf32> into vector<2x8xf32>
  %e = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"],
                        kind = #vector.kind<add>} %lf, %re, %acc
      : vector<2x2xf32>, vector<2x8xf32> into vector<2x8xf32>
  return %c, %d, %e : vector<2x8xf32>, vector<2x8xf32>, vector<2x8xf32>
}
}

// -----

// Without AVX512_BF16 (an AVX2 target) the same tile, 8 lanes at a time,
// with vdpbf16ps emulated: each 32-bit word's low half (the even element)
// shifted up, its high half (the odd one) masked, and two FMAs, the odd
// products first as the instruction adds them.
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @emulated(
// CHECK-NOT: x86vector
// CHECK-DAG: %[[C16:.*]] = arith.constant dense<16> : vector<8xi32>
// CHECK-DAG: %[[HIGH:.*]] = arith.constant dense<-65536> : vector<8xi32>
// CHECK: %[[S0:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xi16>, vector<16xi16>
// CHECK: %[[AW:.*]] = vector.broadcast %{{.*}} : i32 to vector<8xi32>
// CHECK: %[[AE:.*]] = arith.shli %[[AW]], %[[C16]] : vector<8xi32>
// CHECK: %[[AO:.*]] = arith.andi %[[AW]], %[[HIGH]] : vector<8xi32>
// CHECK: %[[AEF:.*]] = vector.bitcast %[[AE]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[AOF:.*]] = vector.bitcast %[[AO]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[BW:.*]] = vector.bitcast %[[S0]] : vector<16xi16> to vector<8xi32>
// CHECK: %[[BE:.*]] = arith.shli %[[BW]], %[[C16]] : vector<8xi32>
// CHECK: %[[BO:.*]] = arith.andi %[[BW]], %[[HIGH]] : vector<8xi32>
// CHECK: %[[BEF:.*]] = vector.bitcast %[[BE]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[BOF:.*]] = vector.bitcast %[[BO]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[ODD:.*]] = math.fma %[[AOF]], %[[BOF]], %{{.*}} : vector<8xf32>
// CHECK: math.fma %[[AEF]], %[[BEF]], %[[ODD]] : vector<8xf32>
// CHECK-NOT: x86vector
// CHECK: return
func.func @emulated(%l: vector<2x2xbf16>, %r: vector<2x16xbf16>,
                    %acc: vector<2x16xf32>) -> vector<2x16xf32> {
  %le = arith.extf %l : vector<2x2xbf16> to vector<2x2xf32>
  %re = arith.extf %r : vector<2x16xbf16> to vector<2x16xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<2x2xf32>, vector<2x16xf32> into vector<2x16xf32>
  return %c : vector<2x16xf32>
}
}
