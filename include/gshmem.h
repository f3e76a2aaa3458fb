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

#if defined(__CUDACC__)
#include <gshmem/device.cuh>
#endif

#endif /* GSHMEM_H */
