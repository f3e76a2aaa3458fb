/*
 * Re-initialization: init, exchange data, finalize, several times in one process
 * (OpenSHMEM 1.5: the library may be started again after its last finalize). It works
 * where the bootstrap takes a PE twice (PMIx, one PE alone); under gshmemrun init
 * refuses the second start and says why (mp_reinit_gshmemrun_refused).
 *
 * usage: mp_reinit [rounds]
 */
#include "mp_check.h"

#define N 257

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    for (int round = 0; round < rounds; round++) {
        CHECK(!gshmem_query_initialized(), "round %d: initialized before init", round);
        gshmem_init();
        int me = gshmem_my_pe(), npes = gshmem_n_pes();
        int to = (me + 1) % npes, from = (me + npes - 1) % npes;
        /* A different size each round, so the allocator's state from the last one shows. */
        long *dst = gshmem_calloc((size_t)(N + round), sizeof(long));
        long *src = malloc((size_t)(N + round) * sizeof(long));
        CHECK(dst && src, "round %d: allocation failed", round);
        for (int i = 0; i < N + round; i++) {
            CHECK(dst[i] == 0, "round %d: calloc gave dst[%d] = %ld", round, i, dst[i]);
            src[i] = (long)round * 1000000 + me * 1000 + i;
        }
        gshmem_barrier_all();
        gshmem_long_put(dst, src, (size_t)(N + round - 1), to); /* the last element stays 0 */
        gshmem_barrier_all();
        for (int i = 0; i < N + round - 1; i++)
            CHECK(dst[i] == (long)round * 1000000 + from * 1000 + i, "round %d: dst[%d] = %ld from PE %d", round, i,
                  dst[i], from);
        CHECK(dst[N + round - 1] == 0, "round %d: the element past the put is %ld", round, dst[N + round - 1]);
        gshmem_barrier_all();
        gshmem_free(dst);
        free(src);
        if (me == 0) printf("mp_reinit: round %d of %d, %d PEs OK\n", round + 1, rounds, npes);
        gshmem_finalize();
        CHECK(!gshmem_query_initialized(), "round %d: initialized after finalize", round);
    }
    return 0;
}
