// What linformer-cuda-select-schedules chooses for an f32 attention core (no
// tensor cores: the #linformer.cuda_f32_core_schedule it attaches and
// records), and what linformer-cuda-expand-attention-core builds from it:
// the schedule's lanes a query row and rows a thread, exactly.
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32}))' | FileCheck %s --check-prefix=DEFAULT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 core-rows=1 core-min-blocks=17}))' | FileCheck %s --check-prefix=EIGHT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 core-lanes=16 core-rows=4}))' | FileCheck %s --check-prefix=GIVEN
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 core-lanes=16 core-rows=4},linformer-cuda-expand-attention-core))' | FileCheck %s --check-prefix=APPLIED
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 core-lanes=2}))' 2>&1 | FileCheck %s --check-prefix=BADLANES
// RUN: not linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=f32 core-rows=3}))' 2>&1 | FileCheck %s --check-prefix=BADROWS

// n = 128, d = 16, k = 8, 2 x 4 heads. Default: 2 rows a thread (n is a
// multiple of 64), so 4 lanes a row. The record is the function's
// linformer.cuda_schedules entry, as --print-schedule writes it.
// DEFAULT-LABEL: func.func @core
// DEFAULT-SAME: linformer.cuda_schedules = [{key = "attention_core/2x4x128x16x8/f32,f32,f32,f32", schedule = #linformer.cuda_f32_core_schedule<lanes = 4, rows = 2>, source = "selected"}]
// DEFAULT: linformer.attention_core {{.*}} {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 4, rows = 2>}
// One row a thread and 17 blocks to fill: 4 lanes give 2 x 4 x 128 x 4 =
// 4096 threads, fewer than 17 x 256, so 8.
// EIGHT-LABEL: func.func @core
// EIGHT: linformer.attention_core {{.*}} {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 8, rows = 1>}
// GIVEN-LABEL: func.func @core
// GIVEN: linformer.attention_core {{.*}} {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 16, rows = 4>}
// Expanded as the schedule says (the pass's own lanes and rows options,
// 1 and 1 here, do not apply): a loop over (b, h, n / 4 row groups, 16
// lanes), each lane one head column of 4 rows, the scores added over 16
// lanes (shuffles xor 8, 4, 2, 1).
// APPLIED-LABEL: func.func @core
// APPLIED: scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c4, %c32, %c16{{.*}})
// APPLIED: gpu.shuffle xor %{{.*}}, %c8_i32
// APPLIED: gpu.shuffle xor %{{.*}}, %c4_i32
// APPLIED: gpu.shuffle xor %{{.*}}, %c2_i32
// APPLIED: gpu.shuffle xor %{{.*}}, %c1_i32
// APPLIED: } {linformer.cuda_whole_warps
// APPLIED-NOT: cuda_f32_core_schedule =
// BADLANES: error: core-lanes 2 is not a count of lanes a query row the f32 core takes (0: chosen, 1, 4, 8 or 16)
// BADROWS: error: core-rows 3 is not a count of query rows a thread the f32 core takes (1, 2 or 4)
func.func @core(%q: memref<2x4x128x16xf32>, %k: memref<2x4x8x16xf32>,
                %v: memref<2x4x8x16xf32>, %o: memref<2x4x128x16xf32>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<2x4x128x16xf32>, memref<2x4x8x16xf32>,
       memref<2x4x8x16xf32>, memref<2x4x128x16xf32>) -> ()
  return
}

// -----

// 8 query rows (not a whole warp) and a head width of 12: one row a
// thread, one lane a row, whatever was asked.
// DEFAULT-LABEL: func.func @short
// DEFAULT: linformer.attention_core {{.*}} {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 1, rows = 1>}
// GIVEN-LABEL: func.func @short
// GIVEN: linformer.attention_core {{.*}} {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 1, rows = 1>}
func.func @short(%q: memref<1x1x8x12xf32>, %k: memref<1x1x16x12xf32>,
                 %v: memref<1x1x16x12xf32>, %o: memref<1x1x8x12xf32>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x1x8x12xf32>, memref<1x1x16x12xf32>,
       memref<1x1x16x12xf32>, memref<1x1x8x12xf32>) -> ()
  return
}
