/*
 * Device symmetric heap over CUDA VMM: cuMemCreate with a POSIX fd handle, mapped in
 * one reserved virtual range with a slot per node-local PE (ours at slot local_rank),
 * so that peer PE q's copy of an object is slots + slot(q) * slot_size + offset.
 */
#include "core/env.h"
#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/cuda_bind.h"
#include "device/cuda_driver.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

static const struct gshmemi_cuda_driver *heap_driver(void)
{
    return gshmemi_cuda_driver(NULL, 0);
}

#define HEAP_CU(call, what)                                                                             \
    do {                                                                                                \
        CUresult rc_ = (call);                                                                          \
        if (rc_ != CUDA_SUCCESS) {                                                                      \
            GSHMEMI_ERROR(HEAP, "%s failed on GPU %d: %s", what, heap->device, gshmemi_cuda_driver_error(rc_)); \
            return GSHMEMX_ERR_CUDA;                                                                    \
        }                                                                                               \
    } while (0)

static int heap_device_set_access(struct gshmemi_heap *heap, void *base)
{
    CUmemAccessDesc access = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = heap->device},
                              .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    HEAP_CU(heap_driver()->cuMemSetAccess((CUdeviceptr)base, heap->size, &access, 1), "cuMemSetAccess");
    return 0;
}

static int heap_device_allocate(const struct gshmemi_env *env, struct gshmemi_heap *heap, int local_rank)
{
    const struct gshmemi_cuda_driver *cu = heap_driver();
    int rdma = 0;
    cu->cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, heap->device);
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = heap->device}};
    prop.allocFlags.gpuDirectRDMACapable = rdma ? 1 : 0;
    size_t granularity = 0;
    HEAP_CU(cu->cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
            "cuMemGetAllocationGranularity");
    heap->page_size = granularity;
    if (granularity == 0 || env->symmetric_size > (SIZE_MAX - GSHMEMI_HEAP_RESERVED) / 2 - granularity -
                                                      GSHMEMI_HEAP_BASE_ALIGN) {
        GSHMEMI_ERROR(HEAP, "GSHMEM_SYMMETRIC_SIZE=%zu is too large for a device heap", env->symmetric_size);
        return GSHMEMX_ERR_CONFIG;
    }
    heap->size = (GSHMEMI_HEAP_RESERVED + env->symmetric_size + granularity - 1) / granularity * granularity;
    heap->slot_size = (heap->size + GSHMEMI_HEAP_BASE_ALIGN - 1) / GSHMEMI_HEAP_BASE_ALIGN * GSHMEMI_HEAP_BASE_ALIGN;
    CUdeviceptr slots = 0;
    HEAP_CU(cu->cuMemAddressReserve(&slots, heap->slot_size * (size_t)heap->local_nranks, GSHMEMI_HEAP_BASE_ALIGN,
                                    0, 0),
            "reserving the heap's address range (cuMemAddressReserve)");
    heap->slots = (char *)slots;
    CUmemGenericAllocationHandle handle;
    HEAP_CU(cu->cuMemCreate(&handle, heap->size, &prop, 0), "allocating the device heap (cuMemCreate)");
    heap->handle = handle;
    heap->base = heap->slots + (size_t)local_rank * heap->slot_size;
    HEAP_CU(cu->cuMemMap((CUdeviceptr)heap->base, heap->size, 0, handle, 0), "cuMemMap");
    int rc = heap_device_set_access(heap, heap->base);
    if (rc != 0) return rc;
    int fd = -1;
    HEAP_CU(cu->cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            "exporting the device heap as a file descriptor");
    heap->fd = fd;
    return 0;
}

int gshmemi_heap_device_create(const struct gshmemi_env *env, int device, int local_rank, int local_nranks,
                               struct gshmemi_heap *heap)
{
    memset(heap, 0, sizeof(*heap));
    heap->fd = -1;
    heap->kind = GSHMEMI_HEAP_KIND_DEVICE;
    heap->device = device;
    heap->local_nranks = local_nranks;
    char why[256];
    if (!gshmemi_cuda_driver(why, sizeof(why))) {
        GSHMEMI_ERROR(HEAP, "device heap: %s", why);
        return GSHMEMX_ERR_CUDA;
    }
    struct cudaDeviceProp props;
    if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&props, device) != cudaSuccess) {
        GSHMEMI_ERROR(HEAP, "device heap: cannot use GPU %d: %s", device, cudaGetErrorString(cudaGetLastError()));
        return GSHMEMX_ERR_CUDA;
    }
    memcpy(heap->uuid, props.uuid.bytes, sizeof(heap->uuid));
    cudaError_t serr = cudaStreamCreateWithFlags((cudaStream_t *)&heap->stream, cudaStreamNonBlocking);
    if (serr != cudaSuccess) {
        heap->stream = NULL;
        GSHMEMI_ERROR(HEAP, "device heap: creating its stream on GPU %d failed: %s", device, cudaGetErrorString(serr));
        return GSHMEMX_ERR_CUDA;
    }
    int vmm = 0, fd_ok = 0;
    heap_driver()->cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device);
    heap_driver()->cuDeviceGetAttribute(&fd_ok, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                                        device);
    if (!vmm || !fd_ok) {
        GSHMEMI_WARN(HEAP, "device heap: GPU %d (%s) lacks %s", device, props.name, /* auto falls back */
                      !vmm ? "virtual memory management" : "POSIX fd export of VMM memory");
        gshmemi_heap_device_destroy(heap);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    int rc = heap_device_allocate(env, heap, local_rank);
    if (rc != 0) {
        gshmemi_heap_device_destroy(heap);
        return rc;
    }
    GSHMEMI_INFO(HEAP, "device heap: %zu bytes on GPU %d (%s) at %p, granularity %zu", heap->size, device,
                 props.name, heap->base, heap->page_size);
    return 0;
}

void *gshmemi_heap_device_map_peer(struct gshmemi_heap *heap, int fd, int local_index)
{
    const struct gshmemi_cuda_driver *cu = heap_driver();
    CUmemGenericAllocationHandle handle;
    CUresult rc = cu->cuMemImportFromShareableHandle(&handle, (void *)(uintptr_t)fd,
                                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (rc != CUDA_SUCCESS) {
        GSHMEMI_ERROR(HEAP, "importing node-local peer %d's device heap failed: %s", local_index,
                      gshmemi_cuda_driver_error(rc));
        return NULL;
    }
    char *base = heap->slots + (size_t)local_index * heap->slot_size;
    rc = cu->cuMemMap((CUdeviceptr)base, heap->size, 0, handle, 0);
    cu->cuMemRelease(handle); /* the mapping keeps the memory alive */
    if (rc != CUDA_SUCCESS) {
        GSHMEMI_ERROR(HEAP, "mapping node-local peer %d's device heap failed: %s", local_index,
                      gshmemi_cuda_driver_error(rc));
        return NULL;
    }
    if (heap_device_set_access(heap, base) != 0) {
        cu->cuMemUnmap((CUdeviceptr)base, heap->size);
        return NULL;
    }
    return base;
}

int gshmemi_heap_device_can_reach(const struct gshmemi_heap *heap, const unsigned char uuid[16], char *why,
                                  size_t whylen)
{
    if (memcmp(uuid, heap->uuid, sizeof(heap->uuid)) == 0) return 1;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return 1;
    for (int dev = 0; dev < count; dev++) {
        struct cudaDeviceProp props;
        if (cudaGetDeviceProperties(&props, dev) != cudaSuccess || memcmp(props.uuid.bytes, uuid, 16) != 0) continue;
        int ok = 0;
        if (cudaDeviceCanAccessPeer(&ok, heap->device, dev) == cudaSuccess && ok) return 1;
        snprintf(why, whylen, "GPU %d cannot access GPU %d (%s) as a peer: no NVLink or PCIe peer-to-peer path",
                 heap->device, dev, props.name);
        return 0;
    }
    return 1;
}

void gshmemi_heap_device_unmap_peer(struct gshmemi_heap *heap, void *base)
{
    heap_driver()->cuMemUnmap((CUdeviceptr)base, heap->size);
}

void gshmemi_heap_device_destroy(struct gshmemi_heap *heap)
{
    const struct gshmemi_cuda_driver *cu = heap_driver();
    if (heap->fd >= 0) close(heap->fd);
    heap->fd = -1;
    if (cu && heap->base && heap->handle) cu->cuMemUnmap((CUdeviceptr)heap->base, heap->size);
    if (cu && heap->handle) cu->cuMemRelease(heap->handle);
    if (cu && heap->slots) cu->cuMemAddressFree((CUdeviceptr)heap->slots, heap->slot_size * (size_t)heap->local_nranks);
    if (heap->stream) cudaStreamDestroy((cudaStream_t)heap->stream);
    heap->stream = NULL;
    heap->base = NULL;
    heap->slots = NULL;
    heap->handle = 0;
}

/* calloc's clear and realloc's copy run on the heap's own non-blocking stream and wait
 * for it alone: the legacy stream (cudaMemset, cudaMemcpy) would wait for the user's
 * kernels, which may be waiting for a peer that is itself in this call's barrier, and a
 * device-to-device cudaMemcpy returns before the copy ends. The calling thread may be
 * one gshmem has not seen: make the heap's GPU current first, and its own again after. */
static int heap_device_run(struct gshmemi_heap *heap, cudaError_t err, int caller_device, const char *what,
                           size_t len)
{
    if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)heap->stream);
    if (caller_device >= 0 && caller_device != heap->device) cudaSetDevice(caller_device); /* the thread's own */
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(HEAP, "%s %zu bytes of the device heap on GPU %d failed: %s", what, len, heap->device,
                  cudaGetErrorString(err));
    return GSHMEMX_ERR_CUDA;
}

int gshmemi_heap_device_memset(struct gshmemi_heap *heap, size_t offset, int value, size_t len)
{
    int caller;
    cudaError_t err = gshmemi_cuda_bind(heap->device, &caller);
    if (err == cudaSuccess)
        err = cudaMemsetAsync((char *)heap->base + offset, value, len, (cudaStream_t)heap->stream);
    return heap_device_run(heap, err, caller, "clearing", len);
}

int gshmemi_heap_device_memcpy(struct gshmemi_heap *heap, size_t dst_offset, size_t src_offset, size_t len)
{
    char *base = heap->base;
    int caller;
    cudaError_t err = gshmemi_cuda_bind(heap->device, &caller);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(base + dst_offset, base + src_offset, len, cudaMemcpyDeviceToDevice,
                              (cudaStream_t)heap->stream);
    return heap_device_run(heap, err, caller, "copying", len);
}
#else
int gshmemi_heap_device_can_reach(const struct gshmemi_heap *heap, const unsigned char uuid[16], char *why,
                                  size_t whylen)
{
    (void)heap, (void)uuid, (void)why, (void)whylen;
    return 1;
}

int gshmemi_heap_device_memset(struct gshmemi_heap *heap, size_t offset, int value, size_t len)
{
    (void)heap, (void)offset, (void)value, (void)len;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_heap_device_memcpy(struct gshmemi_heap *heap, size_t dst_offset, size_t src_offset, size_t len)
{
    (void)heap, (void)dst_offset, (void)src_offset, (void)len;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

int gshmemi_heap_device_create(const struct gshmemi_env *env, int device, int local_rank, int local_nranks,
                               struct gshmemi_heap *heap)
{
    (void)env, (void)device, (void)local_rank, (void)local_nranks;
    memset(heap, 0, sizeof(*heap));
    heap->fd = -1;
    GSHMEMI_ERROR(HEAP, "device heap: this build has no CUDA support");
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

void *gshmemi_heap_device_map_peer(struct gshmemi_heap *heap, int fd, int local_index)
{
    (void)heap, (void)fd, (void)local_index;
    return NULL;
}

void gshmemi_heap_device_unmap_peer(struct gshmemi_heap *heap, void *base)
{
    (void)heap, (void)base;
}

void gshmemi_heap_device_destroy(struct gshmemi_heap *heap)
{
    heap->base = NULL;
}
#endif
