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
// (the packing root is an initializer). The panels, a constant of the
// session, are written into a buffer of their own (an alloc_tensor, which
// CSE does not merge with the run's values of their type, as it merges
// tensor.empty ops).
// CHECK-LABEL: func.func @marked(
// CHECK: %[[PE:.*]] = bufferization.alloc_tensor() : tensor<4x32x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<32x4x16xf32>) outs(%[[PE]] : tensor<4x32x16xf32>)
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

// -----

// A projection's weight split per head, as attention reads it. Queries:
// W [32, 64] read as [K, H, C] = [32, 2, 32] (reduction k, head h, columns
// c). Output: W2 [64, 32] read as [H, R, N] = [2, 32, 32] (h and r both
// reductions). Each is packed as a whole weight (panels of 16 of its 64 or
// 32 columns, P[j, k, c] = W[k, 16 j + c]), and read through the panels
// split alike: the queries' [H, C / 16, K, 16] (panel j of head h is 2 h +
// j, since a head's 32 columns are 2 panels), unpacked with its outer dims
// (k, h, c / 16) in the order (h, c / 16, k); the output's [N / 16, H, R,
// 16], outer dims (h, r, n / 16) in the order (n / 16, h, r). A head's
// columns not a whole number of panels (24) are left alone.
// CHECK-LABEL: func.func @heads(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<16x32xf32> {linformer.sequence}, %[[W:[a-z0-9]+]]: tensor<32x64xf32>, %[[W2:[a-z0-9]+]]: tensor<64x32xf32>, %[[V:[a-z0-9]+]]: tensor<32x48xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x32x16xf32>) attrs = {linformer.initializer
// CHECK: %[[P2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64x16xf32>) attrs = {linformer.initializer
// CHECK-NOT: linformer.initializer
// CHECK: %[[PQ:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 2, 32, 16] : tensor<4x32x16xf32> into tensor<2x2x32x16xf32>
// CHECK: %[[UQ:.*]] = linalg.unpack %[[PQ]] outer_dims_perm = [1, 2, 0] inner_dims_pos = [2] inner_tiles = [16] into %{{.*}} : tensor<2x2x32x16xf32> -> tensor<32x2x32xf32>
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[UQ]] : tensor<16x32xf32>, tensor<32x2x32xf32>)
// CHECK: %[[PO:.*]] = tensor.expand_shape %[[P2]] {{\[}}[0], [1, 2], [3]] output_shape [2, 2, 32, 16] : tensor<2x64x16xf32> into tensor<2x2x32x16xf32>
// CHECK: %[[UO:.*]] = linalg.unpack %[[PO]] outer_dims_perm = [2, 0, 1] inner_dims_pos = [2] inner_tiles = [16] into %{{.*}} : tensor<2x2x32x16xf32> -> tensor<2x32x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[Q]], %[[UO]] : tensor<2x16x32xf32>, tensor<2x32x32xf32>)
// CHECK: %[[VE:.*]] = tensor.expand_shape %[[V]] {{\[}}[0], [1, 2]] output_shape [32, 2, 24]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[VE]] : tensor<16x32xf32>, tensor<32x2x24xf32>)
// CHECK-NOT: linalg.unpack
#xq = affine_map<(h, s, k, c) -> (s, k)>
#wq = affine_map<(h, s, k, c) -> (k, h, c)>
#yq = affine_map<(h, s, k, c) -> (h, s, c)>
#ao = affine_map<(s, h, r, n) -> (h, s, r)>
#wo = affine_map<(s, h, r, n) -> (h, r, n)>
#yo = affine_map<(s, h, r, n) -> (s, n)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @heads(%x: tensor<16x32xf32> {linformer.sequence},
    %w: tensor<32x64xf32>, %w2: tensor<64x32xf32>, %v: tensor<32x48xf32>)
    -> (tensor<16x32xf32>, tensor<2x16x24xf32>) {
  %z = arith.constant 0.0 : f32
  %we = tensor.expand_shape %w [[0], [1, 2]] output_shape [32, 2, 32]
      : tensor<32x64xf32> into tensor<32x2x32xf32>
  %eq = tensor.empty() : tensor<2x16x32xf32>
  %fq = linalg.fill ins(%z : f32) outs(%eq : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %q = linalg.generic {indexing_maps = [#xq, #wq, #yq],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %we : tensor<16x32xf32>, tensor<32x2x32xf32>)
      outs(%fq : tensor<2x16x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [0, 8, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x32xf32>
  %w2e = tensor.expand_shape %w2 [[0, 1], [2]] output_shape [2, 32, 32]
      : tensor<64x32xf32> into tensor<2x32x32xf32>
  %eo = tensor.empty() : tensor<16x32xf32>
  %fo = linalg.fill ins(%z : f32) outs(%eo : tensor<16x32xf32>) -> tensor<16x32xf32>
  %o = linalg.generic {indexing_maps = [#ao, #wo, #yo],
                       iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%q, %w2e : tensor<2x16x32xf32>, tensor<2x32x32xf32>)
      outs(%fo : tensor<16x32xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [8, 0, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  // Not packed: a head's 24 columns are not whole panels of 16.
  %ve = tensor.expand_shape %v [[0], [1, 2]] output_shape [32, 2, 24]
      : tensor<32x48xf32> into tensor<32x2x24xf32>
  %ev = tensor.empty() : tensor<2x16x24xf32>
  %fv = linalg.fill ins(%z : f32) outs(%ev : tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
  %r = linalg.generic {indexing_maps = [#xq, #wq, #yq],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %ve : tensor<16x32xf32>, tensor<32x2x24xf32>)
      outs(%fv : tensor<2x16x24xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [0, 8, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x16x24xf32>
  return %o, %r : tensor<16x32xf32>, tensor<2x16x24xf32>
}
}

// -----

// A bf16 weight that the contraction reads extended to f32 (a bf16 model's
// weight): its panels are f32, extended as they are packed, once per
// session; the contraction reads their unpack, f32, and the extension that
// wrote an f32 copy of the weight in every run has no reader left. An
// extension that does more than extend (`%v`, extended then scaled) is no
// weight as read: left alone.
// CHECK-LABEL: func.func @widened(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x32xf32> {linformer.sequence}, %[[W:[a-z0-9]+]]: tensor<32x64xbf16>, %[[V:[a-z0-9]+]]: tensor<32x64xbf16>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[}}[0], [1, 2]] output_shape [32, 4, 16] : tensor<32x64xbf16> into tensor<32x4x16xbf16>
// CHECK: %[[PE:.*]] = bufferization.alloc_tensor() : tensor<4x32x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<32x4x16xbf16>) outs(%[[PE]] : tensor<4x32x16xf32>)
// CHECK-SAME: {linformer.initializer, linformer.kernel = #linformer.kernel_shape<key = "other/ppp/4x32x16/
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[EXT:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[EXT]] : f32
// CHECK-NOT: tensor.expand_shape %[[V]]
// CHECK: %[[U:.*]] = linalg.unpack %[[P]] outer_dims_perm = [1, 0] inner_dims_pos = [1] inner_tiles = [16] into %{{.*}} : tensor<4x32x16xf32> -> tensor<32x64xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[U]] : tensor<64x32xf32>, tensor<32x64xf32>)
// CHECK-NOT: linalg.unpack
#x = affine_map<(i, k, j) -> (i, k)>
#w = affine_map<(i, k, j) -> (k, j)>
#y = affine_map<(i, k, j) -> (i, j)>
#id = affine_map<(k, j) -> (k, j)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
func.func @widened(%x: tensor<64x32xf32> {linformer.sequence},
    %w: tensor<32x64xbf16>, %v: tensor<32x64xbf16>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %z = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %ew = tensor.empty() : tensor<32x64xf32>
  %wf = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xbf16>) outs(%ew : tensor<32x64xf32>) {
  ^bb0(%p: bf16, %o: f32):
    %e = arith.extf %p : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<32x64xf32>
  %vf = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<32x64xbf16>) outs(%ew : tensor<32x64xf32>) {
  ^bb0(%p: bf16, %o: f32):
    %e = arith.extf %p : bf16 to f32
    %s = arith.mulf %e, %two : f32
    linalg.yield %s : f32
  } -> tensor<32x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %wf : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %vf : tensor<64x32xf32>, tensor<32x64xf32>)
      outs(%f : tensor<64x64xf32>) attrs = {linformer.root,
      linformer.schedule = #linformer.cpu_schedule<workgroup = [16, 0, 0],
        register = [4, 16], reduction = 0, pack = true>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %h, %g : tensor<64x64xf32>, tensor<64x64xf32>
}
}
