/*
 * gshmem: GPU-initiated one-sided communication in the OpenSHMEM tradition.
 * The one header applications include. Host API in gshmem/host.h; the device
 * API (CUDA kernels) is added by gshmem/device.cuh when compiled by nvcc.
 */
#ifndef GSHMEM_H
#define GSHMEM_H

#include <gshmem/types.h>
#include <gshmem/status.h>
#include <gshmem/host.h>
#include <gshmem/stream.h>
#include <gshmem/team.h>

/* OpenSHMEM's C11 type-generic names (gshmem_put, gshmem_atomic_fetch_add, ...): C only. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#include <gshmem/generic.h>
#endif

#if defined(__CUDACC__)
#include <gshmem/device.cuh>
#endif

#endif /* GSHMEM_H */
