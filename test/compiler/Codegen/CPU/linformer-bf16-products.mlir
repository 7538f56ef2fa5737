// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=off}))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=emulate}))' | FileCheck %s --check-prefix=PAIRS
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=amx}))' | FileCheck %s --check-prefix=AMX
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-bf16-products{dot=vnni}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: unknown dot 'vnni': expected auto, emulate, amx or off

// Without pairs (dot=off, or dot=auto on a CPU without AVX512_BF16) the
// factors take the forms below; with pairs (dot=emulate, or dot=auto on
// AVX512_BF16) both factors of a contraction the register tile can step
// in pairs are bf16, so that each row's pair is one 32-bit element.

// A bf16 model's projection: its weight and input were extended from bf16
// at the entry. The weight, which the register tile streams (indexed by
// the columns, not the rows), is read as the bf16 value itself (never
// rounded twice) and extended in the body; the input, which it
// broadcasts, is exactly bf16 already and read as it is. The sum stays
// f32, and nothing is rounded.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @bf16_model(
// CHECK-SAME: %[[XB:.*]]: tensor<8x64xbf16> {linformer.sequence}, %[[W:.*]]: tensor<64x32xbf16>
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%[[XB]] : tensor<8x64xbf16>) outs(%{{.*}} : tensor<8x64xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<8x64xf32>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-NEXT: %[[EB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[EB]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[C]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NEXT: } -> tensor<8x32xf32>
// CHECK-NOT: arith.truncf
// CHECK: return
// PAIRS-LABEL: func.func @bf16_model(
// PAIRS-SAME: %[[XB:.*]]: tensor<8x64xbf16> {linformer.sequence}, %[[W:.*]]: tensor<64x32xbf16>
// PAIRS: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[XB]], %[[W]] : tensor<8x64xbf16>, tensor<64x32xbf16>) outs(%{{.*}} : tensor<8x32xf32>)
// PAIRS-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// PAIRS-NEXT: %[[EA:.*]] = arith.extf %[[A]] : bf16 to f32
// PAIRS-NEXT: %[[EB:.*]] = arith.extf %[[B]] : bf16 to f32
// PAIRS-NEXT: %[[M:.*]] = arith.mulf %[[EA]], %[[EB]] : f32
// PAIRS-NOT: arith.truncf
// PAIRS: return
func.func @bf16_model(%xb: tensor<8x64xbf16> {linformer.sequence},
                      %wb: tensor<64x32xbf16>) -> tensor<8x32xf32> {
  %xe = tensor.empty() : tensor<8x64xf32>
  %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xb : tensor<8x64xbf16>) outs(%xe : tensor<8x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<8x64xf32>
  %we = tensor.empty() : tensor<64x32xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wb : tensor<64x32xbf16>) outs(%we : tensor<64x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) attrs = {linformer.root} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// An f32 model (--precision=bf16): each factor is rounded once, by an
// elementwise generic of its own that both contractions reading it share
// (x is read by two, as Q and K projections read one input): the streamed
// weight to bf16 (the reshape of it rebuilt on its rounding), the
// broadcast x to f32 values rounded to bf16. A contraction that is not a
// kernel root and a reduction that is not acc + a * b stay as they are.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#bh = affine_map<(d0, d1, d2) -> (d2, 0, d1)>
// CHECK-LABEL: func.func @f32_model(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x64xf32>{{.*}}, %[[W:[^:]*]]: tensor<64x32xf32>
// CHECK: %[[WB:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: bf16):
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[XR:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: arith.truncf
// CHECK: linalg.generic {{.*}} ins(%[[XR]], %[[WB]] : tensor<8x64xf32>, tensor<64x32xbf16>)
// CHECK: %[[WX:.*]] = tensor.expand_shape %[[WB]] {{\[}}[0], [1, 2]] output_shape [64, 1, 32] : tensor<64x32xbf16> into tensor<64x1x32xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[XR]], %[[WX]] : tensor<8x64xf32>, tensor<64x1x32xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<8x64xf32>, tensor<64x32xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<8x64xf32>)
// CHECK-NOT: bf16
// CHECK: return
// PAIRS-LABEL: func.func @f32_model(
// PAIRS-SAME: %[[X:[^:]*]]: tensor<8x64xf32>{{.*}}, %[[W:[^:]*]]: tensor<64x32xf32>
// PAIRS: %[[WB:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// PAIRS: %[[XB:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x64xf32>) outs(%{{.*}} : tensor<8x64xbf16>)
// PAIRS-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// PAIRS-NEXT: %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// PAIRS-NEXT: linalg.yield %[[T]] : bf16
// PAIRS-NOT: arith.truncf
// PAIRS: linalg.generic {{.*}} ins(%[[XB]], %[[WB]] : tensor<8x64xbf16>, tensor<64x32xbf16>)
// PAIRS: linalg.generic {{.*}} ins(%[[XB]], %{{.*}} : tensor<8x64xbf16>, tensor<64x1x32xbf16>)
// PAIRS: linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<8x64xf32>, tensor<64x32xf32>)
// PAIRS: return
func.func @f32_model(%x: tensor<8x64xf32> {linformer.sequence},
                     %w: tensor<64x32xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ye : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) attrs = {linformer.root} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %m, %out : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %wx = tensor.expand_shape %w [[0], [1, 2]] output_shape [64, 1, 32] : tensor<64x32xf32> into tensor<64x1x32xf32>
  %z = linalg.generic {indexing_maps = [#a, #bh, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %wx : tensor<8x64xf32>, tensor<64x1x32xf32>) outs(%acc : tensor<8x32xf32>) attrs = {linformer.root} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in2, %in : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %u = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %re = tensor.empty() : tensor<8xf32>
  %r0 = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) attrs = {linformer.root} {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %y, %z, %u, %r : tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8xf32>
}


// -----

// E X with pairs on: its reduction runs over tokens and stops at each
// sequence's length (linformer.token_bound). Over an even range its
// register tile steps pairs up to the last complete one and the odd
// token after an odd length alone (linformer-cpu-tile-for-vectors), so
// both factors are bf16, as without the bound. An odd range (a partial
// pair besides the length's), a body that masks the tokens itself and
// tokens split into parts step one token at a time: the streamed X bf16,
// the broadcast E f32 values rounded to bf16, as without pairs.
#e = affine_map<(d0, d1, d2) -> (d0, d2)>
#x = affine_map<(d0, d1, d2) -> (d2, d1)>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
// PAIRS-LABEL: func.func @token_reduction(
// PAIRS-SAME: %[[E:[^:]*]]: tensor<16x64xf32>, %[[X:[^:]*]]: tensor<64x32xf32>, %[[E3:[^:]*]]: tensor<16x63xf32>, %[[X3:[^:]*]]: tensor<63x32xf32>
// PAIRS-DAG: %[[XB:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<64x32xf32>) outs(%{{.*}} : tensor<64x32xbf16>)
// PAIRS-DAG: %[[EB:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xbf16>)
// PAIRS-DAG: %[[ER:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xf32>)
// PAIRS-DAG: %[[X3B:.*]] = linalg.generic {{.*}} ins(%[[X3]] : tensor<63x32xf32>) outs(%{{.*}} : tensor<63x32xbf16>)
// PAIRS-DAG: %[[E3R:.*]] = linalg.generic {{.*}} ins(%[[E3]] : tensor<16x63xf32>) outs(%{{.*}} : tensor<16x63xf32>)
// PAIRS: linalg.generic {{.*}} ins(%[[EB]], %[[XB]] : tensor<16x64xbf16>, tensor<64x32xbf16>) {{.*}} linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>
// PAIRS: linalg.generic {{.*}} ins(%[[ER]], %[[XB]] : tensor<16x64xf32>, tensor<64x32xbf16>) {{.*}} masked = true
// PAIRS: linalg.generic {{.*}} ins(%[[E3R]], %[[X3B]] : tensor<16x63xf32>, tensor<63x32xbf16>) {{.*}} linformer.token_bound
// PAIRS: return
func.func @token_reduction(%e: tensor<16x64xf32>, %x: tensor<64x32xf32>,
                           %e3: tensor<16x63xf32>, %x3: tensor<63x32xf32>,
                           %lengths: tensor<1xi32> {linformer.lengths})
    -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %ye = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ye : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.generic {indexing_maps = [#e, #x, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %x : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>)
      attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %z = linalg.generic {indexing_maps = [#e, #x, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e, %x : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>)
      attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, masked = true>} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %w = linalg.generic {indexing_maps = [#e, #x, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%e3, %x3 : tensor<16x63xf32>, tensor<63x32xf32>) outs(%acc : tensor<16x32xf32>)
      attrs = {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %y, %z, %w : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// A bf16 model's E masked at the lengths (a kernel root that selects E,
// extended from bf16, or 0): every value it writes is a bf16 value, so it
// is written as bf16 by a twin (its body rounded at the end, its marks
// kept) and E X reads that, instead of rounding all of E in each of its
// workgroups; the row sums read it extended. Nothing changes value. A
// select with a constant bf16 lacks (0.1) or of an f32 input rounds as
// before.
#em = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1) -> (d1)>
#e2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#x2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#o2 = affine_map<(d0, d1, d2) -> (d0, d1)>
// Without pairs E is the broadcast factor, read as f32 values bf16 holds:
// the masked E as it is, no rounding.
// CHECK-LABEL: func.func @masked_e(
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x64xf32>) attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 1>}
// CHECK: %[[OFF:.*]] = linalg.generic {{.*}} attrs = {linformer.root}
// CHECK: %[[OFFR:.*]] = linalg.generic {{.*}} ins(%[[OFF]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[MASKED]], %{{.*}} : tensor<16x64xf32>, tensor<64x32xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[MASKED]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[OFFR]], %{{.*}} : tensor<16x64xf32>, tensor<64x32xbf16>)
// CHECK: return
// PAIRS-LABEL: func.func @masked_e(
// PAIRS-SAME: %[[EB:[^:]*]]: tensor<16x64xbf16>, %[[X:[^:]*]]: tensor<64x32xbf16>, %[[M:[^:]*]]: tensor<64xi8>, %[[EF:[^:]*]]: tensor<16x64xf32>
// PAIRS: %[[E:.*]] = linalg.generic {{.*}} ins(%[[EB]] : tensor<16x64xbf16>) outs(%{{.*}} : tensor<16x64xf32>)
// PAIRS: %[[TWIN:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[M]] : tensor<16x64xf32>, tensor<64xi8>) outs(%{{.*}} : tensor<16x64xbf16>) attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 1>}
// PAIRS: %[[S:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// PAIRS-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// PAIRS-NEXT: linalg.yield %[[R]] : bf16
// PAIRS: %[[EXT:.*]] = linalg.generic {{.*}} ins(%[[TWIN]] : tensor<16x64xbf16>) outs(%{{.*}} : tensor<16x64xf32>)
// PAIRS-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// PAIRS-NEXT: arith.extf %[[IN]] : bf16 to f32
// PAIRS: %[[OFF:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[M]] : tensor<16x64xf32>, tensor<64xi8>) outs(%{{.*}} : tensor<16x64xf32>) attrs = {linformer.root}
// PAIRS: %[[OFFB:.*]] = linalg.generic {{.*}} ins(%[[OFF]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xbf16>)
// PAIRS: %[[F:.*]] = linalg.generic {{.*}} ins(%[[EF]], %[[M]] : tensor<16x64xf32>, tensor<64xi8>) outs(%{{.*}} : tensor<16x64xf32>) attrs = {linformer.root}
// PAIRS: %[[FB:.*]] = linalg.generic {{.*}} ins(%[[F]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xbf16>)
// PAIRS: linalg.generic {{.*}} ins(%[[TWIN]], %[[X]] : tensor<16x64xbf16>, tensor<64x32xbf16>)
// PAIRS: linalg.generic {{.*}} ins(%[[EXT]] : tensor<16x64xf32>) outs(%{{.*}} : tensor<16xf32>)
// PAIRS: linalg.generic {{.*}} ins(%[[OFFB]], %[[X]] : tensor<16x64xbf16>, tensor<64x32xbf16>)
// PAIRS: linalg.generic {{.*}} ins(%[[FB]], %[[X]] : tensor<16x64xbf16>, tensor<64x32xbf16>)
// PAIRS-NOT: tensor<16x64xf32>) outs(%{{.*}} : tensor<16x64xbf16>)
// PAIRS: return
func.func @masked_e(%eb: tensor<16x64xbf16>, %xb: tensor<64x32xbf16>,
                    %mask: tensor<64xi8>, %ef: tensor<16x64xf32>)
    -> (tensor<16x32xf32>, tensor<16xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %tenth = arith.constant 0.1 : f32
  %c0 = arith.constant 0 : i8
  %ee = tensor.empty() : tensor<16x64xf32>
  %e = linalg.generic {indexing_maps = [#em, #em], iterator_types = ["parallel", "parallel"]}
      ins(%eb : tensor<16x64xbf16>) outs(%ee : tensor<16x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<16x64xf32>
  %xe = tensor.empty() : tensor<64x32xf32>
  %x = linalg.generic {indexing_maps = [#em, #em], iterator_types = ["parallel", "parallel"]}
      ins(%xb : tensor<64x32xbf16>) outs(%xe : tensor<64x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<64x32xf32>
  %masked = linalg.generic {indexing_maps = [#em, #mk, #em], iterator_types = ["parallel", "parallel"]}
      ins(%e, %mask : tensor<16x64xf32>, tensor<64xi8>) outs(%ee : tensor<16x64xf32>)
      attrs = {linformer.root, linformer.unread_padding = array<i64: 0, 1>} {
  ^bb0(%in: f32, %m: i8, %out: f32):
    %valid = arith.cmpi ne, %m, %c0 : i8
    %s = arith.select %valid, %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %off = linalg.generic {indexing_maps = [#em, #mk, #em], iterator_types = ["parallel", "parallel"]}
      ins(%e, %mask : tensor<16x64xf32>, tensor<64xi8>) outs(%ee : tensor<16x64xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %m: i8, %out: f32):
    %valid = arith.cmpi ne, %m, %c0 : i8
    %s = arith.select %valid, %in, %tenth : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %f = linalg.generic {indexing_maps = [#em, #mk, #em], iterator_types = ["parallel", "parallel"]}
      ins(%ef, %mask : tensor<16x64xf32>, tensor<64xi8>) outs(%ee : tensor<16x64xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %m: i8, %out: f32):
    %valid = arith.cmpi ne, %m, %c0 : i8
    %s = arith.select %valid, %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  %ye = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ye : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.generic {indexing_maps = [#e2, #x2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%masked, %x : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %re = tensor.empty() : tensor<16xf32>
  %racc = linalg.fill ins(%zero : f32) outs(%re : tensor<16xf32>) -> tensor<16xf32>
  %rows = linalg.generic {indexing_maps = [#em, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<16x64xf32>) outs(%racc : tensor<16xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %yo = linalg.generic {indexing_maps = [#e2, #x2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%off, %x : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %yf = linalg.generic {indexing_maps = [#e2, #x2, #o2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%f, %x : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>)
      attrs = {linformer.root} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %m = arith.mulf %in, %in2 : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %y, %rows, %yo, %yf : tensor<16x32xf32>, tensor<16xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// An attention core is lowered after workgroup tiling: with pairs, the
// pass marks it (linformer.bf16_scores) so that its lowering gives the
// score contraction bf16 pairs too; without pairs it stays f32.
// CHECK-LABEL: func.func @core(
// CHECK: linformer.attention_core
// CHECK-NOT: linformer.bf16_scores
// CHECK: return
// PAIRS-LABEL: func.func @core(
// The engine the schedule records: dot products, native or not as the
// host has them (the module names no target).
// PAIRS: linformer.attention_core {{.*}} {linformer.bf16_engine = "dot{{(, emulated)?}}", linformer.bf16_scores, linformer.root}
func.func @core(%q: tensor<1x2x16x8xf32>, %kp: tensor<1x2x4x8xf32>,
    %vp: tensor<1x2x4x8xf32>) -> tensor<1x2x16x8xf32> {
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125)
         outs(%o_init) {linformer.root}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// With pairs, a core's K' and V' that kernels of their own compute (the
// projections) are rounded right after them and read extended:
// linformer-cpu-tile-and-fuse makes the rounding the projection's bf16
// epilogue, and the core's lowering takes the extension as the bf16
// values. Q stays as it is (each query tile rounds it once anyway), and so
// does a factor no kernel computes (V here, an argument). Not where the
// slots stop at a length (a core with linformer.token_bound). Without
// pairs nothing changes.
// CHECK-LABEL: func.func @core_factors(
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x8xf32>) attrs = {linformer.bf16_engine = "fma", linformer.root}
// CHECK: %[[K:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.bf16_engine = "fma", linformer.root}
// CHECK: %[[K2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.bf16_engine = "fma", linformer.root}
// CHECK: linformer.attention_core %[[Q]], %[[K]], %{{.*}} scale
// CHECK: linformer.attention_core %[[Q]], %[[K2]], %{{.*}} scale
// CHECK: return
// PAIRS-LABEL: func.func @core_factors(
// PAIRS-SAME: %{{.*}}: tensor<16x8xf32>, %{{.*}}: tensor<8x8xf32>, %[[VP:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %{{.*}}: tensor<1x4xi8>
// PAIRS: %[[Q:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x8xf32>) attrs = {linformer.bf16_engine = "dot{{.*}}", linformer.root}
// PAIRS: %[[K:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.bf16_engine = "dot{{.*}}", linformer.root}
// PAIRS: %[[KB:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// PAIRS: arith.truncf
// PAIRS: %[[KE:.*]] = linalg.generic {{.*}} ins(%[[KB]] : tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x4x8xf32>)
// PAIRS: arith.extf
// PAIRS: %[[K2:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4x8xf32>) attrs = {linformer.bf16_engine = "dot{{.*}}", linformer.root}
// PAIRS-NOT: ins(%[[K2]] : tensor<1x2x4x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// PAIRS: linformer.attention_core %[[Q]], %[[KE]], %[[VP]]
// PAIRS: linformer.attention_core %[[Q]], %[[K2]], %[[VP]]
// PAIRS: return
#qx = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
#qw = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
#qo = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @core_factors(%x: tensor<16x8xf32>, %w: tensor<8x8xf32>,
    %vp: tensor<1x2x4x8xf32>, %m: tensor<1x4xi8>)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %qe = tensor.empty() : tensor<1x2x16x8xf32>
  %qi = linalg.fill ins(%zero : f32) outs(%qe : tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %q = linalg.generic {indexing_maps = [#qx, #qw, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%qi : tensor<1x2x16x8xf32>)
      attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x16x8xf32>
  %ke = tensor.empty() : tensor<1x2x4x8xf32>
  %ki = linalg.fill ins(%zero : f32) outs(%ke : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %xs = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
  %k = linalg.generic {indexing_maps = [#qx, #qw, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%xs, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%ki : tensor<1x2x4x8xf32>)
      attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  %k2 = linalg.generic {indexing_maps = [#qx, #qw, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%xs, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%ki : tensor<1x2x4x8xf32>)
      attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  %o_init = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %k, %vp scale(0.125)
         outs(%o_init) {linformer.root}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %o2 = linformer.attention_core %q, %k2, %vp scale(0.125) key_mask(%m)
         outs(%o_init) {linformer.root, linformer.token_bound = #linformer.token_bound<token = 2, batch = 0, per_step = 4>}
          : (tensor<1x2x16x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>,
            tensor<1x4xi8>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o, %o2 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}

// -----

// On AMX tiles Q too is rounded by its projection (its bf16 epilogue) and
// read extended by the core, whose query tiles then read half the bytes;
// with dot products it stays f32 (see @core_factors). And K' (k = 16, a
// multiple of 16: the lowering's S = Q K^T) is transposed once, from its
// bf16 rounding, by a kernel of its own (a root), which the core reads
// extended and transposed back (its lowering takes K^T from there).
// PAIRS-LABEL: func.func @core_q(
// PAIRS: %[[Q:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x8xf32>) attrs = {linformer.bf16_engine = "dot{{.*}}", linformer.root}
// PAIRS-NOT: linalg.transpose
// PAIRS: linformer.attention_core %[[Q]],
// AMX-LABEL: func.func @core_q(
// AMX: %[[Q:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x8xf32>) attrs = {linformer.bf16_engine = "amx{{.*}}", linformer.root}
// AMX: %[[QB:.*]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x2x16x8xf32>) outs(%{{.*}} : tensor<1x2x16x8xbf16>)
// AMX: arith.truncf
// AMX: %[[QE:.*]] = linalg.generic {{.*}} ins(%[[QB]] : tensor<1x2x16x8xbf16>) outs(%{{.*}} : tensor<1x2x16x8xf32>)
// AMX: arith.extf
// AMX: %[[K:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x16x8xf32>) attrs = {linformer.bf16_engine = "amx{{.*}}", linformer.root}
// AMX: %[[KB:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x2x16x8xf32>) outs(%{{.*}} : tensor<1x2x16x8xbf16>)
// AMX: %[[KT:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], {{.*}} ins(%[[KB]] : tensor<1x2x16x8xbf16>) outs(%{{.*}} : tensor<1x2x8x16xbf16>) attrs = {linformer.root}
// AMX: %[[KTE:.*]] = linalg.generic {{.*}} ins(%[[KT]] : tensor<1x2x8x16xbf16>) outs(%{{.*}} : tensor<1x2x8x16xf32>)
// AMX: %[[KBACK:.*]] = linalg.transpose ins(%[[KTE]] : tensor<1x2x8x16xf32>) outs(%{{.*}} : tensor<1x2x16x8xf32>) permutation = [0, 1, 3, 2]
// AMX: linformer.attention_core %[[QE]], %[[KBACK]],
#qx = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
#qw = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
#qo = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @core_q(%x: tensor<16x8xf32>, %w: tensor<8x8xf32>,
    %vp: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %qe = tensor.empty() : tensor<1x2x16x8xf32>
  %qi = linalg.fill ins(%zero : f32) outs(%qe : tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %q = linalg.generic {indexing_maps = [#qx, #qw, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%qi : tensor<1x2x16x8xf32>)
      attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x16x8xf32>
  %k = linalg.generic {indexing_maps = [#qx, #qw, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%qi : tensor<1x2x16x8xf32>)
      attrs = {linformer.root} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x16x8xf32>
  %oe = tensor.empty() : tensor<1x2x16x8xf32>
  %o = linformer.attention_core %q, %k, %vp scale(0.125)
         outs(%oe) {linformer.root}
          : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
            tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
