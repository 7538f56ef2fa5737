#===- EmbedTest.cmake - Build and run examples/embed on an installed runtime -===#
#
# Run by ctest as `cmake -P`: installs the runtime component into a scratch
# prefix, configures and builds examples/embed against it with
# find_package(LinformerRuntime), runs it on the fake artifact and compares
# the output, then builds a C program with pkg-config alone. Checks what an
# embedder gets from an install, not the build tree.
#
# Inputs: BUILD_DIR SOURCE_DIR WORK_DIR MAKE_FAKE FAKE_KERNELS GENERATOR
#         CXX_COMPILER C_COMPILER, and SANITIZE_FLAGS (a ;-list) when the
#         runtime was built with sanitizers: a program that loads an
#         instrumented library must be instrumented too (the ASan runtime
#         has to come first in the link order).
#
#===----------------------------------------------------------------------===#

function(run_step name)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${name}: ok")
  set(STEP_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/data)
set(prefix ${WORK_DIR}/prefix)

run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
         --component runtime)

# Only the runtime component: the library, its headers and package files.
file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
foreach(f ${installed})
  if(NOT f MATCHES "^(include/linformer/runtime\\.h(pp)?|lib[^/]*/(liblinformer_runtime\\.so.*|cmake/LinformerRuntime/.*|pkgconfig/linformer-runtime\\.pc))$")
    message(FATAL_ERROR "unexpected file in the runtime component: ${f}")
  endif()
endforeach()

string(REPLACE ";" " " sanitize "${SANITIZE_FLAGS}")
run_step("configure example" ${CMAKE_COMMAND}
  -S ${SOURCE_DIR}/examples/embed -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  "-DCMAKE_CXX_FLAGS=${sanitize}" "-DCMAKE_EXE_LINKER_FLAGS=${sanitize}")
run_step("build example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("make data" ${MAKE_FAKE} ${WORK_DIR}/data ${FAKE_KERNELS})
run_step("run example" ${WORK_DIR}/build/linformer-embed
  ${WORK_DIR}/data/fake.lfa ${WORK_DIR}/data/fake.safetensors
  ${WORK_DIR}/data/x.npy ${WORK_DIR}/data/y.npy --threads 2)
message(STATUS "${STEP_OUTPUT}")
run_step("compare" ${MAKE_FAKE} --compare ${WORK_DIR}/data/y.npy
  ${WORK_DIR}/data/expected.npy)

find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  file(GLOB pcdir ${prefix}/lib*/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  run_step("pkg-config" ${PKG_CONFIG} --cflags --libs linformer-runtime)
  string(STRIP "${STEP_OUTPUT}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  string(REGEX REPLACE "^.*-L([^ ;]+).*$" "\\1" libdir "${flags}")
  run_step("compile with pkg-config" ${C_COMPILER} -Wall -Wextra -Werror
    ${SANITIZE_FLAGS} ${SOURCE_DIR}/test/unit/PkgConfigCheck.c ${flags}
    -Wl,-rpath,${libdir} -o ${WORK_DIR}/pkgconfig-check)
  run_step("run pkg-config build" ${WORK_DIR}/pkgconfig-check)
else()
  message(STATUS "pkg-config not found; skipping the .pc check")
endif()
