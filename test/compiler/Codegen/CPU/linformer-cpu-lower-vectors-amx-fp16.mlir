// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=f16=true | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors="f16=true bf16-dot=amx" | FileCheck %s --check-prefix=EMULATED
// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=f16=false | FileCheck %s --check-prefix=BF16ONLY

// f16 pairs (linformer-bf16-products' f16): a register tile's loop of
// them, 16 rows by 32 columns, as linformer-cpu-lower-vectors-amx.mlir's
// @pairs in bf16. On a target with AMX-FP16 (a Granite Rapids) it becomes
// a loop of AMX tiles of f16 (tdpfp16ps): per step a tile of A, per 16
// columns a tile of the panel and a tile product, f32 accumulators.
// Without f16=true the pass takes pairs to be bf16's: f16 ones are not,
// and stay vector contractions (the outer products lower them).
// CHECK-LABEL: func.func @pairs(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<16x64xf16>, %[[P:[a-z0-9]+]]: memref<32x32x2xf16>, %[[C:[a-z0-9]+]]: memref<16x32xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[P]] {{\[}}[0], [1, 2]] : memref<32x32x2xf16> into memref<32x64xf16>
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 step %c32 iter_args(%[[ACC0:.*]] = %{{.*}}, %[[ACC1:.*]] = %{{.*}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>) {
// CHECK: %[[TA:.*]] = amx.tile_load %[[A]][%c0, %[[K]]] : memref<16x64xf16> into !amx.tile<16x32xf16>
// CHECK: %[[TB0:.*]] = amx.tile_load %[[FLAT]][%{{.*}}, %c0] : memref<32x64xf16> into !amx.tile<16x32xf16>
// CHECK: amx.tile_mulf %[[TA]], %[[TB0]], %[[ACC0]] : !amx.tile<16x32xf16>, !amx.tile<16x32xf16>, !amx.tile<16x16xf32>
// CHECK: amx.tile_mulf
// CHECK-NOT: x86vector
// CHECK: return
// BF16ONLY-LABEL: func.func @pairs(
// BF16ONLY-NOT: amx.
// BF16ONLY-NOT: x86vector
// BF16ONLY: return
// EMULATED-LABEL: func.func @pairs(
// EMULATED: amx.tile_mulf
// EMULATED-LABEL: func.func @emulated(
// EMULATED-NOT: amx.
// EMULATED-NOT: x86vector
// EMULATED: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// EMULATED: math.fma
// EMULATED: return
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (n, k)>
#acc = affine_map<(m, n, k) -> (m, n)>
#half = affine_map<()[s0] -> (s0 floordiv 2)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "graniterapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+avx512fp16,+amx-tile,+amx-bf16,+amx-fp16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
func.func @pairs(%a: memref<16x64xf16> , %p: memref<32x32x2xf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %ph = ub.poison : f16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %ph {in_bounds = [true, true]} : memref<16x64xf16>, vector<16x2xf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %ph {in_bounds = [true, true]} : memref<32x32x2xf16>, vector<32x2xf16>
    %le = arith.extf %l : vector<16x2xf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
}

// -----

// The same loop where the target has AMX-BF16 but not AMX-FP16 (a
// Sapphire Rapids): the pairs' products emulated (so the path runs and is
// checked on any CPU), each pair's halves extended from f16 and multiplied
// with FMAs: no tile (an AMX-BF16 tile would read the f16 bits as bf16),
// and no vdpbf16ps; with bf16-dot=amx the tiles' emulation, likewise.
// Without f16=true, not taken for pairs at all (BF16ONLY).
// CHECK-LABEL: func.func @emulated(
// CHECK-NOT: amx.
// CHECK-NOT: x86vector
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: math.fma
// CHECK-NOT: amx.
// CHECK-NOT: x86vector
// CHECK: return
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (n, k)>
#acc = affine_map<(m, n, k) -> (m, n)>
#half = affine_map<()[s0] -> (s0 floordiv 2)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "sapphirerapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+amx-tile,+amx-bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
func.func @emulated(%a: memref<16x64xf16> , %p: memref<32x32x2xf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %ph = ub.poison : f16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %ph {in_bounds = [true, true]} : memref<16x64xf16>, vector<16x2xf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %ph {in_bounds = [true, true]} : memref<32x32x2xf16>, vector<32x2xf16>
    %le = arith.extf %l : vector<16x2xf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
}
