// An f32 attention core whose schedule is a #linformer.cuda_core_schedule
// runs on TF32 tensor cores with mma=tf32 (issue 69, item 3): one warp a
// tile of 16 query rows, mma.sync m16n8k8 .tf32 on operands rounded with
// cvt.rna. Lane (g, t) = (lane / 4, lane % 4): Q's A fragment is rows g,
// g + 8 at head columns 2t, 2t + 1 (as A's k = t and t + 4: Q K^T sums
// over the columns in any order); K's B fragment slot g at the same two
// columns, one 8-byte vector load. P's A
// fragment comes straight from S's accumulators (the lane's slots 2t and
// 2t + 1 as A's k = t and t + 4), so V's B fragment is slots 2t and
// 2t + 1 (8 nt + 2t, + 1 for the second half) of column g: no shuffle.
// Without the attribute the core stays the f32 one.
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{mma=tf32},canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{mma=tf32 emulate exact},canonicalize,cse))' | FileCheck %s --check-prefix=EXACT
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core{mma=tf32x3},canonicalize,cse))' | FileCheck %s --check-prefix=X3

// n = 32 (2 query tiles), d = 16 (two k8 steps), k = 16 (one step of 16
// slots, unrolled by canonicalize): 2 x 2 mma for S, 2 x 2 for P V.
// CHECK-LABEL: func.func @core
// Blocks of the schedule's 2 warps of one (b, h): 2 heads x 32 / 32 rows.
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c2) step (%c1) {
// CHECK: scf.parallel (%{{.*}}, %[[LANE:.*]]) = (%c0, %c0) to (%c2, %c32)
// CHECK: %[[G:.*]] = arith.divui %[[LANE]], %c4
// CHECK: %[[T:.*]] = arith.remui %[[LANE]], %c4
// CHECK: %[[TWOT:.*]] = arith.muli %[[T]], %c2
// CHECK: %[[R0:.*]] = arith.addi %{{.*}}, %[[G]]
// CHECK: %[[R1:.*]] = arith.addi %[[R0]], %c8
// CHECK: %[[S1:.*]] = arith.addi %[[TWOT]], %c1
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[R0]], %[[TWOT]]]
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[R1]], %[[TWOT]]]
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[R0]], %[[S1]]]
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[R1]], %[[S1]]]
// CHECK: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[Q0:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// CHECK: %[[S8:.*]] = arith.addi %[[TWOT]], %c8
// CHECK: %[[S9:.*]] = arith.addi %[[TWOT]], %c9
// CHECK: %[[KP:.*]] = vector.load %arg1[%{{.*}}, %{{.*}}, %[[G]], %[[TWOT]]] {alignment = 8 : i64} : memref<1x2x16x16xf32>, vector<2xf32>
// CHECK: vector.extract %[[KP]][0]
// CHECK: vector.extract %[[KP]][1]
// CHECK: vector.from_elements {{.*}} : vector<2x1xf32>
// CHECK: nvgpu.mma.sync(%[[Q0]], %{{.*}}, %cst{{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK: memref.load %arg2[%{{.*}}, %{{.*}}, %[[TWOT]], %[[G]]]
// CHECK: memref.load %arg2[%{{.*}}, %{{.*}}, %[[S1]], %[[G]]]
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK: memref.load %arg2[%{{.*}}, %{{.*}}, %[[S8]], %[[G]]]
// CHECK: memref.load %arg2[%{{.*}}, %{{.*}}, %[[S9]], %[[G]]]
// CHECK-NOT: nvvm.mma.sync
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// 3xTF32 (mma=tf32x3): every operand, Q's, K's, P's and V's, a TF32 head
// (cvt.rna) and tail (cvt.rna of what the head leaves) fragment, three
// mma a step, tails first: S = Q_h K_t + Q_t K_h + Q_h K_h, the same for
// P V; 2 x 2 x 3 mma for S, 2 x 2 x 3 for P V.
// X3-LABEL: func.func @core
// X3: %[[Q:.*]] = memref.load %arg0
// X3: %[[QH:.*]] = nvvm.convert.float.to.tf32 %[[Q]] {rnd = #nvvm.fp_rnd_mode<rna>}
// X3: %[[QHF:.*]] = arith.bitcast %[[QH]] : i32 to f32
// X3: %[[QREST:.*]] = arith.subf %[[Q]], %[[QHF]]
// X3: nvvm.convert.float.to.tf32 %[[QREST]] {rnd = #nvvm.fp_rnd_mode<rna>}
// X3: %[[Q0H:.*]] = vector.from_elements %[[QHF]], %{{.*}}, %{{.*}}, %{{.*}} : vector<4x1xf32>
// X3-NEXT: %[[Q0T:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// X3: %[[KH:.*]] = vector.from_elements {{.*}} : vector<2x1xf32>
// X3-NEXT: %[[KT:.*]] = vector.from_elements {{.*}} : vector<2x1xf32>
// X3-NEXT: %[[S1:.*]] = nvgpu.mma.sync(%[[Q0H]], %[[KT]], %cst{{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// X3-NEXT: %[[S2:.*]] = nvgpu.mma.sync(%[[Q0T]], %[[KH]], %[[S1]]) {mmaShape = [16, 8, 8], tf32Enabled}
// X3-NEXT: nvgpu.mma.sync(%[[Q0H]], %[[KH]], %[[S2]]) {mmaShape = [16, 8, 8], tf32Enabled}
// X3-COUNT-9: nvgpu.mma.sync
// The probabilities and the values split too.
// X3: %[[PH:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// X3-NEXT: %[[PT:.*]] = vector.from_elements {{.*}} : vector<4x1xf32>
// X3: %[[VH:.*]] = vector.from_elements {{.*}} : vector<2x1xf32>
// X3-NEXT: %[[VT:.*]] = vector.from_elements {{.*}} : vector<2x1xf32>
// X3-NEXT: %[[O1:.*]] = nvgpu.mma.sync(%[[PH]], %[[VT]], %{{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// X3-NEXT: %[[O2:.*]] = nvgpu.mma.sync(%[[PT]], %[[VH]], %[[O1]]) {mmaShape = [16, 8, 8], tf32Enabled}
// X3-NEXT: nvgpu.mma.sync(%[[PH]], %[[VH]], %[[O2]]) {mmaShape = [16, 8, 8], tf32Enabled}
// X3-COUNT-9: nvgpu.mma.sync
// X3-NOT: nvgpu.mma.sync
// X3: } {mapping = [#gpu.loop_dim_map<processor = block_x
// Replayed exactly on the host: scalar products, no mma.
// EXACT-LABEL: func.func @core
// EXACT-NOT: mma.sync
// EXACT: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @core(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
                %v: memref<1x2x16x16xf32>, %o: memref<1x2x32x16xf32>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    {linformer.cuda_core_schedule = #linformer.cuda_core_schedule<warps = 2, slots = 16, staged = false, groups = 1, ldmatrix = false, wgmma = false>}
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: func.func @f32_core
// CHECK-NOT: mma.sync
// CHECK: return
func.func @f32_core(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
                    %v: memref<1x2x16x16xf32>, %o: memref<1x2x32x16xf32>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xf32>) -> ()
  return
}
