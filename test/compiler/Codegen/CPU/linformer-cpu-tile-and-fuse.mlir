// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-and-fuse | FileCheck %s --check-prefixes=CHECK,DEF
// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-and-fuse=row-tile=16 | FileCheck %s --check-prefixes=CHECK,ROW16

// Each op marked `linformer.root`, and each attention core, becomes one
// scf.forall (one iteration = one workgroup) marked `linformer.root`; the
// producers of its operands that are not roots themselves are fused into
// the loop body. Default tiles: batch and heads 1, the second innermost
// output dimension `row-tile` rows (rounded down to a divisor), the
// innermost output dimension and the reductions whole; while that gives
// fewer than 8 workgroups, rows and then the innermost dimension (not below
// 16) are halved. A root's `linformer.tile_sizes` overrides the default.
// The inputs are what --linformer-decompose-attention and
// --linformer-lower-to-linalg produce. The untiled originals are left for
// the canonicalizer to erase, so the checks start at each forall.

// Input projection with a bias: loops (b, h, i, m, c), out [b, h, i, c];
// tiles (1, 1, 32, 0, 0): 2 x 2 x 2 = 8 workgroups (16 with row-tile=16).
// The bias broadcast that initialises the output is fused and writes the
// tile of the loop's shared output.
// CHECK-LABEL: func.func @input_projection_bias(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x2x8xf32>, %[[B:[a-z0-9]+]]: tensor<2x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x2x64x8xf32>
// DEF: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[IH:[a-z0-9]+]], %[[II:[a-z0-9]+]]) = (0, 0, 0) to (2, 2, 64) step (1, 1, 32) shared_outs(%[[OUT:[a-z0-9]+]] = %[[E]]) -> (tensor<2x2x64x8xf32>) {
// ROW16: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[IH:[a-z0-9]+]], %[[II:[a-z0-9]+]]) = (0, 0, 0) to (2, 2, 64) step (1, 1, 16) shared_outs(%[[OUT:[a-z0-9]+]] = %[[E]]) -> (tensor<2x2x64x8xf32>) {
// DEF: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[IB]], %[[II]], 0] [1, 32, 16] [1, 1, 1] : tensor<2x64x16xf32> to tensor<1x32x16xf32>
// ROW16: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[IB]], %[[II]], 0] [1, 16, 16] [1, 1, 1] : tensor<2x64x16xf32> to tensor<1x16x16xf32>
// CHECK: %[[WS:.*]] = tensor.extract_slice %[[W]][0, %[[IH]], 0] [16, 1, 8] [1, 1, 1] : tensor<16x2x8xf32> to tensor<16x1x8xf32>
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[B]][%[[IH]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<1x8xf32>
// DEF: %[[OS:.*]] = tensor.extract_slice %[[OUT]][%[[IB]], %[[IH]], %[[II]], 0] [1, 1, 32, 8] [1, 1, 1, 1]
// ROW16: %[[OS:.*]] = tensor.extract_slice %[[OUT]][%[[IB]], %[[IH]], %[[II]], 0] [1, 1, 16, 8] [1, 1, 1, 1]
// DEF: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BS]] : tensor<1x8xf32>) outs(%[[OS]] : tensor<1x1x32x8xf32>)
// ROW16: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BS]] : tensor<1x8xf32>) outs(%[[OS]] : tensor<1x1x16x8xf32>)
// DEF: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[XS]], %[[WS]] : tensor<1x32x16xf32>, tensor<16x1x8xf32>) outs(%[[INIT]] : tensor<1x1x32x8xf32>) {
// ROW16: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[XS]], %[[WS]] : tensor<1x16x16xf32>, tensor<16x1x8xf32>) outs(%[[INIT]] : tensor<1x1x16x8xf32>) {
// CHECK: scf.forall.in_parallel {
// DEF-NEXT: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[IB]], %[[IH]], %[[II]], 0] [1, 1, 32, 8] [1, 1, 1, 1] : tensor<1x1x32x8xf32> into tensor<2x2x64x8xf32>
// ROW16-NEXT: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[IB]], %[[IH]], %[[II]], 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<1x1x16x8xf32> into tensor<2x2x64x8xf32>
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK-NEXT: return %[[R]] : tensor<2x2x64x8xf32>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @input_projection_bias(%x: tensor<2x64x16xf32>, %w: tensor<16x2x8xf32>,
    %b: tensor<2x8xf32>) -> tensor<2x2x64x8xf32> {
  %e = tensor.empty() : tensor<2x2x64x8xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id4],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<2x8xf32>) outs(%e : tensor<2x2x64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x64x8xf32>
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<2x64x16xf32>, tensor<16x2x8xf32>)
      outs(%init : tensor<2x2x64x8xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %m = arith.mulf %a, %bb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2x64x8xf32>
  return %q : tensor<2x2x64x8xf32>
}

// -----

// Learned projection padded by lengths: loops (b, h, j, t, c), k = 32 rows,
// batch 2 x 4 heads. The valid-token generic, the input masking generic and
// the zero fill are all fused; the masked input tile covers every token of
// one head.
// CHECK-LABEL: func.func @learned_projection_masked(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[EW:[a-z0-9]+]]: tensor<4x32x64xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// DEF: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[IH:[a-z0-9]+]], %[[IJ:[a-z0-9]+]]) = (0, 0, 0) to (2, 4, 32) step (1, 1, 32) shared_outs(%[[OUT:[a-z0-9]+]] = %{{.*}}) -> (tensor<2x4x32x8xf32>) {
// ROW16: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[IH:[a-z0-9]+]], %[[IJ:[a-z0-9]+]]) = (0, 0, 0) to (2, 4, 32) step (1, 1, 16) shared_outs(%[[OUT:[a-z0-9]+]] = %{{.*}}) -> (tensor<2x4x32x8xf32>) {
// CHECK: %[[KS:.*]] = tensor.extract_slice %[[K]][%[[IB]], %[[IH]], 0, 0] [1, 1, 64, 8] [1, 1, 1, 1]
// CHECK: %[[LS:.*]] = tensor.extract_slice %[[LEN]][%[[IB]]] [1] [1] : tensor<2xi32> to tensor<1xi32>
// CHECK: %[[TOK:.*]] = linalg.generic {{.*}} ins(%[[LS]] : tensor<1xi32>) outs(%{{.*}} : tensor<1x64xi8>)
// CHECK: linalg.index 1
// CHECK: arith.cmpi slt
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[KS]], %[[TOK]] : tensor<1x1x64x8xf32>, tensor<1x64xi8>) outs(%{{.*}} : tensor<1x1x64x8xf32>)
// CHECK: arith.select
// DEF: %[[ES:.*]] = tensor.extract_slice %[[EW]][%[[IH]], %[[IJ]], 0] [1, 32, 64] [1, 1, 1] : tensor<4x32x64xf32> to tensor<1x32x64xf32>
// ROW16: %[[ES:.*]] = tensor.extract_slice %[[EW]][%[[IH]], %[[IJ]], 0] [1, 16, 64] [1, 1, 1] : tensor<4x32x64xf32> to tensor<1x16x64xf32>
// CHECK: %[[OS:.*]] = tensor.extract_slice %[[OUT]][%[[IB]], %[[IH]], %[[IJ]], 0]
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OS]] :
// DEF: %[[T:.*]] = linalg.generic {{.*}} ins(%[[MASKED]], %[[ES]] : tensor<1x1x64x8xf32>, tensor<1x32x64xf32>) outs(%[[INIT]] : tensor<1x1x32x8xf32>) {
// ROW16: %[[T:.*]] = linalg.generic {{.*}} ins(%[[MASKED]], %[[ES]] : tensor<1x1x64x8xf32>, tensor<1x16x64xf32>) outs(%[[INIT]] : tensor<1x1x16x8xf32>) {
// CHECK: tensor.parallel_insert_slice %[[T]] into %[[OUT]]
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK-NEXT: return %[[R]]
#tok_in = affine_map<(d0, d1) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#tok4 = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
#in = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#e = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @learned_projection_masked(%k: tensor<2x4x64x8xf32>,
    %e: tensor<4x32x64xf32>, %len: tensor<2xi32>) -> tensor<2x4x32x8xf32> {
  %c0_i8 = arith.constant 0 : i8
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<2x64xi8>
  %tok = linalg.generic {indexing_maps = [#tok_in, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%len : tensor<2xi32>) outs(%te : tensor<2x64xi8>) {
  ^bb0(%l: i32, %o: i8):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i32
    %lt = arith.cmpi slt, %ti, %l : i32
    %b = arith.extui %lt : i1 to i8
    linalg.yield %b : i8
  } -> tensor<2x64xi8>
  %me = tensor.empty() : tensor<2x4x64x8xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #tok4, #id4],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %tok : tensor<2x4x64x8xf32>, tensor<2x64xi8>)
      outs(%me : tensor<2x4x64x8xf32>) {
  ^bb0(%v: f32, %f: i8, %o: f32):
    %real = arith.cmpi ne, %f, %c0_i8 : i8
    %s = arith.select %real, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<2x4x64x8xf32>
  %oe = tensor.empty() : tensor<2x4x32x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x32x8xf32>) -> tensor<2x4x32x8xf32>
  %p = linalg.generic {indexing_maps = [#in, #e, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%masked, %e : tensor<2x4x64x8xf32>, tensor<4x32x64xf32>)
      outs(%init : tensor<2x4x32x8xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x32x8xf32>
  return %p : tensor<2x4x32x8xf32>
}

// -----

// The attention core is tiled as one op over query rows: each tile reads
// its 32 (16) rows of Q and all k = 8 projected keys and values. Q comes
// from another root, which gets its own forall and is not fused (the core's
// forall slices its result); the key-mask generic is not a root and is
// fused.
// CHECK-LABEL: func.func @attention_core(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x2x8xf32>, %[[KP:[a-z0-9]+]]: tensor<2x2x8x8xf32>, %[[VP:[a-z0-9]+]]: tensor<2x2x8x8xf32>, %[[CNT:[a-z0-9]+]]: tensor<2x8xf32>)
// CHECK: %[[Q:.*]] = scf.forall ({{.*}}) = (0, 0, 0) to (2, 2, 64)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x{{16|32}}x16xf32>, tensor<16x1x8xf32>)
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK-NOT: linformer.attention_core
// DEF: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[IH:[a-z0-9]+]], %[[II:[a-z0-9]+]]) = ({{.*}}) to (2, 2, 64) step (1, 1, 32) shared_outs(%[[OUT:[a-z0-9]+]] = %{{.*}}) -> (tensor<2x2x64x8xf32>) {
// ROW16: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[IH:[a-z0-9]+]], %[[II:[a-z0-9]+]]) = ({{.*}}) to (2, 2, 64) step (1, 1, 16) shared_outs(%[[OUT:[a-z0-9]+]] = %{{.*}}) -> (tensor<2x2x64x8xf32>) {
// DEF: %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[IB]], %[[IH]], %[[II]], 0] [1, 1, 32, 8] [1, 1, 1, 1] : tensor<2x2x64x8xf32> to tensor<1x1x32x8xf32>
// ROW16: %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[IB]], %[[IH]], %[[II]], 0] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<2x2x64x8xf32> to tensor<1x1x16x8xf32>
// CHECK: %[[KS:.*]] = tensor.extract_slice %[[KP]][%[[IB]], %[[IH]], 0, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x8xf32> to tensor<1x1x8x8xf32>
// CHECK: %[[VS:.*]] = tensor.extract_slice %[[VP]][%[[IB]], %[[IH]], 0, %{{.*}}] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x8xf32> to tensor<1x1x8x8xf32>
// CHECK: %[[CS:.*]] = tensor.extract_slice %[[CNT]][%[[IB]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<1x8xf32>
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} ins(%[[CS]] : tensor<1x8xf32>) outs(%{{.*}} : tensor<1x8xi8>)
// CHECK: arith.cmpf ogt
// DEF: %[[T:.*]] = linformer.attention_core %[[QS]], %[[KS]], %[[VS]] scale(0.35355339059327373) key_mask(%[[MASK]]) outs(%{{.*}}) : (tensor<1x1x32x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x8xi8>, tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32>
// ROW16: %[[T:.*]] = linformer.attention_core %[[QS]], %[[KS]], %[[VS]] scale(0.35355339059327373) key_mask(%[[MASK]]) outs(%{{.*}}) : (tensor<1x1x16x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x8xi8>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
// CHECK: scf.forall.in_parallel {
// DEF-NEXT: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[IB]], %[[IH]], %[[II]], %{{.*}}] [1, 1, 32, 8] [1, 1, 1, 1] : tensor<1x1x32x8xf32> into tensor<2x2x64x8xf32>
// ROW16-NEXT: tensor.parallel_insert_slice %[[T]] into %[[OUT]][%[[IB]], %[[IH]], %[[II]], %{{.*}}] [1, 1, 16, 8] [1, 1, 1, 1] : tensor<1x1x16x8xf32> into tensor<2x2x64x8xf32>
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK-NEXT: return %[[R]]
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @attention_core(%x: tensor<2x64x16xf32>, %w: tensor<16x2x8xf32>,
    %kp: tensor<2x2x8x8xf32>, %vp: tensor<2x2x8x8xf32>, %cnt: tensor<2x8xf32>)
    -> tensor<2x2x64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x64x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32>
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<2x64x16xf32>, tensor<16x2x8xf32>)
      outs(%init : tensor<2x2x64x8xf32>) attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2x64x8xf32>
  %me = tensor.empty() : tensor<2x8xi8>
  %mask = linalg.generic {indexing_maps = [#id2, #id2],
                          iterator_types = ["parallel", "parallel"]}
      ins(%cnt : tensor<2x8xf32>) outs(%me : tensor<2x8xi8>) {
  ^bb0(%c: f32, %o: i8):
    %any = arith.cmpf ogt, %c, %zero : f32
    %b = arith.extui %any : i1 to i8
    linalg.yield %b : i8
  } -> tensor<2x8xi8>
  %a_init = tensor.empty() : tensor<2x2x64x8xf32>
  %a = linformer.attention_core %q, %kp, %vp scale(0.35355339059327373)
         key_mask(%mask) outs(%a_init) {linformer.root}
          : (tensor<2x2x64x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>,
            tensor<2x8xi8>, tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32>
  return %a : tensor<2x2x64x8xf32>
}

// -----

// The schedule's tile sizes win over the default (and over row-tile, and
// over the minimum workgroup count: 1 x 2 x 4 here); the tiled op does not
// keep them.
// CHECK-LABEL: func.func @tile_sizes_override(
// CHECK: %[[R:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (1, 2, 64) step (1, 1, 16) shared_outs(%{{.*}}) -> (tensor<1x2x64x8xf32>) {
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x16xf32>, tensor<16x1x8xf32>) outs(%{{.*}} : tensor<1x1x16x8xf32>) {
// CHECK: tensor.parallel_insert_slice %[[T]]
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK-NEXT: return %[[R]]
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @tile_sizes_override(%x: tensor<1x64x16xf32>, %w: tensor<16x2x8xf32>,
    %init: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x64x16xf32>, tensor<16x2x8xf32>)
      outs(%init : tensor<1x2x64x8xf32>)
      attrs = {linformer.root, linformer.tile_sizes = array<i64: 1, 1, 16, 0, 0>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x64x8xf32>
  return %q : tensor<1x2x64x8xf32>
}

// -----

// On the attention core too: both heads in one workgroup, 8 rows each.
// CHECK-LABEL: func.func @tile_sizes_core(
// CHECK: %[[R:.*]] = scf.forall ({{.*}}) = ({{.*}}) to (1, 2, 64) step (1, 2, 8) shared_outs(%{{.*}}) -> (tensor<1x2x64x8xf32>) {
// CHECK: %[[T:.*]] = linformer.attention_core {{.*}} outs(%{{.*}}) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NOT: linformer.tile_sizes
// CHECK: tensor.parallel_insert_slice %[[T]]
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
func.func @tile_sizes_core(%q: tensor<1x2x64x8xf32>, %kp: tensor<1x2x8x8xf32>,
    %vp: tensor<1x2x8x8xf32>) -> tensor<1x2x64x8xf32> {
  %a_init = tensor.empty() : tensor<1x2x64x8xf32>
  %a = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%a_init) {linformer.root, linformer.tile_sizes = array<i64: 1, 2, 8, 0>}
          : (tensor<1x2x64x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x64x8xf32>)
         -> tensor<1x2x64x8xf32>
  return %a : tensor<1x2x64x8xf32>
}

// -----

// Row tiles are rounded down to a divisor of the rows, so every tile has a
// static shape: 48 rows give 24 (row-tile 32) or 16 (row-tile 16); 4 x 2 x 2
// workgroups are enough. The core is a root without the mark.
// CHECK-LABEL: func.func @row_tile_divisor(
// DEF: scf.forall ({{.*}}) = ({{.*}}) to (4, 2, 48) step (1, 1, 24)
// DEF: linformer.attention_core {{.*}} -> tensor<1x1x24x8xf32>
// ROW16: scf.forall ({{.*}}) = ({{.*}}) to (4, 2, 48) step (1, 1, 16)
// ROW16: linformer.attention_core {{.*}} -> tensor<1x1x16x8xf32>
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
func.func @row_tile_divisor(%q: tensor<4x2x48x8xf32>, %kp: tensor<4x2x8x8xf32>,
    %vp: tensor<4x2x8x8xf32>) -> tensor<4x2x48x8xf32> {
  %a_init = tensor.empty() : tensor<4x2x48x8xf32>
  %a = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%a_init) : (tensor<4x2x48x8xf32>, tensor<4x2x8x8xf32>, tensor<4x2x8x8xf32>, tensor<4x2x48x8xf32>)
         -> tensor<4x2x48x8xf32>
  return %a : tensor<4x2x48x8xf32>
}

// -----

// Too few workgroups: one batch of 2 heads with 32 rows gives 2 x 1 with
// row-tile 32 (2 x 2 with 16), so the rows are halved down to 8 rows
// (2 x 4 = 8 workgroups) either way.
// CHECK-LABEL: func.func @min_workgroups_rows(
// CHECK: scf.forall ({{.*}}) = ({{.*}}) to (1, 2, 32) step (1, 1, 8)
// CHECK: linformer.attention_core {{.*}} -> tensor<1x1x8x8xf32>
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
func.func @min_workgroups_rows(%q: tensor<1x2x32x8xf32>, %kp: tensor<1x2x8x8xf32>,
    %vp: tensor<1x2x8x8xf32>) -> tensor<1x2x32x8xf32> {
  %a_init = tensor.empty() : tensor<1x2x32x8xf32>
  %a = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%a_init) : (tensor<1x2x32x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x32x8xf32>)
         -> tensor<1x2x32x8xf32>
  return %a : tensor<1x2x32x8xf32>
}

// -----

// When the rows are down to 1, the innermost dimension is halved, but not
// below 16: 2 rows x 64 channels become 2 x 4 workgroups of 1 x 16; 1 row
// of 32 stops at 1 x 2 workgroups of 16.
// CHECK-LABEL: func.func @min_workgroups_inner(
// CHECK: scf.forall ({{.*}}) = (0, 0) to (2, 64) step (1, 16)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16xf32>)
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK: scf.forall ({{.*}}) = (0, 0) to (1, 32) step (1, 16)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16xf32>)
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
func.func @min_workgroups_inner(%a: tensor<2x64xf32>, %b: tensor<1x32xf32>)
    -> (tensor<2x64xf32>, tensor<1x32xf32>) {
  %ea = tensor.empty() : tensor<2x64xf32>
  %ra = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x64xf32>) outs(%ea : tensor<2x64xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x64xf32>
  %eb = tensor.empty() : tensor<1x32xf32>
  %rb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<1x32xf32>) outs(%eb : tensor<1x32xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x32xf32>
  return %ra, %rb : tensor<2x64xf32>, tensor<1x32xf32>
}

// -----

// The output projection: loops (b, i, h, c, o), out [b, i, o]: the rows are
// the second output dimension; the reductions over heads and channels stay
// whole in each tile. The bias broadcast is fused. Batch 4 x 2 row tiles of
// 32 (4 of 16) are enough workgroups.
// CHECK-LABEL: func.func @output_projection(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<4x2x64x8xf32>, %[[WO:[a-z0-9]+]]: tensor<2x8x16xf32>, %[[BO:[a-z0-9]+]]: tensor<16xf32>)
// DEF: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[II:[a-z0-9]+]]) = (0, 0) to (4, 64) step (1, 32) shared_outs(%{{.*}}) -> (tensor<4x64x16xf32>) {
// ROW16: %[[R:.*]] = scf.forall (%[[IB:[a-z0-9]+]], %[[II:[a-z0-9]+]]) = (0, 0) to (4, 64) step (1, 16) shared_outs(%{{.*}}) -> (tensor<4x64x16xf32>) {
// DEF: %[[AS:.*]] = tensor.extract_slice %[[A]][%[[IB]], 0, %[[II]], 0] [1, 2, 32, 8] [1, 1, 1, 1]
// ROW16: %[[AS:.*]] = tensor.extract_slice %[[A]][%[[IB]], 0, %[[II]], 0] [1, 2, 16, 8] [1, 1, 1, 1]
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[BO]][0] [16] [1]
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BS]] : tensor<16xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%[[AS]], %{{.*}} : tensor<1x2x{{32|16}}x8xf32>, tensor<2x8x16xf32>) outs(%[[INIT]] :
// CHECK: tensor.parallel_insert_slice %[[T]]
// CHECK: } {linformer.root, mapping = [#linformer.workgroup<0>{{.*}}]}
// CHECK-NEXT: return %[[R]]
#a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
#wo = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#b1 = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @output_projection(%a: tensor<4x2x64x8xf32>, %wo: tensor<2x8x16xf32>,
    %bo: tensor<16xf32>) -> tensor<4x64x16xf32> {
  %e = tensor.empty() : tensor<4x64x16xf32>
  %init = linalg.generic {indexing_maps = [#b1, #id3],
                          iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bo : tensor<16xf32>) outs(%e : tensor<4x64x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x64x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #wo, #y],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%a, %wo : tensor<4x2x64x8xf32>, tensor<2x8x16xf32>)
      outs(%init : tensor<4x64x16xf32>) attrs = {linformer.root} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x64x16xf32>
  return %y : tensor<4x64x16xf32>
}
