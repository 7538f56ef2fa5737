// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-and-fuse --canonicalize --cse | FileCheck %s

// With bf16 products, the FFN's first GEMM -> GELU -> rounding to bf16,
// read by the second GEMM: the elementwise ops are fused into one (upstream
// elementwise fusion) and into the first GEMM's workgroups as a consumer
// (upstream consumer fusion), marked linformer.bf16_epilogue. The first
// kernel then writes the bf16 values the second multiplies (half the bytes
// of the f32 result, rounded once); the second reads them, no GELU in it.
// The f32 result is a workgroup's tile, no longer a kernel output. The
// epilogue's erf is marked approximate (afn): its result is rounded to
// bf16, so linformer-cpu-lower-vectors may take a shorter approximation.
// CHECK-LABEL: func.func @ffn(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x16xbf16>, %[[W1:[a-z0-9]+]]: tensor<16x32xbf16>, %[[W2:[a-z0-9]+]]: tensor<32x16xbf16>)
// CHECK: %[[BF:.*]] = tensor.empty() : tensor<64x32xbf16>
// CHECK: %[[H:.*]] = scf.forall (%[[I:.*]]) = (0) to (64) step (16) shared_outs(%[[OUT:.*]] = %[[BF]]) -> (tensor<64x32xbf16>) {
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[W1]] : tensor<16x16xbf16>, tensor<16x32xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK: %[[OS:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [16, 32] [1, 1]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<16x32xf32>) outs(%[[OS]] : tensor<16x32xbf16>) attrs = {linformer.bf16_epilogue} {
// CHECK: math.erf %{{.*}} fastmath<afn> : f32
// CHECK: arith.mulf
// CHECK: arith.truncf
// CHECK: tensor.parallel_insert_slice %[[G]] into %[[OUT]][%[[I]], 0] [16, 32] [1, 1] : tensor<16x32xbf16> into tensor<64x32xbf16>
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>]}
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[H]]
// CHECK-NOT: math.erf
// CHECK: ins(%{{.*}}, %[[W2]] : tensor<16x32xbf16>, tensor<32x16xbf16>)
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @ffn(%x: tensor<64x16xbf16>, %w1: tensor<16x32xbf16>, %w2: tensor<32x16xbf16>) -> tensor<64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<64x16xbf16>, tensor<16x32xbf16>) outs(%f : tensor<64x32xf32>)
      attrs = {linformer.root, linformer.bf16_engine = "dot", linformer.tile_sizes = array<i64: 16, 0, 0>} {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %ge = tensor.empty() : tensor<64x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<64x32xf32>) outs(%ge : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.erf %in : f32
    %u = arith.mulf %t, %half : f32
    linalg.yield %u : f32
  } -> tensor<64x32xf32>
  %re = tensor.empty() : tensor<64x32xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<64x32xf32>) outs(%re : tensor<64x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x32xbf16>
  %e2 = tensor.empty() : tensor<64x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%r, %w2 : tensor<64x32xbf16>, tensor<32x16xbf16>) outs(%f2 : tensor<64x16xf32>)
      attrs = {linformer.root, linformer.bf16_engine = "dot", linformer.tile_sizes = array<i64: 16, 0, 0>} {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

// -----

// The rounded values are also read by an op that is not a kernel root (the
// residual's add, say): they stay a producer fused into each reader.
// CHECK-LABEL: func.func @other_reader(
// CHECK: scf.forall
// CHECK-NOT: linformer.bf16_epilogue
// CHECK: -> (tensor<64x32xf32>)
// CHECK: scf.forall
// CHECK: math.erf %{{[a-z0-9_]+}} : f32
// CHECK: arith.truncf
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @other_reader(%x: tensor<64x16xbf16>, %w1: tensor<16x32xbf16>, %w2: tensor<32x16xbf16>) -> (tensor<64x16xf32>, tensor<64x32xbf16>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<64x16xbf16>, tensor<16x32xbf16>) outs(%f : tensor<64x32xf32>)
      attrs = {linformer.root, linformer.bf16_engine = "dot", linformer.tile_sizes = array<i64: 16, 0, 0>} {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %ge = tensor.empty() : tensor<64x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<64x32xf32>) outs(%ge : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.erf %in : f32
    linalg.yield %t : f32
  } -> tensor<64x32xf32>
  %re = tensor.empty() : tensor<64x32xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<64x32xf32>) outs(%re : tensor<64x32xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x32xbf16>
  %e2 = tensor.empty() : tensor<64x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x16xf32>) -> tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%r, %w2 : tensor<64x32xbf16>, tensor<32x16xbf16>) outs(%f2 : tensor<64x16xf32>)
      attrs = {linformer.root, linformer.bf16_engine = "dot", linformer.tile_sizes = array<i64: 16, 0, 0>} {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x16xf32>
  return %y, %r : tensor<64x16xf32>, tensor<64x32xbf16>
}

// -----

// A paired attention core's factor (K' and V' in linformer-bf16-products;
// the first operand here, the mechanism is the same): the projection's
// result rounded to bf16 and extended again, the extension read only by
// the core. The rounding is the projection's epilogue (its kernel writes
// bf16), and the extension is fused into the core's workgroups, reading
// that bf16 tile (the core's lowering takes it as the bf16 values).
// CHECK-LABEL: func.func @core_factor(
// CHECK: %[[QB:.*]] = scf.forall {{.*}} -> (tensor<1x2x64x8xbf16>) {
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x{{[0-9]+}}x8xbf16>) attrs = {linformer.bf16_epilogue}
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK: scf.forall
// CHECK: %[[QS:.*]] = tensor.extract_slice %[[QB]]
// CHECK: %[[QE:.*]] = linalg.generic {{.*}} ins(%[[QS]] : tensor<1x1x{{[0-9]+}}x8xbf16>) outs(%{{.*}} : tensor<1x1x{{[0-9]+}}x8xf32>)
// CHECK: linformer.attention_core %[[QE]],
// CHECK: return
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @core_factor(%x: tensor<1x64x16xbf16>, %w: tensor<16x2x8xbf16>,
    %kp: tensor<1x2x8x8xf32>, %vp: tensor<1x2x8x8xf32>)
    -> tensor<1x2x64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x64x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x64x16xbf16>, tensor<16x2x8xbf16>)
      outs(%init : tensor<1x2x64x8xf32>) attrs = {linformer.root, linformer.bf16_engine = "dot"} {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x64x8xf32>
  %rb = tensor.empty() : tensor<1x2x64x8xbf16>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<1x2x64x8xf32>) outs(%rb : tensor<1x2x64x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x2x64x8xbf16>
  %qe = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<1x2x64x8xbf16>) outs(%e : tensor<1x2x64x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %t = arith.extf %in : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<1x2x64x8xf32>
  %a_init = tensor.empty() : tensor<1x2x64x8xf32>
  %a = linformer.attention_core %qe, %kp, %vp scale(0.35355339059327373)
         outs(%a_init) {linformer.root, linformer.bf16_scores}
          : (tensor<1x2x64x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>,
            tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return %a : tensor<1x2x64x8xf32>
}

// -----

// The attention core as the root: its result rounded to bf16 and read only
// by the output projection (a root). The rounding is the core's epilogue,
// in its workgroups: the core kernel writes bf16 (half the bytes) and the
// projection reads them in place instead of rounding its tile of f32.
// CHECK-LABEL: func.func @core_epilogue(
// CHECK: %[[AB:.*]] = scf.forall {{.*}} -> (tensor<1x2x64x8xbf16>) {
// CHECK: %[[T:.*]] = linformer.attention_core
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<1x1x{{[0-9]+}}x8xf32>) outs(%{{.*}} : tensor<1x1x{{[0-9]+}}x8xbf16>) attrs = {linformer.bf16_epilogue}
// CHECK: arith.truncf
// CHECK: tensor.parallel_insert_slice %[[R]]
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK: scf.forall
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[AB]]
// CHECK-NOT: arith.truncf
// CHECK: linalg.generic {{.*}} ins(%[[AS]], %{{.*}} : tensor<1x2x{{[0-9]+}}x8xbf16>, tensor<2x8x16xbf16>)
// CHECK: return
#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
#wo = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @core_epilogue(%q: tensor<1x2x64x8xf32>, %kp: tensor<1x2x8x8xf32>,
    %vp: tensor<1x2x8x8xf32>, %w: tensor<2x8x16xbf16>) -> tensor<1x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %a_init = tensor.empty() : tensor<1x2x64x8xf32>
  %a = linformer.attention_core %q, %kp, %vp scale(0.35355339059327373)
         outs(%a_init) {linformer.root, linformer.bf16_engine = "dot", linformer.bf16_scores}
          : (tensor<1x2x64x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>,
            tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  %rb = tensor.empty() : tensor<1x2x64x8xbf16>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : tensor<1x2x64x8xf32>) outs(%rb : tensor<1x2x64x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x2x64x8xbf16>
  %e = tensor.empty() : tensor<1x64x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x16xf32>) -> tensor<1x64x16xf32>
  %y = linalg.generic {indexing_maps = [#q, #wo, #out],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%r, %w : tensor<1x2x64x8xbf16>, tensor<2x8x16xbf16>)
      outs(%init : tensor<1x64x16xf32>) attrs = {linformer.root, linformer.bf16_engine = "dot"} {
  ^bb0(%x: bf16, %b: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %m = arith.mulf %xe, %be : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x16xf32>
  return %y : tensor<1x64x16xf32>
}

// -----

// A root without bf16 products whose f32 result another kernel reads as
// it is (a LayerNorm's output, which the residual adds) and a contraction
// reads rounded: the rounding becomes a second result of the root's
// workgroups (rounded once, not in every reader's workgroups), and the f32
// reader reads the first.
// CHECK-LABEL: func.func @side_rounding(
// CHECK: %[[N:.*]]:2 = scf.forall (%[[I:.*]]) = (0) to (64) step (16) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<64x16xf32>, tensor<64x16xbf16>) {
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16x16xbf16>) attrs = {linformer.bf16_epilogue} {
// CHECK: arith.truncf
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>]}
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[N]]#1
// CHECK-NOT: arith.truncf
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<16x16xbf16>, tensor<16x32xbf16>)
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[N]]#0
// CHECK: arith.mulf
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @side_rounding(%x: tensor<64x16xf32>, %w: tensor<16x32xbf16>) -> (tensor<64x32xf32>, tensor<64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %ne = tensor.empty() : tensor<64x16xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x16xf32>) outs(%ne : tensor<64x16xf32>)
      attrs = {linformer.root, linformer.tile_sizes = array<i64: 16, 0>} {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<64x16xf32>
  %re = tensor.empty() : tensor<64x16xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<64x16xf32>) outs(%re : tensor<64x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x16xbf16>
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%r, %w : tensor<64x16xbf16>, tensor<16x32xbf16>) outs(%f : tensor<64x32xf32>)
      attrs = {linformer.root, linformer.bf16_engine = "amx", linformer.tile_sizes = array<i64: 16, 0, 0>} {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %me = tensor.empty() : tensor<64x16xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<64x16xf32>) outs(%me : tensor<64x16xf32>)
      attrs = {linformer.root, linformer.tile_sizes = array<i64: 16, 0>} {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %in : f32
    linalg.yield %t : f32
  } -> tensor<64x16xf32>
  return %y, %m : tensor<64x32xf32>, tensor<64x16xf32>
}
