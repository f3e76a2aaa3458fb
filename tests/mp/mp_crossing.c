/*
 * Bulk transfers crossing in both directions at once, meant for the tcp transport with
 * small socket buffers (ctest runs it with GSHMEM_TCP_SOCKBUF=64K): each
 * PE gets several MiB from the next PE while that PE gets from its own next one, then
 * puts to the next PE while getting from it. Over tcp a get's answer is a train of
 * chunk frames written by the target's service thread, which cannot wait for the socket
 * to drain (it must go on reading); what does not fit waits in an answer queue. A
 * service thread that sat reading the rest of an incoming frame and did not write its
 * own queued answers meanwhile deadlocked with a peer doing the same (2 PEs getting
 * from each other, or a ring of 3), until GSHMEM_TIMEOUT blamed the peer.
 *
 * Every byte of every transfer is checked against a pattern of its owner, round and
 * destination, and the gets land in poisoned buffers. argv[1]: bytes per transfer
 * (default 4 MiB), argv[2]: rounds (default 4).
 */
#include "mp_check.h"

int main(int argc, char **argv)
{
    const size_t len = argc > 1 ? strtoull(argv[1], NULL, 0) : ((size_t)4 << 20);
    const int rounds = argc > 2 ? atoi(argv[2]) : 4;
    gshmem_init();
    const int me = gshmem_my_pe(), npes = gshmem_n_pes();
    const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    unsigned char *src = gshmem_malloc(len), *dst = gshmem_malloc(len);
    unsigned char *got = malloc(len);
    CHECK(src && dst && got, "PE %d: allocating 2 x %zu symmetric bytes and %zu private ones failed", me, len, len);
    char what[160];
    for (int r = 1; r <= rounds; r++) {
        /* Gets only: every PE reads the next one's source while its own is being read. */
        mp_fill_bytes(src, len, me, 0, (uint64_t)r);
        mp_poison(got, len);
        gshmem_barrier_all();
        gshmem_getmem(got, src, len, next);
        snprintf(what, sizeof what, "round %d: %zu bytes PE %d got from PE %d (every PE getting at once)", r, len, me,
                 next);
        CHECK_BYTES(got, len, next, 0, (uint64_t)r, what);
        gshmem_barrier_all(); /* our source is read by the previous PE until here */

        /* A put to the next PE and a get from it, crossing its put to us and its get. */
        mp_poison(dst, len);
        mp_poison(got, len);
        mp_fill_bytes(src, len, me, 1, (uint64_t)r);
        gshmem_barrier_all();
        unsigned char *out = malloc(len);
        CHECK(out != NULL, "PE %d: malloc(%zu)", me, len);
        mp_fill_bytes(out, len, me, next, (uint64_t)r);
        gshmem_putmem(dst, out, len, next);
        gshmem_getmem(got, src, len, next);
        free(out);
        snprintf(what, sizeof what, "round %d: %zu bytes PE %d got from PE %d while both put", r, len, me, next);
        CHECK_BYTES(got, len, next, 1, (uint64_t)r, what);
        gshmem_barrier_all(); /* quiet, then every put has landed */
        snprintf(what, sizeof what, "round %d: %zu bytes PE %d put into PE %d while both got", r, len, prev, me);
        CHECK_BYTES(dst, len, prev, me, (uint64_t)r, what);
        gshmem_barrier_all();
    }
    if (me == 0) printf("mp_crossing: %d PEs, %d rounds of %zu-byte gets and puts crossing: ok\n", npes, rounds, len);
    free(got);
    gshmem_free(dst);
    gshmem_free(src);
    gshmem_finalize();
    return 0;
}
