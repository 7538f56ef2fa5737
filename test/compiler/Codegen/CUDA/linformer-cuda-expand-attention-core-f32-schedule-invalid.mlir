// An f32 core's #linformer.cuda_f32_core_schedule that does not fit it (a
// hand-written or edited one) is an error that says why, and the attribute
// itself refuses counts the core has no code for.
// RUN: linformer-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core))'

func.func @rows(%q: memref<1x1x96x16xf32>, %k: memref<1x1x8x16xf32>,
                %v: memref<1x1x8x16xf32>, %o: memref<1x1x96x16xf32>) {
  // expected-error @below {{cannot take its schedule #linformer.cuda_f32_core_schedule<lanes = 4, rows = 4>: rows 4 need n a multiple of 128 (whole warps of row groups), not 96}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 4, rows = 4>}
    : (memref<1x1x96x16xf32>, memref<1x1x8x16xf32>,
       memref<1x1x8x16xf32>, memref<1x1x96x16xf32>) -> ()
  return
}

// -----

func.func @lanes(%q: memref<1x1x64x12xf32>, %k: memref<1x1x8x12xf32>,
                 %v: memref<1x1x8x12xf32>, %o: memref<1x1x64x12xf32>) {
  // expected-error @below {{cannot take its schedule #linformer.cuda_f32_core_schedule<lanes = 8, rows = 1>: lanes 8 do not divide its head width 12}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 8, rows = 1>}
    : (memref<1x1x64x12xf32>, memref<1x1x8x12xf32>,
       memref<1x1x8x12xf32>, memref<1x1x64x12xf32>) -> ()
  return
}

// -----

func.func @warps(%q: memref<1x1x40x16xf32>, %k: memref<1x1x8x16xf32>,
                 %v: memref<1x1x8x16xf32>, %o: memref<1x1x40x16xf32>) {
  // expected-error @below {{cannot take its schedule #linformer.cuda_f32_core_schedule<lanes = 4, rows = 1>: lanes 4 need n a multiple of 32 (whole warps), not 40}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_f32_core_schedule = #linformer.cuda_f32_core_schedule<lanes = 4, rows = 1>}
    : (memref<1x1x40x16xf32>, memref<1x1x8x16xf32>,
       memref<1x1x8x16xf32>, memref<1x1x40x16xf32>) -> ()
  return
}

// -----

func.func @invalid() {
  // expected-error @below {{lanes (a query row's) must be 1, 4, 8 or 16; got 2}}
  "test.op"() {s = #linformer.cuda_f32_core_schedule<lanes = 2, rows = 1>} : () -> ()
  return
}

// -----

func.func @invalid_rows() {
  // expected-error @below {{rows (a thread's) must be 1, 2 or 4; got 8}}
  "test.op"() {s = #linformer.cuda_f32_core_schedule<lanes = 4, rows = 8>} : () -> ()
  return
}

// -----

// A tensor-core schedule on an f32 core needs TF32 (mma=tf32 or tf32x3).
func.func @tensor_cores(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
                        %v: memref<1x2x16x16xf32>, %o: memref<1x2x32x16xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_core_schedule<{{.*}}>: an f32 core runs on tensor cores as TF32 only (mma=tf32 or tf32x3), not with mma=none}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xf32>) -> ()
  return
}
