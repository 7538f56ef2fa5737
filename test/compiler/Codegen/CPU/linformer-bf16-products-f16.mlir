// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=amx f16=true}))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=off f16=true}))' | FileCheck %s --check-prefix=FMA
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=auto f16=true}))' | FileCheck %s --check-prefix=AUTO

// f16 products (f16=true, linformer-compile --precision=f16): the pairs
// are f16, AMX-FP16's tiles the engine. An f16 model's projection reads
// its input and weight as the f16 values its entry extended (never
// rounded), both as f16 pairs with dot=amx; with dot=off (or auto where
// the target lacks AMX-FP16: this module's target, a Sapphire Rapids,
// has AMX-BF16 only) FMAs, the weight read as f16 and extended in the
// body, the input as it is. Never bf16.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @f16_model(
// CHECK-SAME: %[[XH:.*]]: tensor<8x64xf16> {linformer.sequence}, %[[W:.*]]: tensor<64x32xf16>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XH]], %[[W]] : tensor<8x64xf16>, tensor<64x32xf16>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK-SAME: linformer.bf16_engine = "amx, emulated"
// CHECK-NEXT: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %[[C:.*]]: f32):
// CHECK-NEXT: %[[EA:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT: %[[EB:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[EA]], %[[EB]] : f32
// CHECK-NOT: xbf16
// CHECK: return
// FMA-LABEL: func.func @f16_model(
// FMA-SAME: %[[XH:.*]]: tensor<8x64xf16> {linformer.sequence}, %[[W:.*]]: tensor<64x32xf16>
// FMA: %[[X:.*]] = linalg.generic {{.*}} ins(%[[XH]] : tensor<8x64xf16>) outs(%{{.*}} : tensor<8x64xf32>)
// FMA: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<8x64xf32>, tensor<64x32xf16>) outs(%{{.*}} : tensor<8x32xf32>)
// FMA-SAME: linformer.bf16_engine = "fma"
// FMA-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f16, %[[C:.*]]: f32):
// FMA-NEXT: %[[EB:.*]] = arith.extf %[[B]] : f16 to f32
// FMA-NOT: xbf16
// FMA: return
// AUTO-LABEL: func.func @f16_model(
// AUTO: linformer.bf16_engine = "fma"
module attributes {linformer.target = #linformer.cpu_target<cpu = "sapphirerapids",
    features = "+avx512f,+avx512vl,+avx512bw,+avx512bf16,+amx-tile,+amx-bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 49152, l2_bytes = 2097152, l3_bytes = 33554432, cores = 2>} {
func.func @f16_model(%xh: tensor<8x64xf16> {linformer.sequence},
                     %wh: tensor<64x32xf16>) -> tensor<8x32xf32> {
  %xe = tensor.empty() : tensor<8x64xf32>
  %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xh : tensor<8x64xf16>) outs(%xe : tensor<8x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<8x64xf32>
  %we = tensor.empty() : tensor<64x32xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wh : tensor<64x32xf16>) outs(%we : tensor<64x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) attrs = {linformer.root} {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
}

// -----

// An f32 model (--precision=f16 on it): its input rounded to f16 by an
// elementwise op of its own, then read as f16 pairs.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @f32_model(
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<8x64xf16>, tensor<64x32xf16>)
// CHECK-NOT: xbf16
// CHECK: return
// FMA-LABEL: func.func @f32_model(
// FMA: ins(%{{.*}} : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xf32>)
// FMA-NEXT: ^bb0
// FMA-NEXT: %[[T:.*]] = arith.truncf %{{.*}} : f32 to f16
// FMA-NEXT: arith.extf %[[T]] : f16 to f32
// FMA-NOT: xbf16
// FMA: return
func.func @f32_model(%x: tensor<8x64xf32> {linformer.sequence},
                     %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) attrs = {linformer.root} {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// The attention core takes f16 pairs too: marked linformer.f16_pairs
// beside linformer.bf16_scores, so that its lowering rounds to f16; with
// FMAs (dot=off) it stays f32, unmarked.
// CHECK-LABEL: func.func @core(
// CHECK: linformer.attention_core {{.*}} {linformer.bf16_engine = "amx{{(, emulated)?}}", linformer.bf16_scores, linformer.f16_pairs, linformer.root}
// FMA-LABEL: func.func @core(
// FMA-NOT: linformer.bf16_scores
// FMA-NOT: linformer.f16_pairs
// FMA: return
func.func @core(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.root}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
