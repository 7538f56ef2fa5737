// RUN: linformer-opt %s --split-input-file --verify-diagnostics

// The dialect's attributes on other dialects' ops (LinformerBase.td,
// discardableAttrs): a wrong type or an unknown name is refused by the
// verifier, in words, where it is attached.

// The right types verify (and print back).
func.func @well_typed(%x: tensor<4xf32> {linformer.sequence},
                      %l: tensor<1xi32> {linformer.lengths}) -> tensor<4xf32>
    attributes {linformer.workgroups = 4 : i64,
                linformer.buffer_bytes = array<i64: 16, 4>} {
  %0 = arith.addf %x, %x {linformer.root, linformer.tile_sizes = array<i64: 2>,
                          linformer.token_bound = #linformer.token_bound<token = 0, batch = 1>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'linformer.workgroups' must be an integer, not "four"}}
func.func @workgroups_not_an_integer() attributes {linformer.workgroups = "four"} {
  return
}

// -----

func.func @root_with_a_value(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.root' must be a unit attribute, not 1 : i64}}
  %0 = arith.addf %x, %x {linformer.root = 1} : f32
  return %0 : f32
}

// -----

func.func @schedule_of_another_kind(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.schedule' must be a #linformer.cpu_schedule, not {rows = 4 : i64}}}
  %0 = arith.addf %x, %x {linformer.schedule = {rows = 4}} : f32
  return %0 : f32
}

// -----

func.func @misspelt(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.tile_size' is not an attribute of the linformer dialect (it attaches linformer.dispatch_plan, linformer.target, linformer.root}}
  %0 = arith.addf %x, %x {linformer.tile_size = array<i64: 2>} : f32
  return %0 : f32
}

// -----

func.func @argument_attribute_on_an_op(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.lengths' marks a function argument (an argument attribute), not an op}}
  %0 = arith.addf %x, %x {linformer.lengths} : f32
  return %0 : f32
}

// -----

// expected-error @+1 {{argument 0: 'linformer.lenghts' is not an argument attribute of the linformer dialect (it has linformer.sequence, linformer.lengths, linformer.packed_sequence and linformer.sequence_split)}}
func.func @misspelt_argument(%l: tensor<1xi32> {linformer.lenghts}) {
  return
}

// -----

// expected-error @+1 {{argument 0: 'linformer.sequence' must be a unit attribute, not true}}
func.func @argument_with_a_value(%x: tensor<4xf32> {linformer.sequence = true}) {
  return
}

// -----

// A CUDA schedule (linformer-cuda-select-schedules) verifies, and one that
// cannot be built is refused where it is written.
func.func @cuda_schedule(%x: f32) -> f32 {
  %0 = arith.addf %x, %x {linformer.narrowed, linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 8], split = 2, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_not_a_schedule(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.cuda_schedule' must be a #linformer.cuda_schedule, not 1 : i64}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = 1} : f32
  return %0 : f32
}

// -----

func.func @length_variant_not_an_integer(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.length_variant' must be an integer, not "first"}}
  %0 = arith.addf %x, %x {linformer.length_variant = "first"} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_wgmma_two_rows(%x: f32) -> f32 {
  // expected-error @+1 {{wgmma takes one row tile a warp, warps [4 x warpgroups, 1] and both operands by cp.async (no ldmatrix)}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [2, 8], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_unstaged_chunk(%x: f32) -> f32 {
  // expected-error @+1 {{an unstaged schedule (warps = [0, 0]) has no chunk, buffers, async copies, natural B, ldmatrix or wgmma}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [0, 0], chunk = 16, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_stages_without_async(%x: f32) -> f32 {
  // expected-error @+1 {{more than 2 buffers need both operands copied with cp.async}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 2], chunk = 16, buffers = 3, async = [false, true], natural_b = false, ldmatrix_a = false, wgmma = false>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_in_flight_two_buffers(%x: f32) -> f32 {
  // expected-error @+1 {{in_flight 1 must be 0, or 1 with wgmma and at least 3 buffers (a batch of warpgroup MMAs left running reads its buffer a chunk longer)}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 64, buffers = 2, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, in_flight = 1>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_in_flight_without_wgmma(%x: f32) -> f32 {
  // expected-error @+1 {{in_flight 1 must be 0, or 1 with wgmma and at least 3 buffers}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = false, in_flight = 1>} : f32
  return %0 : f32
}

// -----

// pair_stores is printed only where it is false, after in_flight.
// RUN: linformer-opt %s --split-input-file --verify-diagnostics 2>/dev/null | FileCheck %s --check-prefix=PAIRS
// PAIRS-LABEL: func.func @cuda_schedule_pair_stores
// PAIRS: wgmma = false, pair_stores = false>
// PAIRS: wgmma = true, in_flight = 1, pair_stores = false>
// PAIRS: ldmatrix_a = true, wgmma = false>
func.func @cuda_schedule_pair_stores(%x: f32) -> f32 {
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false, pair_stores = false>} : f32
  %1 = arith.addf %0, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, in_flight = 1, pair_stores = false>} : f32
  %2 = arith.addf %1, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false, pair_stores = true>} : f32
  return %2 : f32
}

// -----

// swizzle is printed only where it is not 0, between in_flight and
// pair_stores; it must be 32, 64 or 128 bytes, and only with wgmma.
// RUN: linformer-opt %s --split-input-file --verify-diagnostics 2>/dev/null | FileCheck %s --check-prefix=SWIZZLE
// SWIZZLE-LABEL: func.func @cuda_schedule_swizzle
// SWIZZLE: wgmma = true, in_flight = 1, swizzle = 128, pair_stores = false>
// SWIZZLE: wgmma = true, swizzle = 32>
// SWIZZLE: wgmma = true>
func.func @cuda_schedule_swizzle(%x: f32) -> f32 {
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, pair_stores = false, swizzle = 128, in_flight = 1>} : f32
  %1 = arith.addf %0, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 16, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, swizzle = 32>} : f32
  %2 = arith.addf %1, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 16, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, swizzle = 0>} : f32
  return %2 : f32
}

// -----

func.func @cuda_schedule_swizzle_bytes(%x: f32) -> f32 {
  // expected-error @+1 {{swizzle 16 must be 0, or 32, 64 or 128 (bytes) with wgmma (only warpgroup MMAs read swizzled buffers)}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 64, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = true, swizzle = 16>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_swizzle_without_wgmma(%x: f32) -> f32 {
  // expected-error @+1 {{swizzle 128 must be 0, or 32, 64 or 128 (bytes) with wgmma}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 3, async = [true, true], natural_b = false, ldmatrix_a = false, wgmma = false, swizzle = 128>} : f32
  return %0 : f32
}

// -----

// A warpgroup's tile is up to m64n256: 32 column tiles with wgmma, 8
// without.
func.func @cuda_schedule_wgmma_n256(%x: f32) -> f32 {
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 32], split = 1, warps = [8, 1], chunk = 64, buffers = 2, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true, swizzle = 128>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_wgmma_n512(%x: f32) -> f32 {
  // expected-error @+1 {{warp_tiles [1, 64] must be powers of two, up to 8 (32 columns, a warpgroup's m64n256, with wgmma)}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 64], split = 1, warps = [8, 1], chunk = 64, buffers = 2, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_wide_without_wgmma(%x: f32) -> f32 {
  // expected-error @+1 {{warp_tiles [1, 16] must be powers of two, up to 8}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [8, 1], chunk = 64, buffers = 2, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = false>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_pair_stores_not_bool(%x: f32) -> f32 {
  // expected-error @+1 {{pair_stores takes true or false}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false, pair_stores = maybe>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_unknown_tail(%x: f32) -> f32 {
  // expected-error @+1 {{expected in_flight, swizzle or pair_stores, got 'pairs'}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false, pairs = false>} : f32
  return %0 : f32
}

// -----

func.func @cuda_schedule_pair_stores_twice(%x: f32) -> f32 {
  // expected-error @+1 {{'pair_stores' given twice}}
  %0 = arith.addf %x, %x {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [4, 4], split = 1, warps = [2, 4], chunk = 64, buffers = 2, async = [false, true], natural_b = true, ldmatrix_a = true, wgmma = false, pair_stores = false, pair_stores = true>} : f32
  return %0 : f32
}

// -----

// The attention core's CUDA schedule, as the function's record of schedules
// holds it.
// expected-error @+1 {{wgmma takes warps in whole warpgroups (4) and no ldmatrix}}
func.func @cuda_core_schedule_wgmma_six_warps() attributes {linformer.cuda_schedules = [{key = "attention_core/1x1x96x64x64/bf16,bf16,bf16,bf16", schedule = #linformer.cuda_core_schedule<warps = 6, slots = 32, staged = true, groups = 1, ldmatrix = false, wgmma = true>, source = "file"}]} {
  return
}

// -----

// Query tiles a warp: 1 or 2, and 1 on warpgroup MMAs.
// expected-error @+1 {{tiles (query tiles a warp) must be 1 or 2; got 3}}
func.func @cuda_core_schedule_three_tiles() attributes {linformer.cuda_schedules = [{key = "attention_core/1x1x96x64x64/bf16,bf16,bf16,bf16", schedule = #linformer.cuda_core_schedule<warps = 2, slots = 32, staged = true, groups = 1, ldmatrix = true, wgmma = false, tiles = 3>, source = "file"}]} {
  return
}

// -----

// expected-error @+1 {{wgmma takes one query tile a warp (a warpgroup's m64), not 2}}
func.func @cuda_core_schedule_wgmma_two_tiles() attributes {linformer.cuda_schedules = [{key = "attention_core/1x1x128x64x64/bf16,bf16,bf16,bf16", schedule = #linformer.cuda_core_schedule<warps = 4, slots = 32, staged = true, groups = 1, ldmatrix = false, wgmma = true, tiles = 2>, source = "file"}]} {
  return
}

// -----

// A token bound names two different loops; parts need a third loop and at
// least one token each; masking describes parts.
func.func @token_bound_one_loop(%x: f32) -> f32 {
  // expected-error @+1 {{token_bound: needs two different loops, got token = 2, batch = 2}}
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 2, batch = 2>} : f32
  return %0 : f32
}

// -----

func.func @token_bound_empty_parts(%x: f32) -> f32 {
  // expected-error @+1 {{token_bound: a part holds at least one token, got per_part = 0}}
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, part = 2>} : f32
  return %0 : f32
}

// -----

func.func @token_bound_per_part_without_parts(%x: f32) -> f32 {
  // expected-error @+1 {{token_bound: per_part describes parts, but there is no part loop}}
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, per_part = 4>} : f32
  return %0 : f32
}

// -----

// Steps of several tokens (pooled slots) take no parts.
func.func @token_bound_steps_with_parts(%x: f32) -> f32 {
  // expected-error @+1 {{token_bound: a step covers at least one token, and steps of several (per_step) take no parts, got per_step = 4, part = 2}}
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, part = 2, per_part = 4, per_step = 4>} : f32
  return %0 : f32
}

// -----

func.func @token_bound_empty_steps(%x: f32) -> f32 {
  // expected-error @+1 {{token_bound: a step covers at least one token, and steps of several (per_step) take no parts, got per_step = 0, part = -1}}
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 0>} : f32
  return %0 : f32
}

// -----

func.func @token_bound_as_an_array(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.token_bound' must be a #linformer.token_bound, not array<i64: 2, 0>}}
  %0 = arith.addf %x, %x {linformer.token_bound = array<i64: 2, 0>} : f32
  return %0 : f32
}

// -----

// Masked steps of several tokens (the core's key mask select over slots)
// need no part loop.
func.func @token_bound_masked_steps(%x: f32) -> f32 {
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true, per_step = 4>} : f32
  return %0 : f32
}

// -----

// Masked single tokens (E's row sums, whose vector steps may cover tokens
// past a length and select them away) need no part loop either.
func.func @token_bound_masked_tokens(%x: f32) -> f32 {
  %0 = arith.addf %x, %x {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true>} : f32
  return %0 : f32
}

// -----

// The f32 attention core's CUDA schedule: a tensor-core one in its place
// is refused by name.
func.func @f32_core_schedule_of_another_kind(%x: f32) -> f32 {
  // expected-error @+1 {{'linformer.cuda_f32_core_schedule' must be a #linformer.cuda_f32_core_schedule, not #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = false, groups = 1, ldmatrix = false, wgmma = false>}}
  %0 = arith.addf %x, %x {linformer.cuda_f32_core_schedule = #linformer.cuda_core_schedule<warps = 8, slots = 32, staged = false, groups = 1, ldmatrix = false, wgmma = false>} : f32
  return %0 : f32
}
