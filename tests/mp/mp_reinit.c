/*
 * Re-initialization: init, exchange data, finalize, several times in one process
 * (OpenSHMEM 1.5: the library may be started again after its last finalize). It works
 * where the bootstrap takes a PE twice (PMIx, one PE alone); under gshmemrun init
 * refuses the second start and says why (mp_reinit_gshmemrun_refused).
 *
 * At the end a forked child exits through exit(): it must not hang in what gshmem
 * left for the process's exit (the PMIx client's end, which has no progress thread in
 * the child).
 *
 * With "uid", a single PE starts each round with a fresh unique ID
 * (gshmemx_init_attr): a new root each time, so re-init works there too.
 *
 * usage: mp_reinit [rounds [uid]]
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 257

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    int uid = argc > 2 && strcmp(argv[2], "uid") == 0;
    for (int round = 0; round < rounds; round++) {
        CHECK(!gshmem_query_initialized(), "round %d: initialized before init", round);
        if (uid) {
            gshmemx_uniqueid_t id;
            gshmemx_init_attr_t attr;
            CHECK(gshmemx_get_uniqueid(&id) == 0, "round %d: gshmemx_get_uniqueid failed", round);
            CHECK(gshmemx_set_attr_uniqueid_args(0, 1, &id, &attr) == 0, "round %d: set_attr failed", round);
            int rc = gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr);
            CHECK(rc == 0, "round %d: gshmemx_init_attr with a fresh unique ID returned %d", round, rc);
        } else {
            gshmem_init();
        }
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
    pid_t child = fork();
    CHECK(child >= 0, "fork failed");
    if (child == 0) exit(0); /* runs the atexit handlers */
    int status = 0;
    for (int waited_ms = 0; waitpid(child, &status, WNOHANG) == 0; waited_ms += 10) {
        if (waited_ms >= 10000) {
            kill(child, SIGKILL);
            fprintf(stderr, "mp_reinit: a forked child hung in exit() for 10 s\n");
            return 1;
        }
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child ended with status %#x", status);
    return 0;
}
