/*
 * The device library's half of the device state (libgshmem_device.a, linked into the
 * application with relocatable device code): the __constant__ copy device code reads,
 * and the host function libgshmem calls to fill it. It runs in the application's CUDA
 * runtime, which owns this symbol.
 */
#include <gshmem/impl/device_state.h>

#include <cuda_runtime.h>

__constant__ struct gshmemi_device_state gshmemi_dstate;

extern "C" void gshmemi_device_register(int (*fn)(int device, const void *state, size_t size));

static int device_state_sync(int device, const void *state, size_t size)
{
    /* Kernels this thread launches afterwards go to the PE's GPU too. */
    cudaError_t err = device >= 0 ? cudaSetDevice(device) : cudaSuccess;
    if (err == cudaSuccess) err = cudaMemcpyToSymbol(gshmemi_dstate, state, size);
    return (int)err;
}

extern "C" void gshmemi_device_lib_register(void)
{
    gshmemi_device_register(device_state_sync);
}
