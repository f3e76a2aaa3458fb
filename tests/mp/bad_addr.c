/*
 * Bad input: putmem whose destination is a stack address, not a symmetric one. The
 * library must end the job with "outside the symmetric heap"; reaching the end is a
 * failure.
 */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    char not_symmetric[64];
    char source[8] = "abcdefg";
    int peer = (gshmem_my_pe() + 1) % gshmem_n_pes();
    gshmem_barrier_all();
    if (gshmem_my_pe() == 0) gshmem_putmem(not_symmetric, source, sizeof source, peer);
    gshmem_barrier_all();
    fprintf(stderr, "bad_addr: gshmem_putmem to a stack address (%p) was accepted\n", (void *)not_symmetric);
    gshmem_finalize();
    return 0;
}
