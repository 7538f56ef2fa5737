// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{mma=bf16}))'

// The tensor-core core applies the schedule linformer-cuda-select-schedules
// chose; it does not choose one itself.
func.func @no_schedule(%q: memref<1x2x32x16xbf16>, %k: memref<1x2x16x16xbf16>,
                       %v: memref<1x2x16x16xbf16>, %o: memref<1x2x32x16xbf16>) {
  // expected-error @+1 {{the attention core on tensor cores needs its #linformer.cuda_core_schedule (as linformer.cuda_core_schedule): run linformer-cuda-select-schedules first}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x2x32x16xbf16>, memref<1x2x16x16xbf16>, memref<1x2x16x16xbf16>,
       memref<1x2x32x16xbf16>) -> ()
  return
}

// -----

// A schedule written by hand (or for another shape) is checked against
// the core's shape: 4 warps a block do not divide its 2 query tiles.
func.func @warps(%q: memref<1x2x32x16xbf16>, %k: memref<1x2x16x16xbf16>,
                 %v: memref<1x2x16x16xbf16>, %o: memref<1x2x32x16xbf16>) {
  // expected-error-re @+1 {{'linformer.attention_core' op cannot take its schedule #linformer.cuda_core_schedule<warps = 4, {{.*}}>: warps 4 do not divide its 2 query tiles}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 4, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x16xbf16>, memref<1x2x16x16xbf16>, memref<1x2x16x16xbf16>,
       memref<1x2x32x16xbf16>) -> ()
  return
}

// -----

// Two query tiles a warp: 2 warps hold 4 tiles, which do not divide the
// core's 2.
func.func @tiles(%q: memref<1x2x32x16xbf16>, %k: memref<1x2x16x16xbf16>,
                 %v: memref<1x2x16x16xbf16>, %o: memref<1x2x32x16xbf16>) {
  // expected-error-re @+1 {{cannot take its schedule {{.*}}: warps 2 x tiles 2 do not divide its 2 query tiles}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false, tiles = 2>}
    : (memref<1x2x32x16xbf16>, memref<1x2x16x16xbf16>, memref<1x2x16x16xbf16>,
       memref<1x2x32x16xbf16>) -> ()
  return
}

// -----

// 32 slots a step do not divide k = 48.
func.func @slots(%q: memref<1x1x32x16xbf16>, %k: memref<1x1x48x16xbf16>,
                 %v: memref<1x1x48x16xbf16>, %o: memref<1x1x32x16xbf16>) {
  // expected-error-re @+1 {{cannot take its schedule {{.*}}: slots 32 do not divide its k = 48}}
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 32, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x1x32x16xbf16>, memref<1x1x48x16xbf16>, memref<1x1x48x16xbf16>,
       memref<1x1x32x16xbf16>) -> ()
  return
}
