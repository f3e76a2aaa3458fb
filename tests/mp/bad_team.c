/*
 * Bad team calls that are reported and survived: split arguments that differ between
 * PEs, an invalid parent, a bad stride, and (under GSHMEM_MAX_TEAMS=4) running out of
 * slots. Every call must return nonzero with GSHMEM_TEAM_INVALID; the program checks
 * the return codes, then that teams still work, and exits 0. expect_fail.sh checks
 * the error text.
 */
#include "mp_check.h"

static int g_me, g_npes;

static void expect_failed(int rc, gshmem_team_t h, const char *what)
{
    CHECK(rc != 0, "%s succeeded on PE %d", what, g_me);
    CHECK(h == GSHMEM_TEAM_INVALID, "%s left handle %d", what, (int)h);
    fprintf(stderr, "bad_team: PE %d: %s returned %d (%s)\n", g_me, what, rc, gshmemx_status_name(rc));
}

/* A team of the whole world works: a put and a team barrier. */
static void team_works(const char *after)
{
    static int *word;
    if (!word) word = gshmem_calloc(1, sizeof(int));
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, g_npes, NULL, 0, &h);
    CHECK(rc == 0 && h != GSHMEM_TEAM_INVALID, "split after %s: rc %d handle %d", after, rc, (int)h);
    gshmem_int_p(word, 1000 + g_me, (g_me + 1) % g_npes);
    CHECK_EQ(gshmem_barrier(h), 0);
    CHECK_EQ(*word, 1000 + (g_me + g_npes - 1) % g_npes);
    CHECK_EQ(gshmem_team_sync(h), 0);
    gshmem_team_destroy(h);
}

static void mismatched_splits(void)
{
    gshmem_team_t h = 5, x = 5, y = 5;
    /* Each PE's arguments are valid alone; PE 0's stride differs. */
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, g_me == 0 ? 2 : 1, 1, NULL, 0, &h);
    expect_failed(rc, h, "split_strided with PE 0's stride 2");
    team_works("a mismatched split_strided");
    rc = gshmem_team_split_2d(GSHMEM_TEAM_WORLD, g_me == 1 ? 2 : 1, NULL, 0, &x, NULL, 0, &y);
    expect_failed(rc, x, "split_2d with PE 1's xrange 2");
    CHECK_EQ(y, GSHMEM_TEAM_INVALID);
    team_works("a mismatched split_2d");
}

static void bad_arguments(void)
{
    gshmem_team_t h = 5;
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &h);
    expect_failed(rc, h, "split_strided of GSHMEM_TEAM_INVALID");
    h = 5;
    rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 0, g_npes, NULL, 0, &h);
    expect_failed(rc, h, "split_strided with stride 0");
    h = 5;
    rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 1, 1, g_npes, NULL, 0, &h);
    expect_failed(rc, h, "split_strided past the parent's end");
    team_works("bad split arguments");
}

/* Run under GSHMEM_MAX_TEAMS=4: one team fits beside the predefined three. */
static void out_of_slots(void)
{
    gshmem_team_t one = GSHMEM_TEAM_INVALID, two = 5;
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, g_npes, NULL, 0, &one), 0);
    int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, g_npes, NULL, 0, &two);
    expect_failed(rc, two, "a second split with GSHMEM_MAX_TEAMS=4");
    CHECK_EQ(gshmem_team_sync(one), 0);
    gshmem_team_destroy(one);
    team_works("running out of team slots");
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes >= 2, "bad_team needs 2 PEs or more, has %d", g_npes);
    mismatched_splits();
    bad_arguments();
    out_of_slots();
    gshmem_barrier_all();
    if (g_me == 0) printf("bad_team: %d PEs: every bad call failed and teams still work\n", g_npes);
    gshmem_finalize();
    return 0;
}
