# CTest's test_install: install the current build tree into a temporary
# prefix, then build and run the consumers against it two ways:
#   1. CMake: find_package(xpar) -> xpar::xpar (this folder's CMakeLists.txt)
#   2. pkg-config: cc consumer.c $(pkg-config --cflags --libs xpar)
# With MPI_LAUNCHER and MPIEXEC given (CTest's test_install_mpi), the MPI
# component instead: find_package(xpar COMPONENTS mpi) -> xpar::mpi (mpi/)
# and pkg-config xpar-mpi, each consumer run on 2 ranks; and libxpar itself
# must not depend on MPI.
# Arguments (-D): BUILD_DIR WORK_DIR CONSUMER_DIR GENERATOR C_COMPILER
#                 CXX_COMPILER CONFIG SHARED EXE_LINKER_FLAGS
#                 [MPI_LAUNCHER MPIEXEC]
# EXE_LINKER_FLAGS are the tested build's (the asan preset's -fsanitize=...):
# a consumer of an instrumented library must link the sanitizer runtime too.
cmake_minimum_required(VERSION 3.24)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "test_install: failed (${rc}): ${cmd}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} ${config_args})
message(STATUS "installed into ${prefix}")

# The installed files a user relies on.
file(GLOB_RECURSE cfg ${prefix}/*/xparConfig.cmake)
file(GLOB_RECURSE pc ${prefix}/*/xpar.pc)
file(GLOB_RECURSE kernels_cmake ${prefix}/*/xpar_kernels.cmake)
if(NOT EXISTS ${prefix}/include/xpar/xpar.h OR NOT EXISTS ${prefix}/include/xpar/xpar_kernel.h
   OR NOT cfg OR NOT pc OR NOT kernels_cmake)
  message(FATAL_ERROR "test_install: missing xpar.h, xpar_kernel.h, xparConfig.cmake, "
                      "xpar_kernels.cmake or xpar.pc under ${prefix}")
endif()
# Only the product ships: one program (xpar-bench: calibrate, crossover,
# sweep), no developer bench; and no test hook in the library.
file(GLOB programs RELATIVE ${prefix}/bin ${prefix}/bin/*)
if(programs AND NOT programs STREQUAL "xpar-bench")
  message(FATAL_ERROR "test_install: bin/ holds ${programs}; only xpar-bench ships")
endif()
file(GLOB_RECURSE libs ${prefix}/*/libxpar.so* ${prefix}/*/libxpar.a)
find_program(NM nm)
foreach(lib ${libs})
  if(NM AND NOT IS_SYMLINK ${lib})
    execute_process(COMMAND ${NM} ${lib} OUTPUT_VARIABLE syms ERROR_QUIET)
    if(syms MATCHES "xpar__shadow_plant|xpar__gpu_backend_set_double|xpar__dispatch_fast_path_off")
      message(FATAL_ERROR "test_install: ${lib} holds a test hook (${CMAKE_MATCH_0})")
    endif()
  endif()
endforeach()
list(GET pc 0 pc)
get_filename_component(pcdir ${pc} DIRECTORY)
get_filename_component(libdir ${pcdir} DIRECTORY)

if(MPI_LAUNCHER)
  # ---- the MPI component ---------------------------------------------------------
  file(GLOB_RECURSE mpi_cfg ${prefix}/*/xparMpiTargets.cmake)
  if(NOT EXISTS ${prefix}/include/xpar/xpar_mpi.h OR NOT mpi_cfg
     OR NOT EXISTS ${pcdir}/xpar-mpi.pc)
    message(FATAL_ERROR "test_install: missing xpar_mpi.h, xparMpiTargets.cmake or xpar-mpi.pc "
      "under ${prefix}")
  endif()
  # The core library must not need MPI (only libxpar_mpi does).
  file(GLOB core_libs ${libdir}/libxpar.so*)
  find_program(READELF readelf)
  if(core_libs AND READELF)
    list(GET core_libs 0 core_lib)
    run(${READELF} -d ${core_lib})
    if(run_out MATCHES "mpi")
      message(FATAL_ERROR "test_install: ${core_lib} depends on MPI:\n${run_out}")
    endif()
  endif()
  set(gen_args)
  if(GENERATOR)
    set(gen_args -G "${GENERATOR}")
  endif()
  set(build_type_args)
  if(CONFIG)
    set(build_type_args -DCMAKE_BUILD_TYPE=${CONFIG})
  endif()
  run(${CMAKE_COMMAND} -S ${CONSUMER_DIR}/mpi -B ${WORK_DIR}/build_mpi ${gen_args}
      ${build_type_args} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
      "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build_mpi ${config_args})
  file(GLOB_RECURSE path ${WORK_DIR}/build_mpi/consumer_mpi ${WORK_DIR}/build_mpi/*/consumer_mpi)
  if(NOT path)
    message(FATAL_ERROR "test_install: consumer_mpi was not built")
  endif()
  list(GET path 0 path)
  run(bash ${MPI_LAUNCHER} ${MPIEXEC} 2 ${path})
  message(STATUS "find_package(xpar COMPONENTS mpi):\n${run_out}")

  find_program(PKG_CONFIG pkg-config)
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "test_install: pkg-config not found (apt-get install pkg-config)")
  endif()
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  set(static_arg)
  if(NOT SHARED)
    set(static_arg --static)
  endif()
  run(${PKG_CONFIG} --cflags xpar-mpi)
  string(STRIP "${run_out}" cflags)
  run(${PKG_CONFIG} --libs ${static_arg} xpar-mpi)
  string(STRIP "${run_out}" libs)
  separate_arguments(cflags UNIX_COMMAND "${cflags}")
  separate_arguments(libs UNIX_COMMAND "${libs} ${EXE_LINKER_FLAGS}")
  run(${C_COMPILER} -std=c11 -Wall -Werror ${CONSUMER_DIR}/consumer_mpi.c ${cflags} ${libs}
      -o ${WORK_DIR}/consumer_mpi_pkgconfig)
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir}
      bash ${MPI_LAUNCHER} ${MPIEXEC} 2 ${WORK_DIR}/consumer_mpi_pkgconfig)
  message(STATUS "pkg-config xpar-mpi:\n${run_out}")
  message(STATUS "test_install (mpi): ok")
  return()
endif()

# ---- 1. find_package ------------------------------------------------------------
set(gen_args)
if(GENERATOR)
  set(gen_args -G "${GENERATOR}")
endif()
set(build_type_args)
if(CONFIG)
  set(build_type_args -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build ${gen_args} ${build_type_args}
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build ${config_args})
foreach(exe consumer_c consumer_cxx consumer_kernel)
  file(GLOB_RECURSE path ${WORK_DIR}/build/${exe} ${WORK_DIR}/build/*/${exe})
  if(NOT path)
    message(FATAL_ERROR "test_install: ${exe} was not built")
  endif()
  list(GET path 0 path)
  run(${path})
  message(STATUS "find_package: ${run_out}")
endforeach()

# ---- 2. pkg-config ---------------------------------------------------------------
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "test_install: pkg-config not found (apt-get install pkg-config)")
endif()
set(ENV{PKG_CONFIG_PATH} ${pcdir})
set(static_arg)
if(NOT SHARED)
  set(static_arg --static)
endif()
# The .pc must describe where it was installed: `cmake --install --prefix P`
# is how packagers and users choose the prefix, after configuring.
run(${PKG_CONFIG} --variable=prefix xpar)
string(STRIP "${run_out}" pc_prefix)
get_filename_component(pc_prefix_real "${pc_prefix}" REALPATH)
get_filename_component(prefix_real "${prefix}" REALPATH)
if(NOT pc_prefix_real STREQUAL prefix_real)
  message(FATAL_ERROR "test_install: the installed xpar.pc says prefix=${pc_prefix}, but it was "
    "installed with `cmake --install --prefix ${prefix}`: a pkg-config consumer would compile "
    "against ${pc_prefix}/include and link ${pc_prefix}/lib (the .pc bakes in the configure-time "
    "CMAKE_INSTALL_PREFIX; a relocatable prefix=\${pcfiledir}/../.. would follow the install)")
endif()
run(${PKG_CONFIG} --cflags xpar)
string(STRIP "${run_out}" cflags)
run(${PKG_CONFIG} --libs ${static_arg} xpar)
string(STRIP "${run_out}" libs)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
separate_arguments(libs UNIX_COMMAND "${libs} ${EXE_LINKER_FLAGS}")
run(${C_COMPILER} -std=c11 -Wall -Werror ${CONSUMER_DIR}/consumer.c ${cflags} ${libs}
    -o ${WORK_DIR}/consumer_pkgconfig)
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${WORK_DIR}/consumer_pkgconfig)
message(STATUS "pkg-config: ${run_out}")
run(${CXX_COMPILER} -std=c++17 -Wall -Werror ${CONSUMER_DIR}/consumer.cpp ${cflags} ${libs}
    -o ${WORK_DIR}/consumer_pkgconfig_cxx)
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${WORK_DIR}/consumer_pkgconfig_cxx)
message(STATUS "pkg-config (C++): ${run_out}")
message(STATUS "test_install: ok")
