// RUN: linformer-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(linformer-cuda-emulate-shuffles))'

// What is not lowered is an error that says so.
func.func @in_a_loop(%in: memref<32xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  scf.parallel (%t) = (%c0) to (%c32) step (%c1) {
    %a = memref.load %in[%t] : memref<32xf32>
    // expected-error @below {{holds a gpu.shuffle in its regions: the host lowering splits thread loops only at shuffles in their own body}}
    %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a) -> (f32) {
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
  // expected-error @below {{has a gpu.shuffle but 16 threads along x, not whole warps of 32}}
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
  // expected-error @below {{is in no loop over threads (an scf.parallel with a dimension mapped to thread x): the host has no lanes to take its value from}}
  %o, %v = gpu.shuffle xor %a, %off, %w : f32
  return %o : f32
}
