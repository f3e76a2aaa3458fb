/*
 * Bad input: putmem to PE 7 from the last PE. The library must end the job with a
 * line naming the PE ("pe=7 ... out of range"); reaching the end is a failure.
 */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    char *dest = gshmem_malloc(64);
    char source[8] = "abcdefg";
    CHECK(dest != NULL, "gshmem_malloc");
    gshmem_barrier_all();
    if (gshmem_my_pe() == gshmem_n_pes() - 1) gshmem_putmem(dest, source, sizeof source, 7);
    gshmem_barrier_all();
    fprintf(stderr, "bad_pe: gshmem_putmem to pe=7 with %d PEs was accepted\n", gshmem_n_pes());
    gshmem_finalize();
    return 0;
}
