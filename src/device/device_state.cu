/*
 * The device library's half of the device state (libgshmem_device.a, linked into the
 * application with relocatable device code): the __constant__ copy device code reads,
 * and the host function libgshmem calls to fill it. It runs in the application's CUDA
 * runtime, which owns this symbol.
 */
#include <gshmem/impl/device_state.h>

#include <cuda_runtime.h>

__constant__ struct gshmemi_device_state gshmemi_dstate;

#include "state_copy.cuh"

extern "C" void gshmemi_device_register(int (*fn)(int device, const void *state, size_t size));

static int device_state_sync(int device, const void *state, size_t size)
{
    return (int)gshmemi_state_copy(device, state, size);
}

extern "C" void gshmemi_device_lib_register(void)
{
    gshmemi_device_register(device_state_sync);
}
