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

#endif
