// RUN: linformer-opt %s --linformer-cpu-tile-for-vectors=bf16-dot=emulate --canonicalize --cse | FileCheck %s --implicit-check-not="tensor<12x64xf32>"

// A bf16 epilogue (linformer-cpu-tile-and-fuse fused the GELU and the
// rounding into the FFN's first GEMM's workgroups) is computed panel by
// panel of the GEMM's result: fused as a consumer (upstream) into the loop
// over the panels of the packed weight, right after the panel's register
// tiles, each register tile of it as an elementwise op. The panel's f32
// accumulators go to a panel-sized tensor of their own (a [12, 16] empty
// in the loop), not to a slice of the whole f32 result, which is no longer
// made: the loop carries only the bf16 result.
// CHECK-LABEL: func.func @epilogue(
// CHECK: %[[BF:.*]] = tensor.empty() : tensor<12x64xbf16>
// CHECK: %[[R:.*]] = scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[BF]]) -> (tensor<12x64xbf16>) {
// CHECK: %[[PANEL:.*]] = tensor.empty() : tensor<12x16xf32>
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[PANEL]]) -> (tensor<12x16xf32>) {
// CHECK: linalg.fill
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x2xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: %[[OS:.*]] = tensor.extract_slice %[[OUT]][0, %[[J]]] [12, 16] [1, 1]
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %[[OS]]) -> (tensor<12x16xbf16>) {
// CHECK: %[[T:.*]] = tensor.extract_slice %[[ACC]]
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xbf16>) attrs = {linformer.bf16_epilogue}
// CHECK: math.erf
// CHECK: arith.truncf
// CHECK: tensor.insert_slice %{{.*}} into %[[OUT]][0, %[[J]]] [12, 16] [1, 1] : tensor<12x16xbf16> into tensor<12x64xbf16>
// CHECK: return %[[R]] : tensor<12x64xbf16>
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @epilogue(%x: tensor<12x32xbf16>, %p: tensor<4x16x16x2xbf16>) -> tensor<12x64xbf16> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xbf16>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1, 0]
      inner_tiles = [16, 2] into %e : tensor<4x16x16x2xbf16> -> tensor<32x64xbf16>
  %ye = tensor.empty() : tensor<12x64xf32>
  %y = linalg.fill ins(%zero : f32) outs(%ye : tensor<12x64xf32>) -> tensor<12x64xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xbf16>, tensor<32x64xbf16>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  %be = tensor.empty() : tensor<12x64xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<12x64xf32>) outs(%be : tensor<12x64xbf16>) attrs = {linformer.bf16_epilogue} {
  ^bb0(%in: f32, %out: bf16):
    %t = math.erf %in : f32
    %u = arith.truncf %t : f32 to bf16
    linalg.yield %u : bf16
  } -> tensor<12x64xbf16>
  return %g : tensor<12x64xbf16>
}

// The same where the epilogue's destination is a slice of a larger tensor
// made after the GEMM (tile-and-fuse leaves a workgroup's slice of its
// shared destination there): the slice moves before the loop over panels
// and the epilogue still fuses into it. Left behind the loop, the GEMM's
// whole f32 result (an FFN workgroup's 1 MiB) would be made and read back.
// CHECK-LABEL: func.func @slice_destination(
// CHECK-SAME: %[[D:[a-z0-9]+]]: tensor<24x64xbf16>
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[D]][12, 0] [12, 64] [1, 1]
// CHECK: %[[R:.*]] = scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[BS]]) -> (tensor<12x64xbf16>) {
// CHECK: tensor.empty() : tensor<12x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xbf16>) attrs = {linformer.bf16_epilogue}
// CHECK: return %[[R]] : tensor<12x64xbf16>
func.func @slice_destination(%x: tensor<12x32xbf16>, %p: tensor<4x16x16x2xbf16>,
                             %d: tensor<24x64xbf16>) -> tensor<12x64xbf16> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xbf16>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1, 0]
      inner_tiles = [16, 2] into %e : tensor<4x16x16x2xbf16> -> tensor<32x64xbf16>
  %ye = tensor.empty() : tensor<12x64xf32>
  %y = linalg.fill ins(%zero : f32) outs(%ye : tensor<12x64xf32>) -> tensor<12x64xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xbf16>, tensor<32x64xbf16>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  %be = tensor.extract_slice %d[12, 0] [12, 64] [1, 1] : tensor<24x64xbf16> to tensor<12x64xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<12x64xf32>) outs(%be : tensor<12x64xbf16>) attrs = {linformer.bf16_epilogue} {
  ^bb0(%in: f32, %out: bf16):
    %t = math.erf %in : f32
    %u = arith.truncf %t : f32 to bf16
    linalg.yield %u : bf16
  } -> tensor<12x64xbf16>
  return %g : tensor<12x64xbf16>
}

// The epilogue in register tiles of at most 4 rows where the contraction's
// are taller (a 12 x 16 register tile here): the GELU's temporaries of a
// whole register tile's rows would not fit the vector registers.
// CHECK-LABEL: func.func @tall_register_tile(
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<12x2xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<12x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xbf16>) attrs = {linformer.bf16_epilogue}
// CHECK: return
func.func @tall_register_tile(%x: tensor<12x32xbf16>, %p: tensor<4x16x16x2xbf16>) -> tensor<12x64xbf16> attributes {
    linformer.schedule = #linformer.cpu_schedule<workgroup = [12, 0, 0],
        register = [12, 16], reduction = 0, pack = true>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xbf16>
  %w = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [1, 0]
      inner_tiles = [16, 2] into %e : tensor<4x16x16x2xbf16> -> tensor<32x64xbf16>
  %ye = tensor.empty() : tensor<12x64xf32>
  %y = linalg.fill ins(%zero : f32) outs(%ye : tensor<12x64xf32>) -> tensor<12x64xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<12x32xbf16>, tensor<32x64xbf16>)
      outs(%y : tensor<12x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ea = arith.extf %a : bf16 to f32
    %eb = arith.extf %b : bf16 to f32
    %m = arith.mulf %ea, %eb : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<12x64xf32>
  %be = tensor.empty() : tensor<12x64xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<12x64xf32>) outs(%be : tensor<12x64xbf16>) attrs = {linformer.bf16_epilogue} {
  ^bb0(%in: f32, %out: bf16):
    %t = math.erf %in : f32
    %u = arith.truncf %t : f32 to bf16
    linalg.yield %u : bf16
  } -> tensor<12x64xbf16>
  return %g : tensor<12x64xbf16>
}
