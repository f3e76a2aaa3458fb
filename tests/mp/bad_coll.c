/*
 * Bad collective calls that are reported and survived: every collective on
 * GSHMEM_TEAM_INVALID, a PE calling on a team it is not in, PE_root outside the team,
 * dest overlapping source where that is not allowed, alltoalls strides of 0. Every PE
 * passes the same bad arguments, each call must return nonzero, and a good broadcast
 * afterwards must still deliver. expect_fail.sh checks the error text.
 */
#include "mp_check.h"

#define N 64

static int g_me, g_npes;
static unsigned char *g_src, *g_dst; /* symmetric, 2 * N * n_pes bytes each */

static void expect_failed(int rc, const char *what)
{
    CHECK(rc != 0, "%s succeeded on PE %d", what, g_me);
    fprintf(stderr, "bad_coll: PE %d: %s returned %d (%s)\n", g_me, what, rc, gshmemx_status_name(rc));
}

static void on_invalid_team(gshmem_team_t team, const char *name)
{
    char what[96];
#define EXPECT_FAILED(call)                                              \
    do {                                                                 \
        snprintf(what, sizeof what, "%s on %s", #call, name);            \
        expect_failed(call, what);                                       \
    } while (0)
    EXPECT_FAILED(gshmem_broadcastmem(team, g_dst, g_src, N, 0));
    EXPECT_FAILED(gshmem_collectmem(team, g_dst, g_src, N));
    EXPECT_FAILED(gshmem_fcollectmem(team, g_dst, g_src, N));
    EXPECT_FAILED(gshmem_alltoallmem(team, g_dst, g_src, N));
    EXPECT_FAILED(gshmem_alltoallsmem(team, g_dst, g_src, 1, 1, N));
    EXPECT_FAILED(gshmem_int_broadcast(team, (int *)g_dst, (const int *)g_src, 4, 0));
    EXPECT_FAILED(gshmem_long_collect(team, (long *)g_dst, (const long *)g_src, 2));
    EXPECT_FAILED(gshmem_double_fcollect(team, (double *)g_dst, (const double *)g_src, 2));
    EXPECT_FAILED(gshmem_int64_alltoall(team, (int64_t *)g_dst, (const int64_t *)g_src, 1));
    EXPECT_FAILED(gshmem_float_alltoalls(team, (float *)g_dst, (const float *)g_src, 2, 1, 1));
    EXPECT_FAILED(gshmem_int_sum_reduce(team, (int *)g_dst, (const int *)g_src, 4));
    EXPECT_FAILED(gshmem_double_max_reduce(team, (double *)g_dst, (const double *)g_src, 4));
    EXPECT_FAILED(gshmem_uint64_xor_reduce(team, (uint64_t *)g_dst, (const uint64_t *)g_src, 4));
    EXPECT_FAILED(gshmem_team_sync(team));
    EXPECT_FAILED(gshmem_barrier(team));
#undef EXPECT_FAILED
}

/* PEs outside the evens call on the evens' handle (learned from PE 0); the evens do not. */
static void on_foreign_team(void)
{
    int *handle = gshmem_malloc(sizeof(int));
    CHECK(handle, "symmetric allocation failed");
    gshmem_team_t evens = GSHMEM_TEAM_INVALID;
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 2, (g_npes + 1) / 2, NULL, 0, &evens), 0);
    if (g_me == 0) *handle = evens;
    gshmem_barrier_all();
    if (g_me % 2) on_invalid_team(gshmem_int_g(handle, 0), "a team this PE is not in");
    gshmem_barrier_all();
    gshmem_free(handle);
    /* PE_root outside the evens, on the evens */
    if (evens != GSHMEM_TEAM_INVALID) {
        int n = gshmem_team_n_pes(evens);
        expect_failed(gshmem_int_broadcast(evens, (int *)g_dst, (const int *)g_src, 4, n),
                      "int_broadcast with PE_root = team size");
    }
    gshmem_team_destroy(evens);
}

static void bad_roots_and_buffers(void)
{
    expect_failed(gshmem_broadcastmem(GSHMEM_TEAM_WORLD, g_dst, g_src, N, g_npes), "broadcastmem PE_root = n_pes");
    expect_failed(gshmem_broadcastmem(GSHMEM_TEAM_WORLD, g_dst, g_src, N, -1), "broadcastmem PE_root = -1");
    expect_failed(gshmem_broadcastmem(GSHMEM_TEAM_WORLD, g_src, g_src, N, 0), "broadcastmem in place");
    expect_failed(gshmem_fcollectmem(GSHMEM_TEAM_WORLD, g_src + 1, g_src, N), "fcollectmem overlapping");
    expect_failed(gshmem_alltoallmem(GSHMEM_TEAM_WORLD, g_src + 1, g_src, N), "alltoallmem overlapping, not in place");
    expect_failed(gshmem_alltoallsmem(GSHMEM_TEAM_WORLD, g_dst, g_src, 0, 1, 4), "alltoallsmem dst stride 0");
}

/* After all that, a broadcast from the last PE still reaches everyone. */
static void still_works(void)
{
    for (int i = 0; i < N; i++) g_src[i] = (unsigned char)(g_me * 31 + i);
    memset(g_dst, MP_POISON, N);
    gshmem_barrier_all();
    CHECK_EQ(gshmem_broadcastmem(GSHMEM_TEAM_WORLD, g_dst, g_src, N, g_npes - 1), 0);
    for (int i = 0; i < N; i++) CHECK_EQ(g_dst[i], (unsigned char)((g_npes - 1) * 31 + i));
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes >= 2, "bad_coll needs 2 PEs or more, has %d", g_npes);
    g_src = gshmem_malloc(2 * N * (size_t)g_npes);
    g_dst = gshmem_malloc(2 * N * (size_t)g_npes);
    CHECK(g_src && g_dst, "symmetric allocation failed");
    on_invalid_team(GSHMEM_TEAM_INVALID, "GSHMEM_TEAM_INVALID");
    on_foreign_team();
    bad_roots_and_buffers();
    still_works();
    gshmem_barrier_all();
    if (g_me == 0) printf("bad_coll: %d PEs: every bad call failed and collectives still work\n", g_npes);
    gshmem_finalize();
    return 0;
}
