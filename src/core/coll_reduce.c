/*
 * Host reductions: gshmem_<type>_<op>_reduce for every row of GSHMEM_REDUCE_OPS,
 * one engine over (op, type). After an entry barrier each member reads every
 * member's source, a chunk at a time, and combines in team order 0..n-1, so every
 * member computes bit-identical results (floating point included).
 */
#include "core/coll.h"

#include "core/api.h"
#include "core/team.h"

#include <gshmem.h>

#include <stdint.h>
#include <string.h>

enum reduce_op { REDUCE_OP_and, REDUCE_OP_or, REDUCE_OP_xor, REDUCE_OP_max, REDUCE_OP_min, REDUCE_OP_sum, REDUCE_OP_prod };

const char *gshmemi_coll_reduce_op_name(int64_t op)
{
    static const char *const names[] = {"and", "or", "xor", "max", "min", "sum", "prod"}; /* enum reduce_op */
    return op >= 0 && op < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[op] : "?";
}

enum reduce_type {
#define REDUCE_TYPE_ENUM(T, N) REDUCE_TYPE_##N,
    GSHMEM_REDUCE_ARITH_TYPES(REDUCE_TYPE_ENUM)
#undef REDUCE_TYPE_ENUM
};

/* What GSHMEM_CHECK compares of a reduction's type: its representation, not its name, so
 * that members calling long and int64 (or int and int32) forms of one reduction agree,
 * as their data does. Bitwise ops see bytes only: signedness does not matter to them. */
static int64_t reduce_repr(int op, int type)
{
#define REDUCE_TYPE_REPR(T, N) (((T)0.5 != 0) ? 2 : ((T)-1 < (T)1) ? 1 : 0) * 64 + (int)sizeof(T),
    static const int repr[] = {GSHMEM_REDUCE_ARITH_TYPES(REDUCE_TYPE_REPR)};
#undef REDUCE_TYPE_REPR
    if (op <= REDUCE_OP_xor) return repr[type] % 64; /* the size */
    return repr[type];
}

/* and/or/xor act on bits whatever the integer type, so one byte loop serves all. */
static void reduce_bits(int op, unsigned char *acc, const unsigned char *x, size_t len)
{
    switch (op) {
    case REDUCE_OP_and:
        for (size_t i = 0; i < len; i++) acc[i] &= x[i];
        break;
    case REDUCE_OP_or:
        for (size_t i = 0; i < len; i++) acc[i] |= x[i];
        break;
    default:
        for (size_t i = 0; i < len; i++) acc[i] ^= x[i];
        break;
    }
}

/* Integer sums and products wrap: computed modulo 2^64, then narrowed (GCC and Clang
 * define that conversion), so a signed overflow in the program's data is not
 * undefined behaviour in the library. */
#define REDUCE_ADD(T, a, b) \
    _Generic((T)0, float: (a) + (b), double: (a) + (b), default: (T)((uint64_t)(a) + (uint64_t)(b)))
#define REDUCE_MUL(T, a, b) \
    _Generic((T)0, float: (a) * (b), double: (a) * (b), default: (T)((uint64_t)(a) * (uint64_t)(b)))

#define REDUCE_ARITH(T, op, acc, x, n)                                                  \
    do {                                                                                \
        T *a_ = (T *)(acc);                                                             \
        const T *b_ = (const T *)(x);                                                   \
        switch (op) {                                                                   \
        case REDUCE_OP_max:                                                             \
            for (size_t i_ = 0; i_ < (n); i_++) a_[i_] = b_[i_] > a_[i_] ? b_[i_] : a_[i_]; \
            break;                                                                      \
        case REDUCE_OP_min:                                                             \
            for (size_t i_ = 0; i_ < (n); i_++) a_[i_] = b_[i_] < a_[i_] ? b_[i_] : a_[i_]; \
            break;                                                                      \
        case REDUCE_OP_sum:                                                             \
            for (size_t i_ = 0; i_ < (n); i_++) a_[i_] = REDUCE_ADD(T, a_[i_], b_[i_]); \
            break;                                                                      \
        default:                                                                        \
            for (size_t i_ = 0; i_ < (n); i_++) a_[i_] = REDUCE_MUL(T, a_[i_], b_[i_]); \
            break;                                                                      \
        }                                                                               \
    } while (0)

/* acc[i] = acc[i] op x[i] for n elements of type `type` (max, min, sum, prod). */
static void reduce_arith(int op, int type, void *acc, const void *x, size_t n)
{
    switch (type) {
#define REDUCE_TYPE_CASE(T, N)             \
    case REDUCE_TYPE_##N:                  \
        REDUCE_ARITH(T, op, acc, x, n);    \
        break;
        GSHMEM_REDUCE_ARITH_TYPES(REDUCE_TYPE_CASE)
#undef REDUCE_TYPE_CASE
    }
}

/* buf.acc = op over the team, in team order, of len bytes at src_off. */
static void reduce_chunk(const struct gshmemi_coll *c, size_t src_off, size_t len, size_t elem, int op, int type)
{
    const struct gshmemi_team *t = c->t;
    gshmemi_coll_get(c, gshmemi_team_world_pe(t, 0), src_off, c->buf.acc, len);
    for (int i = 1; i < t->size; i++) {
        const void *x = gshmemi_coll_read(c, gshmemi_team_world_pe(t, i), src_off, len, c->buf.in);
        if (op <= REDUCE_OP_xor) reduce_bits(op, (unsigned char *)c->buf.acc, x, len);
        else reduce_arith(op, type, c->buf.acc, x, len / elem);
    }
}

/* In place (dest == source), a chunk's result waits in buf.acc until every member
 * has read that chunk of our source: one barrier per chunk, none at the end. */
static int reduce(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nreduce, size_t elem,
                  int op, int type)
{
    struct gshmemi_coll c;
    int rc = gshmemi_coll_begin(&c, fn, team);
    if (rc != 0) return rc;
    gshmemi_coll_check_call(c.st, fn, team, GSHMEMI_COLL_REDUCE, elem, op, reduce_repr(op, type), (int64_t)nreduce,
                            type);
    size_t len = gshmemi_api_bytes(c.st, fn, nreduce, elem);
    if (len == 0) return 0;
    size_t dst_off = gshmemi_api_offset(c.st, fn, "dest", dest, len, c.st->my_pe);
    size_t src_off = gshmemi_api_offset(c.st, fn, "source", source, len, c.st->my_pe);
    if ((rc = gshmemi_coll_check_overlap(&c, dest, len, source, len, 1)) != 0) return rc;
    int in_place = dest == source;
    size_t chunk = GSHMEMI_COLL_CHUNK / elem * elem;
    gshmemi_team_sync_host(c.st, team, fn); /* every member's source holds its data */
    for (size_t done = 0; done < len; done += chunk) {
        size_t n = len - done < chunk ? len - done : chunk;
        reduce_chunk(&c, src_off + done, n, elem, op, type);
        if (in_place) gshmemi_team_sync_host(c.st, team, fn);
        gshmemi_coll_put(&c, c.st->my_pe, dst_off + done, c.buf.acc, n);
    }
    gshmemi_sync_quiet(c.st, fn);
    if (!in_place) gshmemi_team_sync_host(c.st, team, fn); /* nobody reads our source any more */
    return 0;
}

#define GSHMEMI_DEFINE_REDUCE_T(T, N, OP)                                                               \
    int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T *dest, const T *source, size_t nreduce)        \
    {                                                                                                   \
        return reduce(__func__, team, dest, source, nreduce, sizeof(T), REDUCE_OP_##OP, REDUCE_TYPE_##N); \
    }
#define GSHMEMI_DEFINE_REDUCE_and(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, and)
#define GSHMEMI_DEFINE_REDUCE_or(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, or)
#define GSHMEMI_DEFINE_REDUCE_xor(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, xor)
#define GSHMEMI_DEFINE_REDUCE_max(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, max)
#define GSHMEMI_DEFINE_REDUCE_min(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, min)
#define GSHMEMI_DEFINE_REDUCE_sum(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, sum)
#define GSHMEMI_DEFINE_REDUCE_prod(T, N) GSHMEMI_DEFINE_REDUCE_T(T, N, prod)
#define GSHMEMI_DEFINE_REDUCE_OP(OP, TYPES) TYPES(GSHMEMI_DEFINE_REDUCE_##OP)
GSHMEM_REDUCE_OPS(GSHMEMI_DEFINE_REDUCE_OP)
