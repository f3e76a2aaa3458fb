/*
 * The per-PE state device code reads: one __constant__ copy in the device library
 * (gshmemi_dstate), written by the host library at init. Plain C so both sides
 * share it. Internal: layout may change between versions.
 */
#ifndef GSHMEM_IMPL_DEVICE_STATE_H
#define GSHMEM_IMPL_DEVICE_STATE_H

#include <stdint.h>

/* Peers the device state can describe; larger jobs need the proxy path (later). */
#define GSHMEMI_DEVICE_MAX_PES 1024
/* Rounds of the device-side dissemination barrier (supports 2^32 PEs). */
#define GSHMEMI_DEVICE_BARRIER_ROUNDS 32

/* Layout of the device heap's reserved area (offset 0 of every PE's heap). */
struct gshmemi_device_sync_area {
    uint64_t barrier_flags[GSHMEMI_DEVICE_BARRIER_ROUNDS]; /* written by peers */
    uint64_t barrier_epoch;                                 /* this PE's barriers so far */
    uint64_t reserved[31];
};

struct gshmemi_device_state {
    int32_t initialized;
    int32_t my_pe;
    int32_t n_pes;
    int32_t reserved;
    uint64_t heap_base; /* this PE's heap, device address */
    uint64_t heap_size;
    /* Per PE: base of its heap as mapped in this PE's GPU address space, 0 when it is
     * not reachable by loads and stores. */
    uint64_t peer_base[GSHMEMI_DEVICE_MAX_PES];
    /* Bit pe: PE pe's heap is on this PE's GPU (several PEs per GPU under MPS), so
     * GPU-scope ordering suffices towards it. */
    uint32_t same_gpu[GSHMEMI_DEVICE_MAX_PES / 32];
};

#endif
