/* A CUDA user program built against the installed gshmem: each PE's kernel writes its
 * PE number into its right neighbour's heap. Without a GPU it only checks the build. */
#include <gshmem.h>

#include <stdio.h>

__global__ void write_right(int *slot)
{
    int me = gshmem_my_pe();
    gshmem_int_p(slot, me, (me + 1) % gshmem_n_pes());
    gshmem_quiet();
}

int main(void)
{
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
        printf("consumer-device: built; no GPU here, not run\n");
        return 0;
    }
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes(), got = -1;
    int *slot = (int *)gshmem_malloc(sizeof(int));
    write_right<<<1, 1>>>(slot);
    cudaDeviceSynchronize();
    gshmem_barrier_all();
    cudaMemcpy(&got, slot, sizeof(got), cudaMemcpyDeviceToHost);
    printf("consumer-device: PE %d of %d %s\n", me, n, got == (me + n - 1) % n ? "ok" : "WRONG");
    gshmem_finalize();
    return got == (me + n - 1) % n ? 0 : 1;
}
