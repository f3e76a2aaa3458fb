/* Atomic memory operations: typed wrappers over one generic call. Values cross the
 * transport as the object's bytes zero-extended to 64 bits (little-endian hosts). */
#include "core/api.h"

#include <gshmem.h>

#include <string.h>

/* The remote object's name in fn's signature, for messages: signals take sig_addr, the
 * fetches (atomic_fetch, atomic_fetch_nbi) source, every other atomic dest. */
static const char *amo_arg(const char *fn)
{
    if (strstr(fn, "signal")) return "sig_addr";
    size_t n = strlen(fn);
    int fetch = (n >= 13 && strcmp(fn + n - 13, "_atomic_fetch") == 0) ||
                (n >= 17 && strcmp(fn + n - 17, "_atomic_fetch_nbi") == 0);
    return fetch ? "source" : "dest";
}

uint64_t gshmemi_amo(const char *fn, void *dest, int op, size_t width, uint64_t operand, uint64_t compare, int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    struct gshmemi_transport *tp = gshmemi_api_peer(st, fn, pe);
    const char *arg = amo_arg(fn);
    size_t off = gshmemi_api_offset(st, fn, arg, dest, width, pe);
    if (off % width) {
        GSHMEMI_ERROR(AMO, "%s: %s=%p is not aligned to %zu bytes (peer PE %d)", fn, arg, dest, width, pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    struct gshmemi_amo amo = {.op = op, .width = (unsigned)width, .offset = off, .operand = operand,
                              .compare = compare};
    uint64_t fetched = 0;
    if (st->transports.amo) tp = st->transports.amo; /* one agent per object (transport.h) */
    gshmemi_api_check_rc(st, fn, tp->ops->amo(tp, pe, &amo, &fetched), pe);
    return fetched;
}

static inline uint64_t amo_bits(const void *value, size_t width)
{
    uint64_t bits = 0;
    memcpy(&bits, value, width);
    return bits;
}

/* Typed result from the fetched bits. */
#define AMO_RETURN(T, bits)           \
    do {                              \
        T result_;                    \
        uint64_t bits_ = (bits);      \
        memcpy(&result_, &bits_, sizeof(T)); \
        return result_;               \
    } while (0)

#define AMO_CALL(T, dest, op, value, compare, pe) \
    gshmemi_amo(__func__, (void *)(dest), op, sizeof(T), amo_bits(&(value), sizeof(T)), compare, pe)

#define GSHMEMI_DEFINE_AMO_EXTENDED(T, N)                                                 \
    T gshmem_##N##_atomic_fetch(const T *source, int pe)                                  \
    {                                                                                     \
        T zero = 0;                                                                       \
        AMO_RETURN(T, AMO_CALL(T, source, GSHMEMI_AMO_FETCH, zero, 0, pe));               \
    }                                                                                     \
    void gshmem_##N##_atomic_set(T *dest, T value, int pe)                                \
    {                                                                                     \
        AMO_CALL(T, dest, GSHMEMI_AMO_SET, value, 0, pe);                                 \
    }                                                                                     \
    T gshmem_##N##_atomic_swap(T *dest, T value, int pe)                                  \
    {                                                                                     \
        AMO_RETURN(T, AMO_CALL(T, dest, GSHMEMI_AMO_SWAP, value, 0, pe));                 \
    }                                                                                     \
    void gshmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                 \
    {                                                                                     \
        *fetch = gshmem_##N##_atomic_fetch(source, pe);                                   \
    }                                                                                     \
    void gshmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                 \
    {                                                                                     \
        *fetch = gshmem_##N##_atomic_swap(dest, value, pe);                               \
    }
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DEFINE_AMO_EXTENDED)
#undef GSHMEMI_DEFINE_AMO_EXTENDED

#define GSHMEMI_DEFINE_AMO_STANDARD(T, N)                                                           \
    T gshmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                            \
    {                                                                                               \
        AMO_RETURN(T, AMO_CALL(T, dest, GSHMEMI_AMO_COMPARE_SWAP, value, amo_bits(&cond, sizeof(T)), pe)); \
    }                                                                                               \
    T gshmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                                       \
    {                                                                                               \
        AMO_RETURN(T, AMO_CALL(T, dest, GSHMEMI_AMO_ADD, value, 0, pe));                            \
    }                                                                                               \
    void gshmem_##N##_atomic_add(T *dest, T value, int pe)                                          \
    {                                                                                               \
        AMO_CALL(T, dest, GSHMEMI_AMO_ADD, value, 0, pe);                                           \
    }                                                                                               \
    T gshmem_##N##_atomic_fetch_inc(T *dest, int pe)                                                \
    {                                                                                               \
        return gshmem_##N##_atomic_fetch_add(dest, (T)1, pe);                                       \
    }                                                                                               \
    void gshmem_##N##_atomic_inc(T *dest, int pe)                                                   \
    {                                                                                               \
        gshmem_##N##_atomic_add(dest, (T)1, pe);                                                    \
    }                                                                                               \
    void gshmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)           \
    {                                                                                               \
        *fetch = gshmem_##N##_atomic_compare_swap(dest, cond, value, pe);                           \
    }                                                                                               \
    void gshmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                               \
    {                                                                                               \
        *fetch = gshmem_##N##_atomic_fetch_add(dest, (T)1, pe);                                     \
    }                                                                                               \
    void gshmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                      \
    {                                                                                               \
        *fetch = gshmem_##N##_atomic_fetch_add(dest, value, pe);                                    \
    }
GSHMEM_AMO_STANDARD_TYPES(GSHMEMI_DEFINE_AMO_STANDARD)
#undef GSHMEMI_DEFINE_AMO_STANDARD

#define GSHMEMI_DEFINE_AMO_BITWISE_OP(T, N, OP, CODE)                                    \
    T gshmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                           \
    {                                                                                    \
        AMO_RETURN(T, AMO_CALL(T, dest, CODE, value, 0, pe));                            \
    }                                                                                    \
    void gshmem_##N##_atomic_##OP(T *dest, T value, int pe)                              \
    {                                                                                    \
        AMO_CALL(T, dest, CODE, value, 0, pe);                                           \
    }                                                                                    \
    void gshmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe)        \
    {                                                                                    \
        *fetch = gshmem_##N##_atomic_fetch_##OP(dest, value, pe);                        \
    }
#define GSHMEMI_DEFINE_AMO_BITWISE(T, N)                           \
    GSHMEMI_DEFINE_AMO_BITWISE_OP(T, N, and, GSHMEMI_AMO_AND)      \
    GSHMEMI_DEFINE_AMO_BITWISE_OP(T, N, or, GSHMEMI_AMO_OR)        \
    GSHMEMI_DEFINE_AMO_BITWISE_OP(T, N, xor, GSHMEMI_AMO_XOR)
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DEFINE_AMO_BITWISE)
#undef GSHMEMI_DEFINE_AMO_BITWISE
#undef GSHMEMI_DEFINE_AMO_BITWISE_OP
