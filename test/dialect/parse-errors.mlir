// RUN: linformer-opt %s --split-input-file --verify-diagnostics

// Malformed custom syntax gives a located diagnostic, never a crash: garbage
// tokens, clauses in the wrong order, missing pieces, bad attribute values,
// type lists that do not fit. Text cut off at the end of the input is in
// truncated.mlir, where the location of the error is the end of the buffer.

// Garbage tokens where the type list should start.
func.func @garbage_symbol(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         // expected-error @+1 {{@ identifier expected to start with letter or '_'}}
         projection<mean_pool> sharing<none> @@@
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @garbage_word(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected ':'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> please : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @garbage_in_weights(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %y = linformer.attention %x weights(%w, 42, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Wrong keyword order: `k` before `heads`.
func.func @k_before_heads(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{custom op 'linformer.attention' expected 'heads'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) k(16) heads(4) projection<mean_pool> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Wrong keyword order: `sharing` before `projection`.
func.func @sharing_before_projection(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{custom op 'linformer.attention' expected 'projection'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) sharing<none> projection<mean_pool> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Wrong keyword order: `f` before `e`; `f` is read, then `e` is unexpected.
func.func @f_before_e(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<4x16x64xf32>) {
  // expected-error @+1 {{custom op 'linformer.attention' expected 'sharing'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<learned> f(%e) e(%e) sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Wrong keyword order: `mask` before `lengths`.
func.func @mask_before_lengths(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %len: tensor<2xi32>, %m: tensor<2x64xi1>) {
  // expected-error @+1 {{expected ':'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> mask(%m) lengths(%len) : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<2x64xi1>, tensor<2xi32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Wrong keyword order on attention_core: `key_mask` before `scale`.
func.func @core_key_mask_before_scale(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>, %m: tensor<2x16xi1>) {
  // expected-error @+1 {{custom op 'linformer.attention_core' expected 'scale'}}
  %o = linformer.attention_core %q, %kp, %kp key_mask(%m) scale(0.125) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x16xi1>) -> tensor<2x4x64x8xf32>
  return
}

// -----

// Missing type list.
func.func @attention_missing_types(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected ':'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none>
  return
}

// -----

func.func @project_missing_types(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+1 {{expected ':'}}
  %p = linformer.project<mean_pool> %k
  return
}

// -----

// A type list that is not a function type.
func.func @attention_not_function_type(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.function, but found 'tensor<2x64x32xf32>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> : tensor<2x64x32xf32>
  return
}

// -----

// A type list that does not cover the operands.
func.func @attention_too_few_types(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{number of operands and types do not match: got 5 operands and 2 types}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// A type list that disagrees with the operands' types.
// expected-note @+1 {{prior use here}}
func.func @attention_conflicting_type(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{use of value '%x' expects different type than prior uses: 'tensor<2x64x32xf16>' vs 'tensor<2x64x32xf32>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> : (tensor<2x64x32xf16>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf16>
  return
}

// -----

// Three weights where four are needed.
func.func @attention_three_weights(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected ','}}
  %y = linformer.attention %x weights(%w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Three biases: the custom syntax takes exactly four.
func.func @attention_three_biases(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{expected ','}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b) heads(4) k(16) projection<mean_pool> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Bad attribute values.
func.func @unknown_projection(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+2 {{expected one of [learned, mean_pool, max_pool, conv] for how the sequence axis is projected from n to k, got: linear}}
  // expected-error @+1 {{failed to parse Linformer_ProjectionKindAttr parameter 'value' which is to be a `::mlir::linformer::ProjectionKind`}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<linear> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @project_unknown_kind(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+2 {{expected one of [learned, mean_pool, max_pool, conv] for how the sequence axis is projected from n to k, got: avg_pool}}
  // expected-error @+1 {{failed to parse Linformer_ProjectionKindAttr parameter 'value' which is to be a `::mlir::linformer::ProjectionKind`}}
  %p = linformer.project<avg_pool> %k : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @project_missing_kind(%k: tensor<2x4x64x8xf32>) {
  // expected-error @+1 {{expected '<'}}
  %p = linformer.project %k : (tensor<2x4x64x8xf32>) -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @heads_not_integer(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected attribute value}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(four) k(16) projection<mean_pool> sharing<none> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @empty_sharing(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected valid keyword}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @sharing_missing_comma(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{expected '>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<heads kv> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @core_missing_scale(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{custom op 'linformer.attention_core' expected 'scale'}}
  %o = linformer.attention_core %q, %kp, %kp : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x64x8xf32>
  return
}

// -----

func.func @core_scale_not_number(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{expected attribute value}}
  %o = linformer.attention_core %q, %kp, %kp scale(two) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x64x8xf32>
  return
}

// -----

// A repeated optional clause.
func.func @lengths_twice(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %len: tensor<2xi32>) {
  // expected-error @+1 {{expected ':'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> lengths(%len) lengths(%len) : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi32>) -> tensor<2x64x32xf32>
  return
}

// -----

// Generic form: properties that are missing or of the wrong kind.
func.func @generic_missing_projection(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{'linformer.attention' op requires attribute 'projection'}}
  %y = "linformer.attention"(%x, %w, %w, %w, %w) <{heads = 4 : i64, k = 16 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>, sharing = #linformer.sharing<none>}> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @generic_sharing_not_sharing(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{Invalid attribute `sharing` in property conversion: 3 : i64}}
  %y = "linformer.attention"(%x, %w, %w, %w, %w) <{heads = 4 : i64, k = 16 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0>, projection = #linformer.projection<mean_pool>, sharing = 3 : i64}> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @generic_segment_sizes_length(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{size mismatch in attribute conversion: 12 vs 13}}
  %y = "linformer.attention"(%x, %w, %w, %w, %w) <{heads = 4 : i64, k = 16 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, projection = #linformer.projection<mean_pool>, sharing = #linformer.sharing<none>}> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}

// -----

func.func @generic_segment_sizes_count(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{operand count (5) does not match with the total size (6) specified in attribute 'operandSegmentSizes'}}
  %y = "linformer.attention"(%x, %w, %w, %w, %w) <{heads = 4 : i64, k = 16 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0>, projection = #linformer.projection<mean_pool>, sharing = #linformer.sharing<none>}> : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x64x32xf32>
  return
}
