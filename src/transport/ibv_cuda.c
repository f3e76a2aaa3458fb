/* ibv transport: what it needs from CUDA (ibv_impl.h); stubs in builds without CUDA. */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"

#include "core/log.h"

#include <gshmem/status.h>

#include <stdio.h>
#include <string.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/cuda_driver.h"

#include <cuda_runtime_api.h>
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

/* Makes the heap's GPU current on this thread once, so no stray context appears on
 * GPU 0 for application threads that never chose one. */
static void ibv_cuda_bind(int device)
{
    static __thread int bound = -1;
    if (device >= 0 && bound != device && cudaSetDevice(device) == cudaSuccess) bound = device;
}

int gshmemi_ibv_cuda_is_device(int device, const void *p)
{
    struct cudaPointerAttributes attr;
    ibv_cuda_bind(device);
    if (!p || cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.type == cudaMemoryTypeDevice;
}

int gshmemi_ibv_cuda_copy(int device, void *dst, const void *src, size_t len)
{
    static __thread cudaStream_t stream;
    ibv_cuda_bind(device);
    cudaError_t err = stream ? cudaSuccess : cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(TRANSPORT, "ibv: staging copy of %zu bytes failed: %s", len, cudaGetErrorString(err));
    return GSHMEMX_ERR_CUDA;
}

int gshmemi_ibv_cuda_dmabuf(void *addr, size_t len, char *why, size_t whylen)
{
    const struct gshmemi_cuda_driver *cu = gshmemi_cuda_driver(why, whylen);
    if (!cu) return -1;
    int fd = -1;
    CUresult rc =
        cu->cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)addr, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, whylen, "cuMemGetHandleForAddressRange: %s", gshmemi_cuda_driver_error(rc));
        return -1;
    }
    return fd;
}

int gshmemi_ibv_cuda_gdr_order(int device, int all_devices, char *what, size_t whatlen)
{
    int order = 0, options = 0;
    ibv_cuda_bind(device);
    if (cudaDeviceGetAttribute(&order, cudaDevAttrGPUDirectRDMAWritesOrdering, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(what, whatlen, "GPU %d does not say how it orders GPUDirect RDMA writes", device);
        return -1;
    }
    const char *scope = order >= (int)cudaGPUDirectRDMAWritesOrderingAllDevices ? "for every GPU"
                        : order >= (int)cudaGPUDirectRDMAWritesOrderingOwner    ? "for its own kernels only"
                                                                                : "";
    if (order >= (int)(all_devices ? cudaGPUDirectRDMAWritesOrderingAllDevices : cudaGPUDirectRDMAWritesOrderingOwner)) {
        snprintf(what, whatlen, "GPU %d orders GPUDirect RDMA writes %s", device, scope);
        return 0;
    }
    if (options & cudaFlushGPUDirectRDMAWritesOptionHost) {
        if (*scope) /* its own kernels only, but other GPUs of this node read this heap directly */
            snprintf(what, whatlen, "GPU %d orders GPUDirect RDMA writes %s; other GPUs of this node read its heap",
                     device, scope);
        else
            snprintf(what, whatlen, "GPU %d does not order GPUDirect RDMA writes; cudaDeviceFlushGPUDirectRDMAWrites "
                     "makes them visible", device);
        return 1;
    }
    snprintf(what, whatlen, "GPU %d neither orders GPUDirect RDMA writes nor offers a flush", device);
    return -1;
}

void gshmemi_ibv_cuda_gdr_describe(FILE *out)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (int d = 0; d < n; d++) {
        char what[200];
        int o = gshmemi_ibv_cuda_gdr_order(d, 0, what, sizeof(what));
        fprintf(out, "  %s%s\n", what, o == 0 ? "" : o == 1 ? " (gshmem flushes)" : " (gets into its heap may be seen late)");
    }
}

int gshmemi_ibv_cuda_gdr_flush(int device, int all_devices)
{
    ibv_cuda_bind(device);
    cudaError_t err =
        cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                           all_devices ? cudaFlushGPUDirectRDMAWritesToAllDevices
                                                       : cudaFlushGPUDirectRDMAWritesToOwner);
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(TRANSPORT, "ibv: cudaDeviceFlushGPUDirectRDMAWrites on GPU %d failed: %s", device,
                  cudaGetErrorString(err));
    return GSHMEMX_ERR_CUDA;
}

void gshmemi_ibv_cuda_pci_path(int device, char *out, size_t outlen)
{
    char bus[32], link[96], real[PATH_MAX];
    out[0] = '\0';
    if (device < 0 || cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (char *c = bus; *c; c++) *c = (char)tolower((unsigned char)*c);
    snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bus);
    if (realpath(link, real)) snprintf(out, outlen, "%s", real);
}
#else
int gshmemi_ibv_cuda_is_device(int device, const void *p)
{
    (void)device, (void)p;
    return 0;
}

int gshmemi_ibv_cuda_copy(int device, void *dst, const void *src, size_t len)
{
    (void)device;
    memcpy(dst, src, len);
    return 0;
}

int gshmemi_ibv_cuda_dmabuf(void *addr, size_t len, char *why, size_t whylen)
{
    (void)addr, (void)len;
    snprintf(why, whylen, "this build has no CUDA");
    return -1;
}

int gshmemi_ibv_cuda_gdr_order(int device, int all_devices, char *what, size_t whatlen)
{
    (void)all_devices;
    snprintf(what, whatlen, "GPU %d: this build has no CUDA", device);
    return -1;
}

void gshmemi_ibv_cuda_gdr_describe(FILE *out)
{
    (void)out;
}

int gshmemi_ibv_cuda_gdr_flush(int device, int all_devices)
{
    (void)device, (void)all_devices;
    return 0;
}

void gshmemi_ibv_cuda_pci_path(int device, char *out, size_t outlen)
{
    (void)device;
    if (outlen) out[0] = '\0';
}
#endif
#endif
