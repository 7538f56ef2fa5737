// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-expand-attention-core,canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(linformer-cuda-select-schedules{precision=bf16 core-slots=16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=MMA

// Pooled slots (k = 32 windows of 2 tokens: the core's token_bound with
// per_step = 2, and a key mask): the loop over slots stops at the first
// step past the ceil(length / 2) slots that can be valid, read from the
// lengths for the row's sequence: steps of 16 slots cover 32 tokens, so
// min(ceil(length / 32) * 16, 32). The key mask masks the rest of the last
// step.
// CHECK-LABEL: func.func @slots(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: memref<2xi32> {linformer.lengths}
// CHECK: scf.parallel (%[[B:[a-z0-9]+]], %{{.*}}, %{{.*}}) =
// CHECK: %[[L:.*]] = memref.load %[[LEN]][%[[B]]] : memref<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[UP:.*]] = arith.addi %[[LI]], %c31 : index
// CHECK: %[[STEPS:.*]] = arith.divui %[[UP]], %c32 : index
// CHECK: %[[SLOTS:.*]] = arith.muli %[[STEPS]], %c16 : index
// CHECK: %[[END:.*]] = arith.minui %[[SLOTS]], %c32 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[END]] step %c16
// On tensor cores a warp's 16 query rows are of one sequence: the same
// bound, in steps of the schedule's 16 slots.
// MMA-LABEL: func.func @slots(
// MMA-SAME: %[[LEN:[a-z0-9]+]]: memref<2xi32> {linformer.lengths}
// MMA: memref.load %[[LEN]]
// MMA: %[[END:.*]] = arith.minui %{{.*}}, %c32 : index
// MMA: scf.for %{{.*}} = %c0 to %[[END]] step %c16
func.func @slots(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x32x16xf32>,
                 %v: tensor<2x4x32x16xf32>, %m: tensor<2x32xi8>,
                 %len: tensor<2xi32> {linformer.lengths})
    -> tensor<2x4x64x16xf32> {
  %init = tensor.empty() : tensor<2x4x64x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25) key_mask(%m)
         outs(%init) {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 2>}
         : (tensor<2x4x64x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>,
            tensor<2x32xi8>, tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}


// Without the bound (learned keys): every slot, a constant trip count.
// CHECK-LABEL: func.func @all_slots(
// CHECK-NOT: arith.minui
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK-NOT: arith.minui
// CHECK: return
func.func @all_slots(%q: tensor<2x4x64x16xf32>, %k: tensor<2x4x32x16xf32>,
                     %v: tensor<2x4x32x16xf32>, %m: tensor<2x32xi8>,
                     %len: tensor<2xi32> {linformer.lengths})
    -> tensor<2x4x64x16xf32> {
  %init = tensor.empty() : tensor<2x4x64x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25) key_mask(%m)
         outs(%init)
         : (tensor<2x4x64x16xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32x16xf32>,
            tensor<2x32xi8>, tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}
