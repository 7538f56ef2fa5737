// A schedule that does not fit its kernel is an error naming the kernel's
// key and what is wrong; so are unreadable or malformed schedule files and
// an unknown ISA.
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="schedule-file=%S/Inputs/bad-tile.json" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="schedule-file=%S/Inputs/bad-reduction.json" 2>&1 | FileCheck %s --check-prefix=RED
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="schedule-file=%S/Inputs/bad-rank.json" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="schedule-file=%S/Inputs/bad-field.json" 2>&1 | FileCheck %s --check-prefix=FIELD
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="schedule-file=%S/Inputs/not-json.json" 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="schedule-file=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="isa=avx1024" 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not linformer-opt %s --linformer-cpu-select-schedules="unroll=0 vector-width=-3" 2>&1 | FileCheck %s --check-prefix=FORCED

// TILE: error: 'linalg.generic' op schedule (file) for kernel 'contraction/pppRp/1x8x64x32x16/8dc03e' does not fit: workgroup tile 24 of loop 2 does not divide its 64 iterations
// RED: error: 'linalg.generic' op schedule (file) for kernel 'contraction/pppRp/1x8x64x32x16/8dc03e' does not fit: loop 3 is a reduction: its workgroup tile must be 0 (whole)
// RANK: error: 'linalg.generic' op schedule (file) for kernel 'contraction/pppRp/1x8x64x32x16/8dc03e' does not fit: the workgroup tile has 2 sizes but the kernel has 5 loops
// FIELD: error: {{.*}}bad-field.json: schedule file: kernels[0] ('contraction/pppRp/1x8x64x32x16/8dc03e'): 'register' must be [rows, columns]
// JSON: error: {{.*}}not-json.json: schedule file: not valid JSON
// MISSING: error: cannot read the schedule file '{{.*}}missing.json': No such file or directory
// ISA: error: unknown isa 'avx1024': expected host, avx512, avx2 or sse
// FORCED: error: 'linalg.generic' op schedule (forced) for kernel 'contraction/pppRp/1x8x64x32x16/8dc03e' does not fit: register columns -3 outside [1, 256]

#x = affine_map<(b, h, i, m, c) -> (b, i, m)>
#w = affine_map<(b, h, i, m, c) -> (m, h, c)>
#o = affine_map<(b, h, i, m, c) -> (b, h, i, c)>
func.func @projection(%x: tensor<1x64x32xf32>, %w: tensor<32x8x16xf32>,
    %init: tensor<1x8x64x16xf32>) -> tensor<1x8x64x16xf32> {
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x64x32xf32>, tensor<32x8x16xf32>)
      outs(%init : tensor<1x8x64x16xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x64x16xf32>
  return %q : tensor<1x8x64x16xf32>
}
