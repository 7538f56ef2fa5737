// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-tensor-core-contractions{precision=bf16 emulate=true exact=true}))' --verify-diagnostics
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-tensor-core-contractions{precision=f32}))' 2>&1 | FileCheck %s --check-prefix=F32

// wgmma multiplies 16-bit operands from shared memory. Exact emulation
// stages f32 operands (so does precision f32, lane by lane), which no
// wgmma reads: a schedule that asks for wgmma there is refused with the
// reason, as linformer-cuda-select-schedules never chooses it.

// F32: wgmma multiplies 16-bit operands, and f32 stages f32 ones

func.func @wgmma_exact(%x: memref<128x64xbf16>, %w: memref<64x128xbf16>,
                       %y: memref<128x128xf32>) {
  // expected-error-re @+1 {{cannot take its schedule #linformer.cuda_schedule<{{.*}}>: wgmma multiplies 16-bit operands, and exact emulation stages f32 ones (a schedule with wgmma = true needs bf16 or f16, not exact)}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x128xbf16>) outs(%y : memref<128x128xf32>)
      attrs = {linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [1, 16], split = 1, warps = [4, 1], chunk = 16, buffers = 2, async = [true, true], natural_b = true, ldmatrix_a = false, wgmma = true>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
