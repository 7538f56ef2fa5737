// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-emulate-warps))'

// What is not lowered is an error that says so.
// A loop whose steps differ between the threads: the host runs a loop of
// thread loops, one step for all threads at a time.
func.func @thread_bounds(%in: memref<32xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %a = memref.load %in[%t] : memref<32xf32>
    // expected-error @below {{holds a warp-wide op (gpu.shuffle, mma.sync) but its bounds depend on the thread: the host runs its steps thread loop by thread loop, so every thread of the loop must take the same steps}}
    %s = scf.for %i = %c0 to %t step %c1 iter_args(%x = %a) -> (f32) {
      %o, %v = gpu.shuffle xor %x, %off, %w : f32
      %y = arith.addf %x, %o : f32
      scf.yield %y : f32
    }
    memref.store %s, %out[%t] : memref<32xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

func.func @in_a_branch(%in: memref<32xf32>, %out: memref<32xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %a = memref.load %in[%t] : memref<32xf32>
    // expected-error @below {{holds a warp-wide op (gpu.shuffle, mma.sync) in a region that is not an scf.for's: the host splits thread loops only around loops that every thread runs alike}}
    %s = scf.if %p -> (f32) {
      %o, %v = gpu.shuffle xor %a, %off, %w : f32
      scf.yield %o : f32
    } else {
      scf.yield %a : f32
    }
    memref.store %s, %out[%t] : memref<32xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

func.func @mma_shape(%a: memref<32xvector<2x2xf16>>, %b: memref<32xvector<1x2xf16>>, %out: memref<32xvector<2x2xf32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant dense<0.0> : vector<2x2xf32>
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %x = memref.load %a[%t] : memref<32xvector<2x2xf16>>
    %y = memref.load %b[%t] : memref<32xvector<1x2xf16>>
    // expected-error @below {{is lowered for the host only as m16n8k4 / m16n8k8 on tf32 or m16n8k16 on f16, with f32 accumulators}}
    %d = nvgpu.mma.sync(%x, %y, %zero) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    memref.store %d, %out[%t] : memref<32xvector<2x2xf32>>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

func.func @down(%in: memref<32xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %a = memref.load %in[%t] : memref<32xf32>
    // expected-error @below {{is lowered for the host only as an xor over all 32 lanes of a warp}}
    %o, %v = gpu.shuffle down %a, %off, %w : f32
    memref.store %o, %out[%t] : memref<32xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

func.func @half_warp(%in: memref<16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  // expected-error @below {{has a warp-wide op (gpu.shuffle, mma.sync) but 16 threads along x, not whole warps of 32}}
  scf.parallel (%t) = (%c0) to (%c16) step (%c1) {
    %a = memref.load %in[%t] : memref<16xf32>
    %o, %v = gpu.shuffle xor %a, %off, %w : f32
    memref.store %o, %out[%t] : memref<16xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

func.func @no_threads(%a: f32) -> f32 {
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  // expected-error @below {{is in no loop over threads (an scf.parallel with a dimension mapped to thread x): the host has no lanes to take its operands from}}
  %o, %v = gpu.shuffle xor %a, %off, %w : f32
  return %o : f32
}
