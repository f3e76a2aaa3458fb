/*
 * The per-PE state device code reads: one __constant__ copy in the device library
 * (gshmemi_dstate), written by the host library at init. Plain C so both sides
 * share it. Internal: layout may change between versions.
 */
#ifndef GSHMEM_IMPL_DEVICE_STATE_H
#define GSHMEM_IMPL_DEVICE_STATE_H

#include <gshmem/impl/proxy_ring.h>

#include <stdint.h>

/* Peers the device state can describe; larger jobs need the proxy path (later). */
#define GSHMEMI_DEVICE_MAX_PES 1024
/* Rounds of the device-side dissemination barrier (supports 2^32 PEs). */
#define GSHMEMI_DEVICE_BARRIER_ROUNDS 32

/* Team slots (handles 0 .. GSHMEMI_TEAMS_LIMIT-1; GSHMEM_MAX_TEAMS may use fewer) and
 * the dissemination rounds of a team barrier (teams of up to 2^16 PEs). */
#define GSHMEMI_TEAMS_LIMIT 64
#define GSHMEMI_TEAM_SYNC_ROUNDS 16

/* Per team and PE, in the reserved area of a heap (device heap: device-side team
 * barriers; sync heap: host-side ones). flags are written by peers; epoch counts this
 * PE's barriers on the team (device side; the host keeps its count in its own state);
 * published is a word collectives expose to the team between two barriers (collect's
 * size). Reset when a team is created in the slot. */
struct gshmemi_team_sync_words {
    uint64_t flags[GSHMEMI_TEAM_SYNC_ROUNDS];
    uint64_t epoch;
    uint64_t published;
    uint64_t reserved[14];
};

/* Layout of the device heap's reserved area (offset 0 of every PE's heap). */
struct gshmemi_device_sync_area {
    uint64_t barrier_flags[GSHMEMI_DEVICE_BARRIER_ROUNDS]; /* written by peers */
    uint64_t barrier_epoch;                                 /* this PE's barriers so far */
    uint64_t wait_report_claim; /* 1 once a device wait of this PE has claimed wait_report */
    uint64_t reserved[30];
    struct gshmemi_team_sync_words teams[GSHMEMI_TEAMS_LIMIT];
};

/* A team as device code sees it: world PE of member i is start + i * stride; size 0
 * marks a free slot; my_index is -1 on PEs outside the team. */
struct gshmemi_device_team {
    int32_t start;
    int32_t stride;
    int32_t size;
    int32_t my_index;
};

/* What a device wait that ran out of GSHMEM_TIMEOUT leaves for the host library, in
 * pinned host memory, before its thread traps: libgshmem prints it when the process
 * ends (exit, gshmem_global_exit, a fatal error) or at gshmem_finalize. The first
 * wait to time out (the one that claims it in the device sync area, with an atomic in
 * device memory: atomics on host memory need PCIe atomics) writes it, state 0 -> 1 ->
 * 2; later ones wait for it and trap. Device code
 * holds no printf call in its waits: a call there, even one never taken, made a
 * warp's put_signal up to a third slower (docs/PERFORMANCE.md, session 24). */
enum gshmemi_wait_kind {
    GSHMEMI_WAIT_SIGNAL,    /* signal_wait_until */
    GSHMEMI_WAIT_IVARS,     /* wait_until and its families: name from mode and vector */
    GSHMEMI_WAIT_BARRIER,   /* the PE barrier (team -1) or a team barrier */
};
struct gshmemi_wait_report {
    uint32_t state;
    int32_t kind;
    int32_t cmp;
    int32_t is_signed; /* value and target: signed (ivars of signed types) */
    int32_t mode;      /* IVARS: 0 all, 1 any, 2 some */
    int32_t vector;    /* IVARS: the _vector form */
    int32_t team;      /* BARRIER: -1 for the PE barrier */
    int32_t round;     /* BARRIER: 0-based */
    int32_t rounds;
    int32_t from_pe;
    uint64_t addr;     /* the word's device address */
    uint64_t value;    /* what it held at the last poll */
    uint64_t target;
    uint64_t ivar;     /* IVARS: which one, of count (count 0: the single-word form) */
    uint64_t count;
    uint64_t epoch;    /* BARRIER */
};

struct gshmemi_device_state {
    int32_t initialized;
    int32_t my_pe;
    int32_t n_pes;
    int32_t reserved;
    uint64_t heap_base; /* this PE's heap, device address */
    uint64_t heap_size;
    /* Device waits (wait_until and its families, signal_wait_until, the PE and team
     * barriers) report what they waited for (wait_report) and trap after this long:
     * GSHMEM_TIMEOUT, 0 waits forever. */
    uint64_t wait_timeout_ns;
    /* Where a timed-out wait writes its report (device address of pinned host memory;
     * 0: nowhere, the wait only traps). */
    uint64_t wait_report;
    /* Per PE: base of its heap as mapped in this PE's GPU address space, 0 when it is
     * not reachable by loads and stores. */
    uint64_t peer_base[GSHMEMI_DEVICE_MAX_PES];
    /* Bit pe: PE pe's heap is on this PE's GPU (several PEs per GPU under MPS), so
     * GPU-scope ordering suffices towards it. */
    uint32_t same_gpu[GSHMEMI_DEVICE_MAX_PES / 32];
    struct gshmemi_device_team teams[GSHMEMI_TEAMS_LIMIT];
    /* The proxy's request ring (device addresses); nslots 0 when this PE has no proxy,
     * i.e. every peer_base is set. */
    struct gshmemi_proxy_ring proxy;
};

#endif
