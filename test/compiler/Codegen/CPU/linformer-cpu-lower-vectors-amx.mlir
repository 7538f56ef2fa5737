// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=bf16-dot=amx | FileCheck %s --check-prefix=AMX
// RUN: not linformer-opt %s --split-input-file --linformer-cpu-lower-vectors=bf16-dot=vnni 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: unknown bf16-dot 'vnni': expected auto, emulate, amx or off

// A register tile's loop of bf16 pairs, 16 rows by 32 columns (what
// linformer-cpu-tile-for-vectors makes where the engine is AMX): the rows'
// pairs read in place from A, `[16, 2]`, and the columns' pairs from a
// panel of pairs `[K/2, 32, 2]`. With bf16-dot=amx on a target with
// AMX-BF16, 16 pairs of it become one step of a loop of AMX tiles: two
// accumulator tiles of 16 x 16 carried by the loop (loaded once from the
// initial tile), per step one tile of A straight from its buffer and per
// 16 columns a tile of the panel (flattened, [K/2, 64]: 16 pairs of 16
// columns at column 0 and 32) and one tdpbf16ps; the tiles are stored once,
// after the loop, straight to where the loop's one reader wrote its result
// (not through the scratch tile), as the initial tile is loaded from where
// it was read. auto takes AMX tiles where the target has them.
// AMX-LABEL: func.func @pairs(
// AMX-SAME: %[[A:[a-z0-9]+]]: memref<16x64xbf16>, %[[P:[a-z0-9]+]]: memref<32x32x2xbf16>, %[[C:[a-z0-9]+]]: memref<16x32xf32>
// AMX-NOT: memref.alloca
// AMX-DAG: %[[C0:.*]] = amx.tile_load %[[C]][%c0, %c0] : memref<16x32xf32> into !amx.tile<16x16xf32>
// AMX-DAG: %[[C1:.*]] = amx.tile_load %[[C]][%c0, %c16] : memref<16x32xf32> into !amx.tile<16x16xf32>
// AMX: %[[FLAT:.*]] = memref.collapse_shape %[[P]] {{\[}}[0], [1, 2]] : memref<32x32x2xbf16> into memref<32x64xbf16>
// AMX: %[[R:.*]]:2 = scf.for %[[K:.*]] = %c0 to %c64 step %c32 iter_args(%[[ACC0:.*]] = %[[C0]], %[[ACC1:.*]] = %[[C1]]) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>) {
// AMX: %[[TA:.*]] = amx.tile_load %[[A]][%c0, %[[K]]] : memref<16x64xbf16> into !amx.tile<16x32xbf16>
// AMX: %[[H:.*]] = affine.apply #{{.*}}()[%[[K]]]
// AMX: %[[TB0:.*]] = amx.tile_load %[[FLAT]][%[[H]], %c0] : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// AMX: %[[M0:.*]] = amx.tile_mulf %[[TA]], %[[TB0]], %[[ACC0]]
// AMX: %[[TB1:.*]] = amx.tile_load %[[FLAT]][%[[H]], %c32] : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// AMX: %[[M1:.*]] = amx.tile_mulf %[[TA]], %[[TB1]], %[[ACC1]]
// AMX: scf.yield %[[M0]], %[[M1]]
// AMX: amx.tile_store %[[C]][%c0, %c0], %[[R]]#0
// AMX: amx.tile_store %[[C]][%c0, %c16], %[[R]]#1
// AMX-NOT: vector.transfer_read
// AMX-NOT: vector.transfer_write
// AMX-NOT: x86vector
// AMX: return
// CHECK-LABEL: func.func @pairs(
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args({{.*}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// CHECK-COUNT-2: amx.tile_mulf
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
func.func @pairs(%a: memref<16x64xbf16> , %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}

// 32 rows: two tiles of A a step (rows 0 and 16), then each tile of B in
// turn with both: four accumulators, four independent chains of
// tdpbf16ps (the instruction's latency is about three times its issue
// interval), 2 + 4 + 1 tiles live.
// AMX-LABEL: func.func @rows32(
// AMX-SAME: %[[A:[a-z0-9]+]]: memref<32x64xbf16>
// AMX: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args(%[[C00:.*]] = %{{.*}}, %[[C01:.*]] = %{{.*}}, %[[C10:.*]] = %{{.*}}, %[[C11:.*]] = %{{.*}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// AMX: %[[A0:.*]] = amx.tile_load %[[A]][%c0, %{{.*}}] : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// AMX: %[[A1:.*]] = amx.tile_load %[[A]][%c16, %{{.*}}] : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// AMX: %[[B0:.*]] = amx.tile_load %{{.*}} : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// AMX: amx.tile_mulf %[[A0]], %[[B0]], %[[C00]]
// AMX: amx.tile_mulf %[[A1]], %[[B0]], %[[C10]]
// AMX: %[[B1:.*]] = amx.tile_load %{{.*}} : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// AMX: amx.tile_mulf %[[A0]], %[[B1]], %[[C01]]
// AMX: amx.tile_mulf %[[A1]], %[[B1]], %[[C11]]
// AMX: scf.yield
// AMX-COUNT-4: amx.tile_store
func.func @rows32(%a: memref<32x64xbf16> , %p: memref<32x32x2xbf16>, %c: memref<32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<32x32xf32>, vector<32x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<32x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<32x64xbf16>, vector<32x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<32x2xbf16> to vector<32x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<32x2xf32>, vector<32x2xf32> into vector<32x32xf32>
    scf.yield %s : vector<32x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<32x32xf32>, memref<32x32xf32>
  return
}


// Results whose rows are a packed sequence's (found one at a time by
// linformer-packed-sequences) go through the scratch tile and the
// register tile's own write; so do results read again.
// AMX-LABEL: func.func @packed_out(
// AMX-SAME: %[[C:[a-z0-9]+]]: memref<16x32xf32> {linformer.packed_sequence}
// AMX: %[[S:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// AMX: scf.for
// AMX-COUNT-2: amx.tile_store %[[S]]
// AMX: %[[V:.*]] = vector.transfer_read %[[S]]
// AMX: vector.transfer_write %[[V]], %[[C]]
func.func @packed_out(%a: memref<16x64xbf16>, %p: memref<32x32x2xbf16>, %c: memref<16x32xf32> {linformer.packed_sequence}) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %zero = arith.constant dense<0.0> : vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %zero) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}

// An initial tile read from memory that is written before the loop goes
// through the scratch tile, from the value read.
// AMX-LABEL: func.func @init_overwritten(
// AMX-SAME: %[[C:[a-z0-9]+]]: memref<16x32xf32>
// AMX: %[[V:.*]] = vector.transfer_read %[[C]]
// AMX: vector.transfer_write %{{.*}}, %[[C]]
// AMX: %[[S:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x32xf32>
// AMX: vector.transfer_write %[[V]], %[[S]]
// AMX-COUNT-2: amx.tile_load %[[S]]
// AMX: scf.for
func.func @init_overwritten(%a: memref<16x64xbf16>, %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<16x32xf32>
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  vector.transfer_write %zero, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
// AMX-LABEL: func.func @read_again(
// AMX-COUNT-2: amx.tile_store %{{.*}} : memref<16x32xf32>, !amx.tile<16x16xf32>
// AMX: %[[V:.*]] = vector.transfer_read
// AMX: vector.transfer_write %[[V]]
// AMX: return %[[V]]
func.func @read_again(%a: memref<16x64xbf16>, %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>) -> vector<16x32xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %zero = arith.constant dense<0.0> : vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %zero) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return %r : vector<16x32xf32>
}

// A reduction over heads x channels (the output projection): a loop over
// heads that only carries the register tile's accumulators around its loop
// of channel pairs. The heads' loop carries the tiles instead: loaded once
// before it, stored once after it, no tile through memory per head.
// AMX-LABEL: func.func @heads(
// AMX-SAME: %[[C:[a-z0-9]+]]: memref<16x32xf32>
// AMX: %[[I0:.*]] = amx.tile_load %[[C]][%c0, %c0]
// AMX: %[[I1:.*]] = amx.tile_load %[[C]][%c0, %c16]
// AMX: %[[H:.*]]:3 = scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%{{.*}} = %{{.*}}, %[[O0:.*]] = %[[I0]], %[[O1:.*]] = %[[I1]]) -> (vector<16x32xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// AMX-NOT: amx.tile_store
// AMX: %[[T:.*]]:2 = scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args(%{{.*}} = %[[O0]], %{{.*}} = %[[O1]])
// AMX-COUNT-2: amx.tile_mulf
// AMX: scf.yield %{{.*}}, %[[T]]#0, %[[T]]#1 : vector<16x32xf32>, !amx.tile<16x16xf32>, !amx.tile<16x16xf32>
// AMX: amx.tile_store %[[C]][%c0, %c0], %[[H]]#1
// AMX: amx.tile_store %[[C]][%c0, %c16], %[[H]]#2
// AMX-NOT: vector.transfer_write
// AMX: return
func.func @heads(%a: memref<8x16x64xbf16>, %p: memref<8x32x32x2xbf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %head = %c0 to %c8 step %c1 iter_args(%outer = %init) -> (vector<16x32xf32>) {
    %s = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %outer) -> (vector<16x32xf32>) {
      %h = affine.apply #half()[%k]
      %l = vector.transfer_read %a[%head, %c0, %k], %pb {in_bounds = [true, true]} : memref<8x16x64xbf16>, vector<16x2xbf16>
      %w = vector.transfer_read %p[%head, %h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<8x32x32x2xbf16>, vector<32x2xbf16>
      %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
      %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
      %t = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
      scf.yield %t : vector<16x32xf32>
    }
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}

// A register tile that starts from a bias (one row broadcast to every
// row): each accumulator loads its 16 columns of the row with stride 0,
// no trip through the scratch tile.
// AMX-LABEL: func.func @bias_init(
// AMX-SAME: %[[BIAS:[a-z0-9]+]]: memref<32xf32>
// AMX-NOT: vector.transfer_write
// AMX: amx.tile_load %[[BIAS]][%{{.*}}], %[[ZERO:.*]] : memref<32xf32> into !amx.tile<16x16xf32>
// AMX: amx.tile_load %[[BIAS]][%{{.*}}], %[[ZERO]] : memref<32xf32> into !amx.tile<16x16xf32>
// AMX: scf.for
func.func @bias_init(%a: memref<16x64xbf16>, %p: memref<32x32x2xbf16>, %bias: memref<32xf32>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %row = vector.transfer_read %bias[%c0], %pf {in_bounds = [true]} : memref<32xf32>, vector<32xf32>
  %init = vector.broadcast %row : vector<32xf32> to vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}

// A register tile that starts from a bias (one row broadcast to every
// row): each accumulator loads its 16 columns of the row with stride 0,
// no trip through the scratch tile.
// AMX-LABEL: func.func @bias_init_without_amx(
// AMX-SAME: %[[BIAS:[a-z0-9]+]]: memref<32xf32>
// AMX-NOT: vector.transfer_write
// AMX: amx.tile_load %[[BIAS]][%{{.*}}], %[[ZERO:.*]] : memref<32xf32> into !amx.tile<16x16xf32>
// AMX: amx.tile_load %[[BIAS]][%{{.*}}], %[[ZERO]] : memref<32xf32> into !amx.tile<16x16xf32>
// AMX: scf.for
func.func @bias_init_without_amx(%a: memref<16x64xbf16>, %p: memref<32x32x2xbf16>, %bias: memref<32xf32>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %row = vector.transfer_read %bias[%c0], %pf {in_bounds = [true]} : memref<32xf32>, vector<32xf32>
  %init = vector.broadcast %row : vector<32xf32> to vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
}

// -----

// The same loop on a target with AVX512_BF16 but no AMX (a Zen 5): with
// bf16-dot=amx the same loop of tiles, each tile a vector of its shape: the
// accumulators carried as vectors, the tiles of A and of the panel vector
// transfers of their rows, and each tdpbf16ps one vdpbf16ps per row and
// pair (16 x 16 a tile, two tiles a step), each row's pair broadcast
// against the panel's row of pairs, in the order the instruction sums.
// auto takes the dot products there: a loop of pairs, one vdpbf16ps per
// row and 16 columns.
// CHECK-LABEL: func.func @pairs_without_amx(
// CHECK-NOT: amx.
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c2
// CHECK-COUNT-32: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
// AMX-LABEL: func.func @pairs_without_amx(
// AMX-NOT: amx.
// AMX: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16x16xf32>, vector<16x16xf32>) {
// AMX: vector.transfer_read %{{.*}} : memref<16x64xbf16>, vector<16x32xbf16>
// AMX: vector.transfer_read %{{.*}} : memref<32x64xbf16>, vector<16x32xbf16>
// AMX-COUNT-256: x86vector.avx512.dot
// AMX: vector.transfer_read %{{.*}} : memref<32x64xbf16>, vector<16x32xbf16>
// AMX-COUNT-256: x86vector.avx512.dot
// AMX-NOT: x86vector.avx512.dot
// AMX: scf.yield
// AMX-NOT: amx.
// AMX: return
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (n, k)>
#acc = affine_map<(m, n, k) -> (m, n)>
#half = affine_map<()[s0] -> (s0 floordiv 2)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver5",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
func.func @pairs_without_amx(%a: memref<16x64xbf16> , %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
}

// -----

// A reduction that is no multiple of 32 steps: tiles up to the last
// multiple, the loop of pairs (dot products) from there, taking on the
// tiles' sums. 48 steps: one step of tiles, 16 steps of pairs. A bound known
// only at run time (E X's real tokens in a block): tiles up to n - n mod 32.
// AMX-LABEL: func.func @odd_pairs(
// AMX: %[[T:.*]]:2 = scf.for %{{.*}} = %c0 to %c32 step %c32 iter_args({{.*}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// AMX-COUNT-2: amx.tile_mulf
// AMX: amx.tile_store %{{.*}}, %[[T]]#0
// AMX: amx.tile_store %{{.*}}, %[[T]]#1
// AMX: %[[SUMS:.*]] = vector.transfer_read
// AMX: scf.for %{{.*}} = %c32 to %c48 step %c2 iter_args(%{{.*}} = %[[SUMS]])
// AMX: x86vector.avx512.dot
// AMX: return
// AMX-LABEL: func.func @real_pairs(
// AMX-SAME: %[[N:[a-z0-9]+]]: index
// AMX: %[[R:.*]] = arith.remui %[[N]], %c32
// AMX: %[[E:.*]] = arith.subi %[[N]], %[[R]]
// AMX: scf.for %{{.*}} = %c0 to %[[E]] step %c32 iter_args({{.*}}) -> (!amx.tile<16x16xf32>, !amx.tile<16x16xf32>)
// AMX: %[[SUMS:.*]] = vector.transfer_read
// AMX: scf.for %{{.*}} = %[[E]] to %[[N]] step %c2 iter_args(%{{.*}} = %[[SUMS]])
// AMX: x86vector.avx512.dot
// AMX: return
// Rows of an argument that holds packed sequences (linformer-packed-
// sequences finds each load's row through the lengths; one tile of 16 rows
// could run past a sequence's last token): each step copies A's 16 rows of
// 32 factors, a row at a time, into a staging tile, which the tile load
// reads.
// AMX-LABEL: func.func @packed_rows(
// AMX-SAME: %[[A:[a-z0-9]+]]: memref<16x64xbf16> {linformer.packed_sequence}
// AMX: %[[STAGE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16x32xbf16>
// AMX: scf.for
// AMX-COUNT-16: vector.load %[[A]][%{{.*}}, %{{.*}}] : memref<16x64xbf16>, vector<32xbf16>
// AMX: vector.store %{{.*}}, %[[STAGE]][%c15, %c0] : memref<16x32xbf16>, vector<32xbf16>
// AMX: amx.tile_load %[[STAGE]][%c0, %c0] : memref<16x32xbf16> into !amx.tile<16x32xbf16>
// AMX-NOT: amx.tile_load %[[A]]
// AMX: return
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (n, k)>
#acc = affine_map<(m, n, k) -> (m, n)>
#half = affine_map<()[s0] -> (s0 floordiv 2)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "sapphirerapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+amx-tile,+amx-bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
func.func @odd_pairs(%a: memref<16x64xbf16> , %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 48 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
func.func @real_pairs(%a: memref<16x64xbf16> , %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>, %ub: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
func.func @packed_rows(%a: memref<16x64xbf16> {linformer.packed_sequence}, %p: memref<32x32x2xbf16>, %c: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %ub = arith.constant 64 : index
  %pb = ub.poison : bf16
  %pf = ub.poison : f32
  %init = vector.transfer_read %c[%c0, %c0], %pf {in_bounds = [true, true]} : memref<16x32xf32>, vector<16x32xf32>
  %r = scf.for %k = %c0 to %ub step %c2 iter_args(%acc = %init) -> (vector<16x32xf32>) {
    %h = affine.apply #half()[%k]
    %l = vector.transfer_read %a[%c0, %k], %pb {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x2xbf16>
    %w = vector.transfer_read %p[%h, %c0, %c0], %pb {in_bounds = [true, true]} : memref<32x32x2xbf16>, vector<32x2xbf16>
    %le = arith.extf %l : vector<16x2xbf16> to vector<16x2xf32>
    %we = arith.extf %w : vector<32x2xbf16> to vector<32x2xf32>
    %s = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %le, %we, %acc : vector<16x2xf32>, vector<32x2xf32> into vector<16x32xf32>
    scf.yield %s : vector<16x32xf32>
  }
  vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x32xf32>, memref<16x32xf32>
  return
}
}
