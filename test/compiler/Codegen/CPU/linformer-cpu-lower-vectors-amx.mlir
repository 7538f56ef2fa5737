// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=bf16-dot=amx | FileCheck %s --check-prefix=AMX
// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=bf16-dot=off | FileCheck %s --check-prefix=OFF
// RUN: not linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=bf16-dot=vnni 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: unknown bf16-dot 'vnni': expected auto, emulate, amx or off

// A register tile of bf16 factors the size of an AMX tile (what
// linformer-cpu-tile-for-vectors makes where the engine is AMX): 16 rows,
// 32 steps (16 pairs), 16 columns. With bf16-dot=amx on a target with
// AMX-BF16 it becomes upstream's VNNI contraction and then tile
// operations: the rows of the streamed operand interleaved in pairs
// ([16, 2, 16] -> [16, 16, 2]), each operand through a stack buffer into
// a tile, one tdpbf16ps, the result stored back. auto does not take AMX
// (not measured yet on a CPU with it), and a 32-step tile is no pair of
// steps for the dot products: outer products.
module attributes {linformer.target = #linformer.cpu_target<cpu = "sapphirerapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+amx-tile,+amx-bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
// AMX-LABEL: func.func @tile(
// AMX: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<16x16x2xbf16> into memref<16x32xbf16>
// AMX-DAG: amx.tile_load %{{.*}} : memref<16x32xbf16> into !amx.tile<16x32xbf16>
// AMX-DAG: amx.tile_load %{{.*}} : memref<16x32xbf16> into !amx.tile<16x32xbf16>
// AMX-DAG: amx.tile_load %{{.*}} : memref<16x16xf32> into !amx.tile<16x16xf32>
// AMX: amx.tile_mulf %{{.*}}, %{{.*}}, %{{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// AMX: amx.tile_store %{{.*}} : memref<16x16xf32>, !amx.tile<16x16xf32>
// AMX-NOT: x86vector
// AMX: return
// CHECK-LABEL: func.func @tile(
// CHECK-NOT: amx.
// CHECK: vector.fma
// CHECK-NOT: amx.
// CHECK: return
// OFF-LABEL: func.func @tile(
// OFF-NOT: amx.
// OFF: vector.fma
func.func @tile(%l: vector<16x32xbf16>, %r: vector<32x16xbf16>,
                %acc: vector<16x16xf32>) -> vector<16x16xf32> {
  %le = arith.extf %l : vector<16x32xbf16> to vector<16x32xf32>
  %re = arith.extf %r : vector<32x16xbf16> to vector<32x16xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<16x32xf32>, vector<32x16xf32> into vector<16x16xf32>
  return %c : vector<16x16xf32>
}
}

// -----

// The same tile on a target with AVX512_BF16 but no AMX (a Zen 5): auto
// takes dot products (k = 32 is no pair tile: outer products), amx takes
// the AMX path with its tile operations emulated: no amx op is left, the
// tiles are vector transfers of the stack buffers, and tdpbf16ps is one
// vdpbf16ps per row and pair (16 x 16), each row's pair broadcast against
// the interleaved row of the second tile.
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver5",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @tile_without_amx(
// CHECK-NOT: amx.
// CHECK: return
// AMX-LABEL: func.func @tile_without_amx(
// AMX-NOT: amx.
// AMX: vector.transfer_read %{{.*}} : memref<16x32xbf16>, vector<16x32xbf16>
// AMX: vector.transfer_read %{{.*}} : memref<16x32xbf16>, vector<16x32xbf16>
// AMX: vector.transfer_read %{{.*}} : memref<16x16xf32>, vector<16x16xf32>
// AMX: %[[W:.*]] = vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// AMX: %[[P:.*]] = vector.extract %[[W]][0] : i32 from vector<16xi32>
// AMX: %[[B:.*]] = vector.broadcast %[[P]] : i32 to vector<16xi32>
// AMX: %[[A:.*]] = vector.bitcast %[[B]] : vector<16xi32> to vector<32xbf16>
// AMX: x86vector.avx512.dot %{{.*}}, %[[A]], %{{.*}} : vector<32xbf16> -> vector<16xf32>
// AMX-COUNT-255: x86vector.avx512.dot
// AMX-NOT: x86vector.avx512.dot
// AMX-NOT: amx.
// AMX: vector.transfer_write %{{.*}} : vector<16x16xf32>, memref<16x16xf32>
// AMX: return
func.func @tile_without_amx(%l: vector<16x32xbf16>, %r: vector<32x16xbf16>,
                %acc: vector<16x16xf32>) -> vector<16x16xf32> {
  %le = arith.extf %l : vector<16x32xbf16> to vector<16x32xf32>
  %re = arith.extf %r : vector<32x16xbf16> to vector<32x16xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<16x32xf32>, vector<32x16xf32> into vector<16x16xf32>
  return %c : vector<16x16xf32>
}

// Two steps (E X's token pairs) stay dot products under AMX too, and a
// tile wider than 16 columns is cut into 16-column AMX tiles.
// AMX-LABEL: func.func @pair_and_wide(
// AMX-NOT: amx.
// AMX-COUNT-2: x86vector.avx512.dot
// AMX-NOT: x86vector.avx512.dot
// AMX: vector.extract_strided_slice %{{.*}} {offsets = [0, 0], sizes = [8, 16], strides = [1, 1]}
// AMX: vector.extract_strided_slice %{{.*}} {offsets = [0, 16], sizes = [8, 16], strides = [1, 1]}
// AMX: return
func.func @pair_and_wide(%l: vector<1x2xbf16>, %r: vector<2x32xbf16>,
                %acc: vector<1x32xf32>, %l2: vector<8x4xbf16>, %r2: vector<4x32xbf16>,
                %acc2: vector<8x32xf32>) -> (vector<1x32xf32>, vector<8x32xf32>) {
  %le = arith.extf %l : vector<1x2xbf16> to vector<1x2xf32>
  %re = arith.extf %r : vector<2x32xbf16> to vector<2x32xf32>
  %c = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %le, %re, %acc
      : vector<1x2xf32>, vector<2x32xf32> into vector<1x32xf32>
  %le2 = arith.extf %l2 : vector<8x4xbf16> to vector<8x4xf32>
  %re2 = arith.extf %r2 : vector<4x32xbf16> to vector<4x32xf32>
  %c2 = vector.contract {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"],
                        kind = #vector.kind<add>} %le2, %re2, %acc2
      : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32>
  return %c, %c2 : vector<1x32xf32>, vector<8x32xf32>
}
}
