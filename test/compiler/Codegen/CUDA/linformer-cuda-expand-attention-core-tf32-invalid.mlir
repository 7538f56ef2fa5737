// An f32 core's tensor-core schedule that TF32 cannot take is an error that
// says why (with mma=tf32; without it, see
// linformer-cuda-expand-attention-core-f32-schedule-invalid.mlir).
// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{mma=tf32}))'

// Staged K and V are words of two 16-bit operands: TF32 reads its
// fragments from global memory.
func.func @staged(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
                  %v: memref<1x2x16x16xf32>, %o: memref<1x2x32x16xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_core_schedule<{{.*}}staged = true{{.*}}>: on TF32 tensor cores the core is not staged (no ldmatrix, no wgmma): every warp reads its fragments from global memory}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = true, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xf32>) -> ()
  return
}

// -----

// A head width of 12 is no whole number of k8 steps.
func.func @width(%q: memref<1x2x32x12xf32>, %k: memref<1x2x16x12xf32>,
                 %v: memref<1x2x16x12xf32>, %o: memref<1x2x32x12xf32>) {
  // expected-error-re @+1 {{cannot take its schedule {{.*}}: on TF32 tensor cores n and k must be multiples of 16 and the head width of 8, not n = 32, k = 16, d = 12}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x12xf32>, memref<1x2x16x12xf32>, memref<1x2x16x12xf32>,
       memref<1x2x32x12xf32>) -> ()
  return
}

// -----

// 32 slots a step do not divide k = 16.
func.func @slots(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
                 %v: memref<1x2x16x16xf32>, %o: memref<1x2x32x16xf32>) {
  // expected-error-re @+1 {{cannot take its schedule {{.*}}: slots 32 do not divide its k = 16}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 32, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xf32>) -> ()
  return
}

// -----

// TF32 multiplies f32 data: bf16 buffers belong to the 16-bit core.
func.func @bf16_data(%q: memref<1x2x32x16xbf16>, %k: memref<1x2x16x16xbf16>,
                     %v: memref<1x2x16x16xbf16>, %o: memref<1x2x32x16xf32>) {
  // expected-error-re @+1 {{cannot take its schedule {{.*}}: on TF32 tensor cores q, key, value and the output are f32}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x16xbf16>, memref<1x2x16x16xbf16>, memref<1x2x16x16xbf16>,
       memref<1x2x32x16xf32>) -> ()
  return
}

// -----

// A dynamic batch: the warps' fragments index static shapes.
func.func @dynamic(%q: memref<?x2x32x16xf32>, %k: memref<?x2x16x16xf32>,
                   %v: memref<?x2x16x16xf32>, %o: memref<?x2x32x16xf32>) {
  // expected-error-re @+1 {{cannot take its schedule {{.*}}: on TF32 tensor cores its shapes must be static}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<?x2x32x16xf32>, memref<?x2x16x16xf32>, memref<?x2x16x16xf32>,
       memref<?x2x32x16xf32>) -> ()
  return
}
