/*
 * Collectives on different teams at the same time, from different threads of each PE
 * (GSHMEM_THREAD_MULTIPLE): OpenSHMEM lets threads run collectives concurrently as long
 * as each team's calls are made in the same order on its members. Thread k of every PE
 * owns team k and, round after round, runs a broadcast, an fcollect, an alltoall or an
 * int sum reduction on it, of sizes from 1 byte to more than a tcp chunk, checking every
 * byte of the result and the guards around it. Teams: WORLD itself, two copies of it,
 * and (from 3 PEs) PEs 1 .. n-1, so one thread of PE 0 has nothing to do and the team's
 * numbering differs from the world's. Each team's collectives then share the transports,
 * the service thread and the heap with the others' while they run.
 *
 * Every round poisons the destination, meets the team (gshmem_team_sync) so no member
 * writes into a destination still being checked or poisoned, then calls. argv[1]: rounds
 * (default ROUNDS).
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <pthread.h>

#define TEAMS 4
#define ROUNDS 48
#define MAXN 70000 /* bytes per member block: more than one tcp chunk */
#define GUARD 64

static const size_t g_sizes[] = {1, 8, 13, 256, 4099, 65536, MAXN};
#define NSIZES (sizeof(g_sizes) / sizeof(g_sizes[0]))

struct job {
    int k;               /* thread and team index */
    gshmem_team_t team;  /* GSHMEM_TEAM_INVALID: this PE is not a member */
    int size, me;        /* the team's size and this PE's number in it */
    int *world;          /* world PE of each member */
    unsigned char *src;  /* symmetric: size * MAXN */
    unsigned char *dst;  /* symmetric: GUARD + size * MAXN + GUARD */
    uint64_t rounds;
    unsigned long ops[4];
};

static const char *const g_names[4] = {"broadcast", "fcollect", "alltoall", "int sum reduction"};

/* The value member s adds to element i of round salt's reduction; small, so the sum fits. */
static int reduce_term(int s, size_t i, uint64_t salt)
{
    return (int)(mp_mix((uint64_t)s, i, salt, 11) & 0xffff);
}

static void check_guards(const struct job *j, size_t used, const char *what, uint64_t r)
{
    size_t k = mp_find_unpoisoned(j->dst, GUARD);
    CHECK(k == GUARD, "thread %d (team of %d), round %llu, %s: guard byte %zu before dest is 0x%02x", j->k, j->size,
          (unsigned long long)r, what, k, j->dst[k]);
    k = mp_find_unpoisoned(j->dst + GUARD + used, GUARD);
    CHECK(k == GUARD, "thread %d (team of %d), round %llu, %s: guard byte %zu after %zu bytes is 0x%02x", j->k,
          j->size, (unsigned long long)r, what, k, used, j->dst[GUARD + used + k]);
}

static void one_round(struct job *j, uint64_t r)
{
    const int op = (int)(r % 4), me_world = j->world[j->me];
    const size_t n = g_sizes[(r / 4 + (uint64_t)j->k) % NSIZES];
    const uint64_t salt = r * TEAMS + (uint64_t)j->k;
    unsigned char *out = j->dst + GUARD;
    char what[128];
    snprintf(what, sizeof what, "%s of %zu bytes a member", g_names[op], n);
    size_t used = op == 0 ? n : op == 3 ? (n / sizeof(int) + 1) * sizeof(int) : n * (size_t)j->size;
    mp_poison(j->dst, GUARD + used + GUARD);
    CHECK_EQ(gshmem_team_sync(j->team), 0);
    int rc = 0;
    switch (op) {
    case 0: { /* broadcast from a root that moves with the round */
        int root = (int)(r / 4 % (uint64_t)j->size);
        if (j->me == root) mp_fill_bytes(j->src, n, me_world, 1000 + j->k, salt);
        rc = gshmem_broadcastmem(j->team, out, j->src, n, root);
        CHECK(rc == 0, "thread %d, round %llu: %s returned %d", j->k, (unsigned long long)r, what, rc);
        CHECK_BYTES(out, n, j->world[root], 1000 + j->k, salt, what);
        break;
    }
    case 1:
        mp_fill_bytes(j->src, n, me_world, 1000 + j->k, salt);
        rc = gshmem_fcollectmem(j->team, out, j->src, n);
        CHECK(rc == 0, "thread %d, round %llu: %s returned %d", j->k, (unsigned long long)r, what, rc);
        for (int s = 0; s < j->size; s++) CHECK_BYTES(out + (size_t)s * n, n, j->world[s], 1000 + j->k, salt, what);
        break;
    case 2:
        for (int d = 0; d < j->size; d++) mp_fill_bytes(j->src + (size_t)d * n, n, me_world, j->world[d], salt);
        rc = gshmem_alltoallmem(j->team, out, j->src, n);
        CHECK(rc == 0, "thread %d, round %llu: %s returned %d", j->k, (unsigned long long)r, what, rc);
        for (int s = 0; s < j->size; s++) CHECK_BYTES(out + (size_t)s * n, n, j->world[s], me_world, salt, what);
        break;
    default: {
        size_t count = n / sizeof(int) + 1;
        int *src = (int *)j->src, *dst = (int *)out;
        for (size_t i = 0; i < count; i++) src[i] = reduce_term(me_world, i, salt);
        rc = gshmem_int_sum_reduce(j->team, dst, src, count);
        CHECK(rc == 0, "thread %d, round %llu: %s returned %d", j->k, (unsigned long long)r, what, rc);
        for (size_t i = 0; i < count; i++) {
            int want = 0;
            for (int s = 0; s < j->size; s++) want += reduce_term(j->world[s], i, salt);
            CHECK(dst[i] == want, "thread %d (team of %d), round %llu, %s: element %zu is %d, want %d", j->k,
                  j->size, (unsigned long long)r, what, i, dst[i], want);
        }
    }
    }
    check_guards(j, used, what, r);
    j->ops[op]++;
}

static void *run_job(void *arg)
{
    struct job *j = arg;
    for (uint64_t r = 0; r < j->rounds; r++) one_round(j, r);
    CHECK_EQ(gshmem_barrier(j->team), 0);
    return NULL;
}

int main(int argc, char **argv)
{
    const uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : ROUNDS;
    mp_init_thread_multiple();
    const int me = gshmem_my_pe(), npes = gshmem_n_pes();
    struct job jobs[TEAMS];
    memset(jobs, 0, sizeof jobs);
    for (int k = 0; k < TEAMS; k++) {
        struct job *j = &jobs[k];
        j->k = k;
        j->rounds = rounds;
        j->team = GSHMEM_TEAM_INVALID;
        int start = 0, size = npes;
        if (k == 0) {
            j->team = GSHMEM_TEAM_WORLD;
        } else {
            if (k == 3 && npes >= 3) start = 1, size = npes - 1;
            CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, start, 1, size, NULL, 0, &j->team), 0);
        }
        j->size = size;
        j->me = j->team == GSHMEM_TEAM_INVALID ? -1 : gshmem_team_my_pe(j->team);
        CHECK(j->team == GSHMEM_TEAM_INVALID || (j->me == me - start && gshmem_team_n_pes(j->team) == size),
              "PE %d: team %d: number %d of %d, want %d of %d", me, k, j->me, gshmem_team_n_pes(j->team), me - start,
              size);
        j->world = malloc(sizeof(int) * (size_t)size);
        CHECK(j->world != NULL, "malloc");
        for (int s = 0; s < size; s++) j->world[s] = start + s;
        /* Symmetric over WORLD, members or not. */
        j->src = gshmem_malloc((size_t)npes * MAXN);
        j->dst = gshmem_malloc(GUARD + (size_t)npes * MAXN + GUARD);
        CHECK(j->src && j->dst, "PE %d: symmetric allocation failed", me);
    }
    gshmem_barrier_all();

    pthread_t threads[TEAMS];
    for (int k = 0; k < TEAMS; k++)
        if (jobs[k].me >= 0) CHECK(pthread_create(&threads[k], NULL, run_job, &jobs[k]) == 0, "pthread_create");
    for (int k = 0; k < TEAMS; k++)
        if (jobs[k].me >= 0) pthread_join(threads[k], NULL);
    gshmem_barrier_all();

    unsigned long total = 0;
    for (int k = 0; k < TEAMS; k++)
        for (int op = 0; op < 4; op++) total += jobs[k].ops[op];
    if (me == npes - 1)
        printf("mp_threads_coll: %d PEs, %d teams side by side, %llu rounds each: PE %d checked %lu collectives\n",
               npes, TEAMS, (unsigned long long)rounds, me, total);
    for (int k = 0; k < TEAMS; k++) {
        if (k > 0 && jobs[k].team != GSHMEM_TEAM_INVALID) gshmem_team_destroy(jobs[k].team);
        gshmem_free(jobs[k].dst);
        gshmem_free(jobs[k].src);
        free(jobs[k].world);
    }
    gshmem_finalize();
    return 0;
}
