// RUN: not linformer-opt %s --split-input-file -o /dev/null 2>&1 | FileCheck %s

// Input cut off part-way through an op reports an error at the end of the
// buffer and exits with failure; it must not crash. With
// --split-input-file each chunk ends where the next separator line starts,
// so every chunk below is an op truncated at the end of its buffer. `not`
// fails on a crash, and each CHECK names its message, so a crash that prints
// nothing fails too. The last chunk ends the file mid-type.

// CHECK: truncated.mlir:[[@LINE+2]]:{{[0-9]+}}: error: expected ','
func.func @in_weights(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w

// -----

// CHECK: error: custom op 'linformer.attention' expected keyword for how the sequence axis is projected from n to k
// CHECK: error: custom op 'linformer.attention' failed to parse Linformer_ProjectionKindAttr
func.func @in_projection(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<

// -----

// CHECK: error: custom op 'linformer.attention' expected valid keyword
func.func @in_sharing(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>, %e: tensor<16x64xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<learned> e(%e) f(%e) sharing<heads,

// -----

// CHECK: error: custom op 'linformer.attention' expected 'k'
func.func @after_heads(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>) {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4)

// -----

// CHECK: error: expected SSA operand
func.func @project_after_kind(%k: tensor<2x4x64x8xf32>) {
  %p = linformer.project<mean_pool>

// -----

// CHECK: error: expected ')'
func.func @core_in_scale(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>) {
  %o = linformer.attention_core %q, %kp, %kp scale(0.1

// -----

// CHECK: error: expected non-function type
func.func @after_arrow(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>) {
  %o = linformer.attention_core %q, %kp, %kp scale(0.125) outs(%q) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x64x8xf32>) ->

// -----

// CHECK: error: expected non-function type
// CHECK-NOT: error:
func.func @in_type(%q: tensor<2x4x64x8xf32>, %kp: tensor<2x4x16x8xf32>) {
  %o = linformer.attention_core %q, %kp, %kp scale(0.125) outs(%q) : (tensor<2x4x64x8xf32>, tensor<2x4x16x8x
