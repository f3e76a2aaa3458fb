# Installation: library (shared and static), headers, tools, pkg-config and CMake package files.
include(CMakePackageConfigHelpers)

set(GSHMEM_INSTALL_TARGETS gshmem gshmem_static)
if(TARGET gshmem_device)
  list(APPEND GSHMEM_INSTALL_TARGETS gshmem_device)
  set_target_properties(gshmem_device PROPERTIES EXPORT_NAME device)
  install(FILES ${CMAKE_SOURCE_DIR}/cmake/gshmemDevice.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gshmem)
endif()
install(TARGETS ${GSHMEM_INSTALL_TARGETS} EXPORT gshmemTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/gshmem.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/gshmem DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(tool gshmemrun gshmem-info)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

install(EXPORT gshmemTargets NAMESPACE gshmem:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gshmem)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/gshmemConfig.cmake.in
  ${CMAKE_BINARY_DIR}/gshmemConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gshmem
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/gshmemConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/gshmemConfig.cmake ${CMAKE_BINARY_DIR}/gshmemConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gshmem)

set(GSHMEM_PC_LIBS_PRIVATE "-lpthread -ldl -lrt")
if(GSHMEM_HAVE_CUDA)
  string(PREPEND GSHMEM_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lstdc++ ")
endif()
file(RELATIVE_PATH GSHMEM_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${CMAKE_SOURCE_DIR}/cmake/gshmem.pc.in ${CMAKE_BINARY_DIR}/gshmem.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/gshmem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
