/* Team arithmetic: member index <-> world PE for strided teams, non-members, and the
 * composition a split of a split relies on (strides multiply, starts map through). */
#include "core/team.h"

#include <criterion/criterion.h>

#include <limits.h>

static struct gshmemi_team team(int start, int stride, int size)
{
    return (struct gshmemi_team){.in_use = 1, .start = start, .stride = stride, .size = size};
}

/* Every world PE below n_pes: members map to their index and back, the rest to -1. */
static void check_all(const struct gshmemi_team *t, int n_pes)
{
    int members = 0;
    for (int pe = 0; pe < n_pes; pe++) {
        int d = pe - t->start;
        int want = d >= 0 && d % t->stride == 0 && d / t->stride < t->size ? d / t->stride : -1;
        int got = gshmemi_team_index_of(t, pe);
        cr_assert_eq(got, want, "team (start %d, stride %d, size %d): world PE %d has index %d, want %d", t->start,
                     t->stride, t->size, pe, got, want);
        if (got >= 0) {
            cr_assert_eq(gshmemi_team_world_pe(t, got), pe);
            members++;
        }
    }
    cr_assert_eq(members, t->size, "team (start %d, stride %d, size %d) has %d members below %d", t->start,
                 t->stride, t->size, members, n_pes);
}

TestSuite(team_arith);

Test(team_arith, world_is_identity)
{
    struct gshmemi_team t = team(0, 1, 7);
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(gshmemi_team_world_pe(&t, i), i);
        cr_assert_eq(gshmemi_team_index_of(&t, i), i);
    }
    cr_assert_eq(gshmemi_team_index_of(&t, 7), -1);
    cr_assert_eq(gshmemi_team_index_of(&t, -1), -1);
}

Test(team_arith, strided_shapes)
{
    const int shapes[][3] = {{0, 2, 4}, {1, 2, 4}, {1, 3, 3}, {2, 3, 2}, {5, 1, 3}, {4, 1, 1}, {0, 100, 1},
                             {3, 7, 5}, {0, 1, 64}, {6, 2, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct gshmemi_team t = team(shapes[s][0], shapes[s][1], shapes[s][2]);
        int last = gshmemi_team_world_pe(&t, t.size - 1);
        cr_assert_eq(last, t.start + (t.size - 1) * t.stride);
        check_all(&t, last + 2 * t.stride + 3);
    }
}

Test(team_arith, non_members)
{
    struct gshmemi_team t = team(3, 4, 3); /* world PEs 3, 7, 11 */
    const int outside[] = {-5, -1, 0, 1, 2, 4, 5, 6, 8, 10, 12, 15, 19, INT_MAX};
    for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++)
        cr_assert_eq(gshmemi_team_index_of(&t, outside[k]), -1, "world PE %d", outside[k]);
    cr_assert_eq(gshmemi_team_index_of(&t, 3), 0);
    cr_assert_eq(gshmemi_team_index_of(&t, 7), 1);
    cr_assert_eq(gshmemi_team_index_of(&t, 11), 2);
}

/* Before start, a negative remainder must not pass for a member (C's % keeps the sign). */
Test(team_arith, before_start_with_stride)
{
    struct gshmemi_team t = team(6, 3, 2);
    for (int pe = -12; pe < 6; pe++) cr_assert_eq(gshmemi_team_index_of(&t, pe), -1, "world PE %d", pe);
}

Test(team_arith, team_of_one)
{
    struct gshmemi_team t = team(9, 1, 1);
    cr_assert_eq(gshmemi_team_world_pe(&t, 0), 9);
    check_all(&t, 20);
    struct gshmemi_team wide = team(9, 50, 1); /* any stride: one member */
    check_all(&wide, 200);
}

/* A split (s, k, m) of team p is the team (world_pe(p, s), p.stride * k, m); its members
 * are p's members s, s + k, ... */
Test(team_arith, split_of_split_composes)
{
    struct gshmemi_team parent = team(1, 2, 8); /* world 1, 3, ..., 15 */
    const int splits[][3] = {{0, 2, 4}, {1, 3, 3}, {2, 1, 6}, {7, 1, 1}, {0, 7, 2}};
    for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++) {
        int start = splits[s][0], k = splits[s][1], m = splits[s][2];
        struct gshmemi_team child = team(gshmemi_team_world_pe(&parent, start), parent.stride * k, m);
        for (int i = 0; i < m; i++) {
            int w = gshmemi_team_world_pe(&child, i);
            cr_assert_eq(w, gshmemi_team_world_pe(&parent, start + i * k));
            cr_assert_eq(gshmemi_team_index_of(&parent, w), start + i * k);
        }
        check_all(&child, 40);
        /* A member of the parent that is skipped by the split is not in the child. */
        if (k > 1) cr_assert_eq(gshmemi_team_index_of(&child, gshmemi_team_world_pe(&parent, start + 1)), -1);
    }
}

/* Large jobs: no overflow at the edges of what a team may hold (2^16 members). */
Test(team_arith, large_team)
{
    struct gshmemi_team t = team(5, 3, 1 << 16);
    int last = 5 + 3 * ((1 << 16) - 1);
    cr_assert_eq(gshmemi_team_world_pe(&t, (1 << 16) - 1), last);
    cr_assert_eq(gshmemi_team_index_of(&t, last), (1 << 16) - 1);
    cr_assert_eq(gshmemi_team_index_of(&t, last + 3), -1);
    cr_assert_eq(gshmemi_team_index_of(&t, last + 1), -1);
}
