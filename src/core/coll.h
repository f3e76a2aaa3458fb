/*
 * Host-side collectives (coll.c, coll_reduce.c): argument checks, the private
 * buffers, and the data mover that reaches a team PE's copy of a heap offset by
 * loads and stores where the host can (host heap, same node) and through the
 * PE's transport and a bounce buffer otherwise (device heap, remote peers).
 */
#ifndef GSHMEMI_COLL_H
#define GSHMEMI_COLL_H

#include "core/state.h"

#include <stddef.h>

/* Bytes of each of the two halves of a team slot's private buffer: chunks of the
 * bounce path, of a reduction and of an in-place swap. A multiple of 64 (every
 * element type stays aligned); -D for tests that need small chunks. */
#ifndef GSHMEMI_COLL_CHUNK
#define GSHMEMI_COLL_CHUNK ((size_t)256 * 1024)
#endif

/* Per team slot, allocated once at init: collectives on one team are serialized by
 * the program, those on different teams may run at once in different threads. */
struct gshmemi_coll_buf {
    char *in;  /* a peer's data on its way in (bounce) */
    char *acc; /* a reduction's partial result, the other half of a swap */
};

/* What every collective starts from, once the team and this PE are known. */
struct gshmemi_coll {
    struct gshmemi_state *st;
    const struct gshmemi_team *t;
    gshmem_team_t team;
    struct gshmemi_coll_buf buf;
    const char *fn;
};

/* The state and team for fn; nonzero (logged) for an invalid team. */
int gshmemi_coll_begin(struct gshmemi_coll *c, const char *fn, gshmem_team_t team);
/* Nonzero (logged) when [dest, dest + dlen) and [source, source + slen) overlap,
 * unless in_place_ok and dest == source with dlen == slen. */
int gshmemi_coll_check_overlap(const struct gshmemi_coll *c, const void *dest, size_t dlen, const void *source,
                               size_t slen, int in_place_ok);

/* Collectives whose calls GSHMEM_CHECK compares across a team. */
enum gshmemi_coll_routine {
    GSHMEMI_COLL_SYNC = 1, /* team_sync, sync, barrier */
    GSHMEMI_COLL_BROADCAST,
    GSHMEMI_COLL_COLLECT,
    GSHMEMI_COLL_FCOLLECT,
    GSHMEMI_COLL_ALLTOALL,
    GSHMEMI_COLL_ALLTOALLS,
    GSHMEMI_COLL_REDUCE,
};
/* Under GSHMEM_CHECK (a no-op otherwise, and for a team of one): every member writes
 * what it called into its sync heap, the team meets, and each member compares its call
 * with member 0's; a difference ends the job naming both calls and PEs. Called before
 * anything else of the collective synchronizes, nelems 0 included. a3 is described in
 * the message but not compared. */
void gshmemi_coll_check_call(struct gshmemi_state *st, const char *fn, gshmem_team_t team, unsigned routine,
                             size_t elem, int64_t a0, int64_t a1, int64_t a2, int64_t a3);

/* A reduction's op, as coll_reduce.c numbers them ("?" for none). */
const char *gshmemi_coll_reduce_op_name(int64_t op);

/* pe's copy of heap offset off as a host address, or NULL: use the transport. */
void *gshmemi_coll_ptr(const struct gshmemi_state *st, int pe, size_t off);
/* len bytes of pe's heap at off into local memory, and back. */
void gshmemi_coll_get(const struct gshmemi_coll *c, int pe, size_t off, void *local, size_t len);
void gshmemi_coll_put(const struct gshmemi_coll *c, int pe, size_t off, const void *local, size_t len);
/* pe's len bytes at off readable here (len <= GSHMEMI_COLL_CHUNK): the mapping, or
 * a copy in scratch. */
const void *gshmemi_coll_read(const struct gshmemi_coll *c, int pe, size_t off, size_t len, void *scratch);

#endif
