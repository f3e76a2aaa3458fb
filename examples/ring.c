/*
 * ring: a token travels LAPS times around the ring of PEs. Each hop adds one to it
 * and hands it on with a put-with-signal: the receiver waits on the signal only,
 * and the library guarantees that the token is there when the signal is.
 *
 *   gshmemrun -n 4 ./ring [LAPS]
 */
#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long laps = argc > 1 ? atol(argv[1]) : 10;
    gshmem_init();
    int me = gshmem_my_pe();
    int npes = gshmem_n_pes();
    int right = (me + 1) % npes;

    long *token = gshmem_malloc(sizeof(long));     /* the value travelling around */
    uint64_t *arrivals = gshmem_calloc(1, sizeof(uint64_t)); /* counts tokens received */
    if (!token || !arrivals) gshmem_global_exit(1);
    gshmem_barrier_all();

    long first = 1;
    if (me == 0) gshmem_long_put_signal(token, &first, 1, arrivals, 1, GSHMEM_SIGNAL_ADD, right);

    for (long lap = 0; lap < laps; lap++) {
        gshmem_signal_wait_until(arrivals, GSHMEM_CMP_GE, (uint64_t)lap + 1);
        long value = *token;
        /* PE k > 0 sees lap * npes + k; PE 0 sees the token back after a full lap. */
        long expected = me == 0 ? (lap + 1) * npes : lap * npes + me;
        if (value != expected) {
            fprintf(stderr, "PE %d, lap %ld: token is %ld, expected %ld\n", me, lap, value, expected);
            gshmem_global_exit(1);
        }
        if (me == 0 && lap == laps - 1) {
            printf("ring: the token went %ld laps around %d PEs and came back as %ld\n", laps, npes, value);
            break;
        }
        long next = value + 1;
        gshmem_long_put_signal(token, &next, 1, arrivals, 1, GSHMEM_SIGNAL_ADD, right);
    }

    gshmem_barrier_all();
    gshmem_free(arrivals);
    gshmem_free(token);
    gshmem_finalize();
    return 0;
}
