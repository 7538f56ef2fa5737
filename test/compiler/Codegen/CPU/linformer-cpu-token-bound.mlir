// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-for-vectors="vector-width=16 unroll=8 reduction-tile=64" --cse | FileCheck %s

// A token reduction (E X: loops (b, j, t, m), reduction over t) marked with
// #linformer.token_bound<token = t, batch = b> stops at the sequence's
// length: lengths[b] - t0 real tokens from the tile's first token t0 (the
// offsets of its operand slice), so the reduction block loop ends at
// min(256, real) and the per-step loop in each block at min(64, real - t).
// Padded rows of X are never read. The lengths come from the argument
// marked linformer.lengths.

// CHECK-LABEL: func.func @bounded(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<2xi32> {linformer.lengths}
// CHECK-SAME: %[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index
// CHECK: %[[L:.*]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[REAL:.*]] = arith.subi %[[LI]], %[[T]] : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[UB:.*]] = arith.minsi %[[C256]], %[[REAL]] : index
// CHECK: scf.for %[[T0:.*]] = %{{.*}} to %[[UB]] step %[[C64]]
// CHECK: %[[REST:.*]] = arith.subi %[[REAL]], %[[T0]] : index
// CHECK: %[[UB2:.*]] = arith.minsi %[[C64]], %[[REST]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB2]] step %{{.*}} iter_args
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<1x8x1xf32>, tensor<1x1x16xf32>)
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @bounded(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %t: index, %e: tensor<2x8x512xf32>, %x: tensor<2x512x16xf32>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 256] [1, 1, 1]
      : tensor<2x8x512xf32> to tensor<1x8x256xf32>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 256, 16] [1, 1, 1]
      : tensor<2x512x16xf32> to tensor<1x256x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x256xf32>, tensor<1x256x16xf32>)
      outs(%init : tensor<1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// After a split reduction (token = part * 128 + token within the part,
// array<i64: token loop, batch loop, part loop, 128>), the tile's first
// token is part * 128 + t.

// CHECK-LABEL: func.func @split(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<2xi32> {linformer.lengths}
// CHECK-SAME: %[[B:[a-z0-9]+]]: index, %[[P:[a-z0-9]+]]: index
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[PART:.*]] = arith.muli %[[P]], %[[C128]] : index
// CHECK: %[[START:.*]] = arith.addi %[[PART]], %{{.*}} : index
// CHECK: %[[L:.*]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[REAL:.*]] = arith.subi %[[LI]], %[[START]] : index
// CHECK: %[[UB:.*]] = arith.minsi %[[C128]], %[[REAL]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}}
#se = affine_map<(p, b, j, t, m) -> (b, j, p, t)>
#sx = affine_map<(p, b, j, t, m) -> (b, p, t, m)>
#so = affine_map<(p, b, j, t, m) -> (p, b, j, m)>
func.func @split(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %p: index, %e: tensor<2x8x4x128xf32>, %x: tensor<2x4x128x16xf32>,
    %init: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %p, 0] [1, 8, 1, 128] [1, 1, 1, 1]
      : tensor<2x8x4x128xf32> to tensor<1x8x1x128xf32>
  %xs = tensor.extract_slice %x[%b, %p, 0, 0] [1, 1, 128, 16] [1, 1, 1, 1]
      : tensor<2x4x128x16xf32> to tensor<1x1x128x16xf32>
  %r = linalg.generic {indexing_maps = [#se, #sx, #so],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x1x128xf32>, tensor<1x1x128x16xf32>)
      outs(%init : tensor<1x1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 1, part = 0, per_part = 128>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x8x16xf32>
  return %r : tensor<1x1x8x16xf32>
}

// -----

// Without an argument marked linformer.lengths there is nothing to bound
// by: the loops run over every token.

// CHECK-LABEL: func.func @no_lengths(
// CHECK-NOT: arith.minsi
// CHECK-NOT: tensor.extract %
// CHECK: return
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @no_lengths(%len: tensor<2xi32>, %b: index,
    %t: index, %e: tensor<2x8x512xf32>, %x: tensor<2x512x16xf32>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 256] [1, 1, 1]
      : tensor<2x8x512xf32> to tensor<1x8x256xf32>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 256, 16] [1, 1, 1]
      : tensor<2x512x16xf32> to tensor<1x256x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x256xf32>, tensor<1x256x16xf32>)
      outs(%init : tensor<1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// A window reduction (pooling, conv: token = window * 4 + r) whose body
// masks padded tokens, array<i64: r, batch, window, 4, 1>: the tile holds 4
// windows, and the loop over r stops at the real tokens from its first
// window's first token, lengths[b] - 4 j (the later windows' padded tokens
// are masked by the select): a tile past the length does no step.
// CHECK-LABEL: func.func @windows(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<2xi32> {linformer.lengths}
// CHECK-SAME: %[[B:[a-z0-9]+]]: index, %[[J:[a-z0-9]+]]: index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[J]], %[[C4]] : index
// CHECK: %[[START:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
// CHECK: %[[L:.*]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[REAL:.*]] = arith.subi %[[LI]], %[[START]] : index
// CHECK: %[[UB:.*]] = arith.minsi %[[C4]], %[[REAL]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}}
// CHECK: arith.select
#win = affine_map<(b, h, j, r, c) -> (b, h, j, r, c)>
#flag = affine_map<(b, h, j, r, c) -> (b, j, r)>
#out = affine_map<(b, h, j, r, c) -> (b, h, j, c)>
func.func @windows(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %j: index, %x: tensor<2x1x16x4x16xf32>, %f: tensor<2x16x4xi8>,
    %init: tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32> {
  %c0 = arith.constant 0 : i8
  %z = arith.constant 0.0 : f32
  %xs = tensor.extract_slice %x[%b, 0, %j, 0, 0] [1, 1, 4, 4, 16] [1, 1, 1, 1, 1]
      : tensor<2x1x16x4x16xf32> to tensor<1x1x4x4x16xf32>
  %fs = tensor.extract_slice %f[%b, %j, 0] [1, 4, 4] [1, 1, 1]
      : tensor<2x16x4xi8> to tensor<1x4x4xi8>
  %r = linalg.generic {indexing_maps = [#win, #flag, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%xs, %fs : tensor<1x1x4x4x16xf32>, tensor<1x4x4xi8>)
      outs(%init : tensor<1x1x4x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, part = 2, per_part = 4, masked = true>} {
  ^bb0(%a: f32, %v: i8, %acc: f32):
    %ok = arith.cmpi ne, %v, %c0 : i8
    %s = arith.select %ok, %a, %z : f32
    %t = arith.addf %acc, %s : f32
    linalg.yield %t : f32
  } -> tensor<1x1x4x16xf32>
  return %r : tensor<1x1x4x16xf32>
}

// -----

// An attention core's scores over pooled slots (loops (b, h, j, c, i), j
// parallel: the rows; windows of 16 tokens, per_step = 16), on whole
// operands of one sequence (no slice: batch 0, first slot 0): the rows'
// register loop stops at ceil(lengths[0] / 16) slots.
// CHECK-LABEL: func.func @slot_rows(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<1xi32> {linformer.lengths}
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[L:.*]] = tensor.extract %[[LEN]][%[[C0]]] : tensor<1xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : index
// CHECK: %[[UP:.*]] = arith.addi %[[LI]], %[[C15]] : index
// CHECK: %[[SLOTS:.*]] = arith.divsi %[[UP]], %[[C16]] : index
// CHECK: %[[UB:.*]] = arith.minsi %{{.*}}, %[[SLOTS]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step
#k = affine_map<(b, h, j, c, i) -> (b, h, j, c)>
#q = affine_map<(b, h, j, c, i) -> (b, h, c, i)>
#s = affine_map<(b, h, j, c, i) -> (b, h, j, i)>
func.func @slot_rows(%len: tensor<1xi32> {linformer.lengths},
    %key: tensor<1x1x64x16xf32>, %qt: tensor<1x1x16x64xf32>,
    %init: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  %r = linalg.generic {indexing_maps = [#k, #q, #s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%key, %qt : tensor<1x1x64x16xf32>, tensor<1x1x16x64xf32>)
      outs(%init : tensor<1x1x64x64xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 16>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  } -> tensor<1x1x64x64xf32>
  return %r : tensor<1x1x64x64xf32>
}

// -----

// The core's softmax over pooled slots in a workgroup of sequence %b (loops
// (b, j, i), windows of 4 tokens): the exponentials read a slice of the
// scores, the row maxima only the exponentials computed in the workgroup.
// Both stop at ceil(lengths[%b] / 4) slots: the maxima's tile offsets are
// traced back through the exponentials to the slice (sequence %b, slot 0),
// not taken as sequence 0's.
// CHECK-LABEL: func.func @slot_softmax(
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<2xi32> {linformer.lengths}
// (--cse merges the two, equal, bounds.)
// CHECK: scf.forall (%[[B:.*]]) in (2)
// CHECK-NOT: tensor.extract %[[LEN]]
// CHECK: tensor.extract %[[LEN]][%[[B]]] : tensor<2xi32>
// CHECK: %[[SLOTS:.*]] = arith.divsi
// CHECK: %[[REAL:.*]] = arith.subi %[[SLOTS]]
// CHECK: arith.minsi %{{.*}}, %[[REAL]]
// CHECK: math.exp
// CHECK: arith.minsi %{{.*}}, %[[SLOTS]]
// CHECK: arith.maximumf
// CHECK-NOT: tensor.extract %[[LEN]]
#sji = affine_map<(b, j, i) -> (b, j, i)>
#si = affine_map<(b, j, i) -> (b, i)>
func.func @slot_softmax(%len: tensor<2xi32> {linformer.lengths},
    %scores: tensor<2x32x16xf32>, %init: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %r = scf.forall (%b) in (2) shared_outs(%o = %init) -> (tensor<2x16xf32>) {
    %s = tensor.extract_slice %scores[%b, 0, 0] [1, 32, 16] [1, 1, 1]
        : tensor<2x32x16xf32> to tensor<1x32x16xf32>
    %e0 = tensor.empty() : tensor<1x32x16xf32>
    %e = linalg.generic {indexing_maps = [#sji, #sji],
                         iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%s : tensor<1x32x16xf32>) outs(%e0 : tensor<1x32x16xf32>)
        attrs = {linformer.token_bound = #linformer.token_bound<token = 1, batch = 0, per_step = 4>} {
    ^bb0(%x: f32, %y: f32):
      %v = math.exp %x : f32
      linalg.yield %v : f32
    } -> tensor<1x32x16xf32>
    %os = tensor.extract_slice %o[%b, 0] [1, 16] [1, 1]
        : tensor<2x16xf32> to tensor<1x16xf32>
    %m = linalg.generic {indexing_maps = [#sji, #si],
                         iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%e : tensor<1x32x16xf32>) outs(%os : tensor<1x16xf32>)
        attrs = {linformer.token_bound = #linformer.token_bound<token = 1, batch = 0, per_step = 4>} {
    ^bb0(%x: f32, %acc: f32):
      %v = arith.maximumf %acc, %x : f32
      linalg.yield %v : f32
    } -> tensor<1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %m into %o[%b, 0] [1, 16] [1, 1]
          : tensor<1x16xf32> into tensor<2x16xf32>
    }
  }
  return %r : tensor<2x16xf32>
}

// -----

// The same softmax on 4 slots, fewer than a register tile's 8 rows: no loop
// cuts them in the exponentials, which then run over every slot, and so
// does the masking select whose slots they read (masked: it writes every
// slot, -inf past the lengths; no error). The maxima step over the slots
// one by one and stop at the lengths.
// CHECK-LABEL: func.func @few_slots(
// CHECK-NOT: arith.minsi
// CHECK: arith.select
// CHECK-NOT: arith.minsi
// CHECK: math.exp
// CHECK: arith.minsi
// CHECK: arith.maximumf
// CHECK: return
#sji = affine_map<(b, j, i) -> (b, j, i)>
#sj = affine_map<(b, j, i) -> (b, j)>
#si = affine_map<(b, j, i) -> (b, i)>
func.func @few_slots(%len: tensor<2xi32> {linformer.lengths},
    %scores: tensor<2x4x16xf32>, %mask: tensor<2x4xi8>,
    %init: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %r = scf.forall (%b) in (2) shared_outs(%o = %init) -> (tensor<2x16xf32>) {
    %s = tensor.extract_slice %scores[%b, 0, 0] [1, 4, 16] [1, 1, 1]
        : tensor<2x4x16xf32> to tensor<1x4x16xf32>
    %mk = tensor.extract_slice %mask[%b, 0] [1, 4] [1, 1]
        : tensor<2x4xi8> to tensor<1x4xi8>
    %e0 = tensor.empty() : tensor<1x4x16xf32>
    %sel = linalg.generic {indexing_maps = [#sji, #sj, #sji],
                           iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%s, %mk : tensor<1x4x16xf32>, tensor<1x4xi8>) outs(%e0 : tensor<1x4x16xf32>)
        attrs = {linformer.token_bound = #linformer.token_bound<token = 1, batch = 0, masked = true, per_step = 4>} {
    ^bb0(%x: f32, %m: i8, %y: f32):
      %z = arith.constant 0 : i8
      %ninf = arith.constant 0xFF800000 : f32
      %keep = arith.cmpi ne, %m, %z : i8
      %v = arith.select %keep, %x, %ninf : f32
      linalg.yield %v : f32
    } -> tensor<1x4x16xf32>
    %e1 = tensor.empty() : tensor<1x4x16xf32>
    %e = linalg.generic {indexing_maps = [#sji, #sji],
                         iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%sel : tensor<1x4x16xf32>) outs(%e1 : tensor<1x4x16xf32>)
        attrs = {linformer.token_bound = #linformer.token_bound<token = 1, batch = 0, per_step = 4>} {
    ^bb0(%x: f32, %y: f32):
      %v = math.exp %x : f32
      linalg.yield %v : f32
    } -> tensor<1x4x16xf32>
    %os = tensor.extract_slice %o[%b, 0] [1, 16] [1, 1]
        : tensor<2x16xf32> to tensor<1x16xf32>
    %m = linalg.generic {indexing_maps = [#sji, #si],
                         iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%e : tensor<1x4x16xf32>) outs(%os : tensor<1x16xf32>)
        attrs = {linformer.token_bound = #linformer.token_bound<token = 1, batch = 0, per_step = 4>} {
    ^bb0(%x: f32, %acc: f32):
      %v = arith.maximumf %acc, %x : f32
      linalg.yield %v : f32
    } -> tensor<1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %m into %o[%b, 0] [1, 16] [1, 1]
          : tensor<1x16xf32> into tensor<2x16xf32>
    }
  }
  return %r : tensor<2x16xf32>
}

// -----

// One step, from the sequence's first token (the slices start at token 0):
// real in every sequence, whose length is at least 1, so there is nothing
// to stop and no loop is needed (a core over one pooled slot of all n
// tokens, k = 1, once was refused: "register tiling left no loop").

// CHECK-LABEL: func.func @one_step_from_first(
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<1x8x1xf32>, tensor<1x1x16xf32>)
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @one_step_from_first(%len: tensor<2xi32> {linformer.lengths},
    %b: index, %e: tensor<2x8x1xf32>, %x: tensor<2x1x16xf32>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, 0] [1, 8, 1] [1, 1, 1]
      : tensor<2x8x1xf32> to tensor<1x8x1xf32>
  %xs = tensor.extract_slice %x[%b, 0, 0] [1, 1, 16] [1, 1, 1]
      : tensor<2x1x16xf32> to tensor<1x1x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x1xf32>, tensor<1x1x16xf32>)
      outs(%init : tensor<1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 8>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// 79 tokens (a prime) in reduction blocks of at most 64: blocks of one
// token. The blocks' loop stops at the length, so the one token of each
// block it runs is real and the op inside has nothing left to stop (it
// once was refused: "register tiling left no loop").

// CHECK-LABEL: func.func @one_token_blocks(
// CHECK: %[[REAL:.*]] = arith.subi
// CHECK: %[[UB:.*]] = arith.minsi %{{.*}}, %[[REAL]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<1x8x1xf32>, tensor<1x1x16xf32>)
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @one_token_blocks(%len: tensor<2xi32> {linformer.lengths},
    %b: index, %t: index, %e: tensor<2x8x158xf32>, %x: tensor<2x158x16xf32>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 79] [1, 1, 1]
      : tensor<2x8x158xf32> to tensor<1x8x79xf32>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 79, 16] [1, 1, 1]
      : tensor<2x158x16xf32> to tensor<1x79x16xf32>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x79xf32>, tensor<1x79x16xf32>)
      outs(%init : tensor<1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// The same reduction with both factors bf16 (linformer-bf16-products'
// pairs) steps its tokens two at a time (one vdpbf16ps a pair). After an
// odd length the last pair would read the padded token after it (NaN in
// a poisoned run, whatever the kernel before left there otherwise): the
// pair loop stops at the last complete pair, and a loop after it (run
// once or not at all) steps the odd token alone, carrying the pairs'
// accumulators.

// CHECK-LABEL: func.func @bounded_pairs(
// CHECK: %[[REAL:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: scf.for %[[T0:.*]] = %{{.*}} to %{{.*}} step %{{.*}}
// CHECK: %[[REST:.*]] = arith.subi %[[REAL]], %[[T0]] : index
// CHECK: %[[UB2:.*]] = arith.minsi %{{.*}}, %[[REST]] : index
// CHECK: %[[END:.*]] = arith.maxsi %[[UB2]], %[[C0:.*]] : index
// CHECK: %[[SPAN:.*]] = arith.subi %[[END]], %[[C0]] : index
// CHECK: %[[ODD:.*]] = arith.remui %[[SPAN]], %[[C2:.*]] : index
// CHECK: %[[PAIRS:.*]] = arith.subi %[[END]], %[[ODD]] : index
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %[[C0]] to %[[PAIRS]] step %[[C2]] iter_args
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<1x8x2xbf16>, tensor<1x2x16xbf16>)
// CHECK: scf.for %{{.*}} = %[[PAIRS]] to %[[END]] step %[[C1:[a-z0-9_]+]] iter_args(%{{.*}} = %[[ACC]])
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<1x8x1xbf16>, tensor<1x1x16xbf16>)
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @bounded_pairs(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %t: index, %e: tensor<2x8x512xbf16>, %x: tensor<2x512x16xbf16>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 256] [1, 1, 1]
      : tensor<2x8x512xbf16> to tensor<1x8x256xbf16>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 256, 16] [1, 1, 1]
      : tensor<2x512x16xbf16> to tensor<1x256x16xbf16>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x256xbf16>, tensor<1x256x16xbf16>)
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

// An elementwise op whose only reader stops at the lengths (the bf16
// rounding of X that linformer-bf16-products puts before E X) stops there
// too: its token loop ends at the real tokens, not at the tile's end.
// CHECK-LABEL: func.func @rounded_operand(
// CHECK: %[[LEN:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[REAL:.*]] = arith.subi %[[LEN]], %{{.*}} : index
// CHECK: %[[UB:.*]] = arith.minsi %{{.*}}, %[[REAL]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: ins({{.*}} : tensor<1x8x2xbf16>, tensor<1x2x16xbf16>)
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
#id = affine_map<(b, t, m) -> (b, t, m)>
func.func @rounded_operand(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %t: index, %e: tensor<2x8x512xbf16>, %x: tensor<2x512x16xf32>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 256] [1, 1, 1]
      : tensor<2x8x512xbf16> to tensor<1x8x256xbf16>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 256, 16] [1, 1, 1]
      : tensor<2x512x16xf32> to tensor<1x256x16xf32>
  %empty = tensor.empty() : tensor<1x256x16xbf16>
  %xr = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%xs : tensor<1x256x16xf32>) outs(%empty : tensor<1x256x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<1x256x16xbf16>
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xr : tensor<1x8x256xbf16>, tensor<1x256x16xbf16>)
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
