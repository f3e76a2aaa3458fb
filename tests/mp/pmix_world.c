/*
 * Under mpirun (a PMIx server): the PE number and count are the launcher's
 * (OMPI_COMM_WORLD_RANK/SIZE), every PE is on this node (GSHMEMX_TEAM_NODE has
 * OMPI_COMM_WORLD_LOCAL_SIZE PEs), and a put ring plus an fcollect move the data.
 *
 * usage: pmix_world [PEs expected, all on this node]
 */
#include "mp_check.h"

static long env_long(const char *name)
{
    const char *v = getenv(name);
    CHECK(v != NULL, "%s is not set: run under Open MPI's mpirun", name);
    return strtol(v, NULL, 10);
}

int main(int argc, char **argv)
{
    long want_rank = env_long("OMPI_COMM_WORLD_RANK");
    long want_size = env_long("OMPI_COMM_WORLD_SIZE");
    long want_local = env_long("OMPI_COMM_WORLD_LOCAL_SIZE");
    gshmem_init();
    int me = gshmem_my_pe(), npes = gshmem_n_pes();
    CHECK_EQ(me, want_rank);
    CHECK_EQ(npes, want_size);
    CHECK_EQ(gshmem_team_n_pes(GSHMEMX_TEAM_NODE), want_local);
    CHECK_EQ(gshmem_team_n_pes(GSHMEM_TEAM_SHARED), want_local);
    CHECK_EQ(gshmem_team_my_pe(GSHMEMX_TEAM_NODE), me);
    if (argc > 1) {
        CHECK_EQ(npes, atoi(argv[1]));
        CHECK_EQ(gshmem_team_n_pes(GSHMEMX_TEAM_NODE), atoi(argv[1]));
    }

    enum { N = 64 };
    uint64_t *ring = gshmem_malloc(N * sizeof(uint64_t));
    uint64_t *all = gshmem_malloc((size_t)npes * 2 * sizeof(uint64_t));
    uint64_t *mine = gshmem_malloc(2 * sizeof(uint64_t));
    CHECK(ring && all && mine, "symmetric allocation failed");
    memset(ring, MP_POISON, N * sizeof(uint64_t));
    memset(all, MP_POISON, (size_t)npes * 2 * sizeof(uint64_t));
    gshmem_barrier_all();

    uint64_t src[N];
    for (int i = 0; i < N; i++) src[i] = mp_mix((uint64_t)me, (uint64_t)i, 7, 0);
    gshmem_putmem(ring, src, sizeof(src), (me + 1) % npes);
    gshmem_barrier_all();
    int from = (me + npes - 1) % npes;
    for (int i = 0; i < N; i++) CHECK(ring[i] == mp_mix((uint64_t)from, (uint64_t)i, 7, 0), "ring[%d] from PE %d", i, from);

    mine[0] = mp_mix((uint64_t)me, 1, 2, 3);
    mine[1] = mp_mix((uint64_t)me, 4, 5, 6);
    CHECK_EQ(gshmem_fcollectmem(GSHMEM_TEAM_WORLD, all, mine, 2 * sizeof(uint64_t)), 0);
    for (int pe = 0; pe < npes; pe++) {
        CHECK(all[2 * pe] == mp_mix((uint64_t)pe, 1, 2, 3), "fcollect word 0 of PE %d", pe);
        CHECK(all[2 * pe + 1] == mp_mix((uint64_t)pe, 4, 5, 6), "fcollect word 1 of PE %d", pe);
    }
    gshmem_free(mine);
    gshmem_free(all);
    gshmem_free(ring);
    if (me == 0) printf("pmix_world: %d PEs, ranks and node-local view match mpirun's\n", npes);
    gshmem_finalize();
    return 0;
}
