/*
 * Bad use: the members' splits of a team do not match, and the team's slot held an
 * earlier team whose split left records behind. PE 0 splits t2 while PE 1 only meets
 * it (team_sync); the last split of the team that had the slot before t2 left PE 1's
 * record with the same split count and slot in PE 0's bank. PE 0 once took that stale
 * record for PE 1's and returned a new team PE 1 does not have; the split must fail,
 * saying the record is an earlier team's. Run at 2 PEs; exits 0 when it did.
 */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    CHECK(n == 2, "bad_team_stale runs at 2 PEs, not %d", n);
    gshmem_team_t t = GSHMEM_TEAM_INVALID, c = GSHMEM_TEAM_INVALID, t2 = GSHMEM_TEAM_INVALID;
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t), 0);
    CHECK_EQ(gshmem_team_split_strided(t, 0, 1, n, NULL, 0, &c), 0); /* records: split 1 of t's slot */
    gshmem_team_destroy(c);
    gshmem_team_destroy(t);
    CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t2), 0);
    CHECK(t2 == t, "the new team took slot %d, not the freed %d: the test needs the same slot", (int)t2, (int)t);
    if (me == 0) {
        gshmem_team_t x = 77;
        int rc = gshmem_team_split_strided(t2, 0, 1, n, NULL, 0, &x);
        CHECK(rc != 0 && x == GSHMEM_TEAM_INVALID, "PE 0's split against PE 1's team_sync returned %d, team %d", rc,
              (int)x);
        CHECK_EQ(gshmem_team_sync(t2), 0); /* PE 1's second meeting */
    } else {
        CHECK_EQ(gshmem_team_sync(t2), 0);
        CHECK_EQ(gshmem_team_sync(t2), 0);
    }
    gshmem_barrier_all();
    if (me == 0) fprintf(stderr, "bad_team_stale: the mismatched split failed, as it should\n");
    gshmem_finalize();
    return 0;
}
