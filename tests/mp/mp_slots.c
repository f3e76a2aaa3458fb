/*
 * Requests that await answers, from many threads at once with few slots for them
 * (GSHMEM_THREAD_MULTIPLE; ctest runs it over tcp with GSHMEM_TCP_REQUESTS=16): every
 * thread of every PE puts a word to each other PE and quiets (a quiet takes a slot per
 * peer for its ACKs), gets 3 MiB + 1 byte (a get keeps up to 8 chunk requests in
 * flight) and fetch-adds. A thread that waited for a free slot while holding slots of
 * its own, whose answers had come but which only it could free, could wait for ever
 * with every other holder doing the same (quiets asked their peers one after another,
 * gets filled their window).
 *
 * Checked: every get against its owner's pattern, every fetched value in range and no
 * two alike, and at the end each word holds its writer's last value and each counter
 * the sum. argv[1]: rounds (default ROUNDS).
 */
#include "mp_check.h"

#include <pthread.h>

#define THREADS 10
#define ROUNDS 60
#define GET_BYTES ((size_t)(3u << 20) + 1)

static int me, npes;
static uint64_t rounds;
static uint64_t *g_words;   /* symmetric: npes * THREADS words, [writer * THREADS + thread] */
static uint64_t *g_counter; /* symmetric: fetch-adds from the previous PE's threads */
static unsigned char *g_pub; /* symmetric: GET_BYTES of this PE's pattern */

static uint64_t word_value(int writer, int thread, uint64_t round, int target)
{
    return mp_mix((uint64_t)writer, (uint64_t)thread, round, (uint64_t)target);
}

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg, next = (me + 1) % npes;
    unsigned char *got = malloc(GET_BYTES);
    uint64_t *fetched = malloc(sizeof(uint64_t) * rounds);
    CHECK(got && fetched, "PE %d thread %d: malloc", me, t);
    char what[128];
    for (uint64_t r = 0; r < rounds; r++) {
        for (int p = 0; p < npes; p++) {
            if (p == me) continue;
            uint64_t v = word_value(me, t, r, p);
            gshmem_uint64_put(g_words + me * THREADS + t, &v, 1, p);
        }
        gshmem_quiet();
        if (r % 3 == (uint64_t)t % 3) {
            mp_poison(got, GET_BYTES);
            gshmem_getmem(got, g_pub, GET_BYTES, next);
            snprintf(what, sizeof what, "round %llu: thread %d of PE %d got %zu bytes from PE %d",
                     (unsigned long long)r, t, me, GET_BYTES, next);
            CHECK_BYTES(got, GET_BYTES, next, 0, 5, what);
        }
        fetched[r] = gshmem_uint64_atomic_fetch_add(g_counter, 1, next);
        CHECK(fetched[r] < rounds * THREADS, "thread %d of PE %d: fetch-add on PE %d returned %llu, beyond %llu", t,
              me, next, (unsigned long long)fetched[r], (unsigned long long)(rounds * THREADS));
        for (uint64_t k = 0; k < r; k++)
            CHECK(fetched[k] != fetched[r], "thread %d of PE %d: fetch-adds %llu and %llu on PE %d both returned %llu",
                  t, me, (unsigned long long)k, (unsigned long long)r, next, (unsigned long long)fetched[r]);
    }
    free(fetched);
    free(got);
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : ROUNDS;
    mp_init_thread_multiple();
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    g_words = gshmem_calloc((size_t)npes * THREADS, sizeof(uint64_t));
    g_counter = gshmem_calloc(1, sizeof(uint64_t));
    g_pub = gshmem_malloc(GET_BYTES);
    CHECK(g_words && g_counter && g_pub, "PE %d: symmetric allocation failed", me);
    mp_fill_bytes(g_pub, GET_BYTES, me, 0, 5);
    gshmem_barrier_all();
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    gshmem_barrier_all();
    for (int w = 0; w < npes; w++)
        for (int t = 0; t < THREADS && w != me; t++)
            CHECK(g_words[w * THREADS + t] == word_value(w, t, rounds - 1, me),
                  "PE %d: the word of PE %d's thread %d is 0x%llx, want its last round's 0x%llx", me, w, t,
                  (unsigned long long)g_words[w * THREADS + t], (unsigned long long)word_value(w, t, rounds - 1, me));
    CHECK(*g_counter == rounds * THREADS, "PE %d: counter %llu after %llu fetch-adds", me,
          (unsigned long long)*g_counter, (unsigned long long)(rounds * THREADS));
    if (me == 0)
        printf("mp_slots: %d PEs, %d threads each, %llu rounds of puts + quiet, gets and fetch-adds: ok\n", npes,
               THREADS, (unsigned long long)rounds);
    gshmem_finalize();
    return 0;
}
