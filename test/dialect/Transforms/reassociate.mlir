// RUN: linformer-opt %s --split-input-file --linformer-reassociate | FileCheck %s --check-prefix=AUTO
// RUN: linformer-opt %s --split-input-file --linformer-reassociate=mode=always | FileCheck %s --check-prefix=ALWAYS
// RUN: linformer-opt %s --split-input-file --linformer-reassociate=mode=never | FileCheck %s --check-prefix=NEVER

// A long sequence with one E for all heads and both K and V (layerwise):
// (E X) W costs 2bknm + 4bkm^2 = 1.3e9 FLOPs against 4bnm^2 + 4bknm = 6.4e9,
// so the cost model reassociates.
// AUTO-LABEL: func.func @long_shared
// AUTO: linformer.attention
// AUTO-SAME: linformer.reassociation_cost = {reassociated = {{[0-9]+}} : i64, standard = {{[0-9]+}} : i64}
// AUTO-SAME: reassociate = true
// ALWAYS-LABEL: func.func @long_shared
// ALWAYS: reassociate = true
// NEVER-LABEL: func.func @long_shared
// NEVER: reassociate = false
func.func @long_shared(%x: tensor<1x4096x512xf32>, %w: tensor<512x512xf32>,
                       %e: tensor<256x4096xf32>) -> tensor<1x4096x512xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(8) k(256)
         projection<learned> e(%e) sharing<layerwise>
         : (tensor<1x4096x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
            tensor<512x512xf32>, tensor<512x512xf32>, tensor<256x4096xf32>)
         -> tensor<1x4096x512xf32>
  return %y : tensor<1x4096x512xf32>
}

// -----

// One E per head and per K/V, k close to n: E X per head costs
// 2 h (2bknm) = 1.1e9 against X W's 4bnm^2 + 4bknm = 0.3e9; standard order.
// AUTO-LABEL: func.func @per_head
// AUTO: reassociate = false
// ALWAYS-LABEL: func.func @per_head
// ALWAYS: reassociate = true
// NEVER-LABEL: func.func @per_head
func.func @per_head(%x: tensor<1x256x256xf32>, %w: tensor<256x256xf32>,
                    %e: tensor<8x128x256xf32>, %f: tensor<8x128x256xf32>)
    -> tensor<1x256x256xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(8) k(128)
         projection<learned> e(%e) f(%f) sharing<none>
         : (tensor<1x256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>,
            tensor<256x256xf32>, tensor<256x256xf32>, tensor<8x128x256xf32>,
            tensor<8x128x256xf32>) -> tensor<1x256x256xf32>
  return %y : tensor<1x256x256xf32>
}

// -----

// max_pool is not linear: never reassociated, whatever the mode.
// AUTO-LABEL: func.func @max_pool
// AUTO-NOT: reassociate
// ALWAYS-LABEL: func.func @max_pool
// ALWAYS-NOT: reassociate
// NEVER-LABEL: func.func @max_pool
func.func @max_pool(%x: tensor<1x64x32xf32>, %w: tensor<32x32xf32>)
    -> tensor<1x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<max_pool> sharing<none>
         : (tensor<1x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<1x64x32xf32>
  return %y : tensor<1x64x32xf32>
}

// -----

// A choice already made (by hand) is kept.
// AUTO-LABEL: func.func @kept
// AUTO: reassociate = false
// NEVER-LABEL: func.func @kept
// ALWAYS-LABEL: func.func @kept
// ALWAYS: reassociate = false
// ALWAYS-NOT: reassociation_cost
func.func @kept(%x: tensor<1x64x32xf32>, %w: tensor<32x32xf32>)
    -> tensor<1x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> {reassociate = false}
         : (tensor<1x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<1x64x32xf32>
  return %y : tensor<1x64x32xf32>
}
