/*
 * The proxy: one thread per PE that carries device-API operations on PROXY peers
 * (peers whose heap this GPU cannot map: another node, or GSHMEM_DISABLE_P2P) from the
 * request ring (include/gshmem/impl/proxy_ring.h) to the peer's host transport.
 */
#ifndef GSHMEMI_PROXY_H
#define GSHMEMI_PROXY_H

#include <gshmem/impl/proxy_ring.h>

#include <stdint.h>

struct gshmemi_state;
struct gshmemi_proxy;

/* Starts the proxy when the heap is on the device and some PE's transport cannot map
 * its heap (ptr() is NULL); otherwise leaves st->proxy NULL. Call before the device
 * state is published (it carries the ring's addresses). */
int gshmemi_proxy_init(struct gshmemi_state *st);
/* Tests: starts a proxy whose ring lives in ordinary memory, whatever the heap, for
 * CPU threads to post to (proxy_ring.h's CPU producer functions, on the ring from
 * gshmemi_proxy_device_ring). No-op when every PE is mapped; refused when a proxy
 * runs already. */
int gshmemi_proxy_init_host(struct gshmemi_state *st);
/* Serves what is left in the ring, stops and joins the thread, frees the ring. Call
 * before the transports are destroyed. No-op without a proxy. */
void gshmemi_proxy_fini(struct gshmemi_state *st);

/* For the host's quiet and finalize: waits until every request device code had posted
 * when it was called has been served (the transports' own quiet then completes them).
 * 0 without a proxy. */
int gshmemi_proxy_quiet(struct gshmemi_proxy *px);
/* The ring as the GPU sees it; nslots 0 when px is NULL. */
struct gshmemi_proxy_ring gshmemi_proxy_device_ring(const struct gshmemi_proxy *px);
/* Requests served so far (0 when px is NULL). */
uint64_t gshmemi_proxy_served(const struct gshmemi_proxy *px);

#endif
