/* p2p transport internals shared by its creation code and its two ops tables
 * (host heap: CPU loads/stores; device heap: CUDA copies and kernels). */
#ifndef GSHMEMI_P2P_H
#define GSHMEMI_P2P_H

#include "transport/transport.h"

struct gshmemi_heap;

struct gshmemi_p2p {
    struct gshmemi_transport tp;
    int my_pe;
    int n_pes;
    struct gshmemi_heap *heap;
    char **base; /* per PE; NULL where not mapped */
    void *device_ctx; /* device heap: stream and pinned scratch (p2p_device.c) */
};

static inline struct gshmemi_p2p *gshmemi_p2p_of(struct gshmemi_transport *tp)
{
    return (struct gshmemi_p2p *)tp->impl;
}

extern const struct gshmemi_transport_ops gshmemi_p2p_host_ops;
extern const struct gshmemi_transport_ops gshmemi_p2p_device_ops;

/* Device ops' per-transport state (CUDA builds); 0 or a status. */
int gshmemi_p2p_device_init(struct gshmemi_p2p *p2p);
void gshmemi_p2p_device_fini(struct gshmemi_p2p *p2p);
/* Releases the peer mappings and the struct (both ops tables' destroy). */
void gshmemi_p2p_destroy(struct gshmemi_transport *tp);

#endif
