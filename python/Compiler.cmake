#===- python/Compiler.cmake - linformer_mlir._compiler -------------------===#
#
# The compiler in process for the Python package: a nanobind extension over
# compiler/Driver (LinformerDriver), laid out beside _runtime in
# ${CMAKE_BINARY_DIR}/python/linformer_mlir. Included from the top level
# once the compiler's targets exist (python/ is configured before MLIR is
# found). The pip package is the runtime only and has no _compiler:
# linformer_mlir.compile() then runs linformer-compile.
#
#===----------------------------------------------------------------------===#

nanobind_add_module(linformer_mlir_compiler NB_STATIC
  python/linformer_mlir/_compiler.cpp)
target_link_libraries(linformer_mlir_compiler PRIVATE LinformerDriver)
# The compiler's directory builds without exceptions (LLVM's flags);
# nanobind needs them, and they stay inside this file.
# nanobind's headers cast qualifiers away, which LLVM's -Wcast-qual flags.
target_compile_options(linformer_mlir_compiler PRIVATE -fexceptions
  ${LINFORMER_WARNING_FLAGS} -Wno-cast-qual)
set_target_properties(linformer_mlir_compiler PROPERTIES
  OUTPUT_NAME _compiler
  LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/python/linformer_mlir"
  BUILD_RPATH "$ORIGIN/../../lib;${LLVM_LIBRARY_DIR}")
