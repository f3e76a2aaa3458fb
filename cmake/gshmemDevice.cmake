# gshmem_enable_device(<target>): the target's CUDA code may call the gshmem device API.
# Turns on relocatable device code (the device API reads the device library's
# __constant__ state), links the device library, and builds the target for the GPU
# architectures the device library was built for: a target built for others (CMake's
# default when CMAKE_CUDA_ARCHITECTURES is not set is an older one) cannot be linked
# with it ("Undefined reference to 'gshmemi_dstate'").
function(gshmem_enable_device target)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
  if(GSHMEM_CUDA_ARCHITECTURES)
    get_target_property(archs ${target} CUDA_ARCHITECTURES)
    if(NOT "${archs}" STREQUAL "${GSHMEM_CUDA_ARCHITECTURES}")
      message(STATUS "gshmem: ${target} is built for CUDA architectures ${GSHMEM_CUDA_ARCHITECTURES}, those of "
                     "the gshmem device library (it asked for ${archs}); build gshmem with "
                     "-DCMAKE_CUDA_ARCHITECTURES=... for others")
      set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${GSHMEM_CUDA_ARCHITECTURES}")
    endif()
  endif()
  if(TARGET gshmem::device)
    target_link_libraries(${target} PRIVATE gshmem::device)
  else()
    target_link_libraries(${target} PRIVATE gshmem_device)
  endif()
endfunction()
