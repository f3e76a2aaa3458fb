/*
 * Makes a GPU current for the calling thread, which may be one gshmem has not seen
 * (a new thread starts on GPU 0). Cheap when it already is: one cudaGetDevice.
 * Shared by libgshmem's C and CUDA sources and the device library's state copy.
 */
#ifndef GSHMEMI_CUDA_BIND_H
#define GSHMEMI_CUDA_BIND_H

#include <cuda_runtime_api.h>

/* previous (when not NULL) gets the device that was current, -1 when unknown. */
static inline cudaError_t gshmemi_cuda_bind(int device, int *previous)
{
    int current = -1;
    cudaError_t err = cudaGetDevice(&current);
    if (previous) *previous = err == cudaSuccess ? current : -1;
    if (err == cudaSuccess && current != device) err = cudaSetDevice(device);
    return err;
}

#endif
