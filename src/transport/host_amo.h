/* Atomics and signals on host memory with CPU atomics: the one agent for host-heap
 * words, whether the caller is a node-local PE (p2p) or a remote one (the tcp target). */
#ifndef GSHMEMI_HOST_AMO_H
#define GSHMEMI_HOST_AMO_H

#include "transport/transport.h"

#include <gshmem/status.h>

#include <stdint.h>

#define GSHMEMI_HOST_AMO_APPLY(T, p, amo, old)                                                      \
    do {                                                                                            \
        T *obj = (T *)(p), operand = (T)(amo)->operand;                                             \
        switch ((amo)->op) {                                                                        \
        case GSHMEMI_AMO_FETCH: old = __atomic_load_n(obj, __ATOMIC_SEQ_CST); break;                \
        case GSHMEMI_AMO_SET: __atomic_store_n(obj, operand, __ATOMIC_SEQ_CST); break;              \
        case GSHMEMI_AMO_SWAP: old = __atomic_exchange_n(obj, operand, __ATOMIC_SEQ_CST); break;    \
        case GSHMEMI_AMO_COMPARE_SWAP: {                                                            \
            T expected = (T)(amo)->compare;                                                         \
            __atomic_compare_exchange_n(obj, &expected, operand, 0, __ATOMIC_SEQ_CST,               \
                                        __ATOMIC_SEQ_CST);                                          \
            old = expected;                                                                         \
            break;                                                                                  \
        }                                                                                           \
        case GSHMEMI_AMO_ADD: old = __atomic_fetch_add(obj, operand, __ATOMIC_SEQ_CST); break;      \
        case GSHMEMI_AMO_AND: old = __atomic_fetch_and(obj, operand, __ATOMIC_SEQ_CST); break;      \
        case GSHMEMI_AMO_OR: old = __atomic_fetch_or(obj, operand, __ATOMIC_SEQ_CST); break;        \
        case GSHMEMI_AMO_XOR: old = __atomic_fetch_xor(obj, operand, __ATOMIC_SEQ_CST); break;      \
        default: return GSHMEMX_ERR_INVALID_ARG;                                                    \
        }                                                                                           \
    } while (0)

/* Applies amo to the word at p (4 or 8 bytes); the previous value to *fetched (may be NULL). */
static inline int gshmemi_host_amo(void *p, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    uint64_t old = 0;
    if (amo->width == 8) {
        GSHMEMI_HOST_AMO_APPLY(uint64_t, p, amo, old);
    } else if (amo->width == 4) {
        uint32_t old32 = 0;
        GSHMEMI_HOST_AMO_APPLY(uint32_t, p, amo, old32);
        old = old32;
    } else {
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (fetched) *fetched = old;
    return 0;
}

/* SET (0) or ADD (1) with release: a PE that acquires the new value also sees the data
 * this thread wrote before. */
static inline void gshmemi_host_signal(uint64_t *sig, uint64_t signal, int sig_op)
{
    if (sig_op == 1) __atomic_fetch_add(sig, signal, __ATOMIC_RELEASE);
    else __atomic_store_n(sig, signal, __ATOMIC_RELEASE);
}

#endif
