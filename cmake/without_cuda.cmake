# The build without CUDA (GPUPEER_WITH_CUDA=OFF; included by CMakeLists.txt): no nvcc, no CUDA
# headers, no CUDA runtime. The library is the sources of cmake/host_sources.cmake, the list the
# sanitized build (tests/host_only) compiles too; the gpupeer tool has the subcommands that work
# from files and names the GPU ones, which say that they need a GPU build (exit 3);
# libgpupeer_c.so carries the diagnosis functions of the Python package, its communicator entries
# failing with that reason. Nothing here looks for the CUDA toolkit.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_path(RE2_INCLUDE_DIR re2/re2.h REQUIRED)
find_library(RE2_STATIC_LIBRARY NAMES libre2.a REQUIRED)
find_library(RE2_SHARED_LIBRARY NAMES libre2.so REQUIRED)
find_package(Threads REQUIRED)

option(GPUPEER_WERROR "Treat warnings as errors" OFF)
add_compile_options(-Wall -Wextra)
if(GPUPEER_WERROR)
  add_compile_options(-Werror)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/host_sources.cmake)
add_library(gpupeer STATIC ${GPUPEER_HOST_SOURCES})
target_include_directories(gpupeer PUBLIC include PRIVATE src tools ${RE2_INCLUDE_DIR})
target_compile_definitions(gpupeer PUBLIC FMT_HEADER_ONLY
  GPUPEER_KB_INSTALL_DIR="${CMAKE_INSTALL_PREFIX}/share/gpupeer/kb" GPUPEER_SOURCE_KB_DIR="${CMAKE_SOURCE_DIR}/kb")
set_source_files_properties(src/core/program_files.cpp PROPERTIES
  COMPILE_DEFINITIONS GPUPEER_BUILD_TREE_DIR="${CMAKE_BINARY_DIR}")
target_link_libraries(gpupeer PUBLIC nlohmann_json::nlohmann_json fmt::fmt-header-only
  $<IF:$<BOOL:$<TARGET_PROPERTY:GPUPEER_SHARED_RE2>>,${RE2_SHARED_LIBRARY},${RE2_STATIC_LIBRARY}>
  Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(gpupeer PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_executable(gpupeer_cli ${GPUPEER_OFFLINE_CLI_SOURCES})
set_target_properties(gpupeer_cli PROPERTIES OUTPUT_NAME gpupeer)
target_link_libraries(gpupeer_cli PRIVATE gpupeer CLI11::CLI11)
target_include_directories(gpupeer_cli PRIVATE src)
target_link_options(gpupeer_cli PRIVATE -static-libstdc++ -static-libgcc)
install(TARGETS gpupeer_cli RUNTIME DESTINATION bin)
install(DIRECTORY kb/ DESTINATION share/gpupeer/kb FILES_MATCHING PATTERN "*.json")

# libgpupeer_c.so as in the build with CUDA (CMakeLists.txt): RE2 as libre2.so beside it.
add_library(gpupeer_c SHARED ${GPUPEER_WITHOUT_CUDA_C_SOURCES})
target_link_libraries(gpupeer_c PRIVATE gpupeer)
target_include_directories(gpupeer_c PRIVATE src)
target_link_options(gpupeer_c PRIVATE -Wl,--no-undefined -Wl,--enable-new-dtags
  -Wl,--version-script=${CMAKE_SOURCE_DIR}/src/c_api/exports.map)
file(REAL_PATH ${RE2_SHARED_LIBRARY} re2_real)
get_filename_component(re2_file ${re2_real} NAME)
string(REGEX REPLACE "(\\.so\\.[0-9]+).*" "\\1" GPUPEER_RE2_SONAME ${re2_file})
set_target_properties(gpupeer_c PROPERTIES GPUPEER_SHARED_RE2 ON BUILD_RPATH "$ORIGIN" INSTALL_RPATH "$ORIGIN")
add_custom_command(TARGET gpupeer_c POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E copy ${re2_real} $<TARGET_FILE_DIR:gpupeer_c>/${GPUPEER_RE2_SONAME})

# The CPU unit tests of these sources and the CLI tests of the tool (label cpu), as the
# sanitized build runs them.
include(CTest)
if(BUILD_TESTING)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  set(unit_files)
  foreach(t ${GPUPEER_HOST_TESTS} ${GPUPEER_OFFLINE_CLI_TESTS})
    list(APPEND unit_files tests/unit/${t}.cpp)
  endforeach()
  add_executable(gpupeer_unit_tests ${unit_files} tests/host_only/without_cuda_cli_test.cpp)
  target_link_libraries(gpupeer_unit_tests PRIVATE gpupeer GTest::gtest GTest::gtest_main)
  target_include_directories(gpupeer_unit_tests PRIVATE src tools)
  target_compile_definitions(gpupeer_unit_tests PRIVATE GPUPEER_TEST_DATA_DIR="${CMAKE_SOURCE_DIR}/tests/data"
    GPUPEER_CLI_PATH="$<TARGET_FILE:gpupeer_cli>" GPUPEER_CUDA_CLI_PATH="")
  add_dependencies(gpupeer_unit_tests gpupeer_cli)
  gtest_discover_tests(gpupeer_unit_tests PROPERTIES LABELS cpu DISCOVERY_TIMEOUT 60)
endif()
