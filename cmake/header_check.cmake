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
