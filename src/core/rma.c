/* RMA: checks arguments, translates addresses to heap offsets, calls the peer's transport. */
#include "core/api.h"

#include <gshmem.h>

void gshmemi_rma_put(const char *fn, void *dest, const void *src, size_t nelems, size_t elem, int pe, int nbi)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    size_t len = gshmemi_api_bytes(st, fn, nelems, elem);
    if (len == 0) return;
    size_t off = gshmemi_api_offset(st, fn, "dest", dest, len, pe);
    int rc = nbi ? tp->ops->put_nbi(tp, pe, off, src, len) : tp->ops->put(tp, pe, off, src, len);
    gshmemi_api_check_rc(st, fn, rc, pe);
}

void gshmemi_rma_get(const char *fn, void *dest, const void *src, size_t nelems, size_t elem, int pe, int nbi)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    size_t len = gshmemi_api_bytes(st, fn, nelems, elem);
    if (len == 0) return;
    size_t off = gshmemi_api_offset(st, fn, "source", src, len, pe);
    int rc = nbi ? tp->ops->get_nbi(tp, pe, dest, off, len) : tp->ops->get(tp, pe, dest, off, len);
    gshmemi_api_check_rc(st, fn, rc, pe);
}

/* Offset of the lowest byte a strided access touches, after checking both ends. */
static size_t rma_strided_offset(struct gshmemi_state *st, const char *fn, const char *arg, const void *addr,
                                 ptrdiff_t stride, size_t nelems, size_t elem, int pe)
{
    if (stride == 0 && nelems > 1) {
        GSHMEMI_ERROR(RMA, "%s: stride 0 for %s with nelems=%zu", fn, arg, nelems);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    size_t mag = stride < 0 ? (size_t)0 - (size_t)stride : (size_t)stride; /* PTRDIFF_MIN too */
    size_t span = gshmemi_api_bytes(st, fn, gshmemi_api_bytes(st, fn, nelems - 1, mag), elem);
    /* span + elem must not wrap: a wrapped length of 0 would pass the heap check
     * anywhere in the heap, and the elements would land far outside it. */
    if (span > SIZE_MAX - elem || span > (size_t)PTRDIFF_MAX) {
        GSHMEMI_ERROR(RMA, "%s: %s: nelems=%zu elements of %zu bytes at stride %td reach beyond any heap (peer PE %d)",
                      fn, arg, nelems, elem, stride, pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    uintptr_t first = (uintptr_t)addr, low = stride < 0 ? first - span : first;
    if (stride < 0 && span > first) low = UINTPTR_MAX - span; /* below address 0: outside, as the check says */
    return gshmemi_api_offset(st, fn, arg, (const void *)low, span + elem, pe) + (size_t)(first - low);
}

void gshmemi_rma_iput(const char *fn, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                      size_t elem, int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    if (nelems == 0) return;
    size_t off = rma_strided_offset(st, fn, "dest", dest, dst, nelems, elem, pe);
    int rc = tp->ops->iput(tp, pe, off, dst * (ptrdiff_t)elem, src, sst * (ptrdiff_t)elem, elem, nelems);
    gshmemi_api_check_rc(st, fn, rc, pe);
}

void gshmemi_rma_iget(const char *fn, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                      size_t elem, int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    if (nelems == 0) return;
    size_t off = rma_strided_offset(st, fn, "source", src, sst, nelems, elem, pe);
    int rc = tp->ops->iget(tp, pe, dest, dst * (ptrdiff_t)elem, off, sst * (ptrdiff_t)elem, elem, nelems);
    gshmemi_api_check_rc(st, fn, rc, pe);
}

void gshmemi_rma_put_signal(const char *fn, void *dest, const void *src, size_t nelems, size_t elem,
                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    if (sig_op != GSHMEM_SIGNAL_SET && sig_op != GSHMEM_SIGNAL_ADD) {
        GSHMEMI_ERROR(RMA, "%s: sig_op=%d is neither GSHMEM_SIGNAL_SET nor GSHMEM_SIGNAL_ADD (peer PE %d)", fn,
                      sig_op, pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    size_t len = gshmemi_api_bytes(st, fn, nelems, elem);
    size_t off = len ? gshmemi_api_offset(st, fn, "dest", dest, len, pe) : 0;
    size_t sig_off = gshmemi_api_offset(st, fn, "sig_addr", sig_addr, sizeof(uint64_t), pe);
    if (sig_off % sizeof(uint64_t)) {
        GSHMEMI_ERROR(RMA, "%s: sig_addr=%p is not 8-byte aligned (peer PE %d)", fn, (void *)sig_addr, pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    struct gshmemi_transport *agent = st->transports.amo;
    int rc;
    if (agent && agent != tp) { /* the data the usual way, complete; the signal through the atomics' agent */
        rc = len ? tp->ops->put(tp, pe, off, src, len) : 0;
        struct gshmemi_amo amo = {sig_op == GSHMEM_SIGNAL_ADD ? GSHMEMI_AMO_ADD : GSHMEMI_AMO_SET, 8, sig_off, signal, 0};
        if (rc == 0) rc = agent->ops->amo(agent, pe, &amo, NULL);
    } else {
        rc = tp->ops->put_signal(tp, pe, off, src, len, sig_off, signal, sig_op);
    }
    gshmemi_api_check_rc(st, fn, rc, pe);
}

void gshmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi_rma_put(__func__, dest, source, nelems, 1, pe, 0);
}

void gshmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi_rma_get(__func__, dest, source, nelems, 1, pe, 0);
}

void gshmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi_rma_put(__func__, dest, source, nelems, 1, pe, 1);
}

void gshmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    gshmemi_rma_get(__func__, dest, source, nelems, 1, pe, 1);
}

void gshmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                          int sig_op, int pe)
{
    gshmemi_rma_put_signal(__func__, dest, source, nelems, 1, sig_addr, signal, sig_op, pe);
}

void gshmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,
                              int sig_op, int pe)
{
    gshmemi_rma_put_signal(__func__, dest, source, nelems, 1, sig_addr, signal, sig_op, pe);
}

#define GSHMEMI_DEFINE_RMA(T, N)                                                                             \
    void gshmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                                   \
    {                                                                                                        \
        gshmemi_rma_put(__func__, dest, source, nelems, sizeof(T), pe, 0);                                   \
    }                                                                                                        \
    void gshmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                                   \
    {                                                                                                        \
        gshmemi_rma_get(__func__, dest, source, nelems, sizeof(T), pe, 0);                                   \
    }                                                                                                        \
    void gshmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                               \
    {                                                                                                        \
        gshmemi_rma_put(__func__, dest, source, nelems, sizeof(T), pe, 1);                                   \
    }                                                                                                        \
    void gshmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                               \
    {                                                                                                        \
        gshmemi_rma_get(__func__, dest, source, nelems, sizeof(T), pe, 1);                                   \
    }                                                                                                        \
    void gshmem_##N##_p(T *dest, T value, int pe)                                                            \
    {                                                                                                        \
        gshmemi_rma_put(__func__, dest, &value, 1, sizeof(T), pe, 0);                                        \
    }                                                                                                        \
    T gshmem_##N##_g(const T *source, int pe)                                                                \
    {                                                                                                        \
        T value;                                                                                             \
        gshmemi_rma_get(__func__, &value, source, 1, sizeof(T), pe, 0);                                      \
        return value;                                                                                        \
    }                                                                                                        \
    void gshmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)    \
    {                                                                                                        \
        gshmemi_rma_iput(__func__, dest, source, dst, sst, nelems, sizeof(T), pe);                           \
    }                                                                                                        \
    void gshmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)    \
    {                                                                                                        \
        gshmemi_rma_iget(__func__, dest, source, dst, sst, nelems, sizeof(T), pe);                           \
    }                                                                                                        \
    void gshmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,                \
                                 uint64_t signal, int sig_op, int pe)                                        \
    {                                                                                                        \
        gshmemi_rma_put_signal(__func__, dest, source, nelems, sizeof(T), sig_addr, signal, sig_op, pe);     \
    }                                                                                                        \
    void gshmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,            \
                                     uint64_t signal, int sig_op, int pe)                                    \
    {                                                                                                        \
        gshmemi_rma_put_signal(__func__, dest, source, nelems, sizeof(T), sig_addr, signal, sig_op, pe);     \
    }
GSHMEM_RMA_TYPES(GSHMEMI_DEFINE_RMA)
#undef GSHMEMI_DEFINE_RMA

#define GSHMEMI_DEFINE_SIZED(BITS, T)                                                                         \
    void gshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe)                              \
    {                                                                                                         \
        gshmemi_rma_put(__func__, dest, source, nelems, sizeof(T), pe, 0);                                    \
    }                                                                                                         \
    void gshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe)                              \
    {                                                                                                         \
        gshmemi_rma_get(__func__, dest, source, nelems, sizeof(T), pe, 0);                                    \
    }                                                                                                         \
    void gshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                        \
    {                                                                                                         \
        gshmemi_rma_put(__func__, dest, source, nelems, sizeof(T), pe, 1);                                    \
    }                                                                                                         \
    void gshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe)                        \
    {                                                                                                         \
        gshmemi_rma_get(__func__, dest, source, nelems, sizeof(T), pe, 1);                                    \
    }                                                                                                         \
    void gshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                         \
        gshmemi_rma_iput(__func__, dest, source, dst, sst, nelems, sizeof(T), pe);                            \
    }                                                                                                         \
    void gshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                                         \
        gshmemi_rma_iget(__func__, dest, source, dst, sst, nelems, sizeof(T), pe);                            \
    }                                                                                                         \
    void gshmem_put##BITS##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,         \
                                   uint64_t signal, int sig_op, int pe)                                       \
    {                                                                                                         \
        gshmemi_rma_put_signal(__func__, dest, source, nelems, sizeof(T), sig_addr, signal, sig_op, pe);      \
    }                                                                                                         \
    void gshmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,     \
                                       uint64_t signal, int sig_op, int pe)                                   \
    {                                                                                                         \
        gshmemi_rma_put_signal(__func__, dest, source, nelems, sizeof(T), sig_addr, signal, sig_op, pe);      \
    }
GSHMEM_SIZED_TYPES(GSHMEMI_DEFINE_SIZED)
#undef GSHMEMI_DEFINE_SIZED
