/*
 * barrier_all and sync_all in loops, with PEs arriving late in turn: no PE leaves
 * a barrier before every PE has entered it, and barrier_all (or quiet + sync_all)
 * makes every earlier put and AMO visible everywhere.
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <time.h>

#define ROUNDS 120

static uint64_t *g_slots; /* symmetric: one slot per PE */
static uint64_t *g_count; /* symmetric counter, used on PE 0 */
static int g_me, g_npes;

/* The PE whose turn it is arrives late (a few hundred microseconds). */
static void maybe_late(int round)
{
    if (round % g_npes == g_me && round % 3 == 0) {
        struct timespec ts = {0, 300 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void check_slots(int round, const char *what)
{
    for (int pe = 0; pe < g_npes; pe++) {
        uint64_t want = mp_mix((uint64_t)pe, (uint64_t)round, 0, 0);
        CHECK(g_slots[pe] == want, "%s round %d: slot of pe %d is 0x%llx, want 0x%llx", what, round, pe,
              (unsigned long long)g_slots[pe], (unsigned long long)want);
    }
}

static void barrier_loop(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t mine = mp_mix((uint64_t)g_me, (uint64_t)r, 0, 0);
        maybe_late(r);
        /* blocking puts and a non-fetching AMO, then only barrier_all */
        for (int s = 0; s < g_npes; s++) gshmem_putmem(&g_slots[g_me], &mine, sizeof mine, (g_me + s) % g_npes);
        gshmem_uint64_atomic_inc(g_count, 0);
        gshmem_barrier_all();
        check_slots(r, "barrier_all");
        CHECK_EQ(gshmem_uint64_atomic_fetch(g_count, 0), (uint64_t)g_npes * (uint64_t)(r + 1));
        gshmem_barrier_all(); /* nobody writes the slots of the next round before all have checked */
    }
}

static void sync_loop(void)
{
    gshmem_barrier_all();
    if (g_me == 0) gshmem_uint64_atomic_set(g_count, 0, 0);
    gshmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t mine = mp_mix((uint64_t)g_me, (uint64_t)r, 0, 0);
        maybe_late(r + 1);
        for (int s = 0; s < g_npes; s++)
            gshmem_putmem_nbi(&g_slots[g_me], &mine, sizeof mine, (g_me + s) % g_npes);
        gshmem_uint64_atomic_add(g_count, 2, 0);
        gshmem_quiet();
        gshmem_sync_all();
        check_slots(r, "quiet + sync_all");
        CHECK_EQ(gshmem_uint64_atomic_fetch(g_count, 0), 2 * (uint64_t)g_npes * (uint64_t)(r + 1));
        gshmem_sync_all();
    }
}

/* Plain barrier and sync loops with nothing else in them. */
static void bare_loops(void)
{
    for (int r = 0; r < 4 * ROUNDS; r++) {
        if (r % 2)
            gshmem_sync_all();
        else
            gshmem_barrier_all();
    }
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    g_slots = gshmem_calloc((size_t)g_npes, sizeof(uint64_t));
    g_count = gshmem_calloc(1, sizeof(uint64_t));
    CHECK(g_slots && g_count, "symmetric allocation failed");
    CHECK_EQ(*g_count, 0);
    gshmem_barrier_all();

    barrier_loop();
    sync_loop();
    bare_loops();

    gshmem_barrier_all();
    gshmem_free(g_count);
    gshmem_free(g_slots);
    if (g_me == 0) printf("mp_sync: %d PEs OK\n", g_npes);
    gshmem_finalize();
    return 0;
}
