// RUN: linformer-opt %s --split-input-file --linformer-cuda-plan-launches --verify-diagnostics -o /dev/null
// RUN: not linformer-opt %s --split-input-file --linformer-cuda-plan-launches='sm=91' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM
// RUN: not linformer-opt %s --split-input-file --linformer-cuda-plan-launches='blocks-per-sm=0' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCKS
// SM: error: linformer-cuda-plan-launches needs a known sm (70, 75, 80, 86, 89, 90, 100 or 120) and blocks-per-sm >= 1, not sm 91 and blocks-per-sm 1
// BLOCKS: error: linformer-cuda-plan-launches needs a known sm (70, 75, 80, 86, 89, 90, 100 or 120) and blocks-per-sm >= 1, not sm 90 and blocks-per-sm 0

// Host code that would touch device memory is an error at that op.
module attributes {gpu.container_module} {
  func.func @host_load(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    // expected-error @below {{'memref.load' would run on the host, which cannot touch device buffers; the CUDA pipeline must make it part of a kernel}}
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %y[%c0] : memref<4xf32>
    return
  }
}

// -----

// A scalar kernel operand has no buffer to bind.
module attributes {gpu.container_module} {
  func.func @scalar(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %f = arith.constant 1.0 : f32
    // expected-error @below {{kernel operand #1 ('f32') is not a buffer; kernels take buffers only (constants belong inside the kernel)}}
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>, %f : f32)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<4xf32>, %f: f32) kernel { gpu.return }
  }
}

// -----

// The runtime binds buffers, nothing else (here a size the grid would
// depend on).
module attributes {gpu.container_module} {
  // expected-error @below {{argument #1 has type 'index'; the CUDA runtime binds buffers only}}
  func.func @dynamic_grid(%x: memref<4xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// A device buffer needs a static size.
module attributes {gpu.container_module} {
  func.func @dynamic_alloc(%n: memref<4xf32>) {
    %c4 = arith.constant 4 : index
    // expected-error @below {{a device buffer needs a static shape and an identity layout, not 'memref<?xf32>'}}
    %t = memref.alloc(%c4) : memref<?xf32>
    return
  }
}

// -----

// The launch's dynamic shared memory is sized from the kernel's views of
// it: a view at an offset the pass cannot know is an error there.
module attributes {gpu.container_module} {
  func.func @dynamic_view(%x: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %o = gpu.thread_id x
      // expected-error @+1 {{a view of dynamic shared memory needs a constant offset and a static shape to size the launch}}
      %s = memref.view %raw[%o][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// The length rules come in launch order, one a launch: a list of another
// length is refused (the launches and the loops they came from differ).
module attributes {gpu.container_module} {
  // expected-error @below {{the length rules name 2 block loops, and there are 1 launches}}
  func.func @rules_count(%x: memref<4xf32>) attributes {linformer.cuda_launch_rows = [unit, unit]} {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// A length rule numbers block x: it must count the launch's blocks, and
// the grid must be x alone.
module attributes {gpu.container_module} {
  func.func @rules_grid(%x: memref<4xf32>) attributes {linformer.cuda_launch_rows = [#linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 16>]} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    // expected-error @below {{the length rule #linformer.token_rows<grid = [2, 4], batch = 0, row = 1, tile = 16> does not number this launch's grid [4, 2, 1]}}
    gpu.launch_func @a::@k blocks in (%c4, %c2, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  }
}

// -----

// A length guard's T must lie within the sequence's length (here n = 512).
module attributes {gpu.container_module} {
  func.func @guard_beyond_n(%x: memref<1x512x4xf32> {linformer.sequence},
                            %len: memref<1xi32> {linformer.lengths}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %l = memref.load %len[%c0] : memref<1xi32>
    %t = arith.constant 512 : i32
    %short = arith.cmpi sle, %l, %t : i32
    // expected-error @below {{a length guard needs an integer T with 1 <= T < n (the sequence argument's length), an else branch and no results}}
    scf.if %short {
      gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
          args(%x : memref<1x512x4xf32>)
    } else {
    } {linformer.length_guard = 512 : i64}
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<1x512x4xf32>) kernel { gpu.return }
  }
}

// -----

// A buffer inside a length variant would be allocated for some runs only:
// the plan allocates outside the guards.
module attributes {gpu.container_module} {
  func.func @alloc_in_guard(%x: memref<1x512x4xf32> {linformer.sequence},
                            %len: memref<1xi32> {linformer.lengths}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %l = memref.load %len[%c0] : memref<1xi32>
    %t = arith.constant 64 : i32
    %short = arith.cmpi sle, %l, %t : i32
    scf.if %short {
      // expected-error @below {{a device buffer of a length variant must be allocated outside its guard}}
      %b = memref.alloc() : memref<4xf32>
      gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
          args(%x : memref<1x512x4xf32>)
    } else {
    } {linformer.length_guard = 64 : i64}
    return
  }
  gpu.module @a {
    gpu.func @k(%a: memref<1x512x4xf32>) kernel { gpu.return }
  }
}
