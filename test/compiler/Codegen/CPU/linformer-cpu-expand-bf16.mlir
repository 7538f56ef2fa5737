// RUN: linformer-opt %s --split-input-file --linformer-cpu-expand-bf16 | FileCheck %s

// f32 -> bf16 truncation without hardware conversion (an AVX2 target):
// integer arithmetic, so LLVM never calls the libgcc helper __truncsfbf2
// (missing from GCC 12's libgcc). Round to nearest even: add 0x7fff plus
// the lowest kept bit, keep the upper 16 bits; a NaN becomes the quiet NaN
// 0x7fc0.
// The extension back is a shift by 16.
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver3",
    features = "+avx2,+fma,+f16c", isa = "avx2", vector_bits = 256,
    vector_registers = 16, fma_units = 2, fma_latency = 4, l1_bytes = 32768,
    l2_bytes = 524288, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @avx2(
// CHECK-SAME: %[[X:.*]]: vector<8xf32>, %[[B:.*]]: vector<8xbf16>
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1> : vector<8xi32>
// CHECK-DAG: %[[C16:.*]] = arith.constant dense<16> : vector<8xi32>
// CHECK-DAG: %[[QNAN:.*]] = arith.constant dense<32704> : vector<8xi16>
// CHECK-DAG: %[[HALF:.*]] = arith.constant dense<32767> : vector<8xi32>
// CHECK: %[[ISNAN:.*]] = arith.cmpf une, %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[XI:.*]] = arith.bitcast %[[X]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[HI:.*]] = arith.shrui %[[XI]], %[[C16]]
// CHECK: %[[ODD:.*]] = arith.andi %[[HI]], %[[ONE]]
// CHECK: %[[BIAS:.*]] = arith.addi %[[ODD]], %[[HALF]]
// CHECK: %[[RND:.*]] = arith.addi %[[XI]], %[[BIAS]]
// CHECK: %[[TOP:.*]] = arith.shrui %[[RND]], %[[C16]]
// CHECK: %[[T:.*]] = arith.trunci %[[TOP]] : vector<8xi32> to vector<8xi16>
// CHECK: %[[SEL:.*]] = arith.select %[[ISNAN]], %[[QNAN]], %[[T]]
// CHECK: %[[TB:.*]] = arith.bitcast %[[SEL]] : vector<8xi16> to vector<8xbf16>
// CHECK: %[[BI:.*]] = arith.bitcast %[[B]] : vector<8xbf16> to vector<8xi16>
// CHECK: %[[BE:.*]] = arith.extui %[[BI]] : vector<8xi16> to vector<8xi32>
// CHECK: %[[BS:.*]] = arith.shli %[[BE]], %[[C16]] : vector<8xi32>
// CHECK: %[[BF:.*]] = arith.bitcast %[[BS]] : vector<8xi32> to vector<8xf32>
// CHECK: return %[[TB]], %[[BF]]
func.func @avx2(%x: vector<8xf32>, %b: vector<8xbf16>) -> (vector<8xbf16>, vector<8xf32>) {
  %t = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  %e = arith.extf %b : vector<8xbf16> to vector<8xf32>
  return %t, %e : vector<8xbf16>, vector<8xf32>
}
// Scalars too; f16 is left to LLVM (F16C, or libgcc's __truncsfhf2, which
// GCC 12 has).
// CHECK-LABEL: func.func @scalar(
// CHECK-NOT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @scalar(%x: f32) -> (bf16, f16) {
  %t = arith.truncf %x : f32 to bf16
  %h = arith.truncf %x : f32 to f16
  return %t, %h : bf16, f16
}
}

// -----

// With AVX512_BF16 the hardware converts (vcvtneps2bf16): the truncation
// stays where its vector's length is a power of two. The extension is a
// shift there too, never a bf16 vector that LLVM 22 could leave live across
// blocks (for 9, 17, 25, ... lanes its instruction selection crashes on
// one: a bf16 model of d_model 9 compiled for znver4,
// tools/linformer-compile-bf16-widths.test). A truncation to 12 lanes is
// integer arithmetic even here: LLVM forwarded such stores into shuffles
// of bfloat that it cannot select ("v16bf16 = X86ISD::VPERM2X128": a
// d_model-12 model with a random schedule, random-model soak --seed
// 20261269 case 99).
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver4",
    features = "+avx512f,+avx512bf16,+avx2,+fma", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 32768, l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @native(
// CHECK-SAME: %[[X:.*]]: vector<16xf32>, %[[B:.*]]: vector<9xbf16>, %[[S:.*]]: bf16
// CHECK: arith.truncf %[[X]] : vector<16xf32> to vector<16xbf16>
// CHECK-NOT: arith.extf
// CHECK: %[[BI:.*]] = arith.bitcast %[[B]] : vector<9xbf16> to vector<9xi16>
// CHECK: %[[BE:.*]] = arith.extui %[[BI]] : vector<9xi16> to vector<9xi32>
// CHECK: %[[BS:.*]] = arith.shli %[[BE]], %{{.*}} : vector<9xi32>
// CHECK: arith.bitcast %[[BS]] : vector<9xi32> to vector<9xf32>
// CHECK: %[[SI:.*]] = arith.bitcast %[[S]] : bf16 to i16
// CHECK: %[[SE:.*]] = arith.extui %[[SI]] : i16 to i32
// CHECK: arith.shli %[[SE]], %{{.*}} : i32
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : vector<12xf32> to vector<12xi32>
// CHECK: arith.bitcast %{{.*}} : vector<12xi16> to vector<12xbf16>
func.func @native(%x: vector<16xf32>, %b: vector<9xbf16>, %s: bf16,
    %h: vector<4xf16>, %x12: vector<12xf32>)
    -> (vector<16xbf16>, vector<9xf32>, f32, vector<4xf32>, vector<12xbf16>) {
  %t = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %e = arith.extf %b : vector<9xbf16> to vector<9xf32>
  %se = arith.extf %s : bf16 to f32
  %he = arith.extf %h : vector<4xf16> to vector<4xf32>
  %t12 = arith.truncf %x12 : vector<12xf32> to vector<12xbf16>
  return %t, %e, %se, %he, %t12
      : vector<16xbf16>, vector<9xf32>, f32, vector<4xf32>, vector<12xbf16>
}

// A register tile of rows whose length is a power of two keeps the
// instruction however many rows it has (14 rows of 32: an FFN's GELU
// epilogue on a Xeon, whose rows LLVM converts one by one); 14 rows of 12
// do not.
// CHECK-LABEL: func.func @rows(
// CHECK: arith.truncf %{{.*}} : vector<1x14x32xf32> to vector<1x14x32xbf16>
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : vector<14x12xi16> to vector<14x12xbf16>
func.func @rows(%x: vector<1x14x32xf32>, %y: vector<14x12xf32>)
    -> (vector<1x14x32xbf16>, vector<14x12xbf16>) {
  %t = arith.truncf %x : vector<1x14x32xf32> to vector<1x14x32xbf16>
  %u = arith.truncf %y : vector<14x12xf32> to vector<14x12xbf16>
  return %t, %u : vector<1x14x32xbf16>, vector<14x12xbf16>
}
}

// -----

// A feature turned off after it was turned on counts as absent.
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver4",
    features = "+avx512f,+avx512bf16,-avx512bf16", isa = "avx512",
    vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4,
    l1_bytes = 32768, l2_bytes = 1048576, l3_bytes = 33554432, cores = 2>} {
// CHECK-LABEL: func.func @turned_off(
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : vector<16xi16> to vector<16xbf16>
func.func @turned_off(%x: vector<16xf32>) -> vector<16xbf16> {
  %t = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %t : vector<16xbf16>
}
}
