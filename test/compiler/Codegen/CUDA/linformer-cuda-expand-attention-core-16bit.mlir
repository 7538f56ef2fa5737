// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16 core-shared-bytes=1536},linformer-cuda-expand-attention-core{mma=bf16},canonicalize,cse))' | FileCheck %s --check-prefix=STAGED
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-select-schedules{precision=bf16},linformer-cuda-expand-attention-core{mma=bf16 emulate exact},canonicalize,cse))' | FileCheck %s --check-prefix=EMU
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-expand-attention-core))' 2>&1 | FileCheck %s --check-prefix=SCALAR

// A core whose q and output linformer-cuda-narrow-intermediates made
// bf16 (the projections around the core round them anyway), its keys bf16
// too, its values f32. The tensor-core core reads the 16-bit buffers as
// they are (their rounding to the operand type is the identity) and
// rounds what it stores into the bf16 output.
// CHECK-LABEL: func.func @core16
// CHECK: memref.load %arg0{{.*}} : memref<1x2x32x16xbf16>
// CHECK: nvvm.mma.sync
// CHECK: memref.load %arg1{{.*}} : memref<1x2x16x16xbf16>
// CHECK: memref.load %arg2{{.*}} : memref<1x2x16x16xf32>
// CHECK: nvvm.mma.sync
// CHECK: %[[RCP:.*]] = arith.divf
// CHECK: %[[D:.*]] = arith.mulf %{{.*}}, %[[RCP]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[D]] : f32 to bf16
// CHECK-NEXT: memref.store %[[R]], %arg3{{.*}} : memref<1x2x32x16xbf16>
// Staged: the keys are copied from the bf16 buffer into shared words.
// STAGED-LABEL: func.func @core16
// STAGED: memref.load %arg1{{.*}} : memref<1x2x16x16xbf16>
// STAGED: memref.store %{{.*}}, %{{.*}} : memref<384xi32, #gpu.address_space<workgroup>>
// STAGED: gpu.barrier
// STAGED: nvvm.mma.sync
// STAGED: memref.store %{{.*}}, %arg3{{.*}} : memref<1x2x32x16xbf16>
// Replayed (exact emulation, f32 operands): the 16-bit buffers read and
// extended, the output stored rounded, no mma.
// EMU-LABEL: func.func @core16
// EMU-NOT: nvvm.mma.sync
// EMU: memref.load %arg0{{.*}} : memref<1x2x32x16xbf16>
// EMU: arith.extf
// EMU: memref.store %{{.*}}, %arg3{{.*}} : memref<1x2x32x16xbf16>
// Without tensor cores, a 16-bit buffer is an error, not silently wrong.
// SCALAR: error: the fused attention core on one thread a row takes f32 q, key, value and output, not 'memref<1x2x32x16xbf16>' (16-bit ones need the tensor-core core
func.func @core16(%q: memref<1x2x32x16xbf16>, %k: memref<1x2x16x16xbf16>,
                  %v: memref<1x2x16x16xf32>, %o: memref<1x2x32x16xbf16>) {
  linformer.attention_core %q, %k, %v scale(0.25) outs(%o)
    : (memref<1x2x32x16xbf16>, memref<1x2x16x16xbf16>, memref<1x2x16x16xf32>,
       memref<1x2x32x16xbf16>) -> ()
  return
}
