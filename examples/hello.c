/*
 * hello: every PE says hello, then writes its number into its right neighbour's
 * symmetric variable and checks what its left neighbour wrote.
 *
 *   gshmemrun -n 4 ./hello
 */
#include <gshmem.h>

#include <stdio.h>

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe();
    int npes = gshmem_n_pes();
    printf("Hello from PE %d of %d\n", me, npes);

    /* Symmetric: the same address names this variable on every PE. */
    int *received = gshmem_malloc(sizeof(int));
    if (!received) gshmem_global_exit(1);
    *received = -1;
    gshmem_barrier_all(); /* everyone is initialised before anyone writes */

    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    gshmem_int_p(received, me, right);
    gshmem_barrier_all(); /* completes the write and waits for everyone else's */

    if (*received != left) {
        fprintf(stderr, "PE %d: received %d from the left, expected %d\n", me, *received, left);
        gshmem_global_exit(1);
    }
    gshmem_free(received);
    gshmem_finalize();
    return 0;
}
