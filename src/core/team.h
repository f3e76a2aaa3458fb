/* Teams inside the library: lookup, world numbering, the host-side team barrier. */
#ifndef GSHMEMI_TEAM_H
#define GSHMEMI_TEAM_H

#include "core/state.h"

/* Predefined teams, and every other slot free; after transports exist (SHARED needs them). */
int gshmemi_team_init(struct gshmemi_state *st);

/* The team behind handle `team` when this PE is a member, else NULL. */
static inline struct gshmemi_team *gshmemi_team_lookup(struct gshmemi_state *st, gshmem_team_t team)
{
    if (team < 0 || team >= GSHMEMI_TEAMS_LIMIT || !st->teams[team].in_use) return NULL;
    return &st->teams[team];
}

/* As lookup, logging "fn: team T is not a team of PE p ..." when it fails. */
struct gshmemi_team *gshmemi_team_get(struct gshmemi_state *st, gshmem_team_t team, const char *fn);

static inline int gshmemi_team_world_pe(const struct gshmemi_team *t, int index)
{
    return t->start + index * t->stride;
}

/* Team number of world PE pe, -1 when it is not a member. */
static inline int gshmemi_team_index_of(const struct gshmemi_team *t, int pe)
{
    int d = pe - t->start;
    if (d < 0 || d % t->stride != 0 || d / t->stride >= t->size) return -1;
    return d / t->stride;
}

/* Dissemination barrier over the team's members on the sync heap (host side). */
void gshmemi_team_sync_host(struct gshmemi_state *st, gshmem_team_t team, const char *fn);

/* Word `published` of team slot `team` in pe's sync area: its sync-heap offset. */
size_t gshmemi_team_published_offset(gshmem_team_t team);

#endif
