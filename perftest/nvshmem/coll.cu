/* nvshmem-perf-gpu-coll: perftest/gpu/coll.cu built against NVSHMEM (the same kernels
 * and timing; names mapped by nvshmem_api.cuh). Built and run only by
 * perftest/gpu/run.sh --nvshmem on a GPU machine. */
#define GPERF_NVSHMEM 1
#include "../gpu/coll.cu"
