/* nvshmem-perf-gpu-alltoall: perftest/gpu/alltoall.cu built against NVSHMEM (the same
 * kernels and timing; names mapped by nvshmem_api.cuh; no in-place columns, NVSHMEM's
 * alltoall takes no dest == source). Built and run only by perftest/gpu/run.sh
 * --nvshmem on a GPU machine. */
#define GPERF_NVSHMEM 1
#include "../gpu/alltoall.cu"
