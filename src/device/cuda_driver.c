/* Driver entry points through the runtime: no link-time dependency on libcuda. */
#include "device/cuda_driver.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct gshmemi_cuda_driver driver_table;
static int driver_state; /* 0 unknown, 1 loaded, -1 failed */
static char driver_why[256];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void driver_load(void)
{
    /* 12000: the ABI of each entry point as of CUDA 12.0, which has all of them. */
#define GSHMEMI_CUDA_DRIVER_LOAD(name)                                                                   \
    {                                                                                                    \
        enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;                 \
        void *fn = NULL;                                                                                 \
        cudaError_t err = cudaGetDriverEntryPointByVersion(#name, &fn, 12000, cudaEnableDefault, &found); \
        if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) {                         \
            snprintf(driver_why, sizeof(driver_why), "driver entry point %s unavailable: %s", #name,     \
                     err != cudaSuccess ? cudaGetErrorString(err) : "symbol not found (driver too old?)"); \
            driver_state = -1;                                                                           \
            return;                                                                                      \
        }                                                                                                \
        memcpy(&driver_table.name, &fn, sizeof(fn));                                                     \
    }
    GSHMEMI_CUDA_DRIVER_TABLE(GSHMEMI_CUDA_DRIVER_LOAD)
#undef GSHMEMI_CUDA_DRIVER_LOAD
    driver_state = 1;
}

const struct gshmemi_cuda_driver *gshmemi_cuda_driver(char *why, size_t whylen)
{
    pthread_once(&driver_once, driver_load);
    if (driver_state == 1) return &driver_table;
    if (why) snprintf(why, whylen, "%s", driver_why);
    return NULL;
}

const char *gshmemi_cuda_driver_error(CUresult rc)
{
    static __thread char text[160];
    const char *desc = NULL;
    if (driver_state == 1) driver_table.cuGetErrorString(rc, &desc);
    snprintf(text, sizeof(text), "CUresult %d (%s)", (int)rc, desc ? desc : "unknown");
    return text;
}

int gshmemi_cuda_lazy_loading(void)
{
    const struct gshmemi_cuda_driver *cu = gshmemi_cuda_driver(NULL, 0);
    CUmoduleLoadingMode mode;
    return cu && cu->cuModuleGetLoadingMode(&mode) == CUDA_SUCCESS && mode == CU_MODULE_LAZY_LOADING;
}
