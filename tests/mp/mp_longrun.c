/*
 * A long run for failure tests: for SECONDS (default 60), rounds of puts to every other PE
 * (a ring shift by 1 .. n_pes - 1, so node-local and remote peers both) followed by
 * barrier_all and a check of every block received. PE 0 decides when to stop and tells
 * the others through a flag put before the barrier. Each PE prints its progress about once
 * a second, so a test can see that the job is under way before it kills part of it.
 *
 * usage: mp_longrun [SECONDS]
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <time.h>

#define BLOCK 4096

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    unsigned char *src = malloc(BLOCK);
    unsigned char *dst = gshmem_malloc((size_t)n * BLOCK); /* block k: from the PE k before */
    int *stop = gshmem_calloc(1, sizeof(int));
    CHECK(src && dst && stop, "allocation failed");
    gshmem_barrier_all();
    double start = now_s(), next_report = start;
    long round = 0;
    for (; !*stop; round++) {
        mp_poison(dst, (size_t)n * BLOCK);
        gshmem_barrier_all(); /* every PE has poisoned before anyone writes */
        for (int k = 1; k < n; k++) {
            int to = (me + k) % n;
            mp_fill_bytes(src, BLOCK, me, to, (uint64_t)round);
            gshmem_putmem(dst + (size_t)k * BLOCK, src, BLOCK, to);
        }
        if (me == 0 && now_s() - start >= seconds)
            for (int pe = 0; pe < n; pe++) gshmem_int_p(stop, 1, pe);
        gshmem_barrier_all();
        for (int k = 1; k < n; k++) {
            int from = (me - k + n) % n;
            CHECK_BYTES(dst + (size_t)k * BLOCK, BLOCK, from, me, (uint64_t)round, "ring block");
        }
        CHECK_POISON(dst, BLOCK, "own block");
        if (now_s() >= next_report) {
            printf("mp_longrun: PE %d round %ld (%.1f s)\n", me, round, now_s() - start);
            fflush(stdout);
            next_report += 1.0;
        }
    }
    gshmem_barrier_all();
    printf("mp_longrun: PE %d done after %ld rounds (%.1f s)\n", me, round, now_s() - start);
    gshmem_free(stop);
    gshmem_free(dst);
    free(src);
    gshmem_finalize();
    return 0;
}
