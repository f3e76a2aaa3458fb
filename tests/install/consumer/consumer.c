/* A user program built against the installed gshmem: each PE writes to its right neighbour. */
#include <gshmem.h>

#include <stdio.h>

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    int *slot = gshmem_malloc(sizeof(int));
    *slot = -1;
    gshmem_barrier_all();
    gshmem_int_p(slot, 1000 + me, (me + 1) % n);
    gshmem_barrier_all();
    int ok = *slot == 1000 + (me + n - 1) % n;
    printf("consumer: PE %d of %d %s\n", me, n, ok ? "ok" : "WRONG");
    gshmem_free(slot);
    gshmem_finalize();
    return ok ? 0 : 1;
}
