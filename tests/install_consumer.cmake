# A C program outside the tree uses an installed sgla, both ways the README
# promises: find_package(sgla) and pkg-config.  The program is the README's
# own C example, extracted here, so the README cannot drift from what works.
#   cmake -DSRC_DIR=<repo> -DBUILD_DIR=<build> -DWORK=<scratch> -P install_consumer.cmake
foreach(v SRC_DIR BUILD_DIR WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_consumer: ${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)

file(READ ${SRC_DIR}/README.md readme)
string(FIND "${readme}" "```c\n" a)
if(a LESS 0)
  message(FATAL_ERROR "install_consumer: README.md has no ```c block")
endif()
math(EXPR a "${a} + 5")
string(SUBSTRING "${readme}" ${a} -1 rest)
string(FIND "${rest}" "\n```" b)
string(SUBSTRING "${rest}" 0 ${b} demo)
file(WRITE ${WORK}/consumer/demo.c "${demo}\n")
file(WRITE ${WORK}/consumer/CMakeLists.txt
"cmake_minimum_required(VERSION 3.20)
project(sgla_consumer C)
find_package(sgla REQUIRED)
add_executable(demo demo.c)
target_link_libraries(demo PRIVATE sgla::sgla m)
")
run("configure the consumer" ${CMAKE_COMMAND} -S ${WORK}/consumer -B ${WORK}/consumer/b
    -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_BUILD_RPATH=${WORK}/prefix/lib)
run("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/consumer/b)
run("run the find_package consumer" ${WORK}/consumer/b/demo)
if(NOT last_out MATCHES "o\\[last\\] = [-0-9.e+]+")
  message(FATAL_ERROR "install_consumer: unexpected output: ${last_out}")
endif()
message(STATUS "find_package consumer: ${last_out}")

find_program(PKG_CONFIG pkg-config)
find_program(CC NAMES cc gcc clang)
if(PKG_CONFIG AND CC)
  file(GLOB pcdir ${WORK}/prefix/lib*/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "${pcdir}")
  run("pkg-config" ${PKG_CONFIG} --cflags --libs sgla)
  string(STRIP "${last_out}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run("compile with pkg-config flags" ${CC} ${WORK}/consumer/demo.c ${flags} -lm
      -Wl,-rpath,${WORK}/prefix/lib -o ${WORK}/demo_pc)
  run("run the pkg-config consumer" ${WORK}/demo_pc)
  message(STATUS "pkg-config consumer: ${last_out}")
else()
  message(STATUS "pkg-config or a C compiler not found: that half skipped")
endif()
