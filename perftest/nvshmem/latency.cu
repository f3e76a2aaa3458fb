/* nvshmem-perf-gpu-latency: perftest/gpu/latency.cu built against NVSHMEM (the same
 * kernels; names mapped by nvshmem_api.cuh). Built and run only by perftest/gpu/run.sh
 * --nvshmem on a GPU machine. */
#define GPERF_NVSHMEM 1
#include "../gpu/latency.cu"
