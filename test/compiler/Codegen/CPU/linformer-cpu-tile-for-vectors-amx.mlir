// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=32 unroll=8 reduction-tile=0 bf16-dot=amx" --canonicalize --cse | FileCheck %s
// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=32 unroll=8 reduction-tile=0 bf16-dot=emulate" --canonicalize --cse | FileCheck %s --check-prefix=DOT
// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=64 unroll=8 reduction-tile=0 bf16-dot=amx" --canonicalize --cse | FileCheck %s --check-prefix=WIDE

// With AMX (bf16-dot=amx) a contraction of two bf16 factors takes register
// tiles of 32 rows (two AMX tiles') where the schedule's columns are at
// most 32 (two 16-column tiles here), stepped in pairs of its paired
// reduction as the dot products' are (the streamed operand's pairs made
// once, `[k, n, 2]`); linformer-cpu-lower-vectors makes 16 pairs of such a
// loop one tdpbf16ps per 16 x 16 accumulator. Where the schedule's columns
// are wider (64), 16 rows (up to 4 accumulators a row). With dot products
// the same op steps pairs on 8 rows.
// WIDE-LABEL: func.func @amx_tiles(
// WIDE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x2xbf16>, tensor<2x32xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK-LABEL: func.func @amx_tiles(
// CHECK: scf.for {{.*}} step %c2
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x2xbf16>, tensor<2x32xbf16>) outs(%{{.*}} : tensor<32x32xf32>)
// DOT-LABEL: func.func @amx_tiles(
// DOT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x2xbf16>, tensor<2x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @amx_tiles(%x: tensor<64x48xbf16>, %w: tensor<48x32xbf16>,
                     %acc: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<64x48xbf16>, tensor<48x32xbf16>) outs(%acc : tensor<64x32xf32>) {
  ^bb0(%in: bf16, %in2: bf16, %out: f32):
    %e1 = arith.extf %in : bf16 to f32
    %e2 = arith.extf %in2 : bf16 to f32
    %m = arith.mulf %e1, %e2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// -----

// An op stopped at the lengths keeps the dot products' pairs under AMX:
// E X's token loop steps complete pairs and its odd token alone, and a
// core's scores over pooled slots (rows stopped at the lengths) must keep
// a loop over its rows, which 16-row tiles could cover whole.
// CHECK-LABEL: func.func @token_pairs(
// CHECK: scf.for {{.*}} step %c2
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x2xbf16>, tensor<1x2x16xbf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x1xbf16>, tensor<1x1x16xbf16>)
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @token_pairs(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %t: index, %e: tensor<2x8x512xbf16>, %x: tensor<2x512x16xbf16>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 64] [1, 1, 1]
      : tensor<2x8x512xbf16> to tensor<1x8x64xbf16>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 64, 16] [1, 1, 1]
      : tensor<2x512x16xbf16> to tensor<1x64x16xbf16>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x64xbf16>, tensor<1x64x16xbf16>)
      outs(%init : tensor<1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: bf16, %c: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %ce = arith.extf %c : bf16 to f32
    %m = arith.mulf %ae, %ce : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// A projection with a bias per head and a bf16 epilogue, under AMX: its
// loop over heads (the panels) reads the carried f32 result twice, in the
// bias broadcast's tile and in the contraction's. The panel's own buffer
// comes before both (it used to be made before the contraction's, after
// the broadcast that writes into it: "operand #1 does not dominate this
// use", random-model seed 20261243 case 303).
// CHECK-LABEL: func.func @head_bias_epilogue(
// CHECK: scf.for %[[H:.*]] = %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x2x1x8xbf16>) {
// CHECK: %[[BIAS:.*]] = tensor.extract_slice %{{.*}}[%[[H]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<1x8xf32>
// CHECK: %[[PANEL:.*]] = tensor.empty() : tensor<1x1x1x8xf32>
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<1x8xf32>) outs(%[[PANEL]] : tensor<1x1x1x8xf32>)
// CHECK: %[[ACC:.*]] = scf.for {{.*}} step %c2 iter_args(%{{.*}} = %[[INIT]]) -> (tensor<1x1x1x8xf32>)
// CHECK: %[[OS:.*]] = tensor.extract_slice %[[OUT]][0, %[[H]], 0, 0] [1, 1, 1, 8]
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : tensor<1x1x1x8xf32>) outs(%[[OS]] : tensor<1x1x1x8xbf16>)
#bcast = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @head_bias_epilogue(%x: tensor<1x1x16xbf16>, %w: tensor<16x2x8xbf16>,
                              %bias: tensor<2x8xf32>) -> tensor<1x2x1x8xbf16> {
  %acc = tensor.empty() : tensor<1x2x1x8xf32>
  %out = tensor.empty() : tensor<1x2x1x8xbf16>
  %r = scf.forall (%i, %j) in (1, 1) shared_outs(%o = %out) -> (tensor<1x2x1x8xbf16>) {
    %b = linalg.generic {indexing_maps = [#bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%bias : tensor<2x8xf32>) outs(%acc : tensor<1x2x1x8xf32>) {
    ^bb0(%in: f32, %unused: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x1x8xf32>
    %c = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
        ins(%x, %w : tensor<1x1x16xbf16>, tensor<16x2x8xbf16>) outs(%b : tensor<1x2x1x8xf32>) attrs = {linformer.bf16_engine = "amx, emulated"} {
    ^bb0(%in: bf16, %in2: bf16, %s: f32):
      %e1 = arith.extf %in : bf16 to f32
      %e2 = arith.extf %in2 : bf16 to f32
      %m = arith.mulf %e1, %e2 : f32
      %a = arith.addf %s, %m : f32
      linalg.yield %a : f32
    } -> tensor<1x2x1x8xf32>
    %t = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c : tensor<1x2x1x8xf32>) outs(%o : tensor<1x2x1x8xbf16>) attrs = {linformer.bf16_epilogue} {
    ^bb0(%in: f32, %unused: bf16):
      %v = arith.truncf %in : f32 to bf16
      linalg.yield %v : bf16
    } -> tensor<1x2x1x8xbf16>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[0, 0, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x8xbf16> into tensor<1x2x1x8xbf16>
    }
  } {linformer.kernel = #linformer.kernel_shape<key = "contraction/pppRp/1x2x1x16x8/a5057b", kind = "contraction", loops = [1, 2, 1, 16, 8], iterators = "pppRp", output_dims = [0, 1, 2, 4], flops = 512, source = "cost-model", m_loop = 2, n_loop = 4, column_loops = [1, 4], streamed_weight = true, engine = "amx, emulated">, linformer.root, linformer.schedule = #linformer.cpu_schedule<workgroup = [1, 0, 1, 0, 0], register = [1, 8], reduction = 0, pack = true>, mapping = [#linformer.workgroup<0>, #linformer.workgroup<1>]}
  return %r : tensor<1x2x1x8xbf16>
}
