// RUN: linformer-opt %s --split-input-file --allow-unregistered-dialect --linformer-hoist-static-allocas | FileCheck %s

// A statically sized memref.alloca inside a loop moves to the start of the
// function's entry block, so every iteration reuses one buffer instead of
// growing the stack. A dynamically sized one (its size depends on values
// computed in the loop) stays where it is.

// CHECK-LABEL: func.func @static_in_loop(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<4x16xf32>, %[[N:[a-z0-9]+]]: index)
// CHECK-NEXT: %[[BUF:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x16xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %{{.*}} {
// CHECK-NOT: memref.alloca
// CHECK: memref.copy %[[BUF]], %{{.*}}
// CHECK: }
// CHECK: return
func.func @static_in_loop(%out: memref<4x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %buf = memref.alloca() {alignment = 64 : i64} : memref<1x16xf32>
    %row = memref.subview %out[%i, 0] [1, 16] [1, 1]
             : memref<4x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    memref.copy %buf, %row
      : memref<1x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
  }
  return
}

// -----

// Nested loops and scf.if: still to the entry block, in front of
// everything.
// CHECK-LABEL: func.func @nested(
// CHECK-NEXT: memref.alloca() : memref<8x16xf32>
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK-NOT: memref.alloca
// CHECK: return
func.func @nested(%n: index, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      scf.if %flag {
        %s = memref.alloca() : memref<8xf32>
        "test.use"(%s) : (memref<8xf32>) -> ()
      }
      %t = memref.alloca() : memref<8x16xf32>
      "test.use"(%t) : (memref<8x16xf32>) -> ()
    }
  }
  return
}

// -----

// A dynamic size stays in the loop: its operand is defined there.
// CHECK-LABEL: func.func @dynamic_stays(
// CHECK-SAME: %[[N:[a-z0-9]+]]: index)
// CHECK-NOT: memref.alloca
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT: %[[BUF:.*]] = memref.alloca(%[[I]]) : memref<?xf32>
// CHECK-NEXT: "test.use"(%[[BUF]])
func.func @dynamic_stays(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %buf = memref.alloca(%i) : memref<?xf32>
    "test.use"(%buf) : (memref<?xf32>) -> ()
  }
  return
}

// -----

// Already in the entry block: left where it is.
// CHECK-LABEL: func.func @entry_block_untouched(
// CHECK-NEXT: %[[C:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[BUF:.*]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT: "test.use"(%[[BUF]], %[[C]])
func.func @entry_block_untouched() {
  %c = arith.constant 0 : index
  %buf = memref.alloca() : memref<4xf32>
  "test.use"(%buf, %c) : (memref<4xf32>, index) -> ()
  return
}

// -----

// Declarations have no body; nothing to do.
// CHECK-LABEL: func.func private @external(
func.func private @external(memref<4xf32>)
