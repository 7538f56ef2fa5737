/*===- FakeConstructor.c - A kernel object with a constructor -----*- C -*-===//
 *
 * Linked into a second copy of the fake kernels: a constructor that marks
 * the process when the object is loaded. The runtime must refuse the object
 * before the dynamic loader maps it, so the mark must never appear.
 *
 *===----------------------------------------------------------------------===*/

#include <stdlib.h>

__attribute__((constructor)) static void linformerFakeConstructor(void) {
  setenv("LINFORMER_FAKE_CONSTRUCTOR_RAN", "1", 1);
}
