// RUN: linformer-opt %s --one-shot-bufferize="bufferize-function-boundaries" --split-input-file | FileCheck %s
// RUN: linformer-opt %s --canonicalize --split-input-file | FileCheck %s --check-prefix=DEAD

// The attention core is destination-style: one-shot bufferization turns it
// into the same op on buffers, reading q, key, value and the mask and
// writing its destination's buffer (a new one for tensor.empty, the
// caller's when the destination is a function argument), so the core stays
// whole across bufferization (the CUDA pipeline expands it afterwards).

// CHECK-LABEL: func.func @core(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x2x32x16xf32{{.*}}>, %[[K:[a-z0-9]+]]: memref<1x2x16x16xf32{{.*}}>, %[[V:[a-z0-9]+]]: memref<1x2x16x16xf32{{.*}}>, %[[M:[a-z0-9]+]]: memref<1x16xi8{{.*}}>)
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}}: memref<1x2x32x16xf32>
// CHECK: linformer.attention_core %[[Q]], %[[K]], %[[V]] scale(2.500000e-01) key_mask(%[[M]]) outs(%[[OUT]]) {linformer.root} : ({{.*}}) -> ()
// CHECK: return %[[OUT]]
func.func @core(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x16x16xf32>,
    %v: tensor<1x2x16x16xf32>, %m: tensor<1x16xi8>) -> tensor<1x2x32x16xf32> {
  %init = tensor.empty() : tensor<1x2x32x16xf32>
  %o = linformer.attention_core %q, %k, %v scale(0.25) key_mask(%m)
         outs(%init) {linformer.root}
         : (tensor<1x2x32x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>,
            tensor<1x16xi8>, tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}

// -----

// The destination's values are not read: a destination that is a function
// argument is written in place, with no copy of its old values.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x2x32x16xf32{{.*}}>, %[[K:[a-z0-9]+]]: memref<1x2x16x16xf32{{.*}}>, %[[OUT:[a-z0-9]+]]: memref<1x2x32x16xf32{{.*}}>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: linformer.attention_core %[[Q]], %[[K]], %[[K]] scale(2.500000e-01) outs(%[[OUT]])
func.func @in_place(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x16x16xf32>,
    %out: tensor<1x2x32x16xf32> {bufferization.writable = true})
    -> tensor<1x2x32x16xf32> {
  %o = linformer.attention_core %q, %k, %k scale(0.25) outs(%out)
         : (tensor<1x2x32x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>,
            tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}

// -----

// On tensors an unused core is dead; on buffers it writes memory and stays.
// DEAD-LABEL: func.func @dead_tensor(
// DEAD-NOT: linformer.attention_core
// DEAD: return
func.func @dead_tensor(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x16x16xf32>) {
  %o = linformer.attention_core %q, %k, %k scale(0.25) outs(%q)
         : (tensor<1x2x32x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>,
            tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return
}

// DEAD-LABEL: func.func @live_buffer(
// DEAD: linformer.attention_core
func.func @live_buffer(%q: memref<1x2x32x16xf32>, %k: memref<1x2x16x16xf32>,
    %out: memref<1x2x32x16xf32>) {
  linformer.attention_core %q, %k, %k scale(0.25) outs(%out)
    : (memref<1x2x32x16xf32>, memref<1x2x16x16xf32>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xf32>) -> ()
  return
}
