/*
 * Teams: the predefined teams, queries and translate_pe (members, non-members, invalid
 * handles), split_strided shapes (offset, strides 2 and 3, a team of one, the whole
 * parent, a split of a split), split_2d grids, get_config, team barriers interleaved
 * over overlapping teams, disjoint teams splitting at once with a WORLD split right
 * after, slot reuse across many create/destroy cycles, running out of slots, and
 * invalid arguments that must leave the PE usable.
 *
 * Barriers are checked with counters: every member adds 1 to every member's counter of
 * the team's slot before barrier k, so after it a member's counter lies between
 * size * (k + 1) and size * (k + 2) - 1 (members may already have added for k + 1).
 * Needs GSHMEM_MAX_TEAMS >= 8 (five teams live at once); reads it to know when the table
 * is full (unset: the library's default, 32).
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <limits.h>

#include <stdlib.h>
#include <time.h>

#define MAX_SLOTS 64 /* GSHMEMI_TEAMS_LIMIT: handles are slots below it */

/* What this PE expects of a team: world PEs start + i * stride, i < size. */
struct team {
    gshmem_team_t h;
    int start, stride, size, index; /* index: this PE's number, -1 outside */
    uint64_t barriers;              /* barrier checks done on this handle */
    uint64_t base;                  /* counter value when the team was made */
};

static uint64_t *g_count;          /* symmetric: one counter per slot */
static uint64_t g_slot_total[MAX_SLOTS]; /* what this PE's counter of a slot reached */
static int g_me, g_npes, g_max_teams;
static struct team g_world; /* GSHMEM_TEAM_WORLD, counted like the others */

static struct team expect(int start, int stride, int size)
{
    struct team t = {GSHMEM_TEAM_INVALID, start, stride, size, -1, 0, 0};
    int d = g_me - start;
    if (d >= 0 && d % stride == 0 && d / stride < size) t.index = d / stride;
    return t;
}

/* Queries and translation, from this PE's view, against the expected shape. */
static void check_shape(const struct team *t, const char *what)
{
    if (t->index < 0) {
        CHECK(t->h == GSHMEM_TEAM_INVALID, "%s: PE %d is outside, got handle %d", what, g_me, (int)t->h);
        return;
    }
    CHECK(t->h > GSHMEMX_TEAM_NODE && t->h < MAX_SLOTS, "%s: handle %d", what, (int)t->h);
    CHECK_EQ(gshmem_team_my_pe(t->h), t->index);
    CHECK_EQ(gshmem_team_n_pes(t->h), t->size);
    for (int i = 0; i < t->size; i++) {
        int w = t->start + i * t->stride;
        CHECK(gshmem_team_translate_pe(t->h, i, GSHMEM_TEAM_WORLD) == w, "%s: member %d is not world PE %d",
              what, i, w);
        CHECK(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, w, t->h) == i, "%s: world PE %d is not member %d",
              what, w, i);
    }
    for (int w = 0; w < g_npes; w++) {
        int d = w - t->start;
        int in = d >= 0 && d % t->stride == 0 && d / t->stride < t->size;
        if (!in)
            CHECK(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, w, t->h) == -1, "%s: world PE %d is no member",
                  what, w);
    }
    CHECK_EQ(gshmem_team_translate_pe(t->h, -1, GSHMEM_TEAM_WORLD), -1);
    CHECK_EQ(gshmem_team_translate_pe(t->h, t->size, GSHMEM_TEAM_WORLD), -1);
    CHECK_EQ(gshmem_team_translate_pe(t->h, t->index, t->h), t->index);
}

static void adopt(struct team *t)
{
    if (t->index >= 0) t->base = g_slot_total[t->h];
}

/* One counted barrier on t (mode: 0 barrier, 1 quiet + team_sync, 2 quiet + sync). */
static void counted_barrier(struct team *t, int mode, const char *what)
{
    if (t->index < 0) return;
    for (int i = 0; i < t->size; i++) gshmem_uint64_atomic_add(&g_count[t->h], 1, t->start + i * t->stride);
    int rc;
    if (mode == 0) {
        rc = gshmem_barrier(t->h);
    } else {
        gshmem_quiet();
        rc = mode == 1 ? gshmem_team_sync(t->h) : gshmem_sync(t->h);
    }
    CHECK(rc == 0, "%s: barrier mode %d on team %d returned %d", what, mode, (int)t->h, rc);
    uint64_t v = gshmem_uint64_atomic_fetch(&g_count[t->h], g_me) - t->base;
    uint64_t lo = (uint64_t)t->size * (t->barriers + 1), hi = (uint64_t)t->size * (t->barriers + 2) - 1;
    CHECK(v >= lo && v <= hi, "%s: team %d (start %d stride %d size %d) barrier %llu: counter %llu outside [%llu, %llu]",
          what, (int)t->h, t->start, t->stride, t->size, (unsigned long long)t->barriers, (unsigned long long)v,
          (unsigned long long)lo, (unsigned long long)hi);
    t->barriers++;
}

/* Destroy, keeping the counter bookkeeping: after the destroy every add is in. */
static void drop(struct team *t)
{
    if (t->index >= 0) g_slot_total[t->h] += (uint64_t)t->size * t->barriers;
    gshmem_team_destroy(t->h);
    t->h = GSHMEM_TEAM_INVALID;
}

static struct team split(struct team *parent, int start, int stride, int size, const char *what)
{
    struct team t = expect(parent->start + start * parent->stride, parent->stride * stride, size);
    gshmem_team_t h = GSHMEM_TEAM_INVALID;
    int rc = 0;
    if (parent->index >= 0) { /* only the parent's PEs take part */
        h = 12345;
        rc = gshmem_team_split_strided(parent->h, start, stride, size, NULL, 0, &h);
    }
    CHECK(rc == 0, "%s: split_strided(%d, %d, %d) returned %d", what, start, stride, size, rc);
    t.h = h;
    check_shape(&t, what);
    adopt(&t);
    return t;
}

/* A predefined team against the members expected of it (see mp_team_of_members). */
static void check_predefined(gshmem_team_t h, const unsigned char *member, const char *what)
{
    int start, stride, size;
    mp_team_of_members(member, g_npes, g_me, &start, &stride, &size);
    struct team t = expect(start, stride, size);
    t.h = h;
    CHECK(t.index >= 0, "%s: PE %d is not in its own team", what, g_me);
    CHECK_EQ(gshmem_team_my_pe(h), t.index);
    CHECK_EQ(gshmem_team_n_pes(h), size);
    for (int w = 0; w < g_npes; w++) {
        int d = w - start, i = d >= 0 && d % stride == 0 && d / stride < size ? d / stride : -1;
        CHECK(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, w, h) == i, "%s: world PE %d is member %d, want %d",
              what, w, gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, w, h), i);
        if (i >= 0) CHECK(gshmem_team_translate_pe(h, i, GSHMEM_TEAM_WORLD) == w, "%s: member %d is not world PE %d",
                          what, i, w);
    }
    CHECK_EQ(gshmem_team_translate_pe(h, size, GSHMEM_TEAM_WORLD), -1);
    counted_barrier(&t, 0, what);
    counted_barrier(&t, 1, what);
    g_slot_total[h] += (uint64_t)t.size * t.barriers;
}

/*
 * NODE is the PEs of this PE's node; SHARED those it reaches by loads and stores: the same
 * PEs, or this PE alone under GSHMEM_DISABLE_P2P. On one machine both are every PE.
 */
static void predefined(void)
{
    CHECK_EQ(gshmem_team_my_pe(GSHMEM_TEAM_WORLD), g_me);
    CHECK_EQ(gshmem_team_n_pes(GSHMEM_TEAM_WORLD), g_npes);
    struct mp_layout l = mp_layout_create();
    check_predefined(GSHMEMX_TEAM_NODE, l.on_my_node, "GSHMEMX_TEAM_NODE");
    check_predefined(GSHMEM_TEAM_SHARED, l.load_store, "GSHMEM_TEAM_SHARED");
    for (int pe = 0; pe < g_npes; pe++)
        CHECK(l.load_store[pe] == (gshmem_ptr(g_count, pe) != NULL), "gshmem_ptr to PE %d is %p, want %s", pe,
              gshmem_ptr(g_count, pe), l.load_store[pe] ? "a mapping" : "NULL");
    mp_layout_destroy(&l);
    gshmem_team_t bad[] = {GSHMEM_TEAM_INVALID, -7, 5, MAX_SLOTS - 1, MAX_SLOTS, 1000};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK(gshmem_team_my_pe(bad[k]) == -1, "my_pe of team %d", (int)bad[k]);
        CHECK(gshmem_team_n_pes(bad[k]) == -1, "n_pes of team %d", (int)bad[k]);
        CHECK(gshmem_team_translate_pe(bad[k], 0, GSHMEM_TEAM_WORLD) == -1, "translate from team %d", (int)bad[k]);
        CHECK(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, 0, bad[k]) == -1, "translate to team %d", (int)bad[k]);
    }
    CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, g_npes, GSHMEM_TEAM_WORLD), -1);
    CHECK_EQ(gshmem_team_translate_pe(GSHMEM_TEAM_WORLD, -1, GSHMEM_TEAM_SHARED), -1);
}

/* Shapes of split_strided over WORLD, each with a nested split checked too. */
static void strided_shapes(void)
{
    const int n = g_npes;
    const int shapes[][3] = {
        {0, 1, n}, {1, 1, n - 1}, {0, 2, (n + 1) / 2}, {1, 2, n / 2}, {0, 3, (n + 2) / 3},
        {1, 3, (n + 1) / 3}, {n - 1, 1, 1}, {0, n + 4, 1}, {n / 2, 1, n - n / 2}, {0, n > 1 ? n - 1 : 1, n > 1 ? 2 : 1},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        if (shapes[s][2] < 1) continue;
        char what[64];
        snprintf(what, sizeof what, "split(%d, %d, %d)", shapes[s][0], shapes[s][1], shapes[s][2]);
        struct team t = split(&g_world, shapes[s][0], shapes[s][1], shapes[s][2], what);
        for (int k = 0; k < 6; k++) counted_barrier(&t, k % 3, what);
        /* A split of the split: its last half by stride 2 when that is more than one PE,
         * else the team itself. PEs outside t take no part (t is the parent). */
        int sub_start = t.size / 2, sub_stride = t.size >= 4 ? 2 : 1;
        int sub_size = (t.size - sub_start + sub_stride - 1) / sub_stride;
        struct team sub = split(&t, sub_start, sub_stride, sub_size, "nested split");
        for (int k = 0; k < 4; k++) counted_barrier(&sub, k % 3, "nested split");
        if (sub.size >= 2) {
            struct team subsub = split(&sub, 1, 1, sub.size - 1, "split of a nested split");
            counted_barrier(&subsub, 0, "split of a nested split");
            drop(&subsub);
        }
        drop(&sub);
        counted_barrier(&t, 0, what);
        drop(&t);
        gshmem_barrier_all();
    }
}

/* A team of one PE may have any stride (only its last member is bounded). The member
 * stride, the parent's times the split's, once overflowed int: INT_MAX under a parent of
 * stride 2 became -2 (translate_pe then gave -2 for a non-member), 2^30 under stride 4
 * became 0 and the split divided by it (SIGFPE). */
static void single_member_strides(void)
{
    const int pstrides[2] = {2, 4};
    for (int k = 0; k < 2; k++) {
        int ps = pstrides[k], psize = (g_npes + ps - 1) / ps;
        if (psize < 2) continue;
        struct team p = split(&g_world, 0, ps, psize, "parent of the single-PE teams");
        const int cases[2][2] = {{0, INT_MAX}, {psize - 1, 1 << 30}};
        for (int c = 0; c < 2; c++) {
            char what[96];
            snprintf(what, sizeof what, "split(%d, %d, 1) of a team of stride %d", cases[c][0], cases[c][1], ps);
            struct team one = expect(cases[c][0] * ps, 1, 1);
            gshmem_team_t h = GSHMEM_TEAM_INVALID;
            if (p.index >= 0) {
                int rc = gshmem_team_split_strided(p.h, cases[c][0], cases[c][1], 1, NULL, 0, &h);
                CHECK(rc == 0, "%s returned %d", what, rc);
            }
            one.h = h;
            check_shape(&one, what);
            adopt(&one);
            counted_barrier(&one, 0, what);
            drop(&one);
        }
        drop(&p);
        gshmem_barrier_all();
    }
}

/* split_2d(WORLD, xrange): row and column of this PE. */
static void grid(int xrange, struct team *row, struct team *col)
{
    int x = xrange < g_npes ? xrange : g_npes, r0 = g_me / x * x, c = g_me % x;
    *row = expect(r0, 1, g_npes - r0 < x ? g_npes - r0 : x);
    *col = expect(c, x, (g_npes - c + x - 1) / x);
    gshmem_team_t xh = 777, yh = 777;
    int rc = gshmem_team_split_2d(GSHMEM_TEAM_WORLD, xrange, NULL, 0, &xh, NULL, 0, &yh);
    CHECK(rc == 0, "split_2d(xrange %d) returned %d", xrange, rc);
    row->h = xh;
    col->h = yh;
    check_shape(row, "split_2d row");
    check_shape(col, "split_2d column");
    adopt(row);
    adopt(col);
}

static void split_2d_shapes(void)
{
    const int xr[] = {1, 2, 3, g_npes, g_npes + 3};
    for (size_t k = 0; k < sizeof xr / sizeof xr[0]; k++) {
        struct team row, col;
        grid(xr[k], &row, &col);
        for (int i = 0; i < 6; i++) {
            counted_barrier(&row, i % 3, "split_2d row");
            counted_barrier(&col, (i + 1) % 3, "split_2d column");
        }
        drop(&col);
        drop(&row);
    }
}

static void config_round_trip(void)
{
    gshmem_team_config_t cfg = {.num_contexts = 7}, got = {.num_contexts = -99};
    gshmem_team_t h;
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, g_npes, &cfg, GSHMEM_TEAM_NUM_CONTEXTS, &h), 0);
    CHECK_EQ(gshmem_team_get_config(h, GSHMEM_TEAM_NUM_CONTEXTS, &got), 0);
    CHECK_EQ(got.num_contexts, 7);
    got.num_contexts = -99;
    CHECK_EQ(gshmem_team_get_config(h, 0, &got), 0);
    CHECK(got.num_contexts == -99, "get_config with mask 0 wrote num_contexts %d", got.num_contexts);
    gshmem_team_destroy(h);
    /* Created without the mask: the default, 0 contexts. */
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, g_npes, &cfg, 0, &h), 0);
    CHECK_EQ(gshmem_team_get_config(h, GSHMEM_TEAM_NUM_CONTEXTS, &got), 0);
    CHECK_EQ(got.num_contexts, 0);
    gshmem_team_destroy(h);
    CHECK_EQ(gshmem_team_get_config(GSHMEM_TEAM_WORLD, GSHMEM_TEAM_NUM_CONTEXTS, &got), 0);
    CHECK(gshmem_team_get_config(GSHMEM_TEAM_INVALID, GSHMEM_TEAM_NUM_CONTEXTS, &got) != 0, "invalid team");
    CHECK(gshmem_team_get_config(h, GSHMEM_TEAM_NUM_CONTEXTS, &got) != 0, "destroyed team %d", (int)h);
}

/* Overlapping teams in an order that changes every round (the same on every PE). */
static void interleaved_barriers(void)
{
    struct team t[5];
    t[0] = split(&g_world, 0, 2, (g_npes + 1) / 2, "evens");
    t[1] = split(&g_world, 1 % g_npes, 2, g_npes / 2 > 0 ? g_npes / 2 : 1, "odds");
    t[2] = split(&g_world, 0, 1, g_npes, "world copy");
    grid(2, &t[3], &t[4]);
    struct team *all[6] = {&t[0], &t[1], &t[2], &t[3], &t[4], &g_world};
    for (int r = 0; r < 60; r++)
        for (int k = 0; k < 6; k++) counted_barrier(all[(k * (r % 5 + 1) + r) % 6], (r + k) % 3, "interleaved");
    for (int k = 4; k >= 0; k--) drop(&t[k]);
}

/* The evens and the odds each split their own team at the same time, and the next split
 * of WORLD follows at once: the evens, done first, write their records of it while the
 * odds still read theirs (the odds' last PE starts 2 ms late, so the others wait for it
 * in their split). Split records once sat at the writer's index in its parent, so PE 0's
 * record of the WORLD split took the place of the odds' first PE and the odds read it as
 * theirs. Twice, so that both banks of records meet. */
static void disjoint_splits(void)
{
    for (int rep = 0; rep < 2; rep++) {
        struct team half[2], sub, after;
        half[0] = split(&g_world, 0, 2, (g_npes + 1) / 2, "evens");
        half[1] = split(&g_world, 1 % g_npes, 2, g_npes / 2 > 0 ? g_npes / 2 : 1, "odds");
        struct team *mine = &half[g_me % 2 && g_npes > 1 ? 1 : 0];
        int last_odd = g_npes % 2 ? g_npes - 2 : g_npes - 1;
        if (g_me == last_odd && g_npes >= 4) {
            struct timespec late = {0, 2000000};
            nanosleep(&late, NULL);
        }
        /* Each PE splits its own half only: the other half's PEs make theirs meanwhile. */
        sub = split(mine, mine->size > 1 ? 1 : 0, 1, mine->size > 1 ? mine->size - 1 : 1, "a half but its first");
        after = split(&g_world, 0, 1, g_npes, "WORLD right after the halves");
        counted_barrier(&after, rep, "WORLD right after the halves");
        counted_barrier(&sub, 0, "a half but its first");
        drop(&after);
        drop(&sub);
        drop(&half[1]);
        drop(&half[0]);
    }
}

/* Many more creations than slots, a few long-lived teams around them. */
static void churn(void)
{
    struct team keep[2];
    keep[0] = split(&g_world, 0, 1, g_npes, "kept world copy");
    keep[1] = split(&g_world, g_npes - 1, 1, 1, "kept team of one");
    for (int i = 0; i < 3 * g_max_teams; i++) {
        int stride = 1 + i % 3, start = i % g_npes;
        int size = 1 + (g_npes - 1 - start) / stride;
        struct team t = split(&g_world, start, stride, size, "churn");
        counted_barrier(&t, i % 3, "churn");
        counted_barrier(&keep[i % 2], 0, "kept across churn");
        counted_barrier(&t, (i + 1) % 3, "churn");
        drop(&t);
    }
    drop(&keep[1]);
    drop(&keep[0]);
}

static void exhaustion(void)
{
    struct team t[MAX_SLOTS];
    int made = 0;
    for (;;) {
        gshmem_team_t h = 4321;
        int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, g_npes, NULL, 0, &h);
        if (rc != 0) {
            CHECK(h == GSHMEM_TEAM_INVALID, "split without a free slot gave handle %d", (int)h);
            break;
        }
        CHECK(made < MAX_SLOTS - 3, "split %d succeeded beyond GSHMEM_MAX_TEAMS=%d", made, g_max_teams);
        t[made] = expect(0, 1, g_npes);
        t[made].h = h;
        adopt(&t[made++]);
    }
    CHECK(made == g_max_teams - 3, "made %d teams before running out, want GSHMEM_MAX_TEAMS - 3 = %d", made,
          g_max_teams - 3);
    for (int i = 0; i < made; i++) counted_barrier(&t[i], i % 3, "full table");
    counted_barrier(&g_world, 0, "world with a full table");
    for (int i = made - 1; i >= 0; i--) drop(&t[i]);
    struct team again = split(&g_world, 0, 1, g_npes, "split after running out");
    counted_barrier(&again, 0, "split after running out");
    drop(&again);
}

/* Each call must fail, leave GSHMEM_TEAM_INVALID, and not disturb what follows. */
static void invalid_arguments(void)
{
    const int n = g_npes;
    const int bad[][3] = {{0, 0, n}, {0, -1, 1}, {-1, 1, 1}, {n, 1, 1}, {0, 1, n + 1}, {1, 1, n},
                          {0, 2, n}, {0, 1, 0}, {0, 1, -3}, {n - 1, n, 2}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (bad[k][1] == 2 && n == 1) continue; /* {0, 2, 1} is a valid team of one */
        gshmem_team_t h = 99;
        int rc = gshmem_team_split_strided(GSHMEM_TEAM_WORLD, bad[k][0], bad[k][1], bad[k][2], NULL, 0, &h);
        CHECK(rc != 0, "split_strided(%d, %d, %d) on %d PEs succeeded", bad[k][0], bad[k][1], bad[k][2], n);
        CHECK(h == GSHMEM_TEAM_INVALID, "failed split_strided(%d, %d, %d) gave handle %d", bad[k][0], bad[k][1],
              bad[k][2], (int)h);
    }
    gshmem_team_t h = 99, h2 = 99;
    CHECK(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, NULL) != 0, "NULL new_team");
    CHECK(gshmem_team_split_strided(GSHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &h) != 0, "parent INVALID");
    CHECK_EQ(h, GSHMEM_TEAM_INVALID);
    h = 99;
    CHECK(gshmem_team_split_strided(40, 0, 1, 1, NULL, 0, &h) != 0, "parent never created");
    CHECK_EQ(h, GSHMEM_TEAM_INVALID);
    h = 99;
    CHECK(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 0, NULL, 0, &h, NULL, 0, &h2) != 0, "split_2d xrange 0");
    CHECK(h == GSHMEM_TEAM_INVALID && h2 == GSHMEM_TEAM_INVALID, "split_2d xrange 0 gave %d, %d", (int)h, (int)h2);
    CHECK(gshmem_team_split_2d(GSHMEM_TEAM_WORLD, 1, NULL, 0, NULL, NULL, 0, &h2) != 0, "split_2d NULL xaxis");
    CHECK(gshmem_team_sync(GSHMEM_TEAM_INVALID) != 0, "team_sync on GSHMEM_TEAM_INVALID");
    CHECK(gshmem_barrier(33) != 0, "barrier on a team never created");
    gshmem_team_destroy(GSHMEM_TEAM_INVALID); /* ignored */
    gshmem_team_destroy(GSHMEM_TEAM_WORLD);   /* ignored */
    CHECK_EQ(gshmem_team_n_pes(GSHMEM_TEAM_WORLD), g_npes);
    struct team t = split(&g_world, 0, 1, g_npes, "split after invalid arguments");
    counted_barrier(&t, 0, "split after invalid arguments");
    drop(&t);
}

int main(void)
{
    gshmem_init();
    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    const char *mt = getenv("GSHMEM_MAX_TEAMS");
    g_max_teams = mt ? atoi(mt) : 32;
    CHECK(g_max_teams >= 8, "mp_team needs GSHMEM_MAX_TEAMS >= 8, has %d", g_max_teams);
    g_count = gshmem_calloc(MAX_SLOTS, sizeof(uint64_t));
    CHECK(g_count, "symmetric allocation failed");
    g_world = expect(0, 1, g_npes);
    g_world.h = GSHMEM_TEAM_WORLD;

    predefined();
    gshmem_barrier_all();
    strided_shapes();
    single_member_strides();
    split_2d_shapes();
    config_round_trip();
    interleaved_barriers();
    disjoint_splits();
    churn();
    exhaustion();
    invalid_arguments();

    gshmem_barrier_all();
    gshmem_free(g_count);
    if (g_me == 0) printf("mp_team: %d PEs OK (GSHMEM_MAX_TEAMS %d)\n", g_npes, g_max_teams);
    gshmem_finalize();
    return 0;
}
