// RUN: linformer-opt %s --canonicalize --split-input-file | FileCheck %s

// The folder of linformer.project (pooling windows of one token are the
// identity) and the patterns that drop padding operands which say every
// token is real (DropTrivialPadding on attention and project,
// DropTrivialKeyMask on attention_core). Each positive case has a negative
// one next to it that must stay as written.

//===----------------------------------------------------------------------===//
// ProjectOp::fold
//===----------------------------------------------------------------------===//

// k == n without padding: each window is one token, so pooling is the input.
// CHECK-LABEL: func.func @fold_mean_pool_identity(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>)
// CHECK-NOT: linformer.project
// CHECK: return %[[K]]
func.func @fold_mean_pool_identity(%k: tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32> {
  %p = linformer.project<mean_pool> %k
         : (tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return %p : tensor<2x4x64x8xf32>
}

// -----

// CHECK-LABEL: func.func @fold_max_pool_identity(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<?x4x64x8xbf16>)
// CHECK-NOT: linformer.project
// CHECK: return %[[K]]
func.func @fold_max_pool_identity(%k: tensor<?x4x64x8xbf16>) -> tensor<?x4x64x8xbf16> {
  %p = linformer.project<max_pool> %k
         : (tensor<?x4x64x8xbf16>) -> tensor<?x4x64x8xbf16>
  return %p : tensor<?x4x64x8xbf16>
}

// -----

// With lengths, padded tokens become 0 in the output: not the identity.
// CHECK-LABEL: func.func @no_fold_pool_with_lengths(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: %[[P:.*]] = linformer.project<mean_pool> %[[K]] lengths(%[[LEN]])
// CHECK: return %[[P]]
func.func @no_fold_pool_with_lengths(%k: tensor<2x4x64x8xf32>, %len: tensor<2xi32>)
    -> tensor<2x4x64x8xf32> {
  %p = linformer.project<mean_pool> %k lengths(%len)
         : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x64x8xf32>
  return %p : tensor<2x4x64x8xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_pool_with_mask(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[M:[a-z0-9]+]]: tensor<2x64xi1>)
// CHECK: %[[P:.*]] = linformer.project<max_pool> %[[K]] mask(%[[M]])
// CHECK: return %[[P]]
func.func @no_fold_pool_with_mask(%k: tensor<2x4x64x8xf32>, %m: tensor<2x64xi1>)
    -> tensor<2x4x64x8xf32> {
  %p = linformer.project<max_pool> %k mask(%m)
         : (tensor<2x4x64x8xf32>, tensor<2x64xi1>) -> tensor<2x4x64x8xf32>
  return %p : tensor<2x4x64x8xf32>
}

// -----

// A learned k x n matrix with k == n is not the identity.
// CHECK-LABEL: func.func @no_fold_learned_square(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[E:[a-z0-9]+]]: tensor<64x64xf32>)
// CHECK: %[[P:.*]] = linformer.project<learned> %[[K]], %[[E]]
// CHECK: return %[[P]]
func.func @no_fold_learned_square(%k: tensor<2x4x64x8xf32>, %e: tensor<64x64xf32>)
    -> tensor<2x4x64x8xf32> {
  %p = linformer.project<learned> %k, %e
         : (tensor<2x4x64x8xf32>, tensor<64x64xf32>) -> tensor<2x4x64x8xf32>
  return %p : tensor<2x4x64x8xf32>
}

// -----

// Nor is a conv with a kernel of one token: it scales each channel.
// CHECK-LABEL: func.func @no_fold_conv_window_one(
// CHECK: %[[P:.*]] = linformer.project<conv>
// CHECK: return %[[P]]
func.func @no_fold_conv_window_one(%k: tensor<2x4x64x8xf32>, %w: tensor<8x1xf32>)
    -> tensor<2x4x64x8xf32> {
  %p = linformer.project<conv> %k, %w
         : (tensor<2x4x64x8xf32>, tensor<8x1xf32>) -> tensor<2x4x64x8xf32>
  return %p : tensor<2x4x64x8xf32>
}

// -----

// k < n pools for real.
// CHECK-LABEL: func.func @no_fold_pool_shorter(
// CHECK: %[[P:.*]] = linformer.project<mean_pool>
// CHECK: return %[[P]]
func.func @no_fold_pool_shorter(%k: tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32> {
  %p = linformer.project<mean_pool> %k
         : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
  return %p : tensor<2x4x16x8xf32>
}

// -----

// Equal types do not prove k == n when n is dynamic: ? -> ? may still pool.
// CHECK-LABEL: func.func @no_fold_pool_dynamic_seq(
// CHECK: %[[P:.*]] = linformer.project<mean_pool>
// CHECK: return %[[P]]
func.func @no_fold_pool_dynamic_seq(%k: tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %p = linformer.project<mean_pool> %k
         : (tensor<2x4x?x8xf32>) -> tensor<2x4x?x8xf32>
  return %p : tensor<2x4x?x8xf32>
}

// -----

// Dropping trivial padding exposes the fold.
// CHECK-LABEL: func.func @fold_after_dropping_padding(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>)
// CHECK-NOT: linformer.project
// CHECK: return %[[K]]
func.func @fold_after_dropping_padding(%k: tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32> {
  %len = arith.constant dense<64> : tensor<2xi32>
  %p = linformer.project<max_pool> %k lengths(%len)
         : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x64x8xf32>
  return %p : tensor<2x4x64x8xf32>
}

//===----------------------------------------------------------------------===//
// DropTrivialPadding: linformer.project
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @project_drop_full_lengths(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[P:.*]] = linformer.project<mean_pool> %[[K]] : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK: return %[[P]]
func.func @project_drop_full_lengths(%k: tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32> {
  %len = arith.constant dense<[64, 64]> : tensor<2xi64>
  %p = linformer.project<mean_pool> %k lengths(%len)
         : (tensor<2x4x64x8xf32>, tensor<2xi64>) -> tensor<2x4x16x8xf32>
  return %p : tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @project_drop_all_true_mask(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[E:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[P:.*]] = linformer.project<learned> %[[K]], %[[E]] : (tensor<2x4x64x8xf32>, tensor<16x64xf32>) -> tensor<2x4x16x8xf32>
// CHECK: return %[[P]]
func.func @project_drop_all_true_mask(%k: tensor<2x4x64x8xf32>, %e: tensor<16x64xf32>)
    -> tensor<2x4x16x8xf32> {
  %m = arith.constant dense<true> : tensor<2x64xi1>
  %p = linformer.project<learned> %k, %e mask(%m)
         : (tensor<2x4x64x8xf32>, tensor<16x64xf32>, tensor<2x64xi1>)
         -> tensor<2x4x16x8xf32>
  return %p : tensor<2x4x16x8xf32>
}

// -----

// One sequence shorter than n: the lengths stay.
// CHECK-LABEL: func.func @project_keep_short_lengths(
// CHECK: %[[LEN:.*]] = arith.constant dense<[64, 40]> : tensor<2xi32>
// CHECK: linformer.project<max_pool> %{{.*}} lengths(%[[LEN]])
func.func @project_keep_short_lengths(%k: tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32> {
  %len = arith.constant dense<[64, 40]> : tensor<2xi32>
  %p = linformer.project<max_pool> %k lengths(%len)
         : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
  return %p : tensor<2x4x16x8xf32>
}

// -----

// A mask with one padded token stays.
// CHECK-LABEL: func.func @project_keep_partial_mask(
// CHECK: %[[M:.*]] = arith.constant dense<{{.*}}> : tensor<2x4xi1>
// CHECK: linformer.project<conv> %{{.*}}, %{{.*}} mask(%[[M]])
func.func @project_keep_partial_mask(%k: tensor<2x4x4x8xf32>, %w: tensor<8x2xf32>)
    -> tensor<2x4x2x8xf32> {
  %m = arith.constant dense<[[true, true, true, true], [true, true, true, false]]> : tensor<2x4xi1>
  %p = linformer.project<conv> %k, %w mask(%m)
         : (tensor<2x4x4x8xf32>, tensor<8x2xf32>, tensor<2x4xi1>)
         -> tensor<2x4x2x8xf32>
  return %p : tensor<2x4x2x8xf32>
}

// -----

// Lengths that are not constant stay.
// CHECK-LABEL: func.func @project_keep_dynamic_lengths(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[LEN:[a-z0-9]+]]: tensor<2xi32>)
// CHECK: linformer.project<mean_pool> %[[K]] lengths(%[[LEN]])
func.func @project_keep_dynamic_lengths(%k: tensor<2x4x64x8xf32>, %len: tensor<2xi32>)
    -> tensor<2x4x16x8xf32> {
  %p = linformer.project<mean_pool> %k lengths(%len)
         : (tensor<2x4x64x8xf32>, tensor<2xi32>) -> tensor<2x4x16x8xf32>
  return %p : tensor<2x4x16x8xf32>
}

//===----------------------------------------------------------------------===//
// DropTrivialPadding: linformer.attention
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @attention_drop_full_lengths(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[E:[a-z0-9]+]]: tensor<16x64xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[Y:.*]] = linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) heads(4) k(16) projection<learned> e(%[[E]]) sharing<key_value> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>) -> tensor<2x64x32xf32>
// CHECK: return %[[Y]]
func.func @attention_drop_full_lengths(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<16x64xf32>) -> tensor<2x64x32xf32> {
  %len = arith.constant dense<64> : tensor<2xi32>
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<key_value> lengths(%len)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
            tensor<2xi32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// The operand segment sizes must follow the dropped operand, or the biases,
// e and f would print in the wrong places below.
// CHECK-LABEL: func.func @attention_drop_all_true_mask(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x64x32xf32>, %[[W:[a-z0-9]+]]: tensor<32x32xf32>, %[[B:[a-z0-9]+]]: tensor<32xf32>, %[[E:[a-z0-9]+]]: tensor<4x8x4xf32>, %[[F:[a-z0-9]+]]: tensor<4x8x4xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[Y:.*]] = linformer.attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]]) biases(%[[B]], %[[B]], %[[B]], %[[B]]) heads(4) k(16) projection<conv> e(%[[E]]) f(%[[F]]) sharing<none> : (
// CHECK-SAME: tensor<4x8x4xf32>, tensor<4x8x4xf32>) -> tensor<2x64x32xf32>
// CHECK: return %[[Y]]
func.func @attention_drop_all_true_mask(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %b: tensor<32xf32>, %e: tensor<4x8x4xf32>, %f: tensor<4x8x4xf32>)
    -> tensor<2x64x32xf32> {
  %m = arith.constant dense<true> : tensor<2x64xi1>
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b, %b)
         heads(4) k(16) projection<conv> e(%e) f(%f) sharing<none> mask(%m)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>,
            tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<4x8x4xf32>,
            tensor<4x8x4xf32>, tensor<2x64xi1>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_keep_short_lengths(
// CHECK: %[[LEN:.*]] = arith.constant dense<[64, 63]> : tensor<2xi64>
// CHECK: linformer.attention {{.*}} projection<mean_pool> sharing<none> lengths(%[[LEN]])
func.func @attention_keep_short_lengths(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>)
    -> tensor<2x64x32xf32> {
  %len = arith.constant dense<[64, 63]> : tensor<2xi64>
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi64>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// CHECK-LABEL: func.func @attention_keep_all_false_mask(
// CHECK: %[[M:.*]] = arith.constant dense<false> : tensor<2x64xi1>
// CHECK: linformer.attention {{.*}} projection<max_pool> sharing<none> mask(%[[M]])
func.func @attention_keep_all_false_mask(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>)
    -> tensor<2x64x32xf32> {
  %m = arith.constant dense<false> : tensor<2x64xi1>
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<max_pool> sharing<none> mask(%m)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2x64xi1>)
         -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// With a dynamic n, no constant length can be known to equal it.
// CHECK-LABEL: func.func @attention_keep_lengths_dynamic_seq(
// CHECK: %[[LEN:.*]] = arith.constant dense<64> : tensor<2xi32>
// CHECK: linformer.attention {{.*}} lengths(%[[LEN]])
func.func @attention_keep_lengths_dynamic_seq(%x: tensor<2x?x32xf32>, %w: tensor<32x32xf32>)
    -> tensor<2x?x32xf32> {
  %len = arith.constant dense<64> : tensor<2xi32>
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<2x?x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi32>)
         -> tensor<2x?x32xf32>
  return %y : tensor<2x?x32xf32>
}

//===----------------------------------------------------------------------===//
// DropTrivialKeyMask: linformer.attention_core
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @core_drop_all_true_key_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x64x8xf32>, %[[KP:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[VP:[a-z0-9]+]]: tensor<2x4x16x8xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[O:.*]] = linformer.attention_core %[[Q]], %[[KP]], %[[VP]] scale(1.250000e-01) outs(%{{.*}}) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
// CHECK: return %[[O]]
func.func @core_drop_all_true_key_mask(%q: tensor<2x4x64x8xf32>,
    %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>) -> tensor<2x4x64x8xf32> {
  %m = arith.constant dense<true> : tensor<2x16xi1>
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
            tensor<2x16xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}

// -----

// CHECK-LABEL: func.func @core_keep_partial_key_mask(
// CHECK: %[[M:.*]] = arith.constant dense<{{.*}}> : tensor<2x2xi1>
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) key_mask(%[[M]])
func.func @core_keep_partial_key_mask(%q: tensor<2x4x64x8xf32>,
    %kp: tensor<2x4x2x8xf32>, %vp: tensor<2x4x2x8xf32>) -> tensor<2x4x64x8xf32> {
  %m = arith.constant dense<[[true, true], [true, false]]> : tensor<2x2xi1>
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x2x8xf32>, tensor<2x4x2x8xf32>,
            tensor<2x2xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}

// -----

// CHECK-LABEL: func.func @core_keep_argument_key_mask(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x16xi1>)
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) key_mask(%[[M]])
func.func @core_keep_argument_key_mask(%q: tensor<2x4x64x8xf32>,
    %kp: tensor<2x4x16x8xf32>, %vp: tensor<2x4x16x8xf32>, %m: tensor<2x16xi1>)
    -> tensor<2x4x64x8xf32> {
  %o_init = tensor.empty() : tensor<2x4x64x8xf32>
  %o = linformer.attention_core %q, %kp, %vp scale(0.125) key_mask(%m)
         outs(%o_init) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
            tensor<2x16xi1>, tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>
  return %o : tensor<2x4x64x8xf32>
}
