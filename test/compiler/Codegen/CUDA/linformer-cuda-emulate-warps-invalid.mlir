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
    // expected-error @below {{holds a warp- or block-wide op (gpu.shuffle, mma.sync, ldmatrix, gpu.barrier) but its bounds depend on the thread: the host runs its steps thread loop by thread loop, so every thread of the loop must take the same steps}}
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
    // expected-error @below {{holds a warp- or block-wide op (gpu.shuffle, mma.sync, ldmatrix, gpu.barrier) in a region that is not an scf.for's: the host splits thread loops only around loops that every thread runs alike}}
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

// Half a warp along x: a shuffle whose partner is in the other half (xor
// 16) reads a thread of another row, which the host does not lower.
func.func @half_warp(%in: memref<16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %off = arith.constant 16 : i32
  %w = arith.constant 32 : i32
  // expected-error @below {{has a warp-wide op (gpu.shuffle, mma.sync) but 16 threads along x, not whole warps of 32 (fewer are lowered only as a power of two with shuffles of constant offsets below it)}}
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

// -----

// A barrier in a loop over a warp's lanes inside one over the warps: the
// host's split of the inner loop would not wait for the other warps.
func.func @barrier_nested(%out: memref<2x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%w) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%l) = (%c0) to (%c32) step (%c1) {
      // expected-error @below {{is in a loop over some of a block's threads, inside another over the rest: the host's split of the inner loop would not wait for the other threads}}
      gpu.barrier
      memref.store %z, %out[%w, %l] : memref<2x32xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Shared memory the host cannot size: read other than through a static
// view at a constant byte shift.
func.func @shared_dynamic_view(%n: index, %out: memref<32xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%l) = (%c0) to (%c32) step (%c1) {
    %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    // expected-error @below {{uses the dynamic shared memory other than as a static memref.view at a constant byte shift: the host cannot size its buffer}}
    %v = memref.view %raw[%c0][%n] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xi32, #gpu.address_space<workgroup>>
    %x = memref.load %v[%l] : memref<?xi32, #gpu.address_space<workgroup>>
    memref.store %x, %out[%l] : memref<32xi32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// ldmatrix from a 2-D buffer: the host reads rows of a 1-D one.
func.func @ldmatrix_2d(%out: memref<32xvector<4x1xi32>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%l) = (%c0) to (%c32) step (%c1) {
    %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %h = memref.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x4xi32, #gpu.address_space<workgroup>>
    // expected-error @below {{is lowered for the host only from a 1-D buffer of 32-bit elements (a row's 4 words) or, transposed, of 16-bit ones, into a vector<n x 1> or vector<n x 2> of that element type}}
    %m = nvgpu.ldmatrix %h[%l, %c0] {numTiles = 4 : i32, transpose = false} : memref<32x4xi32, #gpu.address_space<workgroup>> -> vector<4x1xi32>
    memref.store %m, %out[%l] : memref<32xvector<4x1xi32>>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Fewer threads along x than a warp, but not a power of two.
func.func @odd_lanes(%in: memref<12x8xf32>, %out: memref<12x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %off = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  // expected-error @below {{has a warp-wide op (gpu.shuffle, mma.sync) but 12 threads along x, not whole warps of 32}}
  scf.parallel (%y, %t) = (%c0, %c0) to (%c8, %c12) step (%c1, %c1) {
    %a = memref.load %in[%t, %y] : memref<12x8xf32>
    %o, %v = gpu.shuffle xor %a, %off, %w : f32
    memref.store %o, %out[%t, %y] : memref<12x8xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A wgmma the host does not lower: scale-d zero (D = A B, ignoring D).
func.func @wgmma_scale_zero(%desc: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%w, %l) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
    %u = llvm.mlir.poison : !llvm.struct<(f32, f32, f32, f32)>
    // expected-error @below {{is lowered for the host only as m64nNk16 on bf16 or f16 with f32 accumulators, scales of one and a K-major A}}
    %r = nvvm.wgmma.mma_async %desc, %desc, %u, <m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// A descriptor that is not an address in a shared buffer: the host cannot
// tell what the wgmma reads.
func.func @wgmma_foreign_descriptor(%desc: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%w, %l) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
    %u = llvm.mlir.poison : !llvm.struct<(f32, f32, f32, f32)>
    // expected-error @below {{has a descriptor not built from one shared buffer's address (a view of the block's shared memory): the host cannot tell what it reads}}
    %r = nvvm.wgmma.mma_async %desc, %desc, %u, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}

// -----

// Inline PTX marked as a wgmma with A in registers (n = 8: 4 accumulators)
// but without its operands (4 accumulators, 4 A registers, a descriptor).
func.func @wgmma_rs_operands(%d: f32, %a: i32, %desc: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%w, %l) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
    // expected-error @below {{is marked as a wgmma with A in registers but does not have its operands (n / 2 accumulators, 4 A registers, B's descriptor)}}
    %r = llvm.inline_asm has_side_effects asm_dialect = att {linformer.cuda_host_wgmma = array<i64: 8, 1, 1>} "wgmma", "=f,=f,=f,=f,0,1,2,3,r,l" %d, %d, %d, %d, %a, %desc : (f32, f32, f32, f32, i32, i64) -> !llvm.struct<(f32, f32, f32, f32)>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  return
}
