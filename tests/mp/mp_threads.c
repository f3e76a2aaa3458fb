/*
 * gshmem_quiet under GSHMEM_THREAD_MULTIPLE: a thread's quiet completes that thread's
 * puts even while another thread of the same PE is in a quiet of its own.
 *
 * The writer (PE 0) puts 1 MiB into the target's buffer (PE 1), quiets, and tells the
 * checker (PE 2) by an atomic set on another connection; the checker reads the buffer
 * from the target at once and checks every byte and the guards around it, then acks.
 * Meanwhile a second thread of the writer quiets: in each round it starts one quiet
 * after the writer's put and the writer starts its own 2 us after that, so the
 * second thread's quiet sees the put first and is still waiting for its ACK. A third
 * thread puts to the target's scratch area with a quiet after each put, and a fourth
 * fetch-adds a counter on the target and checks every value it gets back (a fetched
 * value was once read after its request slot was freed, when another thread could
 * already have taken it: TSan saw it in this test). Over tcp a quiet asks the
 * peers it has frames in flight with for an ACK; one that let another thread's QUIET
 * stand for its own (a flag cleared by the first quiet to see it) returned while the 1
 * MiB was still on its way, and the checker then read the previous round's bytes (the
 * GPU tests without peer mappings found it, where the proxy thread and the application
 * share the connections). With 2 PEs the target checks its own buffer: the same calls,
 * but the flag shares the data's connection, so only a smoke test.
 *
 * The checker sees stale bytes only when its get overtakes the last frame of the put
 * at the target: on a 2-core VM over loopback about one round in 250 did with that
 * quiet (the last MiB stale), so mp_threads_n3_tcp_long runs 600 rounds; with the
 * quiet fixed none fails. argv[1]: rounds (default ROUNDS).
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#define BULK (4u << 20)
#define GUARD 256
#define ROUNDS 100 /* the default; argv[1] sets it */
#define SCRATCH 64

static unsigned char *g_buf;   /* symmetric: GUARD + BULK + GUARD */
static uint64_t *g_scratch;    /* symmetric: SCRATCH words the third thread writes */
static uint64_t *g_flag, *g_ack;
static uint64_t *g_counter; /* symmetric: the fourth thread's fetch-adds */
static atomic_int g_stop;
static atomic_ulong g_quiets, g_puts, g_fetches;
static int g_target;

static void spin_us(double us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) * 1e-3 < us);
}

/* Between rounds: quiets as fast as it can. In round r: one quiet that starts after the
 * writer's put and is still waiting for the target's ACK when the writer's quiet starts. */
static atomic_ulong g_go, g_in_quiet, g_quiet_done;

static void *quiet_loop(void *arg)
{
    (void)arg;
    unsigned long done = 0;
    while (!atomic_load(&g_stop)) {
        unsigned long go = atomic_load(&g_go);
        if (go != done) atomic_store(&g_in_quiet, go);
        gshmem_quiet();
        atomic_fetch_add(&g_quiets, 1);
        if (go != done) atomic_store(&g_quiet_done, done = go);
    }
    return NULL;
}

static void *put_loop(void *arg)
{
    (void)arg;
    for (uint64_t k = 0; !atomic_load(&g_stop); k++) {
        uint64_t v = mp_mix(0, (uint64_t)g_target, k, 7);
        gshmem_uint64_put(g_scratch + k % SCRATCH, &v, 1, g_target);
        gshmem_quiet();
        atomic_fetch_add(&g_puts, 1);
    }
    return NULL;
}

/* Fetch-adds on the target with every fetched value checked: a fetching atomic must
 * return its own answer while the other threads take and free request slots. */
static void *fetch_loop(void *arg)
{
    (void)arg;
    for (uint64_t k = 0; !atomic_load(&g_stop); k++) {
        uint64_t got = gshmem_uint64_atomic_fetch_add(g_counter, 1, g_target);
        CHECK(got == k, "fetch-add %llu of PE 0's fourth thread on PE %d returned %llu", (unsigned long long)k,
              g_target, (unsigned long long)got);
        atomic_fetch_add(&g_fetches, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : ROUNDS;
    mp_init_thread_multiple();
    int me = gshmem_my_pe(), npes = gshmem_n_pes();
    const int writer = 0, target = 1, checker = npes >= 3 ? 2 : 1;
    g_target = target;
    g_buf = gshmem_malloc(GUARD + BULK + GUARD);
    g_scratch = gshmem_calloc(SCRATCH, sizeof(uint64_t));
    g_flag = gshmem_calloc(1, sizeof(uint64_t));
    g_ack = gshmem_calloc(1, sizeof(uint64_t));
    g_counter = gshmem_calloc(1, sizeof(uint64_t));
    CHECK(g_buf && g_scratch && g_flag && g_ack && g_counter, "PE %d: symmetric allocation failed", me);
    mp_poison(g_buf, GUARD + BULK + GUARD);
    unsigned char *src = malloc(BULK), *seen = malloc(GUARD + BULK + GUARD);
    CHECK(src && seen, "PE %d: malloc failed", me);
    gshmem_barrier_all();

    pthread_t helpers[3];
    if (me == writer) {
        CHECK(pthread_create(&helpers[0], NULL, quiet_loop, NULL) == 0, "pthread_create");
        CHECK(pthread_create(&helpers[1], NULL, put_loop, NULL) == 0, "pthread_create");
        CHECK(pthread_create(&helpers[2], NULL, fetch_loop, NULL) == 0, "pthread_create");
    }
    for (uint64_t r = 1; r <= rounds; r++) {
        if (me == writer) {
            mp_fill_bytes(src, BULK, writer, target, r);
            gshmem_putmem(g_buf + GUARD, src, BULK, target);
            atomic_store(&g_go, r); /* the second thread's quiet now starts and sees the put */
            while (atomic_load(&g_in_quiet) != r) sched_yield();
            spin_us(2);
            gshmem_quiet();
            gshmem_uint64_atomic_set(g_flag, r, checker);
            gshmem_uint64_wait_until(g_ack, GSHMEM_CMP_GE, r);
            while (atomic_load(&g_quiet_done) != r) sched_yield();
        }
        if (me == checker) {
            gshmem_uint64_wait_until(g_flag, GSHMEM_CMP_GE, r);
            if (checker == target) memcpy(seen, g_buf, GUARD + BULK + GUARD);
            else gshmem_getmem(seen, g_buf, GUARD + BULK + GUARD, target);
            char what[96];
            snprintf(what, sizeof(what), "round %llu: PE %d's buffer as PE %d reads it after PE %d's quiet",
                     (unsigned long long)r, target, me, writer);
            CHECK_BYTES(seen + GUARD, BULK, writer, target, r, what);
            size_t k = mp_find_unpoisoned(seen, GUARD);
            CHECK(k == GUARD, "%s: guard byte %zu before it is 0x%02x", what, k, seen[k]);
            k = mp_find_unpoisoned(seen + GUARD + BULK, GUARD);
            CHECK(k == GUARD, "%s: guard byte %zu after it is 0x%02x", what, k, seen[GUARD + BULK + k]);
            gshmem_uint64_atomic_set(g_ack, r, writer);
        }
    }
    if (me == writer) {
        atomic_store(&g_stop, 1);
        pthread_join(helpers[0], NULL);
        pthread_join(helpers[1], NULL);
        pthread_join(helpers[2], NULL);
        gshmem_uint64_atomic_set(g_flag, atomic_load(&g_puts), target); /* after the checks: its last use */
        gshmem_quiet();
    }
    gshmem_barrier_all();
    if (me == target) { /* each scratch word holds the third thread's last value for it */
        CHECK(*g_counter >= 1, "PE %d: no fetch-add of PE 0's fourth thread arrived", me);
        uint64_t puts = *g_flag;
        for (uint64_t i = 0; i < SCRATCH; i++) {
            uint64_t want = 0;
            if (i < puts) want = mp_mix(0, (uint64_t)target, puts - 1 - (puts - 1 - i) % SCRATCH, 7);
            CHECK(g_scratch[i] == want, "scratch word %llu after %llu puts of PE %d's third thread: 0x%llx, want 0x%llx",
                  (unsigned long long)i, (unsigned long long)puts, writer, (unsigned long long)g_scratch[i],
                  (unsigned long long)want);
        }
    }
    if (me == 0)
        printf("mp_threads: %d PEs, %llu rounds of %u bytes checked by PE %d; the writer's other threads made %lu "
               "quiets, %lu puts and %lu fetch-adds meanwhile\n",
               npes, (unsigned long long)rounds, BULK, checker, atomic_load(&g_quiets), atomic_load(&g_puts),
               atomic_load(&g_fetches));
    free(src);
    free(seen);
    gshmem_finalize();
    return 0;
}
