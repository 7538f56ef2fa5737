// RUN: linformer-opt %s --linformer-cpu-store-bf16-bits | FileCheck %s

// A bf16 rounding expanded into integer arithmetic (linformer-cpu-expand-
// bf16) ends in a bitcast of its bits; stored whole or element by element,
// the bits themselves are stored, so no <N x bfloat> value is left for
// LLVM's InstCombine to move above the rounding's selects (which a CPU
// without bf16 conversion would then legalize through __truncsfbf2). A
// bf16 load only stored (a copy) loads and stores the words: LLVM's GVN
// kept such a <9 x bfloat> load in a register across a loop, which
// instruction selection could not legalize even with AVX512_BF16. A load
// also read as a value stays bf16.
// CHECK-LABEL: llvm.func @bits(
// CHECK-SAME: %[[BITS:[^:]*]]: vector<3xi16>, %[[P:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: !llvm.ptr
// CHECK: llvm.store %[[BITS]], %[[P]] : vector<3xi16>, !llvm.ptr
// CHECK: %[[E:.*]] = llvm.extractelement %[[BITS]][%{{.*}} : i64] : vector<3xi16>
// CHECK: llvm.store %[[E]], %[[Q]] : i16, !llvm.ptr
// CHECK: %[[L:.*]] = llvm.load %[[Q]] : !llvm.ptr -> vector<3xi16>
// CHECK: llvm.store %[[L]], %[[P]] : vector<3xi16>, !llvm.ptr
// CHECK: %[[V:.*]] = llvm.load %[[Q]] : !llvm.ptr -> vector<3xbf16>
// CHECK: llvm.store %[[V]], %[[P]] : vector<3xbf16>, !llvm.ptr
// CHECK: llvm.fpext %[[V]]
llvm.func @bits(%bits: vector<3xi16>, %p: !llvm.ptr, %q: !llvm.ptr) {
  %b = llvm.bitcast %bits : vector<3xi16> to vector<3xbf16>
  llvm.store %b, %p : vector<3xbf16>, !llvm.ptr
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %e = llvm.extractelement %b[%c1 : i64] : vector<3xbf16>
  llvm.store %e, %q : bf16, !llvm.ptr
  %l = llvm.load %q : !llvm.ptr -> vector<3xbf16>
  llvm.store %l, %p : vector<3xbf16>, !llvm.ptr
  %v = llvm.load %q : !llvm.ptr -> vector<3xbf16>
  llvm.store %v, %p : vector<3xbf16>, !llvm.ptr
  %x = llvm.fpext %v : vector<3xbf16> to vector<3xf32>
  llvm.store %x, %q : vector<3xf32>, !llvm.ptr
  llvm.return
}

// A bf16 load whose value is only read as bits (the extension by a shift)
// loads the integers; stack buffers and addresses of bf16 count in i16
// (LLVM's SROA types a promoted buffer after its alloca: a [4 x bfloat]
// tile written with rounded bits became bfloat selects, legalized through
// __truncsfbf2 without bf16 conversion).
// CHECK-LABEL: llvm.func @loads_and_buffers(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr
// CHECK: %[[L:.*]] = llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> vector<2xi16>
// CHECK: %[[A:.*]] = llvm.alloca %{{.*}} x i16 {alignment = 64 : i64}
// CHECK: %[[G:.*]] = llvm.getelementptr %[[A]][1] : (!llvm.ptr) -> !llvm.ptr, i16
// CHECK: llvm.store %[[L]], %[[G]] : vector<2xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @loads_and_buffers(%p: !llvm.ptr) {
  %l = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<2xbf16>
  %b = llvm.bitcast %l : vector<2xbf16> to vector<2xi16>
  %c4 = llvm.mlir.constant(4 : i64) : i64
  %a = llvm.alloca %c4 x bf16 {alignment = 64 : i64} : (i64) -> !llvm.ptr
  %g = llvm.getelementptr %a[1] : (!llvm.ptr) -> !llvm.ptr, bf16
  llvm.store %b, %g : vector<2xi16>, !llvm.ptr
  llvm.return
}

// A shuffle of bf16 vectors shuffles their 16-bit words (LLVM would
// legalize a <N x bfloat> shuffle through __truncsfbf2 on a CPU without
// bf16 conversion: a bf16 attention core's query tile, reshaped, for
// haswell); a load's bf16 then becomes bits, and the shuffled words are
// stored.
// CHECK-LABEL: llvm.func @shuffle(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: !llvm.ptr
// CHECK: %[[A:.*]] = llvm.load %[[P]] : !llvm.ptr -> vector<2xi16>
// CHECK: %[[B:.*]] = llvm.load %[[Q]] : !llvm.ptr -> vector<2xi16>
// CHECK: %[[S:.*]] = llvm.shufflevector %[[A]], %[[B]] [0, 2, 1, 3] : vector<2xi16>
// CHECK: llvm.store %[[S]], %[[P]] : vector<4xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @shuffle(%p: !llvm.ptr, %q: !llvm.ptr) {
  %a = llvm.load %p : !llvm.ptr -> vector<2xbf16>
  %b = llvm.load %q : !llvm.ptr -> vector<2xbf16>
  %s = llvm.shufflevector %a, %b [0, 2, 1, 3] : vector<2xbf16>
  llvm.store %s, %p : vector<4xbf16>, !llvm.ptr
  llvm.return
}

// Rounded words inserted one by one into a bf16 vector (a 1 x 2 tile of a
// weight rounded and split per head, transposed) are inserted into the
// vector's words, poison included, and the words are stored: LLVM would
// legalize the <2 x bfloat> insertelements through __truncsfbf2 on a CPU
// without bf16 conversion (a d_model-4 model for haswell with bf16
// products did not link). An insertion into a loaded vector inserts into
// the loaded words.
// CHECK-LABEL: llvm.func @inserts(
// CHECK-SAME: %[[W0:[^:]*]]: i16, %[[W1:[^:]*]]: i16, %[[P:[^:]*]]: !llvm.ptr
// CHECK: %[[U:.*]] = llvm.mlir.poison : vector<2xi16>
// CHECK: %[[A:.*]] = llvm.insertelement %[[W0]], %[[U]][%{{.*}} : i64] : vector<2xi16>
// CHECK: %[[B:.*]] = llvm.insertelement %[[W1]], %[[A]][%{{.*}} : i64] : vector<2xi16>
// CHECK: llvm.store %[[B]], %[[P]] : vector<2xi16>, !llvm.ptr
// CHECK: %[[L:.*]] = llvm.load %[[P]] : !llvm.ptr -> vector<2xi16>
// CHECK: %[[C:.*]] = llvm.insertelement %[[W0]], %[[L]][%{{.*}} : i64] : vector<2xi16>
// CHECK: %[[CB:.*]] = llvm.bitcast %[[C]] : vector<2xi16> to vector<2xbf16>
// CHECK: llvm.fpext %[[CB]]
llvm.func @inserts(%w0: i16, %w1: i16, %p: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %u = llvm.mlir.poison : vector<2xbf16>
  %b0 = llvm.bitcast %w0 : i16 to bf16
  %b1 = llvm.bitcast %w1 : i16 to bf16
  %a = llvm.insertelement %b0, %u[%c0 : i64] : vector<2xbf16>
  %b = llvm.insertelement %b1, %a[%c1 : i64] : vector<2xbf16>
  llvm.store %b, %p : vector<2xbf16>, !llvm.ptr
  %l = llvm.load %p : !llvm.ptr -> vector<2xbf16>
  %c = llvm.insertelement %b0, %l[%c0 : i64] : vector<2xbf16>
  %x = llvm.fpext %c : vector<2xbf16> to vector<2xf32>
  llvm.store %x, %p : vector<2xf32>, !llvm.ptr
  llvm.return
}

// A bf16 vector load whose elements are only extracted loads the words and
// extracts them, and the elements then go into a bf16 vector as words
// (InsertBits): LLVM would legalize the <1 x bfloat> extractelements
// through __truncsfbf2 on a CPU without bf16 conversion (a k = 1 attention
// core of a max-pooling model with bf16 products, compiled for haswell,
// did not link: random-model soak, seed 20261299 case 84).
// CHECK-LABEL: llvm.func @extracted_loads(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: !llvm.ptr
// CHECK: %[[U:.*]] = llvm.mlir.poison : vector<2xi16>
// CHECK: %[[L0:.*]] = llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> vector<1xi16>
// CHECK: %[[E0:.*]] = llvm.extractelement %[[L0]][%{{.*}} : i64] : vector<1xi16>
// CHECK: %[[L1:.*]] = llvm.load %[[Q]] {alignment = 2 : i64} : !llvm.ptr -> vector<1xi16>
// CHECK: %[[E1:.*]] = llvm.extractelement %[[L1]][%{{.*}} : i64] : vector<1xi16>
// CHECK: %[[A:.*]] = llvm.insertelement %[[E0]], %[[U]]
// CHECK: %[[B:.*]] = llvm.insertelement %[[E1]], %[[A]]
// CHECK: llvm.store %[[B]], %[[P]] : vector<2xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @extracted_loads(%p: !llvm.ptr, %q: !llvm.ptr) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %l0 = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<1xbf16>
  %e0 = llvm.extractelement %l0[%c0 : i64] : vector<1xbf16>
  %l1 = llvm.load %q {alignment = 2 : i64} : !llvm.ptr -> vector<1xbf16>
  %e1 = llvm.extractelement %l1[%c0 : i64] : vector<1xbf16>
  %u = llvm.mlir.poison : vector<2xbf16>
  %a = llvm.insertelement %e0, %u[%c0 : i64] : vector<2xbf16>
  %b = llvm.insertelement %e1, %a[%c1 : i64] : vector<2xbf16>
  llvm.store %b, %p : vector<2xbf16>, !llvm.ptr
  llvm.return
}
