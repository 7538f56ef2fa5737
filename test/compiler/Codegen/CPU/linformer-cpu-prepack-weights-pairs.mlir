// RUN: linformer-opt %s --split-input-file --linformer-cpu-prepack-weights=bf16-dot=emulate | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cpu-prepack-weights | FileCheck %s --check-prefix=FMA
// RUN: linformer-opt %s --split-input-file --linformer-cpu-prepack-weights=bf16-dot=amx | FileCheck %s

// bf16 pairs (both factors bf16, as linformer-bf16-products makes them for
// dot products; `bf16-dot=emulate` selects them on this AVX2 target): the
// panels hold each pair of rows interleaved, P[j, i, c, t] = W[2 i + t,
// 16 j + c] ([N / 16, K / 2, 16, 2]), made from W expanded to [K / 2, 2,
// N / 16, 16], and the contraction reads them through an unpack with inner
// tiles [16, 2] on (n, k). AMX tiles (`bf16-dot=amx`) read the same
// panels: a panel's 16 pairs of 16 columns are the tile `tdpbf16ps` takes.
// Where the register tiles multiply with FMAs (this target's default), the
// panels are [N / 16, K, 16] as for f32.
// CHECK-DAG: #[[$PAIRS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3, d0, d2)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @ffn(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x32xbf16> {linformer.sequence}, %[[W:[a-z0-9]+]]: tensor<32x64xbf16>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2, 3]] output_shape [16, 2, 4, 16] : tensor<32x64xbf16> into tensor<16x2x4x16xbf16>
// CHECK: %[[PE:.*]] = bufferization.alloc_tensor() : tensor<4x16x16x2xbf16>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$PAIRS]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[E]] : tensor<16x2x4x16xbf16>) outs(%[[PE]] : tensor<4x16x16x2xbf16>)
// CHECK-SAME: linformer.initializer
// CHECK: %[[U:.*]] = linalg.unpack %[[P]] outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [16, 2] into %{{.*}} : tensor<4x16x16x2xbf16> -> tensor<32x64xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[U]] : tensor<64x32xbf16>, tensor<32x64xbf16>)
// FMA-LABEL: func.func @ffn(
// FMA: linalg.unpack %{{.*}} outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<4x32x16xbf16> -> tensor<32x64xbf16>
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @ffn(%x: tensor<64x32xbf16> {linformer.sequence},
    %w: tensor<32x64xbf16>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xbf16>, tensor<32x64xbf16>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %h : tensor<64x64xf32>
}
}

// -----

// A projection's weight split per head, bf16 pairs: the queries' W [32, 64]
// read as [K, H, C] = [32, 2, 32] pairs its rows K, the output's W2 [64,
// 32] read as [H, R, N] = [2, 32, 32] its rows R (the loop the attention
// output's innermost dim indexes). Both are packed as whole weights, pairs
// of rows interleaved ([4, 16, 16, 2], [2, 32, 16, 2]), and read through
// the panels split alike with the halved row dim before the tiles: the
// queries' [H, C / 16, K / 2, 16, 2], the output's [N / 16, H, R / 2, 16,
// 2]. A reduction block of an odd number of steps (3) would start pairs at
// odd rows: that weight keeps plain panels.
// CHECK-LABEL: func.func @heads(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x32xbf16> {linformer.sequence}, %[[W:[a-z0-9]+]]: tensor<32x64xbf16>, %[[W2:[a-z0-9]+]]: tensor<64x32xbf16>, %[[V:[a-z0-9]+]]: tensor<32x64xbf16>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x16x16x2xbf16>) attrs = {linformer.initializer
// CHECK: %[[P2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x32x16x2xbf16>) attrs = {linformer.initializer
// CHECK: %[[P3:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x32x16xbf16>) attrs = {linformer.initializer
// CHECK: %[[PQ:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 2, 16, 16, 2] : tensor<4x16x16x2xbf16> into tensor<2x2x16x16x2xbf16>
// CHECK: %[[UQ:.*]] = linalg.unpack %[[PQ]] outer_dims_perm = [1, 2, 0] inner_dims_pos = [2, 0] inner_tiles = [16, 2] into %{{.*}} : tensor<2x2x16x16x2xbf16> -> tensor<32x2x32xbf16>
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[UQ]] : tensor<16x32xbf16>, tensor<32x2x32xbf16>)
// CHECK: %[[PO:.*]] = tensor.expand_shape %[[P2]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 16, 16, 2] : tensor<2x32x16x2xbf16> into tensor<2x2x16x16x2xbf16>
// CHECK: %[[UO:.*]] = linalg.unpack %[[PO]] outer_dims_perm = [2, 0, 1] inner_dims_pos = [2, 1] inner_tiles = [16, 2] into %{{.*}} : tensor<2x2x16x16x2xbf16> -> tensor<2x32x32xbf16>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[UO]] : tensor<2x16x32xbf16>, tensor<2x32x32xbf16>)
// CHECK: linalg.unpack %{{.*}} inner_dims_pos = [2] inner_tiles = [16] into %{{.*}} : tensor<2x2x32x16xbf16> -> tensor<32x2x32xbf16>
#xq = affine_map<(h, s, k, c) -> (s, k)>
#wq = affine_map<(h, s, k, c) -> (k, h, c)>
#yq = affine_map<(h, s, k, c) -> (h, s, c)>
#ao = affine_map<(s, h, r, n) -> (h, s, r)>
#wo = affine_map<(s, h, r, n) -> (h, r, n)>
#yo = affine_map<(s, h, r, n) -> (s, n)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @heads(%x: tensor<16x32xbf16> {linformer.sequence},
    %w: tensor<32x64xbf16>, %w2: tensor<64x32xbf16>, %v: tensor<32x64xbf16>)
    -> (tensor<16x32xf32>, tensor<2x16x32xf32>) {
  %z = arith.constant 0.0 : f32
  %we = tensor.expand_shape %w [[0], [1, 2]] output_shape [32, 2, 32]
      : tensor<32x64xbf16> into tensor<32x2x32xbf16>
  %eq = tensor.empty() : tensor<2x16x32xf32>
  %fq = linalg.fill ins(%z : f32) outs(%eq : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %q = linalg.generic {indexing_maps = [#xq, #wq, #yq],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %we : tensor<16x32xbf16>, tensor<32x2x32xbf16>)
      outs(%fq : tensor<2x16x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [0, 8, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  %qb = arith.truncf %q : tensor<2x16x32xf32> to tensor<2x16x32xbf16>
  %w2e = tensor.expand_shape %w2 [[0, 1], [2]] output_shape [2, 32, 32]
      : tensor<64x32xbf16> into tensor<2x32x32xbf16>
  %eo = tensor.empty() : tensor<16x32xf32>
  %fo = linalg.fill ins(%z : f32) outs(%eo : tensor<16x32xf32>) -> tensor<16x32xf32>
  %o = linalg.generic {indexing_maps = [#ao, #wo, #yo],
                       iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%qb, %w2e : tensor<2x16x32xbf16>, tensor<2x32x32xbf16>)
      outs(%fo : tensor<16x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [8, 0, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %ve = tensor.expand_shape %v [[0], [1, 2]] output_shape [32, 2, 32]
      : tensor<32x64xbf16> into tensor<32x2x32xbf16>
  %ev = tensor.empty() : tensor<2x16x32xf32>
  %fv = linalg.fill ins(%z : f32) outs(%ev : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %r = linalg.generic {indexing_maps = [#xq, #wq, #yq],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %ve : tensor<16x32xbf16>, tensor<32x2x32xbf16>)
      outs(%fv : tensor<2x16x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [0, 8, 0, 0],
        register = [4, 16], reduction = 3, pack = true>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  return %o, %r : tensor<16x32xf32>, tensor<2x16x32xf32>
}
}

// -----

// An even `reduction` whose blocks are not: register tiling cuts the 18
// steps into blocks of the largest divisor within 4, 3, whose pairs would
// straddle two blocks. The weight keeps plain panels (pairs made here were
// read through their unpack, which bufferization cannot take: random-model
// soak, seed 20261265 case 241, a random schedule file).
// CHECK-LABEL: func.func @odd_blocks(
// CHECK-NOT: inner_tiles = [16, 2]
// CHECK: linalg.unpack %{{.*}} outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<2x18x16xbf16> -> tensor<18x32xbf16>
#x3 = affine_map<(i, k, j) -> (i, k)>
#w3 = affine_map<(i, k, j) -> (k, j)>
#y3 = affine_map<(i, k, j) -> (i, j)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @odd_blocks(%x: tensor<8x18xbf16> {linformer.sequence},
    %w: tensor<18x32xbf16>) -> tensor<8x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.generic {indexing_maps = [#x3, #w3, #y3],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<8x18xbf16>, tensor<18x32xbf16>)
      outs(%f : tensor<8x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [8, 0, 0],
        register = [4, 16], reduction = 4, pack = true>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %h : tensor<8x32xf32>
}
}
