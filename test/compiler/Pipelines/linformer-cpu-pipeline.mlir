// RUN: linformer-opt %s --split-input-file --linformer-cpu-pipeline \
// RUN:   | FileCheck %s --check-prefix=LLVM \
// RUN:       --implicit-check-not=linformer.attention --implicit-check-not=linformer.project \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=vector.contract \
// RUN:       --implicit-check-not=memref. --implicit-check-not=scf. --implicit-check-not=func.func \
// RUN:       --implicit-check-not=unrealized_conversion_cast
// RUN: linformer-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(linformer-cpu-pipeline{row-tile=16 vector-width=8 unroll=4})' \
// RUN:   | FileCheck %s --check-prefix=LLVM \
// RUN:       --implicit-check-not=linformer.attention --implicit-check-not=linformer.project \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=vector.contract \
// RUN:       --implicit-check-not=memref. --implicit-check-not=scf. --implicit-check-not=func.func \
// RUN:       --implicit-check-not=unrealized_conversion_cast
// RUN: linformer-opt %s --split-input-file --linformer-cpu-pipeline=to-llvm=false \
// RUN:   | FileCheck %s --check-prefix=MEMREF \
// RUN:       --implicit-check-not=linformer.attention --implicit-check-not=linformer.project \
// RUN:       --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=bufferization. --implicit-check-not=scf.forall \
// RUN:       --implicit-check-not=vector.contract --implicit-check-not=llvm.func
// RUN: linformer-opt %s --split-input-file --linformer-linalg-pipeline \
// RUN:   | FileCheck %s --check-prefix=LINALG \
// RUN:       --implicit-check-not=linformer.attention --implicit-check-not=linformer.project

// Whole layers through the named pipelines.
// --linformer-cpu-pipeline ends in the LLVM dialect: the entry point takes
// bare pointers (static shapes need no memref descriptors), one per
// argument, with the caller-provided output buffer appended; nothing of the
// Linformer, linalg, memref, scf or func dialects is left, and no
// vector.contract (lowered to FMAs). With the options that change the tile
// sizes it still gets there. With to-llvm=false it stops after
// bufferization and vector lowering: func.func on memrefs, the result an
// out-parameter, every workgroup loop sequential. --linformer-linalg-pipeline
// stops at linalg on tensors with no Linformer op left.

// Mean pooling with biases and lengths (i32): n = 32, d_model = 16,
// 2 heads, k = 8.
// LLVM-LABEL: llvm.func @mean_pool_biases(
// LLVM-SAME: %[[X:[a-z0-9]+]]: !llvm.ptr, %[[W:[a-z0-9]+]]: !llvm.ptr, %[[B:[a-z0-9]+]]: !llvm.ptr, %[[LEN:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr){{( attributes .*)? \{$}}
// LLVM: %[[OUT]]
// LLVM: llvm.return{{$}}
// MEMREF-LABEL: func.func @mean_pool_biases(
// MEMREF-SAME: %[[X:[a-z0-9]+]]: memref<1x32x16xf32>, %[[W:[a-z0-9]+]]: memref<16x16xf32>, %[[B:[a-z0-9]+]]: memref<16xf32>, %[[LEN:[a-z0-9]+]]: memref<1xi32>, %[[OUT:[a-z0-9]+]]: memref<1x32x16xf32>){{( attributes .*)? \{$}}
// MEMREF: %[[OUT]]
// MEMREF: return{{$}}
// LINALG-LABEL: func.func @mean_pool_biases(
// LINALG-SAME: -> tensor<1x32x16xf32>
// LINALG: linalg.generic
// LINALG: math.exp
// LINALG: %[[Y:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x32x16xf32>) attrs = {linformer.root}
// LINALG: return %[[Y]] : tensor<1x32x16xf32>
func.func @mean_pool_biases(%x: tensor<1x32x16xf32>, %w: tensor<16x16xf32>,
    %b: tensor<16xf32>, %len: tensor<1xi32>) -> tensor<1x32x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b, %b)
         heads(2) k(8) projection<mean_pool> sharing<none> lengths(%len)
         : (tensor<1x32x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>,
            tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1xi32>)
         -> tensor<1x32x16xf32>
  return %y : tensor<1x32x16xf32>
}

// -----

// Learned projection, K/V sharing, a user's i1 mask (converted to bytes by
// a scalar loop), batch 2, n = 64, d_model = 32, 4 heads, k = 16.
// LLVM-LABEL: llvm.func @learned_i1_mask(
// LLVM-SAME: %[[X:[a-z0-9]+]]: !llvm.ptr, %[[W:[a-z0-9]+]]: !llvm.ptr, %[[E:[a-z0-9]+]]: !llvm.ptr, %[[M:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr){{( attributes .*)? \{$}}
// LLVM: %[[OUT]]
// LLVM: llvm.return{{$}}
// MEMREF-LABEL: func.func @learned_i1_mask(
// MEMREF-SAME: %[[X:[a-z0-9]+]]: memref<2x64x32xf32>, %[[W:[a-z0-9]+]]: memref<32x32xf32>, %[[E:[a-z0-9]+]]: memref<4x16x64xf32>, %[[M:[a-z0-9]+]]: memref<2x64xi1>, %[[OUT:[a-z0-9]+]]: memref<2x64x32xf32>){{( attributes .*)? \{$}}
// MEMREF: %[[OUT]]
// MEMREF: return{{$}}
// LINALG-LABEL: func.func @learned_i1_mask(
// LINALG: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x64xi1>) outs(%{{.*}} : tensor<2x64xi8>)
// LINALG: math.exp
// LINALG: return
func.func @learned_i1_mask(%x: tensor<2x64x32xf32>, %w: tensor<32x32xf32>,
    %e: tensor<4x16x64xf32>, %m: tensor<2x64xi1>) -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16)
         projection<learned> e(%e) sharing<kv> mask(%m)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<4x16x64xf32>,
            tensor<2x64xi1>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// Max pooling and conv (i64 lengths, i8 mask) in one module: two layers
// with their own entry points.
// LLVM-LABEL: llvm.func @max_pool(
// LLVM-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr){{( attributes .*)? \{$}}
// LLVM-LABEL: llvm.func @conv_i8_mask(
// LLVM-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr){{( attributes .*)? \{$}}
// MEMREF-LABEL: func.func @max_pool(
// MEMREF-SAME: memref<1x32x16xf32>, %{{.*}}: memref<16x16xf32>, %{{.*}}: memref<1xi64>, %{{.*}}: memref<1x32x16xf32>){{( attributes .*)? \{$}}
// MEMREF-LABEL: func.func @conv_i8_mask(
// MEMREF-SAME: memref<1x32x16xf32>, %{{.*}}: memref<16x16xf32>, %{{.*}}: memref<8x4xf32>, %{{.*}}: memref<1x32xi8>, %{{.*}}: memref<1x32x16xf32>){{( attributes .*)? \{$}}
// LINALG-LABEL: func.func @max_pool(
// LINALG: arith.maximumf
// LINALG-LABEL: func.func @conv_i8_mask(
// LINALG: math.exp
func.func @max_pool(%x: tensor<1x32x16xf32>, %w: tensor<16x16xf32>,
    %len: tensor<1xi64>) -> tensor<1x32x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(8)
         projection<max_pool> sharing<none> lengths(%len)
         : (tensor<1x32x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi64>)
         -> tensor<1x32x16xf32>
  return %y : tensor<1x32x16xf32>
}
func.func @conv_i8_mask(%x: tensor<1x32x16xf32>, %w: tensor<16x16xf32>,
    %e: tensor<8x4xf32>, %m: tensor<1x32xi8>) -> tensor<1x32x16xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(8)
         projection<conv> e(%e) sharing<key_value> mask(%m)
         : (tensor<1x32x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<8x4xf32>,
            tensor<1x32xi8>) -> tensor<1x32x16xf32>
  return %y : tensor<1x32x16xf32>
}
