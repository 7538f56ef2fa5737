// RUN: linformer-opt %s --split-input-file --verify-diagnostics --linformer-cpu-prepack-weights | FileCheck %s

// Two FFN-like contractions whose schedules pack their streamed operands,
// both weights (arguments), 4 x 16 register tiles: each weight becomes
// panels of 16 columns, P[j, k, c] = W[k, 16 j + c], made by a kernel root
// of its own (the cost model's schedule) at the top of the function, in the
// order of the readers, and each contraction reads `linalg.unpack` of its
// panels, which is the weight again. The entry marks no sequence input, so
// every argument is an input: the panels are made in every run (no
// linformer.initializer).
// CHECK-DAG: #[[$T:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @ffn(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[W2:[a-z0-9]+]]: tensor<64x32xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[}}[0], [1, 2]] output_shape [32, 4, 16] : tensor<32x64xf32> into tensor<32x4x16xf32>
// CHECK: %[[PE:.*]] = tensor.empty() : tensor<4x32x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$T]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[E]] : tensor<32x4x16xf32>) outs(%[[PE]] : tensor<4x32x16xf32>)
// CHECK-SAME: {linformer.kernel = #linformer.kernel_shape<key = "other/ppp/4x32x16/
// CHECK-SAME: linformer.root, linformer.schedule = #linformer.cpu_schedule<
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: %[[E2:.*]] = tensor.expand_shape %[[W2]] {{\[}}[0], [1, 2]] output_shape [64, 2, 16]
// CHECK: %[[P2:.*]] = linalg.generic {{.*}} ins(%[[E2]] : tensor<64x2x16xf32>) outs(%{{.*}} : tensor<2x64x16xf32>)
// CHECK: %[[U:.*]] = linalg.unpack %[[P]] outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<4x32x16xf32> -> tensor<32x64xf32>
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[U]] : tensor<64x32xf32>, tensor<32x64xf32>)
// CHECK: %[[U2:.*]] = linalg.unpack %[[P2]] outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<2x64x16xf32> -> tensor<64x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[U2]] : tensor<64x64xf32>, tensor<64x32xf32>)
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @ffn(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>,
    %w2: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%h, %w2 : tensor<64x64xf32>, tensor<64x32xf32>)
      outs(%f2 : tensor<64x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 32, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
}

// -----

// One weight read by two contractions with the same panel width is packed
// once. Left alone: a schedule that does not pack, a weight whose columns
// are not a whole number of panels (40 columns, panels of 16), and a
// streamed operand that is not an argument (computed in the function).
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>
// CHECK-COUNT-1: tensor.expand_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[U1:.*]] = linalg.unpack
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[U1]] :
// CHECK: %[[U2:.*]] = linalg.unpack
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[U2]] :
// CHECK-NOT: linalg.unpack
// CHECK: return
func.func @shared(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>,
    %v: tensor<32x40xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>,
    tensor<64x64xf32>, tensor<64x40xf32>, tensor<64x64xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %b = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [32, 0, 0],
        register = [2, 16], reduction = 32, pack = true>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  // Not packed: its schedule does not ask for it.
  %c = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = false>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  // Not packed: 40 columns are not whole panels of 16.
  %e40 = tensor.empty() : tensor<64x40xf32>
  %f40 = linalg.fill ins(%z : f32) outs(%e40 : tensor<64x40xf32>) -> tensor<64x40xf32>
  %d = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %v : tensor<64x32xf32>, tensor<32x40xf32>)
      outs(%f40 : tensor<64x40xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x40xf32>
  // Not packed: the streamed operand is computed, not a weight.
  %ew = tensor.empty() : tensor<32x64xf32>
  %w2 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xf32>) outs(%ew : tensor<32x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %n = arith.negf %p : f32
    linalg.yield %n : f32
  } -> tensor<32x64xf32>
  %g = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w2 : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %a, %b, %c, %d, %g : tensor<64x64xf32>, tensor<64x64xf32>,
      tensor<64x64xf32>, tensor<64x40xf32>, tensor<64x64xf32>
}
}

// -----

// Packing needs the target the cost model schedules the packing kernel
// for.
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
func.func @no_target(%x: tensor<64x32xf32>, %w: tensor<32x64xf32>,
    %y: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{packs a weight, but the module has no CPU target (run linformer-cpu-select-schedules first)}}
  %r = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%y : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 16, pack = true>} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// An entry that marks its sequence input: every other float argument is a
// weight, the same in every run, and its panels are made once per session
// (the packing root is an initializer).
// CHECK-LABEL: func.func @marked(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<32x4x16xf32>)
// CHECK-SAME: {linformer.initializer, linformer.kernel = #linformer.kernel_shape<key = "other/ppp/4x32x16/
// CHECK-SAME: linformer.root
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @marked(%x: tensor<64x32xf32> {linformer.sequence},
    %w: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %h : tensor<64x64xf32>
}
}
