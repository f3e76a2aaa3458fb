# gshmem_enable_device(<target>): the target's CUDA code may call the gshmem device API.
# Turns on relocatable device code (the device API reads the device library's
# __constant__ state) and links the device library.
function(gshmem_enable_device target)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
  if(TARGET gshmem::device)
    target_link_libraries(${target} PRIVATE gshmem::device)
  else()
    target_link_libraries(${target} PRIVATE gshmem_device)
  endif()
endfunction()
