/*
 * Stream-ordered host calls (gshmemx_*_on_stream) on the device heap: argument checks
 * and address translation here, the CUDA work in src/device/stream_kernels.cu. Nothing
 * here synchronizes or allocates, so the calls can be captured into CUDA graphs.
 * A host heap refuses them (docs/DECISIONS.md says why); so does a build without CUDA.
 */
#include "core/api.h"

#include <gshmem.h>

#ifdef GSHMEM_HAVE_CUDA
#include "core/proxy.h"
#include "device/stream_coll.h"
#include "device/stream_kernels.h"

struct gshmemi_state *gshmemi_stream_state(const char *fn)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    if (st->heap.kind == GSHMEMI_HEAP_KIND_DEVICE) return st;
    GSHMEMI_ERROR(RMA, "%s: PE %d has a host heap (%s); stream-ordered calls need the device heap "
                       "(GSHMEM_HEAP=device, or auto with a usable GPU). On a host heap, synchronize the stream "
                       "and use the blocking host call instead", fn, st->my_pe,
                  gshmemi_heap_kind_name(st->heap.kind));
    gshmemi_fatal(st, GSHMEMX_ERR_NOT_SUPPORTED);
}

/* pe's heap at offset as this GPU maps it, or NULL for a PROXY peer (the proxy then
 * carries the call: stream_proxy). */
static char *stream_peer_addr(struct gshmemi_state *st, const char *fn, int pe, size_t offset)
{
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    char *addr = tp->ops->ptr(tp, pe, offset);
    if (!addr && !st->proxy) { /* cannot happen: the proxy starts whenever a peer is not mapped */
        GSHMEMI_ERROR(RMA, "%s: PE %d cannot reach PE %d through a GPU mapping and has no proxy", fn, st->my_pe, pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INTERNAL);
    }
    return addr;
}

static void stream_check(struct gshmemi_state *st, const char *fn, int err, int pe)
{
    if (err == 0) return;
    GSHMEMI_ERROR(CUDA, "%s: PE %d (peer PE %d): enqueuing on the stream failed: %s", fn, st->my_pe, pe,
                  gshmemi_stream_error_string(err));
    gshmemi_fatal(st, GSHMEMX_ERR_CUDA);
}

/* A one-thread kernel posts the call to the proxy's ring, in stream order. */
static void stream_proxy(struct gshmemi_state *st, const char *fn, struct gshmemi_stream_proxy_args args,
                         struct CUstream_st *stream)
{
    stream_check(st, fn, gshmemi_stream_proxy(st->device, &args, stream), args.pe);
}

static void stream_check_sig_op(struct gshmemi_state *st, const char *fn, int sig_op, int pe)
{
    if (sig_op == GSHMEM_SIGNAL_SET || sig_op == GSHMEM_SIGNAL_ADD) return;
    GSHMEMI_ERROR(RMA, "%s: sig_op=%d is neither GSHMEM_SIGNAL_SET nor GSHMEM_SIGNAL_ADD (PE %d, peer PE %d)", fn,
                  sig_op, st->my_pe, pe);
    gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
}

/* sig_addr's heap offset on pe; it must hold a whole, aligned uint64_t (a misaligned
 * system-scope atomic on the GPU is a sticky error of the context, reported later and
 * naming nothing). */
static size_t stream_sig_offset(struct gshmemi_state *st, const char *fn, const uint64_t *sig_addr, int pe)
{
    size_t off = gshmemi_api_offset(st, fn, "sig_addr", sig_addr, sizeof(uint64_t), pe);
    if ((uintptr_t)sig_addr % sizeof(uint64_t) == 0) return off;
    GSHMEMI_ERROR(SYNC, "%s: sig_addr=%p is not 8-byte aligned (PE %d, peer PE %d)", fn, (const void *)sig_addr,
                  st->my_pe, pe);
    gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
}

uint64_t gshmemi_device_timeout_ns(const struct gshmemi_state *st)
{
    return st->env.timeout > 0 ? (uint64_t)(st->env.timeout * 1e9) : 0;
}

void gshmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    gshmemi_api_peer(st, __func__, pe);
    if (nelems == 0) return;
    size_t off = gshmemi_api_offset(st, __func__, "dest", dest, nelems, pe);
    char *to = stream_peer_addr(st, __func__, pe, off);
    if (!to) {
        stream_proxy(st, __func__,
                     (struct gshmemi_stream_proxy_args){.kind = GSHMEMI_STREAM_PROXY_PUT, .pe = pe,
                                                        .dest = (uintptr_t)dest, .source = (uintptr_t)source,
                                                        .nelems = nelems},
                     stream);
        return;
    }
    stream_check(st, __func__, gshmemi_stream_copy(st->device, to, source, nelems, stream), pe);
}

void gshmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    gshmemi_api_peer(st, __func__, pe);
    if (nelems == 0) return;
    size_t off = gshmemi_api_offset(st, __func__, "source", source, nelems, pe);
    const char *from = stream_peer_addr(st, __func__, pe, off);
    if (!from) {
        stream_proxy(st, __func__,
                     (struct gshmemi_stream_proxy_args){.kind = GSHMEMI_STREAM_PROXY_GET, .pe = pe,
                                                        .dest = (uintptr_t)dest, .source = (uintptr_t)source,
                                                        .nelems = nelems},
                     stream);
        return;
    }
    stream_check(st, __func__, gshmemi_stream_copy(st->device, dest, from, nelems, stream), pe);
}

void gshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    stream_check_sig_op(st, __func__, sig_op, pe);
    size_t sig_off = stream_sig_offset(st, __func__, sig_addr, pe);
    char *sig = stream_peer_addr(st, __func__, pe, sig_off);
    if (!sig) {
        if (nelems) gshmemi_api_offset(st, __func__, "dest", dest, nelems, pe);
        stream_proxy(st, __func__,
                     (struct gshmemi_stream_proxy_args){.kind = GSHMEMI_STREAM_PROXY_PUT_SIGNAL, .pe = pe,
                                                        .dest = (uintptr_t)dest, .source = (uintptr_t)source,
                                                        .nelems = nelems, .sig_addr = (uintptr_t)sig_addr,
                                                        .signal = signal, .sig_op = sig_op},
                     stream);
        return;
    }
    if (nelems) {
        size_t off = gshmemi_api_offset(st, __func__, "dest", dest, nelems, pe);
        char *to = stream_peer_addr(st, __func__, pe, off);
        stream_check(st, __func__, gshmemi_stream_copy(st->device, to, source, nelems, stream), pe);
    }
    /* Same stream: the signal kernel starts after the copy has completed. */
    stream_check(st, __func__, gshmemi_stream_signal(st->device, (uint64_t *)sig, signal, sig_op, stream), pe);
}

void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    stream_check_sig_op(st, __func__, sig_op, pe);
    size_t sig_off = stream_sig_offset(st, __func__, sig_addr, pe);
    char *sig = stream_peer_addr(st, __func__, pe, sig_off);
    if (!sig) {
        stream_proxy(st, __func__,
                     (struct gshmemi_stream_proxy_args){.kind = GSHMEMI_STREAM_PROXY_SIGNAL, .pe = pe,
                                                        .sig_addr = (uintptr_t)sig_addr, .signal = signal,
                                                        .sig_op = sig_op},
                     stream);
        return;
    }
    stream_check(st, __func__, gshmemi_stream_signal(st->device, (uint64_t *)sig, signal, sig_op, stream), pe);
}

void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    if (cmp < GSHMEM_CMP_EQ || cmp > GSHMEM_CMP_LE) {
        GSHMEMI_ERROR(SYNC, "%s: cmp=%d is not a GSHMEM_CMP_* value (PE %d)", __func__, cmp, st->my_pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    stream_sig_offset(st, __func__, sig_addr, st->my_pe);
    int err = gshmemi_stream_wait(st->device, sig_addr, cmp, cmp_value, gshmemi_device_timeout_ns(st), st->my_pe,
                                  stream);
    stream_check(st, __func__, err, st->my_pe);
}

void gshmemx_quiet_on_stream(struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    if (st->proxy) { /* the fence, and a QUIET through the ring */
        stream_proxy(st, __func__,
                     (struct gshmemi_stream_proxy_args){.kind = GSHMEMI_STREAM_PROXY_QUIET, .pe = st->my_pe},
                     stream);
        return;
    }
    stream_check(st, __func__, gshmemi_stream_quiet(st->device, stream), st->my_pe);
}

/* Round r signals PE (me + 2^r) % n, as the device API's barrier does. */
static void stream_barrier(const char *fn, int complete, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(fn);
    if (st->proxy) { /* some PE is a PROXY peer: the world team's barrier, which reaches it through the ring */
        struct gshmemi_stream_coll_args a = {.kind = complete ? GSHMEMI_STREAM_COLL_BARRIER : GSHMEMI_STREAM_COLL_SYNC,
                                             .team = GSHMEM_TEAM_WORLD, .team_size = st->n_pes,
                                             .my_index = st->my_pe, .my_pe = st->my_pe};
        stream_check(st, fn, gshmemi_stream_coll(st->device, &a, stream), st->my_pe);
        return;
    }
    struct gshmemi_stream_barrier_args args = {.timeout_ns = gshmemi_device_timeout_ns(st), .my_pe = st->my_pe,
                                               .complete = complete};
    args.mine = (uint64_t)(uintptr_t)st->heap.base;
    for (int dist = 1; dist < st->n_pes; dist <<= 1, args.rounds++) {
        int pe = (st->my_pe + dist) % st->n_pes;
        args.to[args.rounds] = (uint64_t)(uintptr_t)stream_peer_addr(st, fn, pe, 0);
    }
    stream_check(st, fn, gshmemi_stream_barrier(st->device, &args, stream), st->my_pe);
}

void gshmemx_barrier_all_on_stream(struct CUstream_st *stream)
{
    stream_barrier(__func__, 1, stream);
}

void gshmemx_sync_all_on_stream(struct CUstream_st *stream)
{
    stream_barrier(__func__, 0, stream);
}
#else
/* Without CUDA there are no streams and no device heap: every call says so and ends the job. */
_Noreturn static void stream_not_built(const char *fn)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    GSHMEMI_ERROR(RMA, "%s: PE %d: stream-ordered calls need a CUDA build of gshmem and the device heap; this "
                       "build has no CUDA support (%s)", fn, st->my_pe, gshmemx_strerror(GSHMEMX_ERR_NOT_SUPPORTED));
    gshmemi_fatal(st, GSHMEMX_ERR_NOT_SUPPORTED);
}

void gshmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream)
{
    (void)dest, (void)source, (void)nelems, (void)pe, (void)stream;
    stream_not_built(__func__);
}

void gshmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream)
{
    (void)dest, (void)source, (void)nelems, (void)pe, (void)stream;
    stream_not_built(__func__);
}

void gshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe, struct CUstream_st *stream)
{
    (void)dest, (void)source, (void)nelems, (void)sig_addr, (void)signal, (void)sig_op, (void)pe, (void)stream;
    stream_not_built(__func__);
}

void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, struct CUstream_st *stream)
{
    (void)sig_addr, (void)signal, (void)sig_op, (void)pe, (void)stream;
    stream_not_built(__func__);
}

void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value, struct CUstream_st *stream)
{
    (void)sig_addr, (void)cmp, (void)cmp_value, (void)stream;
    stream_not_built(__func__);
}

void gshmemx_quiet_on_stream(struct CUstream_st *stream)
{
    (void)stream;
    stream_not_built(__func__);
}

void gshmemx_barrier_all_on_stream(struct CUstream_st *stream)
{
    (void)stream;
    stream_not_built(__func__);
}

void gshmemx_sync_all_on_stream(struct CUstream_st *stream)
{
    (void)stream;
    stream_not_built(__func__);
}
#endif
