/* Collective launch: a cooperative launch, so that device-side gshmem_barrier_all can
 * synchronize the whole grid. Lives in the device library because the kernel belongs
 * to the application's CUDA runtime. */
#include <gshmem.h>

#include <cuda_runtime.h>
#include <stdio.h>

extern "C" int gshmemx_collective_launch_query_gridsize(const void *func, dim3 block, void **args, size_t shmem,
                                                        int *gridsize)
{
    (void)args;
    int device = 0, per_sm = 0, sms = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)(block.x * block.y * block.z), shmem);
    if (err != cudaSuccess) return GSHMEMX_ERR_CUDA;
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
    if (blocks > (unsigned)most) {
        fprintf(stderr,
                "gshmemx_collective_launch: PE %d: a grid of %u blocks of %u threads cannot be resident at once "
                "(at most %d here); device barriers in it would deadlock\n",
                gshmem_my_pe(), blocks, block.x * block.y * block.z, most);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    cudaError_t err = cudaLaunchCooperativeKernel(func, grid, block, args, shmem, stream);
    if (err != cudaSuccess) {
        fprintf(stderr, "gshmemx_collective_launch: PE %d: %s\n", gshmem_my_pe(), cudaGetErrorString(err));
        return GSHMEMX_ERR_CUDA;
    }
    return GSHMEMX_SUCCESS;
}
