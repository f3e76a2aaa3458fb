/*
 * The CUDA driver API, reached through the statically linked runtime
 * (cudaGetDriverEntryPointByVersion), so libgshmem never links libcuda and a
 * machine without the driver is a fact found at init, not a loader error.
 * Only compiled in CUDA builds.
 */
#ifndef GSHMEMI_CUDA_DRIVER_H
#define GSHMEMI_CUDA_DRIVER_H

#include <cuda.h>

/* X(name): every driver entry point gshmem uses. */
#define GSHMEMI_CUDA_DRIVER_TABLE(X)                                                              \
    X(cuGetErrorString) X(cuDeviceGet) X(cuDeviceGetAttribute) X(cuMemGetAllocationGranularity)  \
    X(cuMemCreate) X(cuMemRelease) X(cuMemExportToShareableHandle) X(cuMemImportFromShareableHandle) \
    X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess)         \
    X(cuModuleGetLoadingMode) X(cuMemGetHandleForAddressRange)

struct gshmemi_cuda_driver {
#define GSHMEMI_CUDA_DRIVER_FIELD(name) __typeof__(&name) name;
    GSHMEMI_CUDA_DRIVER_TABLE(GSHMEMI_CUDA_DRIVER_FIELD)
#undef GSHMEMI_CUDA_DRIVER_FIELD
};

/* Resolves every entry point once; NULL with the reason in why when the driver is
 * missing or too old. */
const struct gshmemi_cuda_driver *gshmemi_cuda_driver(char *why, size_t whylen);

/* 1 when CUDA loads kernels lazily (at their first launch) in this process, 0 when
 * eagerly or unknown. */
int gshmemi_cuda_lazy_loading(void);

/* "cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" style text. */
const char *gshmemi_cuda_driver_error(CUresult rc);

#endif
