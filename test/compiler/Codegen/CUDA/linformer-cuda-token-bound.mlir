// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16}))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 split-k-in-kernel},canonicalize,cse))' | FileCheck %s --check-prefix=SUMS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 shared-bytes=49152 block-warps=8 split-k-warps=32 prefetch ldmatrix ldmatrix-trans async-copy async-stages=3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=bf16 split-k-in-kernel emulate},canonicalize,cse))' | FileCheck %s --check-prefix=SUMSEMU

// E X with its token bound (linformer.token_bound: token loop 3, batch
// loop 0; E' is zero past each sequence's length): each thread of a block
// computes its k loop's trip count from the block's sequence length, so
// the chunks past it are neither copied nor multiplied. Split-K (8 parts
// of 512 tokens here): part p's chunks start at token 512 p, so its count
// is ceil((L - 512 p) / 16) clamped to [0, 32]; a part wholly past the
// length runs none and adds zeros to the sums.
// CHECK-LABEL: func.func @ex_split(
// CHECK: memref.alloc() : memref<8x2x32x64xf32>
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: %[[L:.*]] = memref.load %arg2[%{{.*}}] : memref<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c512{{.*}} : index
// CHECK: %[[REST:.*]] = arith.subi %[[LI]], %[[START]] : index
// CHECK: %[[N:.*]] = arith.ceildivsi %[[REST]], %c16{{.*}} : index
// CHECK: %[[N0:.*]] = arith.maxsi %[[N]], %c0{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.minsi %[[N0]], %c32{{.*}} : index
// The prefetch of the next chunk stops at the last real one (computed once,
// before the loop).
// CHECK: %[[LAST:.*]] = arith.subi %[[COUNT]], %c1
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[COUNT]] step
// CHECK: arith.minui %{{.*}}, %[[LAST]]
// The parts summed in the kernel (split-k-in-kernel): a counter a block
// tile (2 here, one a sequence), no second loop. After its part's stores
// (and cp.async's last copies), each thread fences, the block meets, thread
// 0 counts the part; the one that counted the 8th sets the counter back to
// zero and tells the block through shared word 0; that block fences and
// adds the tile's 8 parts to C in part order, a thread every 64th element
// of the 32 x 64 tile.
// SUMS-LABEL: func.func @ex_split(
// SUMS-DAG: %[[PARTS:.*]] = memref.alloc() : memref<8x2x32x64xf32>
// SUMS-DAG: %[[COUNTERS:.*]] = memref.alloc() : memref<2xi32>
// SUMS-NOT: linalg.fill
// SUMS: scf.parallel
// SUMS: vector.store %{{.*}}, %[[PARTS]]
// SUMS: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// SUMS-NEXT: nvvm.memory.barrier <gpu>
// SUMS-NEXT: gpu.barrier
// SUMS-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[TID:.*]], %c0 : index
// SUMS-NEXT: scf.if %[[FIRST]] {
// SUMS-NEXT: %[[BEFORE:.*]] = memref.atomic_rmw addi %c1_i32, %[[COUNTERS]][%[[TILE:.*]]] : (i32, memref<2xi32>) -> i32
// SUMS-NEXT: nvvm.memory.barrier <gpu>
// SUMS-NEXT: %[[LASTPART:.*]] = arith.cmpi eq, %[[BEFORE]], %c7_i32 : i32
// SUMS-NEXT: scf.if %[[LASTPART]] {
// SUMS-NEXT: memref.store %c0_i32, %[[COUNTERS]][%[[TILE]]] : memref<2xi32>
// SUMS-NEXT: }
// SUMS-NEXT: %[[WORD:.*]] = arith.extui %[[LASTPART]] : i1 to i32
// SUMS-NEXT: memref.store %[[WORD]], %[[SMEM:.*]][%c0] : memref<{{.*}}xi32, #gpu.address_space<workgroup>>
// SUMS-NEXT: }
// SUMS-NEXT: gpu.barrier
// SUMS-NEXT: %[[VERDICT:.*]] = memref.load %[[SMEM]][%c0]
// SUMS-NEXT: %[[LAST:.*]] = arith.cmpi ne, %[[VERDICT]], %c0_i32 : i32
// SUMS-NEXT: scf.if %[[LAST]] {
// SUMS-NEXT: nvvm.memory.barrier <gpu>
// SUMS-NEXT: scf.for %[[E:.*]] = %[[TID]] to %c2048 step %c64 {
// SUMS: %[[C:.*]] = memref.load %arg3[
// SUMS-NEXT: %[[SUM:.*]] = scf.for %[[Q:.*]] = %c0 to %c8 step %c1 iter_args(%[[ACC:.*]] = %[[C]]) -> (f32) {
// SUMS-NEXT: memref.load %[[PARTS]][%[[Q]],
// SUMS-NEXT: arith.addf %[[ACC]]
// SUMS: memref.store %[[SUM]], %arg3[
// SUMS-NOT: scf.parallel
// SUMS: memref.dealloc %[[COUNTERS]]
// SUMS: memref.dealloc %[[PARTS]]
// On the host the counters come from malloc: zeroed before the launch.
// SUMSEMU-LABEL: func.func @ex_split(
// SUMSEMU: %[[COUNTERS:.*]] = memref.alloc() : memref<2xi32>
// SUMSEMU-NEXT: linalg.fill ins(%c0_i32 : i32) outs(%[[COUNTERS]] : memref<2xi32>)
// SUMSEMU: memref.atomic_rmw addi %c1_i32, %[[COUNTERS]]
#e = affine_map<(b, i, j, t) -> (b, i, t)>
#x = affine_map<(b, i, j, t) -> (b, t, j)>
#o = affine_map<(b, i, j, t) -> (b, i, j)>
func.func @ex_split(%e: memref<2x32x4096xf32>,
                    %x: memref<2x4096x64xbf16> {linformer.sequence},
                    %len: memref<2xi32> {linformer.lengths},
                    %y: memref<2x32x64xf32>) {
  linalg.generic {indexing_maps = [#e, #x, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<2x32x4096xf32>, memref<2x4096x64xbf16>)
      outs(%y : memref<2x32x64xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0>} {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Without split-K: the count is ceil(L / 16) clamped to [0, 16].
// CHECK-LABEL: func.func @ex(
// CHECK: %[[L:.*]] = memref.load %arg2[%{{.*}}] : memref<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[N:.*]] = arith.ceildivsi %[[LI]], %c16{{.*}} : index
// CHECK: %[[N0:.*]] = arith.maxsi %[[N]], %c0{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.minsi %[[N0]], %c16{{.*}} : index
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[COUNT]] step
#e = affine_map<(b, i, j, t) -> (b, i, t)>
#x = affine_map<(b, i, j, t) -> (b, t, j)>
#o = affine_map<(b, i, j, t) -> (b, i, j)>
func.func @ex(%e: memref<2x32x256xf32>,
              %x: memref<2x256x64xbf16> {linformer.sequence},
              %len: memref<2xi32> {linformer.lengths},
              %y: memref<2x32x64xf32>) {
  linalg.generic {indexing_maps = [#e, #x, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<2x32x256xf32>, memref<2x256x64xbf16>)
      outs(%y : memref<2x32x64xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0>} {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// No lengths argument to read: every chunk runs.
// CHECK-LABEL: func.func @ex_no_lengths(
// CHECK-NOT: arith.ceildivsi
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step
#e = affine_map<(b, i, j, t) -> (b, i, t)>
#x = affine_map<(b, i, j, t) -> (b, t, j)>
#o = affine_map<(b, i, j, t) -> (b, i, j)>
func.func @ex_no_lengths(%e: memref<2x32x256xf32>,
                         %x: memref<2x256x64xbf16> {linformer.sequence},
                         %y: memref<2x32x64xf32>) {
  linalg.generic {indexing_maps = [#e, #x, #o],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<2x32x256xf32>, memref<2x256x64xbf16>)
      outs(%y : memref<2x32x64xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0>} {
  ^bb0(%a: f32, %b: bf16, %acc: f32):
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %a, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
