// RUN: linformer-opt %s --split-input-file --linformer-cpu-select-schedules | FileCheck %s
// RUN: linformer-opt %s --split-input-file \
// RUN:   --linformer-cpu-select-schedules="schedule-file=%S/Inputs/override.json" \
// RUN:   2>&1 | FileCheck %s --check-prefix=FILE
// RUN: linformer-opt %s --split-input-file \
// RUN:   --linformer-cpu-select-schedules="schedule-file=%S/Inputs/override.json" \
// RUN:   2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: linformer-opt %s --split-input-file \
// RUN:   --linformer-cpu-select-schedules="vector-width=16 unroll=4 reduction-tile=32 row-tile=16" \
// RUN:   | FileCheck %s --check-prefix=FORCED

// The cost model picks each kernel root's schedule from the module's target.
// Per target, the register tile keeps accumulators + streamed vectors + one
// broadcast within the vector registers: AVX2 has 16 ymm registers (8 f32
// lanes), AVX-512 32 zmm registers (16 lanes). A spilled accumulator tile
// was the AVX2 bottleneck of the fixed 8x32 schedule (32 ymm accumulators).
// The input projection [b=1, h=8, i=4096, m=512, c=64] and the attention
// core [b=1, h=8, n=4096, d=64] with k = 256 are the benchmark layer's.

// AVX2: 6 x 16 = 12 accumulators (2 ymm per row) + 2 streamed + 1 = 15 <= 16
// registers; 8 accumulators (4 x 16) are too few to hide the FMA latency
// with loads in flight. 6 rows leave a partial tile, which is peeled: 64-row
// workgroups (10 x 6 + 4) waste less than 32-row ones (5 x 6 + 2). The
// heads are on the columns' side (in W and the result, not in X): a
// workgroup keeps them whole (0), so that its rows of X are read once for
// all heads, which matters once X outgrows the caches (n = 65536: the Q
// projection went from 254 to 174 ms); 4096 / 64 = 64 workgroups. The
// reduction block: (6 + 16) x 128 floats (11 KiB) would fit in half of L1,
// but an operand read in place (not packed) has a row a step, and blocks
// stop at 64 steps (faster on Zen 4 for every kernel of the layer).
// CHECK-LABEL: func.func @projection_avx2(
// CHECK: linalg.generic
// CHECK-SAME: linformer.kernel = #linformer.kernel_shape<key = "contraction/pppRp/1x8x4096x512x64/{{[0-9a-f]+}}", kind = "contraction", loops = [1, 8, 4096, 512, 64], iterators = "pppRp", output_dims = [0, 1, 2, 4], flops = 2147483648, source = "cost-model", m_loop = 2, n_loop = 4, column_loops = [1, 4]>
// CHECK-SAME: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 64, 0, 0], register = [6, 16], reduction = 64, pack = false>
// CHECK: linformer.attention_core
// CHECK-SAME: linformer.kernel = #linformer.kernel_shape<key = "attention_core/k256/{{.*}}", kind = "attention_core", {{.*}}, flops = 2147483648, source = "cost-model", core_k = 256>
// CHECK-SAME: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 1, 64, 0], register = [6, 16], reduction = 64, pack = false>
// A schedule file replaces the model's pick for kernels with its key (the
// same projection shape in both modules below); the third module has no
// such kernel, which is a warning.
// WARN: warning: schedule file entry 'contraction/pppRp/1x8x4096x512x64/8dc03e' matches no kernel of this module
// WARN-NOT: warning
// FILE-LABEL: func.func @projection_avx2(
// FILE: linalg.generic
// FILE-SAME: source = "file"
// FILE-SAME: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 1, 64, 0, 0], register = [8, 8], reduction = 256, pack = false>
// FILE: linformer.attention_core
// FILE-SAME: source = "cost-model"
// FORCED-LABEL: func.func @projection_avx2(
// FORCED: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 16, 0, 0], register = [4, 16], reduction = 32, pack = false>
#x = affine_map<(b, h, i, m, c) -> (b, i, m)>
#w = affine_map<(b, h, i, m, c) -> (m, h, c)>
#o = affine_map<(b, h, i, m, c) -> (b, h, i, c)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @projection_avx2(%x: tensor<1x4096x512xf32>, %w: tensor<512x8x64xf32>,
    %init: tensor<1x8x4096x64xf32>, %k: tensor<1x8x256x64xf32>)
    -> tensor<1x8x4096x64xf32> {
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x4096x512xf32>, tensor<512x8x64xf32>)
      outs(%init : tensor<1x8x4096x64xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4096x64xf32>
  %o_init = tensor.empty() : tensor<1x8x4096x64xf32>
  %o = linformer.attention_core %q, %k, %k scale(0.125)
      outs(%o_init) : (tensor<1x8x4096x64xf32>, tensor<1x8x256x64xf32>,
         tensor<1x8x256x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
}

// -----

// AVX-512 at full width (2 x 512-bit FMA): 8 x 32 = 16 accumulators (2 zmm
// per row) + 2 + 1 registers. 4 x 64 has as many accumulators and fewer
// loads per FMA, but reads 4 streamed vectors (from L2: the weights' rows
// are 2 KiB apart) per 8 FMA cycles, which L2's 32 bytes a cycle cannot
// refill (modelled 0.8, measured 0.74 of the peak on Zen 5 against 0.88).
// The attention core's K and V tiles stay in L1: its query tile bounds its
// columns, so it takes 64 query rows to fit 4 x 64 (equal modelled
// efficiency, fewer loads per FMA than 32 rows' 8 x 32).
// CHECK-LABEL: func.func @projection_avx512(
// CHECK: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 32, 0, 0], register = [8, 32], reduction = 64, pack = false>
// CHECK: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 1, 64, 0], register = [4, 64], reduction = 64, pack = false>
// FILE-LABEL: func.func @projection_avx512(
// FILE: source = "file"
// FILE-SAME: register = [8, 8]
#x = affine_map<(b, h, i, m, c) -> (b, i, m)>
#w = affine_map<(b, h, i, m, c) -> (m, h, c)>
#o = affine_map<(b, h, i, m, c) -> (b, h, i, c)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "skylake-avx512",
    features = "+avx512f,+avx2,+fma", isa = "avx512", vector_bits = 512,
    vector_registers = 32, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
func.func @projection_avx512(%x: tensor<1x4096x512xf32>, %w: tensor<512x8x64xf32>,
    %init: tensor<1x8x4096x64xf32>, %k: tensor<1x8x256x64xf32>)
    -> tensor<1x8x4096x64xf32> {
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x4096x512xf32>, tensor<512x8x64xf32>)
      outs(%init : tensor<1x8x4096x64xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4096x64xf32>
  %o_init = tensor.empty() : tensor<1x8x4096x64xf32>
  %o = linformer.attention_core %q, %k, %k scale(0.125)
      outs(%o_init) : (tensor<1x8x4096x64xf32>, tensor<1x8x256x64xf32>,
         tensor<1x8x256x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
}

// -----

// Zen 4 runs a 512-bit FMA as two 256-bit halves (fma_bits = 256): twice
// the cycles per tile, within which L2 refills 4 x 64's streamed vectors,
// so the tie-break keeps its fewer loads per FMA (8 per 16 FMAs, not 10;
// 1-2% faster there on the GEMMs, 10% on E X). (4 + 64) x 64 floats = 17
// KiB per reduction block, within half of L1 and its 10% slack.
// CHECK-LABEL: func.func @projection_halves(
// CHECK: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 32, 0, 0], register = [4, 64], reduction = 64, pack = false>
// FILE-LABEL: func.func @projection_halves(
// FILE: source = "cost-model"
#x = affine_map<(b, h, i, m, c) -> (b, i, m)>
#w = affine_map<(b, h, i, m, c) -> (m, h, c)>
#o = affine_map<(b, h, i, m, c) -> (b, h, i, c)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver4",
    features = "+avx512f,+avx2,+fma", isa = "avx512", vector_bits = 512,
    vector_registers = 32, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 1048576, l3_bytes = 33554432, cores = 2, fma_bits = 256>} {
func.func @projection_halves(%x: tensor<1x4096x512xf32>, %w: tensor<512x8x64xf32>,
    %init: tensor<1x8x4096x64xf32>, %k: tensor<1x8x256x64xf32>)
    -> tensor<1x8x4096x64xf32> {
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x4096x512xf32>, tensor<512x8x64xf32>)
      outs(%init : tensor<1x8x4096x64xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4096x64xf32>
  %o_init = tensor.empty() : tensor<1x8x4096x64xf32>
  %o = linformer.attention_core %q, %k, %k scale(0.125)
      outs(%o_init) : (tensor<1x8x4096x64xf32>, tensor<1x8x256x64xf32>,
         tensor<1x8x256x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
}

// -----

// A tiny kernel still gets at least one workgroup tile; with too few rows to
// split, the innermost loop is halved down to one vector.
// CHECK-LABEL: func.func @small(
// CHECK: linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 16], register = [1, 16], reduction = 0, pack = false>
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "",
    features = "", isa = "avx512", vector_bits = 512,
    vector_registers = 32, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
func.func @small(%x: tensor<1x32xf32>, %init: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1x32xf32>) outs(%init : tensor<1x32xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}
}
