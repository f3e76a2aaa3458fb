/* The process-wide state: one object, reached through the API layer and passed below it. */
#ifndef GSHMEMI_STATE_H
#define GSHMEMI_STATE_H

#include "bootstrap/bootstrap.h"
#include "core/alloc.h"
#include "core/env.h"
#include "core/heap.h"
#include "transport/transport.h"

#include <gshmem/impl/device_state.h>
#include <gshmem/team.h>

#include <stdint.h>

/* Layout of the sync heap: a small host heap every PE has, whatever the user heap's
 * kind, holding the words host-side synchronization spins on. */
#define GSHMEMI_SYNC_ROUNDS 32
struct gshmemi_sync_area {
    uint64_t barrier_flags[GSHMEMI_SYNC_ROUNDS]; /* dissemination barrier, one counter per round */
    struct gshmemi_team_sync_words teams[GSHMEMI_TEAMS_LIMIT];
};
/* After the reserved area of the sync heap: two banks of n_pes split records, one per
 * world PE (team.c). */
#define GSHMEMI_SYNC_SPLIT_OFFSET GSHMEMI_HEAP_RESERVED
struct gshmemi_split_record {
    uint64_t free_mask; /* bit i: team slot i is free on the sender */
    int64_t args[4];    /* what the sender asked for (compared across the parent) */
    uint64_t seq;       /* the parent's split count, the parent and its generation: a stale */
    int64_t parent;     /* record (an earlier team's in the same slot too) is never read */
    uint64_t parent_gen;
};

/* After the split banks: per team slot, two records (by the call count's parity) of
 * this PE's last collective call on it, which the members compare under GSHMEM_CHECK
 * (coll.c). */
struct gshmemi_coll_call {
    uint64_t seq;     /* the team's collective calls on this PE, this one included */
    uint64_t gen;     /* the team's generation: an earlier team's record in the slot never matches */
    uint32_t routine; /* enum gshmemi_coll_routine (coll.h) */
    uint32_t elem;    /* bytes of an element */
    int64_t args[4];  /* the routine's arguments that must agree */
};
#define GSHMEMI_SYNC_CALLS_OFFSET(n_pes) \
    (GSHMEMI_SYNC_SPLIT_OFFSET + 2 * (size_t)(n_pes) * sizeof(struct gshmemi_split_record))
#define GSHMEMI_SYNC_CALLS_BYTES (2 * (size_t)GSHMEMI_TEAMS_LIMIT * sizeof(struct gshmemi_coll_call))

/* A team on the host side (team.c). Slots 0-2 are the predefined teams. */
struct gshmemi_team {
    int in_use;    /* this PE is a member */
    int start;     /* world PE of member 0 */
    int stride;    /* world PE distance between members */
    int size;
    int my_index;  /* this PE's number in the team */
    uint64_t sync_epoch;  /* host-side team barriers so far */
    uint64_t split_count; /* splits with this team as parent so far */
    uint64_t coll_calls;  /* collective calls checked on it so far (GSHMEM_CHECK) */
    uint64_t gen;         /* the same on every member, different for a later team in the slot */
    gshmem_team_config_t config;
    long config_mask;
};

struct gshmemi_device_state;

struct gshmemi_state {
    int initialized;
    int init_calls;      /* gshmem_init calls not yet matched by a gshmem_finalize */
    const char *ended_boot; /* the bootstrap a last gshmem_finalize ended, if any ("tcp", "pmix"...) */
    int thread_level;
    int my_pe;
    int n_pes;
    struct gshmemi_env env;
    struct gshmemi_bootstrap boot;
    struct gshmemi_heap heap;      /* the user heap: host or device memory */
    struct gshmemi_heap sync_heap; /* host memory for host-side synchronization */
    struct gshmemi_alloc alloc;
    struct gshmemi_transport_set transports;      /* for the user heap */
    struct gshmemi_transport_set sync_transports; /* for the sync heap */
    struct gshmemi_transport **transport_of_pe;   /* n_pes entries, user heap */
    struct gshmemi_transport **sync_of_pe;        /* n_pes entries, sync heap */
    int heap_host_accessible;      /* the host may load and store the user heap */
    int device;                    /* CUDA ordinal of this PE's GPU, -1 without one */
    struct gshmemi_device_state *dstate; /* what device code sees (device heap only) */
    struct gshmemi_proxy *proxy;   /* device requests to PROXY peers (core/proxy.h); NULL without */
    uint64_t barrier_epoch;
    struct gshmemi_team teams[GSHMEMI_TEAMS_LIMIT];
    char *coll_area;       /* host collectives' private buffers, per team slot (coll.c) */
    size_t coll_area_size;
    uint64_t alloc_seq;  /* collective allocation calls so far (GSHMEM_CHECK) */
    int check_args;      /* GSHMEM_CHECK or a debug build */
};

extern struct gshmemi_state gshmemi_state;

/* Heap offset of addr, or SIZE_MAX when addr lies outside this PE's heap. */
static inline size_t gshmemi_heap_offset(const struct gshmemi_state *st, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, base = (uintptr_t)st->heap.base;
    if (a < base || a - base > st->heap.size || len > st->heap.size - (a - base)) return SIZE_MAX;
    return a - base;
}

/* Ends the job (every PE) with status after a fatal error has been logged. */
_Noreturn void gshmemi_fatal(struct gshmemi_state *st, int status);

#endif
