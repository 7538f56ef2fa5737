/*===- PkgConfigCheck.c - Build check for linformer-runtime.pc ----*- C -*-===//
 *
 * Compiled by EmbedTest.cmake with nothing but
 * `pkg-config --cflags --libs linformer-runtime` against the installed
 * runtime: proves the .pc file is right and that runtime.h is valid C.
 *
 *===----------------------------------------------------------------------===*/

#include <linformer/runtime.h>

#include <stdio.h>

int main(void) {
  lf_module *module = NULL;
  lf_status status = lf_module_load("/nonexistent.lfa", &module);
  int ok = lf_status_get_code(status) == LF_IO_ERROR && module == NULL;
  printf("linformer runtime %s: %s\n", lf_runtime_version(),
         lf_status_get_message(status));
  lf_status_free(status);
  return ok ? 0 : 1;
}
