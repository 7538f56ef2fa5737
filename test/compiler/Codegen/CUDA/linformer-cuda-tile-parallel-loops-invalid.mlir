// RUN: linformer-opt %s --verify-diagnostics --linformer-cuda-tile-parallel-loops="threads-x=64 threads-y=32"

// A block has at most 1024 threads; the pass says so instead of producing
// launches the driver would refuse.
// expected-error @+1 {{threads-x 64 x threads-y 32 is not a CUDA block size (1 ..= 1024 threads)}}
func.func @too_many_threads() {
  return
}
