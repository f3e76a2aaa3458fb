/* Teams: the predefined three, strided and 2-D splits, queries, and the host-side team barrier. */
#include "core/team.h"

#include "core/api.h"
#include "core/coll.h"
#include "device/device_publish.h"

#include <gshmem.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

static size_t team_words_offset(gshmem_team_t team)
{
    return offsetof(struct gshmemi_sync_area, teams) + (size_t)team * sizeof(struct gshmemi_team_sync_words);
}

size_t gshmemi_team_published_offset(gshmem_team_t team)
{
    return team_words_offset(team) + offsetof(struct gshmemi_team_sync_words, published);
}

/* members[0..count) ascending world PEs including this one: a strided team, or this PE
 * alone when the members are not evenly spaced. */
static void team_from_members(struct gshmemi_state *st, struct gshmemi_team *t, const int *members, int count)
{
    int stride = count > 1 ? members[1] - members[0] : 1;
    for (int i = 2; i < count; i++)
        if (members[i] - members[i - 1] != stride) count = 0;
    if (count == 0) {
        *t = (struct gshmemi_team){.in_use = 1, .start = st->my_pe, .stride = 1, .size = 1};
        return;
    }
    *t = (struct gshmemi_team){.in_use = 1, .start = members[0], .stride = stride, .size = count};
    t->my_index = gshmemi_team_index_of(t, st->my_pe);
}

int gshmemi_team_init(struct gshmemi_state *st)
{
    if (st->env.max_teams < 3 || st->env.max_teams > GSHMEMI_TEAMS_LIMIT) {
        GSHMEMI_ERROR(INIT, "GSHMEM_MAX_TEAMS=%ld: accepted values are 3..%d", st->env.max_teams,
                      GSHMEMI_TEAMS_LIMIT);
        return GSHMEMX_ERR_CONFIG;
    }
    memset(st->teams, 0, sizeof(st->teams));
    st->teams[GSHMEM_TEAM_WORLD] = (struct gshmemi_team){.in_use = 1, .start = 0, .stride = 1, .size = st->n_pes,
                                                         .my_index = st->my_pe, .gen = 1};
    int *shared = malloc((size_t)st->n_pes * sizeof(int)), *node = malloc((size_t)st->n_pes * sizeof(int));
    if (!shared || !node) {
        free(shared);
        free(node);
        return GSHMEMX_ERR_NOMEM;
    }
    int n_shared = 0, n_node = 0, my_node = st->boot.node_of_rank[st->my_pe];
    for (int pe = 0; pe < st->n_pes; pe++) {
        struct gshmemi_transport *tp = st->transport_of_pe[pe];
        if (pe == st->my_pe || tp->ops->ptr(tp, pe, 0) != NULL) shared[n_shared++] = pe;
        if (st->boot.node_of_rank[pe] == my_node) node[n_node++] = pe;
    }
    team_from_members(st, &st->teams[GSHMEM_TEAM_SHARED], shared, n_shared);
    team_from_members(st, &st->teams[GSHMEMX_TEAM_NODE], node, n_node);
    st->teams[GSHMEM_TEAM_SHARED].gen = 2; /* predefined: never replaced */
    st->teams[GSHMEMX_TEAM_NODE].gen = 3;
    free(shared);
    free(node);
    GSHMEMI_INFO(SYNC, "teams: SHARED has %d PEs (start %d, stride %d), NODE %d PEs", st->teams[1].size,
                 st->teams[1].start, st->teams[1].stride, st->teams[2].size);
    return 0;
}

struct gshmemi_team *gshmemi_team_get(struct gshmemi_state *st, gshmem_team_t team, const char *fn)
{
    struct gshmemi_team *t = gshmemi_team_lookup(st, team);
    if (!t)
        GSHMEMI_ERROR(SYNC, "%s: team %d is not a team of PE %d (GSHMEM_TEAM_INVALID, destroyed, never created, "
                            "or PE %d is not a member)", fn, (int)team, st->my_pe, st->my_pe);
    return t;
}

/* ---- Host-side team barrier ---------------------------------------------------------------- */

struct team_wait {
    const char *fn;
    const uint64_t *flag;
    uint64_t epoch;
    int team, round, from_pe;
};

static int team_arrived(void *arg)
{
    const struct team_wait *w = arg;
    return __atomic_load_n(w->flag, __ATOMIC_ACQUIRE) >= w->epoch;
}

static void team_describe(void *arg, char *buf, size_t len)
{
    const struct team_wait *w = arg;
    snprintf(buf, len, "%s: team %d barrier %llu, round %d: waiting for PE %d to arrive", w->fn, w->team,
             (unsigned long long)w->epoch, w->round, w->from_pe);
}

void gshmemi_team_sync_host(struct gshmemi_state *st, gshmem_team_t team, const char *fn)
{
    struct gshmemi_team *t = &st->teams[team];
    struct gshmemi_team_sync_words *words = &((struct gshmemi_sync_area *)st->sync_heap.base)->teams[team];
    uint64_t epoch = ++t->sync_epoch;
    for (int dist = 1, round = 0; dist < t->size; dist <<= 1, round++) {
        int to = gshmemi_team_world_pe(t, (t->my_index + dist) % t->size);
        struct gshmemi_transport *tp = st->sync_of_pe[to];
        struct gshmemi_amo amo = {.op = GSHMEMI_AMO_ADD, .width = 8, .operand = 1,
                                  .offset = team_words_offset(team) + (size_t)round * sizeof(uint64_t)};
        gshmemi_api_check_rc(st, fn, tp->ops->amo(tp, to, &amo, NULL), to);
        struct team_wait w = {fn, &words->flags[round], epoch, team, round,
                              gshmemi_team_world_pe(t, (t->my_index - dist % t->size + t->size) % t->size)};
        gshmemi_progress_wait(st, team_arrived, &w, team_describe);
    }
}

/* ---- Splits ----------------------------------------------------------------------------------- */

enum { SPLIT_STRIDED = 1, SPLIT_2D = 2 };

static uint64_t split_free_mask(const struct gshmemi_state *st)
{
    uint64_t mask = 0;
    for (int i = 3; i < st->env.max_teams; i++)
        if (!st->teams[i].in_use) mask |= (uint64_t)1 << i;
    return mask;
}

/* Every parent member writes its record into every member's bank, then the parent
 * synchronizes: each member then holds all records and decides the same way. A record
 * goes to the writer's world PE's place in the bank, not its place in the parent: PEs of
 * disjoint teams split at the same time, and one that is done may already be writing
 * its record of the next split of a team they share (the same bank when the counts have
 * the same parity); by parent index the two records shared a place (a split of the odd
 * PEs read PE 0's record of the next world split, in gpu_team over tcp). The parent's
 * closing sync (split_finish) comes after the last read, so a writer's next record in
 * the same place waits for every reader of the last. */
static const struct gshmemi_split_record *split_rec(const struct gshmemi_split_record *all,
                                                   const struct gshmemi_team *parent, int i)
{
    return &all[gshmemi_team_world_pe(parent, i)];
}

static const struct gshmemi_split_record *split_exchange(struct gshmemi_state *st, gshmem_team_t parent_team,
                                                          const int64_t args[4], const char *fn)
{
    struct gshmemi_team *parent = &st->teams[parent_team];
    uint64_t seq = ++parent->split_count;
    struct gshmemi_split_record mine = {.free_mask = split_free_mask(st), .seq = seq, .parent = parent_team,
                                        .parent_gen = parent->gen};
    memcpy(mine.args, args, sizeof(mine.args));
    size_t bank = GSHMEMI_SYNC_SPLIT_OFFSET + (size_t)(seq & 1) * (size_t)st->n_pes * sizeof(mine);
    for (int i = 0; i < parent->size; i++) {
        int to = gshmemi_team_world_pe(parent, i);
        struct gshmemi_transport *tp = st->sync_of_pe[to];
        gshmemi_api_check_rc(st, fn, tp->ops->put(tp, to, bank + (size_t)st->my_pe * sizeof(mine), &mine,
                                                  sizeof(mine)), to);
    }
    for (int i = 0; i < st->sync_transports.count; i++)
        gshmemi_api_check_rc(st, fn, st->sync_transports.list[i]->ops->quiet(st->sync_transports.list[i]), st->my_pe);
    gshmemi_team_sync_host(st, parent_team, fn);
    const struct gshmemi_split_record *all = (const void *)((const char *)st->sync_heap.base + bank);
    for (int i = 0; i < parent->size; i++) {
        const struct gshmemi_split_record *r = split_rec(all, parent, i);
        if (r->seq == seq && r->parent == parent_team && r->parent_gen != parent->gen) {
            GSHMEMI_ERROR(SYNC, "%s: the split record of PE %d is from an earlier team in slot %d (PE %d is at split "
                                "%llu of team %d): the members' splits do not match",
                          fn, gshmemi_team_world_pe(parent, i), (int)parent_team, st->my_pe, (unsigned long long)seq,
                          (int)parent_team);
            return NULL;
        }
        if (r->seq != seq || r->parent != parent_team) {
            GSHMEMI_ERROR(SYNC, "%s: the split record of PE %d is from split %llu of team %lld, PE %d is at split %llu "
                                "of team %d",
                          fn, gshmemi_team_world_pe(parent, i), (unsigned long long)r->seq, (long long)r->parent,
                          st->my_pe, (unsigned long long)seq, (int)parent_team);
            return NULL;
        }
    }
    return all;
}

/* The same arguments on every parent PE, or an error naming the first that differs. */
static int split_check_args(struct gshmemi_state *st, const struct gshmemi_team *parent,
                            const struct gshmemi_split_record *all, const char *fn)
{
    const struct gshmemi_split_record *first = split_rec(all, parent, 0);
    for (int i = 1; i < parent->size; i++) {
        const struct gshmemi_split_record *r = split_rec(all, parent, i);
        if (memcmp(r->args, first->args, sizeof(first->args)) == 0) continue;
        GSHMEMI_ERROR(SYNC, "%s: PE %d passed (%lld, %lld, %lld) but PE %d passed (%lld, %lld, %lld); every PE "
                            "of the parent team must pass the same arguments (seen on PE %d)",
                      fn, gshmemi_team_world_pe(parent, 0), (long long)first->args[0], (long long)first->args[1],
                      (long long)first->args[2], gshmemi_team_world_pe(parent, i), (long long)r->args[0],
                      (long long)r->args[1], (long long)r->args[2], st->my_pe);
        return GSHMEMX_ERR_MISMATCH;
    }
    return 0;
}

/* The lowest `count` slots free on every parent PE. */
static int split_pick_slots(struct gshmemi_state *st, const struct gshmemi_team *parent,
                            const struct gshmemi_split_record *all, int count, int *slots, const char *fn)
{
    uint64_t mask = ~(uint64_t)0;
    for (int i = 0; i < parent->size; i++) mask &= split_rec(all, parent, i)->free_mask;
    for (int k = 0; k < count; k++) {
        if (mask == 0) {
            GSHMEMI_ERROR(SYNC, "%s: no free team slot on PE %d: GSHMEM_MAX_TEAMS=%ld teams exist on some PE of "
                                "the parent team (destroy teams, or raise GSHMEM_MAX_TEAMS up to %d)",
                          fn, st->my_pe, st->env.max_teams, GSHMEMI_TEAMS_LIMIT);
            return GSHMEMX_ERR_NOMEM;
        }
        slots[k] = __builtin_ctzll(mask);
        mask &= mask - 1;
    }
    return 0;
}

/* Clears the slots' barrier words (sync heap and device heap), then the parent
 * synchronizes so no member of a new team signals into words not yet cleared. */
static int split_finish(struct gshmemi_state *st, gshmem_team_t parent_team, const int *slots, int count,
                        const char *fn)
{
    int rc = 0;
    for (int k = 0; k < count; k++) {
        memset(&((struct gshmemi_sync_area *)st->sync_heap.base)->teams[slots[k]], 0,
               sizeof(struct gshmemi_team_sync_words));
        size_t off = offsetof(struct gshmemi_device_sync_area, teams) +
                     (size_t)slots[k] * sizeof(struct gshmemi_team_sync_words);
        if (rc == 0) rc = gshmemi_heap_memset(&st->heap, off, 0, sizeof(struct gshmemi_team_sync_words));
    }
    gshmemi_team_sync_host(st, parent_team, fn);
    if (rc != 0) GSHMEMI_ERROR(SYNC, "%s: clearing the new team's barrier words failed on PE %d", fn, st->my_pe);
    return rc;
}

/* A team's generation, from its parent's, the parent's split count and which of the
 * split's teams it is: every member computes the same, and a later team in the slot
 * (whose split count starts again from 0) gets another. */
static uint64_t team_gen(const struct gshmemi_team *parent, unsigned which)
{
    uint64_t h = parent->gen * 0x9e3779b97f4a7c15ull ^ (parent->split_count << 1 | which);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

static void team_set(struct gshmemi_state *st, int slot, const struct gshmemi_team *parent, int start, int stride,
                     int size, const gshmem_team_config_t *config, long mask, unsigned which)
{
    struct gshmemi_team *t = &st->teams[slot];
    /* One member: any stride was valid, and the product could overflow int (to 0,
     * which index_of divides by); a team of one has stride 1. Otherwise the last
     * member is inside the parent, which bounds the product by the world's size. */
    *t = (struct gshmemi_team){.in_use = 1,
                               .start = gshmemi_team_world_pe(parent, start),
                               .stride = size == 1 ? 1 : parent->stride * stride,
                               .size = size};
    t->my_index = gshmemi_team_index_of(t, st->my_pe);
    t->gen = team_gen(parent, which);
    if (config && (mask & GSHMEM_TEAM_NUM_CONTEXTS)) {
        t->config.num_contexts = config->num_contexts;
        t->config_mask = GSHMEM_TEAM_NUM_CONTEXTS;
    }
}

static int split_strided_check(const struct gshmemi_state *st, const struct gshmemi_team *parent, int start,
                               int stride, int size, const char *fn)
{
    const char *why = NULL;
    if (stride < 1) why = "stride must be >= 1";
    else if (size < 1) why = "size must be >= 1";
    else if (size > (1 << GSHMEMI_TEAM_SYNC_ROUNDS)) why = "size is above the team size limit (65536)";
    else if (start < 0 || start >= parent->size) why = "start is not a PE of the parent team";
    else if ((long long)start + (long long)(size - 1) * stride >= parent->size)
        why = "the last member (start + (size - 1) * stride) is outside the parent team";
    if (!why) return 0;
    GSHMEMI_ERROR(SYNC, "%s: start=%d stride=%d size=%d on a parent team of %d PEs: %s (PE %d)", fn, start, stride,
                  size, parent->size, why, st->my_pe);
    return GSHMEMX_ERR_INVALID_ARG;
}

static int team_split_strided(gshmem_team_t parent_team, int start, int stride, int size,
                              const gshmem_team_config_t *config, long config_mask, gshmem_team_t *new_team)
{
    struct gshmemi_state *st = gshmemi_api_state("gshmem_team_split_strided");
    if (new_team) *new_team = GSHMEM_TEAM_INVALID;
    struct gshmemi_team *parent = gshmemi_team_get(st, parent_team, "gshmem_team_split_strided");
    if (!parent || !new_team) {
        if (!new_team) GSHMEMI_ERROR(SYNC, "%s: new_team is NULL (PE %d)", "gshmem_team_split_strided", st->my_pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    int64_t args[4] = {start, stride, size, SPLIT_STRIDED};
    const struct gshmemi_split_record *all = split_exchange(st, parent_team, args, "gshmem_team_split_strided");
    if (!all) return GSHMEMX_ERR_INTERNAL;
    int rc = split_check_args(st, parent, all, "gshmem_team_split_strided"), slot = -1;
    if (rc == 0) rc = split_strided_check(st, parent, start, stride, size, "gshmem_team_split_strided");
    if (rc == 0) rc = split_pick_slots(st, parent, all, 1, &slot, "gshmem_team_split_strided");
    if (rc != 0) return rc;
    int pi = parent->my_index;
    int member = pi >= start && (pi - start) % stride == 0 && (pi - start) / stride < size;
    if (member) team_set(st, slot, parent, start, stride, size, config, config_mask, 0);
    if ((rc = split_finish(st, parent_team, &slot, 1, "gshmem_team_split_strided")) != 0) return rc;
    if (member) *new_team = slot;
    GSHMEMI_INFO(SYNC, "%s: team %d = start %d stride %d size %d of team %d%s", "gshmem_team_split_strided", slot, start, stride, size,
                 (int)parent_team, member ? "" : " (not a member)");
    return gshmemi_device_state_teams(st) == 0 ? 0 : GSHMEMX_ERR_CUDA;
}

static int team_split_2d(gshmem_team_t parent_team, int xrange, const gshmem_team_config_t *xaxis_config,
                         long xaxis_mask, gshmem_team_t *xaxis_team, const gshmem_team_config_t *yaxis_config,
                         long yaxis_mask, gshmem_team_t *yaxis_team)
{
    struct gshmemi_state *st = gshmemi_api_state("gshmem_team_split_2d");
    if (xaxis_team) *xaxis_team = GSHMEM_TEAM_INVALID;
    if (yaxis_team) *yaxis_team = GSHMEM_TEAM_INVALID;
    struct gshmemi_team *parent = gshmemi_team_get(st, parent_team, "gshmem_team_split_2d");
    if (!parent || !xaxis_team || !yaxis_team) {
        if (parent) GSHMEMI_ERROR(SYNC, "%s: xaxis_team and yaxis_team must not be NULL (PE %d)", "gshmem_team_split_2d", st->my_pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    int64_t args[4] = {xrange, 0, 0, SPLIT_2D};
    const struct gshmemi_split_record *all = split_exchange(st, parent_team, args, "gshmem_team_split_2d");
    if (!all) return GSHMEMX_ERR_INTERNAL;
    int rc = split_check_args(st, parent, all, "gshmem_team_split_2d"), slots[2];
    if (rc == 0 && xrange < 1) {
        GSHMEMI_ERROR(SYNC, "%s: xrange=%d: must be >= 1 (PE %d)", "gshmem_team_split_2d", xrange, st->my_pe);
        rc = GSHMEMX_ERR_INVALID_ARG;
    }
    if (rc == 0) rc = split_pick_slots(st, parent, all, 2, slots, "gshmem_team_split_2d");
    if (rc != 0) return rc;
    /* Rows are disjoint, and so are columns: one slot serves every row, one every column. */
    int x = xrange < parent->size ? xrange : parent->size, pi = parent->my_index;
    int row_start = pi / x * x, col = pi % x;
    int row_size = parent->size - row_start < x ? parent->size - row_start : x;
    int col_size = (parent->size - col + x - 1) / x;
    team_set(st, slots[0], parent, row_start, 1, row_size, xaxis_config, xaxis_mask, 0);
    team_set(st, slots[1], parent, col, x, col_size, yaxis_config, yaxis_mask, 1);
    if ((rc = split_finish(st, parent_team, slots, 2, "gshmem_team_split_2d")) != 0) return rc;
    *xaxis_team = slots[0];
    *yaxis_team = slots[1];
    return gshmemi_device_state_teams(st) == 0 ? 0 : GSHMEMX_ERR_CUDA;
}

static void team_destroy(gshmem_team_t team)
{
    struct gshmemi_state *st = gshmemi_api_state("gshmem_team_destroy");
    if (!gshmemi_team_get(st, team, "gshmem_team_destroy")) return;
    gshmemi_sync_quiet(st, "gshmem_team_destroy");
    gshmemi_team_sync_host(st, team, "gshmem_team_destroy");
    st->teams[team].in_use = 0;
    if (gshmemi_device_state_teams(st) != 0) gshmemi_fatal(st, GSHMEMX_ERR_CUDA);
}

/* Splits and destroys read and claim this PE's team slots and its split banks without
 * a lock (a lock held across the exchange would deadlock PEs whose threads took two
 * splits in different orders). Two at once on one PE once gave two concurrent splits
 * the same handle, silently; now the second one ends the job saying why. */
static atomic_int team_busy;

static void team_enter(const char *fn)
{
    if (!atomic_exchange(&team_busy, 1)) return;
    struct gshmemi_state *st = gshmemi_api_state(fn);
    GSHMEMI_ERROR(SYNC, "%s: PE %d: another thread of this PE is creating or destroying a team: team creation and "
                        "destruction must be called by one thread at a time on each PE (in the same order on "
                        "every PE), even on different parent teams",
                  fn, st->my_pe);
    gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
}

static void team_leave(void)
{
    atomic_store(&team_busy, 0);
}

int gshmem_team_split_strided(gshmem_team_t parent_team, int start, int stride, int size,
                              const gshmem_team_config_t *config, long config_mask, gshmem_team_t *new_team)
{
    team_enter(__func__);
    int rc = team_split_strided(parent_team, start, stride, size, config, config_mask, new_team);
    team_leave();
    return rc;
}

int gshmem_team_split_2d(gshmem_team_t parent_team, int xrange, const gshmem_team_config_t *xaxis_config,
                         long xaxis_mask, gshmem_team_t *xaxis_team, const gshmem_team_config_t *yaxis_config,
                         long yaxis_mask, gshmem_team_t *yaxis_team)
{
    team_enter(__func__);
    int rc = team_split_2d(parent_team, xrange, xaxis_config, xaxis_mask, xaxis_team, yaxis_config, yaxis_mask,
                           yaxis_team);
    team_leave();
    return rc;
}

void gshmem_team_destroy(gshmem_team_t team)
{
    if (team == GSHMEM_TEAM_INVALID || team == GSHMEM_TEAM_WORLD || team == GSHMEM_TEAM_SHARED ||
        team == GSHMEMX_TEAM_NODE)
        return;
    team_enter(__func__);
    team_destroy(team);
    team_leave();
}

/* ---- Queries ---------------------------------------------------------------------------------- */

int gshmem_team_my_pe(gshmem_team_t team)
{
    struct gshmemi_team *t = gshmemi_team_lookup(gshmemi_api_state(__func__), team);
    return t ? t->my_index : -1;
}

int gshmem_team_n_pes(gshmem_team_t team)
{
    struct gshmemi_team *t = gshmemi_team_lookup(gshmemi_api_state(__func__), team);
    return t ? t->size : -1;
}

int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    struct gshmemi_team *src = gshmemi_team_lookup(st, src_team), *dst = gshmemi_team_lookup(st, dest_team);
    if (!src || !dst || src_pe < 0 || src_pe >= src->size) return -1;
    return gshmemi_team_index_of(dst, gshmemi_team_world_pe(src, src_pe));
}

int gshmem_team_get_config(gshmem_team_t team, long config_mask, gshmem_team_config_t *config)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    struct gshmemi_team *t = gshmemi_team_get(st, team, __func__);
    if (!t || !config) return GSHMEMX_ERR_INVALID_ARG;
    if (config_mask & GSHMEM_TEAM_NUM_CONTEXTS) config->num_contexts = t->config.num_contexts;
    return 0;
}

int gshmem_team_sync(gshmem_team_t team)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (!gshmemi_team_get(st, team, __func__)) return GSHMEMX_ERR_INVALID_ARG;
    gshmemi_coll_check_call(st, __func__, team, GSHMEMI_COLL_SYNC, 0, 0, 0, 0, 0);
    gshmemi_team_sync_host(st, team, __func__);
    return 0;
}

int gshmem_sync(gshmem_team_t team)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (!gshmemi_team_get(st, team, __func__)) return GSHMEMX_ERR_INVALID_ARG;
    gshmemi_coll_check_call(st, __func__, team, GSHMEMI_COLL_SYNC, 0, 0, 0, 0, 0);
    gshmemi_team_sync_host(st, team, __func__);
    return 0;
}

int gshmem_barrier(gshmem_team_t team)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (!gshmemi_team_get(st, team, __func__)) return GSHMEMX_ERR_INVALID_ARG;
    gshmemi_coll_check_call(st, __func__, team, GSHMEMI_COLL_SYNC, 0, 0, 0, 0, 0);
    gshmemi_sync_quiet(st, __func__);
    gshmemi_team_sync_host(st, team, __func__);
    return 0;
}
