/*
 * Bad input: a remote object that is not symmetric, or not aligned. The library must
 * end the job naming the argument as the routine's signature does; reaching the end is
 * a failure. argv[1]: put (putmem to a stack address: "dest"), signal (signal_add on a
 * misaligned word: "sig_addr"), fetch (atomic_fetch from a stack address: "source"),
 * wait (wait_until on a stack variable: "ivars"; it once waited until GSHMEM_TIMEOUT).
 */
#include "mp_check.h"

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "put";
    gshmem_init();
    char not_symmetric[64] = {0};
    char source[8] = "abcdefg";
    uint64_t *words = gshmem_calloc(4, sizeof(uint64_t));
    CHECK(words != NULL, "gshmem_calloc");
    int peer = (gshmem_my_pe() + 1) % gshmem_n_pes();
    gshmem_barrier_all();
    if (gshmem_my_pe() == 0) {
        if (strcmp(what, "signal") == 0) gshmem_signal_add((uint64_t *)((char *)words + 4), 1, peer);
        else if (strcmp(what, "fetch") == 0) (void)gshmem_uint64_atomic_fetch((uint64_t *)not_symmetric, peer);
        else if (strcmp(what, "wait") == 0) gshmem_uint64_wait_until((uint64_t *)not_symmetric, GSHMEM_CMP_EQ, 1);
        else gshmem_putmem(not_symmetric, source, sizeof source, peer);
    }
    gshmem_barrier_all();
    fprintf(stderr, "bad_addr: the %s case (%p) was accepted\n", what, (void *)not_symmetric);
    gshmem_finalize();
    return 0;
}
