/* Whether this process can use a GPU. The CUDA runtime is linked statically and
 * reaches the driver at run time, so a missing driver is an answer, not a crash. */
#ifndef GSHMEMI_CUDA_PROBE_H
#define GSHMEMI_CUDA_PROBE_H

#include <stddef.h>

/* Number of usable GPUs (0 when none, the driver is missing, or the build has no CUDA);
 * why explains a zero. */
int gshmemi_cuda_probe(char *why, size_t whylen);
/* Whether this build contains CUDA support. */
int gshmemi_cuda_built(void);

/* How one GPU reaches another's memory. CUDA does not name the link, so it is inferred:
 * native peer atomics are offered over NVLink and not over PCIe. */
enum gshmemi_gpu_link {
    GSHMEMI_GPU_LINK_UNKNOWN, /* the query failed, or no CUDA in this build */
    GSHMEMI_GPU_LINK_NONE,    /* no peer access: PEs on these GPUs cannot map each other */
    GSHMEMI_GPU_LINK_PCIE,    /* peer access without native atomics */
    GSHMEMI_GPU_LINK_NVLINK   /* peer access with native atomics */
};
/* The link from GPU a to GPU b (CUDA ordinals, a != b). */
int gshmemi_gpu_link(int a, int b);

#endif
