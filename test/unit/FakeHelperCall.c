/*===- FakeHelperCall.c - A kernel object that calls an unknown helper -*- C -*-===//
 *
 * Linked into a third copy of the fake kernels: a function that calls a
 * helper no library of the object defines, as generated code calls a
 * compiler runtime helper (`__truncsfbf2` on a CPU without AVX512_BF16).
 * A shared object may leave it undefined; the dynamic loader would then
 * bind it to whatever the process exports, or fail. The runtime must refuse
 * the object by the helper's name before loading it.
 *
 *===----------------------------------------------------------------------===*/

extern float linformer_fake_missing_helper(float);

float linformer_fake_use_helper(float x) {
  return linformer_fake_missing_helper(x);
}
