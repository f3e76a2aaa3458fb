/* Collective launch: a cooperative launch, so that device-side gshmem_barrier_all can
 * synchronize the whole grid. Lives in the device library because the kernel belongs
 * to the application's CUDA runtime. */
#include <gshmem.h>

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" int gshmemi_device_gpu_sharers(void);

/* Blocks per SM times SMs. Under MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set, the SM
 * count is already this process's share; without it, every PE on the GPU would be told
 * the whole GPU, and two such grids waiting in one device barrier for each other could
 * never both be resident: the count is then divided among the PEs sharing the GPU. */
extern "C" int gshmemx_collective_launch_query_gridsize(const void *func, dim3 block, void **args, size_t shmem,
                                                        int *gridsize)
{
    (void)args;
    int device = 0, per_sm = 0, sms = 0;
    unsigned threads = block.x * block.y * block.z;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)threads, shmem);
    if (err != cudaSuccess) {
        fprintf(stderr, "gshmemx_collective_launch_query_gridsize: PE %d: occupancy of a block of %u threads with %zu "
                        "bytes of shared memory on GPU %d: %s\n",
                gshmem_my_pe(), threads, shmem, device, cudaGetErrorString(err));
        return GSHMEMX_ERR_CUDA;
    }
    int sharers = gshmemi_device_gpu_sharers();
    const char *share = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (sharers > 1 && (share == NULL || share[0] == '\0')) sms /= sharers;
    *gridsize = per_sm * sms;
    return GSHMEMX_SUCCESS;
}

extern "C" int gshmemx_collective_launch(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                         cudaStream_t stream)
{
    int most = 0;
    int rc = gshmemx_collective_launch_query_gridsize(func, block, args, shmem, &most);
    if (rc != GSHMEMX_SUCCESS) return rc;
    unsigned blocks = grid.x * grid.y * grid.z;
    if (most == 0) {
        fprintf(stderr,
                "gshmemx_collective_launch: PE %d: not one block of %u threads with %zu bytes of shared memory fits "
                "an SM (too many threads, registers or shared memory for this kernel)\n",
                gshmem_my_pe(), block.x * block.y * block.z, shmem);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (blocks > (unsigned)most) {
        fprintf(stderr,
                "gshmemx_collective_launch: PE %d: a grid of %u blocks of %u threads cannot be resident at once "
                "(at most %d here, for %d PE(s) on this GPU); device barriers in it would deadlock\n",
                gshmem_my_pe(), blocks, block.x * block.y * block.z, most, gshmemi_device_gpu_sharers());
        return GSHMEMX_ERR_INVALID_ARG;
    }
    cudaError_t err = cudaLaunchCooperativeKernel(func, grid, block, args, shmem, stream);
    if (err != cudaSuccess) {
        fprintf(stderr, "gshmemx_collective_launch: PE %d: %s\n", gshmem_my_pe(), cudaGetErrorString(err));
        return GSHMEMX_ERR_CUDA;
    }
    return GSHMEMX_SUCCESS;
}
