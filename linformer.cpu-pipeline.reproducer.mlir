#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
module attributes {linformer.target = #linformer.cpu_target<cpu = "znver4", features = "+prfchw,-cldemote,+avx,+aes,+sahf,+pclmul,-xop,+crc32,-amx-fp8,+xsaves,-avx512fp16,-usermsr,-sm4,-egpr,+sse4.1,-avx10.1,+avx512ifma,+xsave,+sse4.2,-tsxldtrk,-sm3,-ptwrite,-widekl,-movrs,+invpcid,+64bit,+xsavec,+avx512vpopcntdq,+cmov,-avx512vp2intersect,+avx512cd,+movbe,-avxvnniint8,-ccmp,-amx-int8,-kl,-sha512,-avxvnni,-rtm,+adx,+avx2,-hreset,-movdiri,-serialize,+vpclmulqdq,+avx512vl,-uintr,-cf,+clflushopt,-raoint,-cmpccxadd,+bmi,-amx-tile,+sse,+gfni,-avxvnniint16,-amx-fp16,-zu,-ndd,+xsaveopt,+rdrnd,+avx512f,-amx-bf16,+avx512bf16,+avx512vnni,-push2pop2,+cx8,+avx512bw,+sse3,-pku,-nf,-amx-tf32,-amx-avx512,+fsgsbase,+clzero,-mwaitx,-lwp,+lzcnt,+sha,-movdir64b,-ppx,-wbnoinvd,-enqcmd,-avxneconvert,-tbm,-pconfig,-amx-complex,+ssse3,+cx16,-avx10.2,+bmi2,+fma,+popcnt,-avxifma,+f16c,+avx512bitalg,-rdpru,+clwb,+mmx,+sse2,+rdseed,+avx512vbmi2,-prefetchi,-amx-movrs,+rdpid,-fma4,+avx512vbmi,+shstk,+vaes,-waitpkg,-sgx,+fxsr,+avx512dq,+sse4a", isa = "avx512", vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4, l1_bytes = 32768, l2_bytes = 1048576, l3_bytes = 33554432, cores = 2, fma_bits = 256>} {
  func.func @encoder(%arg0: tensor<1x16x16xf32> {linformer.sequence}, %arg1: tensor<16x16xf32>, %arg2: tensor<16x16xf32>, %arg3: tensor<16x16xf32>, %arg4: tensor<16x16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<16xf32>, %arg10: tensor<16xf32>, %arg11: tensor<16xf32>, %arg12: tensor<16xf32>, %arg13: tensor<16x8xf32>, %arg14: tensor<8xf32>, %arg15: tensor<8x16xf32>, %arg16: tensor<16xf32>, %arg17: tensor<16x16xf32>, %arg18: tensor<16x16xf32>, %arg19: tensor<16x16xf32>, %arg20: tensor<16x16xf32>, %arg21: tensor<16xf32>, %arg22: tensor<16xf32>, %arg23: tensor<16xf32>, %arg24: tensor<16xf32>, %arg25: tensor<16xf32>, %arg26: tensor<16xf32>, %arg27: tensor<16xf32>, %arg28: tensor<16xf32>, %arg29: tensor<16x8xf32>, %arg30: tensor<8xf32>, %arg31: tensor<8x16xf32>, %arg32: tensor<16xf32>, %arg33: tensor<16x16xf32>, %arg34: tensor<16x16xf32>, %arg35: tensor<16x16xf32>, %arg36: tensor<16x16xf32>, %arg37: tensor<16xf32>, %arg38: tensor<16xf32>, %arg39: tensor<16xf32>, %arg40: tensor<16xf32>, %arg41: tensor<16xf32>, %arg42: tensor<16xf32>, %arg43: tensor<16xf32>, %arg44: tensor<16xf32>, %arg45: tensor<16x8xf32>, %arg46: tensor<8xf32>, %arg47: tensor<8x16xf32>, %arg48: tensor<16xf32>) -> tensor<1x16x16xf32> {
    %0 = tensor.empty() : tensor<1x16xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x16x16xf32>) outs(%1 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %99 = arith.addf %out, %in : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %3 = tensor.empty() : tensor<1x16xf32>
    %4 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<1x16xf32>) outs(%3 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %4 : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%1 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %99 : f32
      %101 = arith.addf %out, %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %6 = tensor.empty() : tensor<1x16xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<1x16xf32>) outs(%6 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      %cst_6 = arith.constant 9.99999974E-6 : f32
      %100 = arith.addf %99, %cst_6 : f32
      %101 = math.rsqrt %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %8 = tensor.empty() : tensor<1x16x16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %4, %7, %arg9, %arg10 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%8 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %in_6 : f32
      %101 = arith.mulf %100, %in_7 : f32
      %102 = arith.addf %101, %in_8 : f32
      linalg.yield %102 : f32
    } -> tensor<1x16x16xf32>
    %10 = linformer.attention %9 weights(%arg1, %arg2, %arg3, %arg4) biases(%arg5, %arg6, %arg7, %arg8) heads(2) k(16) projection<max_pool> sharing<none> : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x16xf32>
    %11 = tensor.empty() : tensor<1x16x16xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %10 : tensor<1x16x16xf32>, tensor<1x16x16xf32>) outs(%11 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.addf %in, %in_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16x16xf32>
    %13 = tensor.empty() : tensor<1x16xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %14 = linalg.fill ins(%cst_0 : f32) outs(%13 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%12 : tensor<1x16x16xf32>) outs(%14 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %99 = arith.addf %out, %in : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %16 = tensor.empty() : tensor<1x16xf32>
    %17 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<1x16xf32>) outs(%16 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%12, %17 : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%14 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %99 : f32
      %101 = arith.addf %out, %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %19 = tensor.empty() : tensor<1x16xf32>
    %20 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<1x16xf32>) outs(%19 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      %cst_6 = arith.constant 9.99999974E-6 : f32
      %100 = arith.addf %99, %cst_6 : f32
      %101 = math.rsqrt %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %21 = tensor.empty() : tensor<1x16x16xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %17, %20, %arg11, %arg12 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%21 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %in_6 : f32
      %101 = arith.mulf %100, %in_7 : f32
      %102 = arith.addf %101, %in_8 : f32
      linalg.yield %102 : f32
    } -> tensor<1x16x16xf32>
    %23 = tensor.empty() : tensor<1x16x8xf32>
    %24 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg14 : tensor<8xf32>) outs(%23 : tensor<1x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x8xf32>
    %25 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%22, %arg13 : tensor<1x16x16xf32>, tensor<16x8xf32>) outs(%24 : tensor<1x16x8xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.mulf %in, %in_5 : f32
      %100 = arith.addf %out, %99 : f32
      linalg.yield %100 : f32
    } -> tensor<1x16x8xf32>
    %26 = tensor.empty() : tensor<1x16x8xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%25 : tensor<1x16x8xf32>) outs(%26 : tensor<1x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.000000e-01 : f32
      %cst_6 = arith.constant 1.000000e+00 : f32
      %cst_7 = arith.constant 0.707106769 : f32
      %99 = arith.mulf %in, %cst_7 : f32
      %100 = math.erf %99 : f32
      %101 = arith.addf %cst_6, %100 : f32
      %102 = arith.mulf %cst_5, %in : f32
      %103 = arith.mulf %102, %101 : f32
      linalg.yield %103 : f32
    } -> tensor<1x16x8xf32>
    %28 = tensor.empty() : tensor<1x16x16xf32>
    %29 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg16 : tensor<16xf32>) outs(%28 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %30 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%27, %arg15 : tensor<1x16x8xf32>, tensor<8x16xf32>) outs(%29 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.mulf %in, %in_5 : f32
      %100 = arith.addf %out, %99 : f32
      linalg.yield %100 : f32
    } -> tensor<1x16x16xf32>
    %31 = tensor.empty() : tensor<1x16x16xf32>
    %32 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %30 : tensor<1x16x16xf32>, tensor<1x16x16xf32>) outs(%31 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.addf %in, %in_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16x16xf32>
    %33 = tensor.empty() : tensor<1x16xf32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %34 = linalg.fill ins(%cst_1 : f32) outs(%33 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %35 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%32 : tensor<1x16x16xf32>) outs(%34 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %99 = arith.addf %out, %in : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %36 = tensor.empty() : tensor<1x16xf32>
    %37 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%35 : tensor<1x16xf32>) outs(%36 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %38 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%32, %37 : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%34 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %99 : f32
      %101 = arith.addf %out, %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %39 = tensor.empty() : tensor<1x16xf32>
    %40 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%38 : tensor<1x16xf32>) outs(%39 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      %cst_6 = arith.constant 9.99999974E-6 : f32
      %100 = arith.addf %99, %cst_6 : f32
      %101 = math.rsqrt %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %41 = tensor.empty() : tensor<1x16x16xf32>
    %42 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %37, %40, %arg25, %arg26 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%41 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %in_6 : f32
      %101 = arith.mulf %100, %in_7 : f32
      %102 = arith.addf %101, %in_8 : f32
      linalg.yield %102 : f32
    } -> tensor<1x16x16xf32>
    %43 = linformer.attention %42 weights(%arg17, %arg18, %arg19, %arg20) biases(%arg21, %arg22, %arg23, %arg24) heads(2) k(4) projection<max_pool> sharing<none> : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x16xf32>
    %44 = tensor.empty() : tensor<1x16x16xf32>
    %45 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32, %43 : tensor<1x16x16xf32>, tensor<1x16x16xf32>) outs(%44 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.addf %in, %in_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16x16xf32>
    %46 = tensor.empty() : tensor<1x16xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %47 = linalg.fill ins(%cst_2 : f32) outs(%46 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %48 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%45 : tensor<1x16x16xf32>) outs(%47 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %99 = arith.addf %out, %in : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %49 = tensor.empty() : tensor<1x16xf32>
    %50 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%48 : tensor<1x16xf32>) outs(%49 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %51 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%45, %50 : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%47 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %99 : f32
      %101 = arith.addf %out, %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %52 = tensor.empty() : tensor<1x16xf32>
    %53 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%51 : tensor<1x16xf32>) outs(%52 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      %cst_6 = arith.constant 9.99999974E-6 : f32
      %100 = arith.addf %99, %cst_6 : f32
      %101 = math.rsqrt %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %54 = tensor.empty() : tensor<1x16x16xf32>
    %55 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%45, %50, %53, %arg27, %arg28 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%54 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %in_6 : f32
      %101 = arith.mulf %100, %in_7 : f32
      %102 = arith.addf %101, %in_8 : f32
      linalg.yield %102 : f32
    } -> tensor<1x16x16xf32>
    %56 = tensor.empty() : tensor<1x16x8xf32>
    %57 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg30 : tensor<8xf32>) outs(%56 : tensor<1x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x8xf32>
    %58 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%55, %arg29 : tensor<1x16x16xf32>, tensor<16x8xf32>) outs(%57 : tensor<1x16x8xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.mulf %in, %in_5 : f32
      %100 = arith.addf %out, %99 : f32
      linalg.yield %100 : f32
    } -> tensor<1x16x8xf32>
    %59 = tensor.empty() : tensor<1x16x8xf32>
    %60 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%58 : tensor<1x16x8xf32>) outs(%59 : tensor<1x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.000000e-01 : f32
      %cst_6 = arith.constant 1.000000e+00 : f32
      %cst_7 = arith.constant 0.707106769 : f32
      %99 = arith.mulf %in, %cst_7 : f32
      %100 = math.erf %99 : f32
      %101 = arith.addf %cst_6, %100 : f32
      %102 = arith.mulf %cst_5, %in : f32
      %103 = arith.mulf %102, %101 : f32
      linalg.yield %103 : f32
    } -> tensor<1x16x8xf32>
    %61 = tensor.empty() : tensor<1x16x16xf32>
    %62 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg32 : tensor<16xf32>) outs(%61 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %63 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%60, %arg31 : tensor<1x16x8xf32>, tensor<8x16xf32>) outs(%62 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.mulf %in, %in_5 : f32
      %100 = arith.addf %out, %99 : f32
      linalg.yield %100 : f32
    } -> tensor<1x16x16xf32>
    %64 = tensor.empty() : tensor<1x16x16xf32>
    %65 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%45, %63 : tensor<1x16x16xf32>, tensor<1x16x16xf32>) outs(%64 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.addf %in, %in_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16x16xf32>
    %66 = tensor.empty() : tensor<1x16xf32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %67 = linalg.fill ins(%cst_3 : f32) outs(%66 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %68 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%65 : tensor<1x16x16xf32>) outs(%67 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %99 = arith.addf %out, %in : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %69 = tensor.empty() : tensor<1x16xf32>
    %70 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%68 : tensor<1x16xf32>) outs(%69 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %71 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%65, %70 : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%67 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %99 : f32
      %101 = arith.addf %out, %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %72 = tensor.empty() : tensor<1x16xf32>
    %73 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%71 : tensor<1x16xf32>) outs(%72 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      %cst_6 = arith.constant 9.99999974E-6 : f32
      %100 = arith.addf %99, %cst_6 : f32
      %101 = math.rsqrt %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %74 = tensor.empty() : tensor<1x16x16xf32>
    %75 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65, %70, %73, %arg41, %arg42 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%74 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %in_6 : f32
      %101 = arith.mulf %100, %in_7 : f32
      %102 = arith.addf %101, %in_8 : f32
      linalg.yield %102 : f32
    } -> tensor<1x16x16xf32>
    %76 = linformer.attention %75 weights(%arg33, %arg34, %arg35, %arg36) biases(%arg37, %arg38, %arg39, %arg40) heads(2) k(4) projection<max_pool> sharing<none> : (tensor<1x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x16xf32>
    %77 = tensor.empty() : tensor<1x16x16xf32>
    %78 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65, %76 : tensor<1x16x16xf32>, tensor<1x16x16xf32>) outs(%77 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.addf %in, %in_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16x16xf32>
    %79 = tensor.empty() : tensor<1x16xf32>
    %cst_4 = arith.constant 0.000000e+00 : f32
    %80 = linalg.fill ins(%cst_4 : f32) outs(%79 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %81 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%78 : tensor<1x16x16xf32>) outs(%80 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %99 = arith.addf %out, %in : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %82 = tensor.empty() : tensor<1x16xf32>
    %83 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%81 : tensor<1x16xf32>) outs(%82 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16xf32>
    %84 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%78, %83 : tensor<1x16x16xf32>, tensor<1x16xf32>) outs(%80 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %99 : f32
      %101 = arith.addf %out, %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %85 = tensor.empty() : tensor<1x16xf32>
    %86 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%84 : tensor<1x16xf32>) outs(%85 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 6.250000e-02 : f32
      %99 = arith.mulf %in, %cst_5 : f32
      %cst_6 = arith.constant 9.99999974E-6 : f32
      %100 = arith.addf %99, %cst_6 : f32
      %101 = math.rsqrt %100 : f32
      linalg.yield %101 : f32
    } -> tensor<1x16xf32>
    %87 = tensor.empty() : tensor<1x16x16xf32>
    %88 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%78, %83, %86, %arg43, %arg44 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%87 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %99 = arith.subf %in, %in_5 : f32
      %100 = arith.mulf %99, %in_6 : f32
      %101 = arith.mulf %100, %in_7 : f32
      %102 = arith.addf %101, %in_8 : f32
      linalg.yield %102 : f32
    } -> tensor<1x16x16xf32>
    %89 = tensor.empty() : tensor<1x16x8xf32>
    %90 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg46 : tensor<8xf32>) outs(%89 : tensor<1x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x8xf32>
    %91 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%88, %arg45 : tensor<1x16x16xf32>, tensor<16x8xf32>) outs(%90 : tensor<1x16x8xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.mulf %in, %in_5 : f32
      %100 = arith.addf %out, %99 : f32
      linalg.yield %100 : f32
    } -> tensor<1x16x8xf32>
    %92 = tensor.empty() : tensor<1x16x8xf32>
    %93 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%91 : tensor<1x16x8xf32>) outs(%92 : tensor<1x16x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.000000e-01 : f32
      %cst_6 = arith.constant 1.000000e+00 : f32
      %cst_7 = arith.constant 0.707106769 : f32
      %99 = arith.mulf %in, %cst_7 : f32
      %100 = math.erf %99 : f32
      %101 = arith.addf %cst_6, %100 : f32
      %102 = arith.mulf %cst_5, %in : f32
      %103 = arith.mulf %102, %101 : f32
      linalg.yield %103 : f32
    } -> tensor<1x16x8xf32>
    %94 = tensor.empty() : tensor<1x16x16xf32>
    %95 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg48 : tensor<16xf32>) outs(%94 : tensor<1x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x16xf32>
    %96 = linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%93, %arg47 : tensor<1x16x8xf32>, tensor<8x16xf32>) outs(%95 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.mulf %in, %in_5 : f32
      %100 = arith.addf %out, %99 : f32
      linalg.yield %100 : f32
    } -> tensor<1x16x16xf32>
    %97 = tensor.empty() : tensor<1x16x16xf32>
    %98 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%78, %96 : tensor<1x16x16xf32>, tensor<1x16x16xf32>) outs(%97 : tensor<1x16x16xf32>) attrs =  {linformer.root} {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %99 = arith.addf %in, %in_5 : f32
      linalg.yield %99 : f32
    } -> tensor<1x16x16xf32>
    return %98 : tensor<1x16x16xf32>
  }
}

{-#
  external_resources: {
    mlir_reproducer: {
      pipeline: "builtin.module(linformer-verify-layer-sharing, func.func(linformer-reassociate{flops-per-byte=2.000000e+01 mode=auto},linformer-decompose-attention,linformer-lower-to-linalg{keep-fusable-core=false lower-core=false},canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse,linformer-sequence-results), linformer-cpu-select-schedules{candidate= isa=host prepack-weights=true reduction-tile=0 row-tile=0 schedule-file=/tmp/sk/lf-random-6-qdt0h328//schedule.json short-length=0 unroll=0 vector-width=0}, linformer-cpu-split-reductions{schedule-file=/tmp/sk/lf-random-6-qdt0h328//schedule.json}, func.func(linformer-cpu-prepack-weights{bf16-dot=auto schedule-file=/tmp/sk/lf-random-6-qdt0h328//schedule.json},linformer-cpu-tile-and-fuse{row-tile=32 unread-padding=true whole=false},linformer-lower-to-linalg{keep-fusable-core=false lower-core=true},canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse,linformer-cpu-tile-for-vectors{bf16-dot=auto reduction-tile=64 unroll=8 vector-width=32},canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse,linformer-cpu-vectorize,canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse,linformer-hoist-in-kernels,canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse), one-shot-bufferize{allow-return-allocs-from-loops=false allow-unknown-ops=false analysis-fuzzer-seed=0 analysis-heuristic=bottom-up buffer-alignment=64 bufferize-function-boundaries=true check-parallel-regions=true copy-before-write=false  dump-alias-sets=false function-boundary-type-conversion=identity-layout-map must-infer-memory-space=false  print-conflicts=false test-analysis-only=false unknown-type-conversion=fully-dynamic-layout-map use-encoding-for-memory-space=false}, buffer-results-to-out-params{add-result-attr=false hoist-dynamic-allocs=false hoist-static-allocs=true modify-public-functions=true}, func.func(canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse,promote-buffers-to-stack{max-alloc-size-in-bytes=262144 max-rank-of-allocated-memref=6}), expand-realloc{emit-deallocs=false}, canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}, ownership-based-buffer-deallocation{private-function-dynamic-ownership=false}, canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}, buffer-deallocation-simplification, bufferization-lower-deallocations, cse, canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}, linformer-outline-kernels{packed-sequences=true}, func.func(linformer-cpu-lower-vectors{bf16-dot=auto},convert-vector-to-scf{full-unroll=true lower-scalable=false lower-tensors=false target-rank=1},linformer-cpu-expand-strided-copies,convert-linalg-to-loops,scf-forall-to-for,linformer-hoist-static-allocas,linformer-packed-sequences{entry=false},canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},cse), linformer-cpu-expand-bf16, lower-affine, expand-strided-metadata, lower-affine, convert-scf-to-cf{allow-pattern-rollback=true}, convert-vector-to-llvm{enable-amx=true enable-arm-bf16=false enable-arm-i8mm=false enable-arm-neon=false enable-arm-sve=false enable-x86vector=true force-32bit-vector-indices=true reassociate-fp-reductions=false use-vector-alignment=false vector-contract-lowering=dot vector-transpose-lowering=eltwise}, finalize-memref-to-llvm{index-bitwidth=0 use-aligned-alloc=false use-generic-functions=true}, convert-math-to-llvm{approximate-log1p=true}, convert-math-to-libm, convert-arith-to-llvm{index-bitwidth=0}, convert-index-to-llvm{index-bitwidth=0}, convert-ub-to-llvm{index-bitwidth=0}, convert-func-to-llvm{index-bitwidth=0 use-bare-ptr-memref-call-conv=true}, convert-cf-to-llvm{index-bitwidth=0}, reconcile-unrealized-casts, linformer-cpu-store-bf16-bits, linformer-cpu-scratch-hooks, canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true})",
      disable_threading: false,
      verify_each: true
    }
  }
#-}
