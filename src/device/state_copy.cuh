/*
 * Writes the host's copy of the device state into a runtime instance's __constant__
 * gshmemi_dstate (libgshmem's own and the application's, through libgshmem_device.a).
 * It runs on a stream of its own, not the legacy stream: cudaMemcpyToSymbol would wait
 * for every kernel on the blocking streams, and one of them may be waiting for a peer
 * that is itself waiting for us in the team split that called this.
 */
#ifndef GSHMEMI_STATE_COPY_CUH
#define GSHMEMI_STATE_COPY_CUH

#include <gshmem/impl/device_state.h>

#include <cuda_runtime.h>

#include "cuda_bind.h"

static inline cudaError_t gshmemi_state_copy(int device, const void *state, size_t size)
{
    /* Kernels this thread launches afterwards go to the PE's GPU too. */
    cudaError_t err = device >= 0 ? gshmemi_cuda_bind(device, NULL) : cudaSuccess;
    cudaStream_t stream = NULL;
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaMemcpyToSymbolAsync(gshmemi_dstate, state, size, 0, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (stream != NULL) {
        cudaError_t destroyed = cudaStreamDestroy(stream);
        if (err == cudaSuccess) err = destroyed;
    }
    return err;
}

#endif
