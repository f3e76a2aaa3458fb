/* GPU presence and peer links; the only CUDA calls the host-heap build makes. */
#include "device/cuda_probe.h"

#include <stdio.h>

#ifdef GSHMEM_HAVE_CUDA
#include <cuda_runtime_api.h>

int gshmemi_cuda_probe(char *why, size_t whylen)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        snprintf(why, whylen, "%s (%s)", cudaGetErrorString(err), cudaGetErrorName(err));
        return 0;
    }
    if (count == 0) snprintf(why, whylen, "no CUDA device is visible");
    return count;
}

int gshmemi_cuda_built(void)
{
    return 1;
}

int gshmemi_gpu_link(int a, int b)
{
    int access = 0, atomics = 0;
    if (cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, a, b) != cudaSuccess ||
        cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        return GSHMEMI_GPU_LINK_UNKNOWN;
    }
    return !access ? GSHMEMI_GPU_LINK_NONE : atomics ? GSHMEMI_GPU_LINK_NVLINK : GSHMEMI_GPU_LINK_PCIE;
}
#else
int gshmemi_cuda_probe(char *why, size_t whylen)
{
    snprintf(why, whylen, "this build has no CUDA support (GSHMEM_CUDA=OFF or nvcc not found)");
    return 0;
}

int gshmemi_cuda_built(void)
{
    return 0;
}

int gshmemi_gpu_link(int a, int b)
{
    (void)a, (void)b;
    return GSHMEMI_GPU_LINK_UNKNOWN;
}
#endif
