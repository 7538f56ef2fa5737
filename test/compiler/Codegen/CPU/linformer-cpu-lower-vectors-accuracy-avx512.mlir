// The accuracy checks of linformer-cpu-lower-vectors-accuracy.mlir for an
// AVX-512 target, whose softmax exponential takes 2^n from vscalefps
// (x86vector.avx512.mask.scalef): the same bounds, the same special
// values (a masked score still gives 0). Run where the host has AVX-512.
// REQUIRES: mlir-runner, host-avx512
// RUN: linformer-opt %S/linformer-cpu-lower-vectors-accuracy.mlir \
// RUN:     --linformer-cpu-select-schedules=isa=avx512 --linformer-cpu-lower-vectors \
// RUN: | FileCheck %s --check-prefix=SCALEF
// SCALEF-LABEL: func.func @exp_error(
// SCALEF: x86vector.avx512.mask.scalef
// SCALEF-LABEL: func.func @exp_afn_error(
// SCALEF: x86vector.avx512.mask.scalef
// SCALEF-LABEL: func.func @special(
// SCALEF-COUNT-2: x86vector.avx512.mask.scalef
// RUN: linformer-opt %S/linformer-cpu-lower-vectors-accuracy.mlir \
// RUN:     --linformer-cpu-select-schedules=isa=avx512 --linformer-cpu-lower-vectors \
// RUN: | sed -e 's/ attributes {linformer.target = [^}]*}//' \
// RUN: | mlir-opt --convert-vector-to-scf --convert-scf-to-cf --convert-math-to-llvm \
// RUN:     --convert-math-to-libm --convert-vector-to-llvm=enable-x86vector --convert-arith-to-llvm \
// RUN:     --convert-cf-to-llvm --convert-func-to-llvm --finalize-memref-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %S/linformer-cpu-lower-vectors-accuracy.mlir
