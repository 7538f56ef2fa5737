// The CPU target attribute: fma_bits and l2_bytes_per_cycle are optional
// (0 = the FMA datapath is as wide as the vectors; 32 bytes a cycle) and
// printed only where they differ; bad values are errors that name them.
// RUN: linformer-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK: #linformer.cpu_target<cpu = "znver5", {{.*}}cores = 2>
// CHECK-NOT: fma_bits
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver5",
    features = "", isa = "avx512", vector_bits = 512, vector_registers = 32,
    fma_units = 2, fma_latency = 4, l1_bytes = 49152, l2_bytes = 1048576,
    l3_bytes = 33554432, cores = 2>} {}

// -----

// CHECK: #linformer.cpu_target<cpu = "znver4", {{.*}}cores = 2, fma_bits = 256, l2_bytes_per_cycle = 48>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver4",
    features = "", isa = "avx512", vector_bits = 512, vector_registers = 32,
    fma_units = 2, fma_latency = 4, l1_bytes = 32768, l2_bytes = 1048576,
    l3_bytes = 33554432, cores = 2, fma_bits = 256, l2_bytes_per_cycle = 48>} {}

// -----

// expected-error @+1 {{fma_bits must be 0 (as wide as the vectors) or a multiple of 32; got 100}}
module attributes {linformer.target = #linformer.cpu_target<cpu = "",
    features = "", isa = "avx512", vector_bits = 512, vector_registers = 32,
    fma_units = 2, fma_latency = 4, l1_bytes = 32768, l2_bytes = 1048576,
    l3_bytes = 33554432, cores = 2, fma_bits = 100>} {}

// -----

// expected-error @+1 {{l2_bytes_per_cycle must be positive; got 0}}
module attributes {linformer.target = #linformer.cpu_target<cpu = "",
    features = "", isa = "avx512", vector_bits = 512, vector_registers = 32,
    fma_units = 2, fma_latency = 4, l1_bytes = 32768, l2_bytes = 1048576,
    l3_bytes = 33554432, cores = 2, l2_bytes_per_cycle = 0>} {}
