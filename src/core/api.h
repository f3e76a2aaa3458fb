/*
 * Internal helpers shared by the API files: state access, argument checks and the
 * generic operations the typed X-macro wrappers call. Checks that cost a compare
 * or two run in every build; they end the job with a message naming the function,
 * the argument, this PE and the peer.
 */
#ifndef GSHMEMI_API_H
#define GSHMEMI_API_H

#include "core/log.h"
#include "core/state.h"

#include <stddef.h>
#include <stdint.h>

/* The state, after checking that init has run. */
struct gshmemi_state *gshmemi_api_state(const char *fn);
/* The transport reaching pe, after checking the range. */
struct gshmemi_transport *gshmemi_api_peer(struct gshmemi_state *st, const char *fn, int pe);
/* Heap offset of [addr, addr + len) for argument `arg`, after checking it lies in the heap. */
size_t gshmemi_api_offset(struct gshmemi_state *st, const char *fn, const char *arg, const void *addr, size_t len,
                          int pe);
/* nelems * elem, after checking for overflow. */
size_t gshmemi_api_bytes(struct gshmemi_state *st, const char *fn, size_t nelems, size_t elem);
/* Ends the job when a transport call failed. */
void gshmemi_api_check_rc(struct gshmemi_state *st, const char *fn, int rc, int pe);

/* RMA (rma.c). Strides are in elements. */
void gshmemi_rma_put(const char *fn, void *dest, const void *src, size_t nelems, size_t elem, int pe, int nbi);
void gshmemi_rma_get(const char *fn, void *dest, const void *src, size_t nelems, size_t elem, int pe, int nbi);
void gshmemi_rma_iput(const char *fn, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                      size_t elem, int pe);
void gshmemi_rma_iget(const char *fn, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                      size_t elem, int pe);
void gshmemi_rma_put_signal(const char *fn, void *dest, const void *src, size_t nelems, size_t elem,
                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);

/* AMO (amo.c): values are the object's bytes, zero-extended. */
uint64_t gshmemi_amo(const char *fn, void *dest, int op, size_t width, uint64_t operand, uint64_t compare, int pe);

/* Point-to-point waits (wait.c). */
enum gshmemi_wait_mode { GSHMEMI_WAIT_ALL, GSHMEMI_WAIT_ANY, GSHMEMI_WAIT_SOME };
struct gshmemi_wait_args {
    const char *fn;
    const volatile void *ivars;
    size_t nelems;
    size_t width;     /* 2, 4 or 8 */
    int is_signed;
    const int *status;
    int cmp;
    const void *values; /* cmp values: one (scalar) or nelems (vector) */
    int vector;
    int mode;
    size_t *indices;  /* SOME: satisfied indices out */
    uint64_t *value_out; /* if set: element 0's value as last compared */
};
/* One pass: ALL -> 1/0; ANY -> index or SIZE_MAX; SOME -> count. */
size_t gshmemi_wait_test(const struct gshmemi_wait_args *args);
/* gshmemi_wait_test after checking the arguments (the test_* calls). */
size_t gshmemi_wait_poll(const struct gshmemi_wait_args *args);
/* Blocks until the condition holds (honouring GSHMEM_TIMEOUT); returns as gshmemi_wait_test. */
size_t gshmemi_wait_until(const struct gshmemi_wait_args *args);

/* Progress (progress.c): spins until done(arg) != 0, yielding when oversubscribed,
 * checking the bootstrap for a dying job and GSHMEM_TIMEOUT; describe() explains
 * what was awaited in the timeout message. */
void gshmemi_progress_wait(struct gshmemi_state *st, int (*done)(void *arg), void *arg,
                           void (*describe)(void *arg, char *buf, size_t len));

/* Stream-ordered calls (stream.c, CUDA builds): the state, after checking that the heap
 * is the device heap (else the job ends with a message naming fn); GSHMEM_TIMEOUT for
 * waits in kernels, stream kernels and device-API waits alike (0: none). */
struct gshmemi_state *gshmemi_stream_state(const char *fn);
uint64_t gshmemi_device_timeout_ns(const struct gshmemi_state *st);

/* Synchronization (sync.c). */
void gshmemi_sync_quiet(struct gshmemi_state *st, const char *fn);
/* Sends what the transports hold back (small tcp puts); before any wait. */
void gshmemi_sync_flush(struct gshmemi_state *st);
void gshmemi_sync_barrier(struct gshmemi_state *st, const char *fn);

/* Collectives (coll.c): their private buffers, mapped at init and unmapped at teardown. */
int gshmemi_coll_init(struct gshmemi_state *st);
void gshmemi_coll_fini(struct gshmemi_state *st);

#endif
