// RUN: linformer-opt %s --split-input-file --verify-diagnostics --linformer-cuda-tile-parallel-loops="threads-x=32 threads-y=4"

// A loop whose lanes shuffle (linformer.cuda_whole_warps: the f32 attention
// core's 4 lanes a query row) must come out in blocks of whole warps: with
// threads-y 4, 4 rows x 4 lanes are 16 threads, and the shuffles' partner
// lanes would not exist. The pass says so instead of emitting the kernel.
func.func @half_warps(%out: memref<2x64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  // expected-error @+1 {{a loop whose lanes shuffle needs blocks of whole warps, its lanes (4) along thread x; threads-x 32 x threads-y 4 give 4 x 4}}
  scf.parallel (%b, %i, %g) = (%c0, %c0, %c0) to (%c2, %c64, %c4) step (%c1, %c1, %c1) {
    memref.store %cst, %out[%b, %i, %g] : memref<2x64x4xf32>
  } {linformer.cuda_whole_warps}
  return
}

// -----

// The same for a loop over tokens, which the pass rebuilds in (sequence,
// token, rest) order before tiling: the mark is read before.
func.func @half_warps_tokens(%out: memref<2x8x64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 1.0 : f32
  // expected-error @+1 {{a loop whose lanes shuffle needs blocks of whole warps, its lanes (4) along thread x; threads-x 32 x threads-y 4 give 4 x 4}}
  scf.parallel (%b, %h, %i, %g) = (%c0, %c0, %c0, %c0) to (%c2, %c8, %c64, %c4) step (%c1, %c1, %c1, %c1) {
    memref.store %cst, %out[%b, %h, %i, %g] : memref<2x8x64x4xf32>
  } {linformer.token_loops = array<i64: 0, 2>, linformer.cuda_whole_warps}
  return
}
