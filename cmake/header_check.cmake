# Every public header compiles on its own: one generated translation unit per header, built
# with only the library's public usage requirements (so a header that needs a private one under
# src/, or forgets an include, fails the build). Each header is included twice to check that
# `#pragma once` holds.
file(GLOB GPUPEER_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/gpupeer/*.hpp)
set(GPUPEER_HEADER_CHECK_SOURCES)
foreach(header ${GPUPEER_PUBLIC_HEADERS})
  get_filename_component(name ${header} NAME)
  set(unit ${CMAKE_CURRENT_BINARY_DIR}/header_check/${name}.cpp)
  file(CONFIGURE OUTPUT ${unit} CONTENT "#include \"gpupeer/${name}\"\n#include \"gpupeer/${name}\"\n")
  list(APPEND GPUPEER_HEADER_CHECK_SOURCES ${unit})
endforeach()
add_library(gpupeer_header_check OBJECT ${GPUPEER_HEADER_CHECK_SOURCES})
target_link_libraries(gpupeer_header_check PRIVATE gpupeer)

# c_api.h is a C header: a C99 program includes it with -pedantic-errors, links against
# libgpupeer_c.so and makes the calls that need no GPU (tests/c_api/c_consumer.c).
enable_language(C)
add_executable(gpupeer_c_consumer ${PROJECT_SOURCE_DIR}/tests/c_api/c_consumer.c)
target_include_directories(gpupeer_c_consumer PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(gpupeer_c_consumer PRIVATE gpupeer_c)
set_target_properties(gpupeer_c_consumer PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(gpupeer_c_consumer PRIVATE -pedantic-errors -Wall -Wextra -Werror)
add_test(NAME c_api_c_consumer COMMAND gpupeer_c_consumer)
set_tests_properties(c_api_c_consumer PROPERTIES LABELS cpu)
