// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32x3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32x3},canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32x3},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32x3},canonicalize,cse))' | FileCheck %s --check-prefix=COUNT
// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=tf32x3 exact},linformer-cuda-absorb-init-epilogue,linformer-cuda-tensor-core-contractions{precision=tf32x3 emulate exact},canonicalize,cse))' | FileCheck %s --check-prefix=EXACT

// 3xTF32 warp tiles (--cuda-mma=tf32x3): the unstaged m16n8k4 tiles of
// TF32, each operand split into a TF32 head (cvt.rna of the value) and a
// TF32 tail (cvt.rna of the value minus its head), and three mma.sync a
// tile and k step, the small terms first: A_h B_t, A_t B_h, then A_h B_h.
// The head and tail hold the operand to about 21 bits (the dropped
// A_t B_t is about 2^-22 of the product), so the sums come out near f32's
// (cuda-host.test holds a layer to 1e-5, which TF32 alone misses).
// A projection of 32 x 16 outputs a batch (2 x 2 mma tiles a warp), k = 64.
// CHECK-LABEL: func.func @projection
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 step %c4 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK: %[[A0:.*]] = memref.load %arg0
// CHECK: %[[H0:.*]] = nvvm.convert.float.to.tf32 %[[A0]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[HF0:.*]] = arith.bitcast %[[H0]] : i32 to f32
// CHECK: %[[REST0:.*]] = arith.subf %[[A0]], %[[HF0]]
// CHECK: nvvm.convert.float.to.tf32 %[[REST0]] {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[AH:.*]] = vector.from_elements %[[HF0]], %{{.*}} : vector<2x1xf32>
// CHECK-NEXT: %[[AT:.*]] = vector.from_elements {{.*}} : vector<2x1xf32>
// CHECK: %[[BH:.*]] = vector.broadcast %{{.*}} : f32 to vector<1x1xf32>
// CHECK-NEXT: %[[BT:.*]] = vector.broadcast %{{.*}} : f32 to vector<1x1xf32>
// CHECK: %[[M1:.*]] = nvgpu.mma.sync(%[[AH]], %[[BT]], %{{.*}}) {mmaShape = [16, 8, 4], tf32Enabled}
// CHECK-NEXT: %[[M2:.*]] = nvgpu.mma.sync(%[[AT]], %[[BH]], %[[M1]]) {mmaShape = [16, 8, 4], tf32Enabled}
// CHECK-NEXT: nvgpu.mma.sync(%[[AH]], %[[BH]], %[[M2]]) {mmaShape = [16, 8, 4], tf32Enabled}
// CHECK-COUNT-9: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: scf.yield
// Six operands a k step (2 A elements of each of 2 row tiles, 1 B element
// of each of 2 column tiles), two roundings each; 2 x 2 tiles, 3 mma each.
// COUNT-LABEL: func.func @projection
// COUNT: scf.for
// COUNT-COUNT-6: arith.subf
// COUNT-NOT: arith.subf
// COUNT: scf.yield
// The exact emulation rounds nothing: one product of the whole operands.
// EXACT-LABEL: func.func @projection
// EXACT-NOT: nvvm.convert.float.to.tf32
// EXACT-NOT: arith.subf
// EXACT-COUNT-4: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 4], tf32Enabled}
// EXACT-NOT: nvgpu.mma.sync
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @projection(%x: memref<2x32x64xf32>, %w: memref<64x4x16xf32>,
                      %y: memref<2x4x32x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x32x64xf32>, memref<64x4x16xf32>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
