# `cmake --install` of the library as a package: headers, libgpupeer.a, a CMake package config
# (gpupeer::gpupeer), its version file, and gpupeer.pc for pkg-config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GPUPEER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpupeer)
# The include directory reaches consumers through the target's INSTALL_INTERFACE.
install(TARGETS gpupeer EXPORT gpupeerTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/gpupeer DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT gpupeerTargets NAMESPACE gpupeer:: DESTINATION ${GPUPEER_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpupeerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpupeerConfig.cmake INSTALL_DESTINATION ${GPUPEER_CMAKE_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpupeerConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpupeerConfig.cmake ${PROJECT_BINARY_DIR}/gpupeerConfigVersion.cmake
  DESTINATION ${GPUPEER_CMAKE_DIR})

list(GET CUDAToolkit_INCLUDE_DIRS 0 GPUPEER_PC_CUDA_INCLUDE)
configure_file(${CMAKE_CURRENT_LIST_DIR}/gpupeer.pc.in ${PROJECT_BINARY_DIR}/gpupeer.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/gpupeer.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
