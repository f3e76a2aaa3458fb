/*
 * Bad use under GSHMEM_CHECK=1: members of a team call different collectives, or the
 * same one with arguments that must agree but do not. The library must end the job
 * naming both calls and PEs (it once checked allocations only: these ran silently, or
 * read past a member's source). PE 1 is the odd one out. Reaching the end is a failure.
 * argv[1]: root (broadcast, PE_root differs), nreduce (sum reduction, 2 elements on PE 1,
 * 8 elsewhere), op (max on PE 1, sum elsewhere), routine (fcollect on PE 1, broadcast
 * elsewhere), sync (team barrier on PE 1, alltoall elsewhere).
 */
#include "mp_check.h"

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "root";
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes(), odd = me == 1;
    int *src = gshmem_calloc(8 * (size_t)n, sizeof(int)), *dst = gshmem_calloc(8 * (size_t)n, sizeof(int));
    CHECK(src && dst, "gshmem_calloc");
    gshmem_team_t t = GSHMEM_TEAM_WORLD;
    int rc = 0;
    if (strcmp(what, "root") == 0) rc = gshmem_int_broadcast(t, dst, src, 8, odd ? 2 : 0);
    else if (strcmp(what, "nreduce") == 0) rc = gshmem_int_sum_reduce(t, dst, src, odd ? 2 : 8);
    else if (strcmp(what, "op") == 0) rc = odd ? gshmem_int_max_reduce(t, dst, src, 8) : gshmem_int_sum_reduce(t, dst, src, 8);
    else if (strcmp(what, "routine") == 0) rc = odd ? gshmem_int_fcollect(t, dst, src, 8) : gshmem_int_broadcast(t, dst, src, 8, 0);
    else rc = odd ? gshmem_barrier(t) : gshmem_int_alltoall(t, dst, src, 8);
    gshmem_barrier_all();
    fprintf(stderr, "bad_coll_mismatch: PE %d: the %s case returned %d\n", me, what, rc);
    gshmem_finalize();
    return 0;
}
