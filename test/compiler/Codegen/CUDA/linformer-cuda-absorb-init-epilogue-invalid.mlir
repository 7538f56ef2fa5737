// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-tensor-core-contractions{precision=bf16}))'
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16}))' | FileCheck %s

// A linformer.cuda_absorbs that names an op which is not there to absorb
// (written by hand, or the IR changed after linformer-cuda-absorb-init-
// epilogue chose it) is an error that says which, not a wrong kernel. Run
// through the absorb pass first, the attribute is chosen again and the
// rewrite goes through (the second RUN line, where no diagnostic is
// expected: the expected-error lines below are for the first).

// CHECK-LABEL: func.func @no_init
// CHECK: nvvm.mma.sync
func.func @no_init(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                   %y: memref<128x64xf32>) {
  // expected-error @below {{is marked to absorb its init (linformer.cuda_absorbs), but the op before it does not write its output elementwise from other buffers (a bias broadcast, a fill)}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_absorbs = #linformer.cuda_absorption<init = true, epilogue = false>,
               linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [2, 1], split = 1, warps = [0, 0], chunk = 0, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The op after C is elementwise but writes a buffer of its own while C is
// read again after it: not an epilogue.
// CHECK-LABEL: func.func @epilogue_with_other_reader
// CHECK: nvvm.mma.sync
// CHECK: math.erf
func.func @epilogue_with_other_reader(%x: memref<128x64xbf16>, %w: memref<64x64xbf16>,
                                      %y: memref<128x64xf32>, %g: memref<128x64xf32>,
                                      %z: memref<128x64xf32>) {
  // expected-error @below {{is marked to absorb its epilogue (linformer.cuda_absorbs), but the op after it is not elementwise over its output reading it once at the element it writes, or the output's values have other readers}}
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xbf16>, memref<64x64xbf16>) outs(%y : memref<128x64xf32>)
      attrs = {linformer.cuda_absorbs = #linformer.cuda_absorption<init = false, epilogue = true>,
               linformer.cuda_schedule = #linformer.cuda_schedule<warp_tiles = [2, 1], split = 1, warps = [0, 0], chunk = 0, buffers = 1, async = [false, false], natural_b = false, ldmatrix_a = false, wgmma = false>} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<128x64xf32>) outs(%g : memref<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.erf %in : f32
    linalg.yield %e : f32
  }
  memref.copy %y, %z : memref<128x64xf32> to memref<128x64xf32>
  return
}
