/*
 * OpenSHMEM 1.5 generic interfaces for C11: gshmem_put(dest, source, nelems, pe) and
 * the other type-generic names select the typed routine (gshmem_int_put, ...) from the
 * type of the object they act on, by _Generic. C only: <gshmem.h> includes this header
 * when compiled as C11 or later, never as C++ (CUDA sources, device code), where the
 * typed names are the interface. Each name takes exactly the typed routine's arguments
 * (the names below spell out those before and including the one that selects);
 * an object whose type is not in the routine's table is a compile-time error
 * ("not compatible with any association").
 *
 * The tables list distinct C types only: fixed-width and size types are typedefs of them
 * (int64_t is long, size_t is unsigned long on LP64), so they select the routine of their
 * underlying type, which has the same size and arithmetic. Two tables need typedef names:
 * bitwise AMOs and bitwise reductions, whose signed types OpenSHMEM gives only as
 * int8_t .. int64_t.
 */
#ifndef GSHMEM_GENERIC_H
#define GSHMEM_GENERIC_H

#include <stdint.h>

/* ---- Type tables: the typed routine for each distinct C type ----------------------------- */

/* Association lists, composed into the tables below. */
#define GSHMEMI_GENERIC_LIST_AMO(OP)                                                             \
    int: gshmem_int_##OP, long: gshmem_long_##OP, long long: gshmem_longlong_##OP,              \
    unsigned int: gshmem_uint_##OP, unsigned long: gshmem_ulong_##OP,                           \
    unsigned long long: gshmem_ulonglong_##OP
#define GSHMEMI_GENERIC_LIST_SHORT(OP) short: gshmem_short_##OP, unsigned short: gshmem_ushort_##OP
#define GSHMEMI_GENERIC_LIST_FLOAT(OP) float: gshmem_float_##OP, double: gshmem_double_##OP
#define GSHMEMI_GENERIC_LIST_RMA(OP)                                                             \
    GSHMEMI_GENERIC_LIST_FLOAT(OP), char: gshmem_char_##OP, signed char: gshmem_schar_##OP,      \
    unsigned char: gshmem_uchar_##OP, GSHMEMI_GENERIC_LIST_SHORT(OP), GSHMEMI_GENERIC_LIST_AMO(OP)

/* RMA, put_signal and the collectives (OpenSHMEM Table 5, standard RMA types). */
#define GSHMEMI_GENERIC_RMA(x, OP) _Generic(*(x), long double: gshmem_longdouble_##OP, GSHMEMI_GENERIC_LIST_RMA(OP))
/* max, min, sum, prod _reduce (Table 10's arithmetic types): the same without long double,
 * which has no typed reductions (nor has any complex type). */
#define GSHMEMI_GENERIC_REDUCE_ARITH(x, OP) _Generic(*(x), GSHMEMI_GENERIC_LIST_RMA(OP))
/* AMOs on the standard AMO types (Table 6). */
#define GSHMEMI_GENERIC_AMO_STANDARD(x, OP) _Generic(*(x), GSHMEMI_GENERIC_LIST_AMO(OP))
/* fetch, set, swap: the extended AMO types, the standard ones and float, double. */
#define GSHMEMI_GENERIC_AMO_EXTENDED(x, OP) _Generic(*(x), GSHMEMI_GENERIC_LIST_FLOAT(OP), GSHMEMI_GENERIC_LIST_AMO(OP))
/* wait_until and test families: the point-to-point synchronization types (Table 12). */
#define GSHMEMI_GENERIC_SYNC(x, OP) _Generic(*(x), GSHMEMI_GENERIC_LIST_SHORT(OP), GSHMEMI_GENERIC_LIST_AMO(OP))
/* and, or, xor AMOs: the bitwise AMO types. */
#define GSHMEMI_GENERIC_AMO_BITWISE(x, OP)                                                       \
    _Generic(*(x), unsigned int: gshmem_uint_##OP, unsigned long: gshmem_ulong_##OP,            \
             unsigned long long: gshmem_ulonglong_##OP, int32_t: gshmem_int32_##OP,             \
             int64_t: gshmem_int64_##OP)
/* and_reduce, or_reduce, xor_reduce (Table 10, bitwise types). */
#define GSHMEMI_GENERIC_REDUCE_BITWISE(x, OP)                                                    \
    _Generic(*(x), unsigned char: gshmem_uchar_##OP, unsigned short: gshmem_ushort_##OP,        \
             unsigned int: gshmem_uint_##OP, unsigned long: gshmem_ulong_##OP,                  \
             unsigned long long: gshmem_ulonglong_##OP, int8_t: gshmem_int8_##OP,               \
             int16_t: gshmem_int16_##OP, int32_t: gshmem_int32_##OP, int64_t: gshmem_int64_##OP)

/* ---- RMA and put_signal: chosen by the type of dest (source for g) ------------------------- */

#define gshmem_put(dest, ...) GSHMEMI_GENERIC_RMA(dest, put)(dest, __VA_ARGS__)
#define gshmem_get(dest, ...) GSHMEMI_GENERIC_RMA(dest, get)(dest, __VA_ARGS__)
#define gshmem_put_nbi(dest, ...) GSHMEMI_GENERIC_RMA(dest, put_nbi)(dest, __VA_ARGS__)
#define gshmem_get_nbi(dest, ...) GSHMEMI_GENERIC_RMA(dest, get_nbi)(dest, __VA_ARGS__)
#define gshmem_p(dest, ...) GSHMEMI_GENERIC_RMA(dest, p)(dest, __VA_ARGS__)
#define gshmem_g(source, ...) GSHMEMI_GENERIC_RMA(source, g)(source, __VA_ARGS__)
#define gshmem_iput(dest, ...) GSHMEMI_GENERIC_RMA(dest, iput)(dest, __VA_ARGS__)
#define gshmem_iget(dest, ...) GSHMEMI_GENERIC_RMA(dest, iget)(dest, __VA_ARGS__)
#define gshmem_put_signal(dest, ...) GSHMEMI_GENERIC_RMA(dest, put_signal)(dest, __VA_ARGS__)
#define gshmem_put_signal_nbi(dest, ...) GSHMEMI_GENERIC_RMA(dest, put_signal_nbi)(dest, __VA_ARGS__)

/* ---- AMOs: chosen by the type of dest (source for fetch) ------------------------------------ */

#define gshmem_atomic_fetch(source, ...) GSHMEMI_GENERIC_AMO_EXTENDED(source, atomic_fetch)(source, __VA_ARGS__)
#define gshmem_atomic_set(dest, ...) GSHMEMI_GENERIC_AMO_EXTENDED(dest, atomic_set)(dest, __VA_ARGS__)
#define gshmem_atomic_swap(dest, ...) GSHMEMI_GENERIC_AMO_EXTENDED(dest, atomic_swap)(dest, __VA_ARGS__)
#define gshmem_atomic_fetch_nbi(fetch, source, ...) \
    GSHMEMI_GENERIC_AMO_EXTENDED(source, atomic_fetch_nbi)(fetch, source, __VA_ARGS__)
#define gshmem_atomic_swap_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_EXTENDED(dest, atomic_swap_nbi)(fetch, dest, __VA_ARGS__)

#define gshmem_atomic_compare_swap(dest, ...) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_compare_swap)(dest, __VA_ARGS__)
#define gshmem_atomic_fetch_inc(dest, ...) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_inc)(dest, __VA_ARGS__)
#define gshmem_atomic_inc(dest, ...) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_inc)(dest, __VA_ARGS__)
#define gshmem_atomic_fetch_add(dest, ...) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_add)(dest, __VA_ARGS__)
#define gshmem_atomic_add(dest, ...) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_add)(dest, __VA_ARGS__)
#define gshmem_atomic_compare_swap_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_compare_swap_nbi)(fetch, dest, __VA_ARGS__)
#define gshmem_atomic_fetch_inc_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_inc_nbi)(fetch, dest, __VA_ARGS__)
#define gshmem_atomic_fetch_add_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_add_nbi)(fetch, dest, __VA_ARGS__)

#define gshmem_atomic_fetch_and(dest, ...) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_and)(dest, __VA_ARGS__)
#define gshmem_atomic_and(dest, ...) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_and)(dest, __VA_ARGS__)
#define gshmem_atomic_fetch_or(dest, ...) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_or)(dest, __VA_ARGS__)
#define gshmem_atomic_or(dest, ...) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_or)(dest, __VA_ARGS__)
#define gshmem_atomic_fetch_xor(dest, ...) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_xor)(dest, __VA_ARGS__)
#define gshmem_atomic_xor(dest, ...) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_xor)(dest, __VA_ARGS__)
#define gshmem_atomic_fetch_and_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_and_nbi)(fetch, dest, __VA_ARGS__)
#define gshmem_atomic_fetch_or_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_or_nbi)(fetch, dest, __VA_ARGS__)
#define gshmem_atomic_fetch_xor_nbi(fetch, dest, ...) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_xor_nbi)(fetch, dest, __VA_ARGS__)

/* ---- Point-to-point synchronization: chosen by the type of the ivars ------------------------ */

#define gshmem_wait_until(ivar, ...) GSHMEMI_GENERIC_SYNC(ivar, wait_until)(ivar, __VA_ARGS__)
#define gshmem_wait_until_all(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, wait_until_all)(ivars, __VA_ARGS__)
#define gshmem_wait_until_any(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, wait_until_any)(ivars, __VA_ARGS__)
#define gshmem_wait_until_some(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, wait_until_some)(ivars, __VA_ARGS__)
#define gshmem_wait_until_all_vector(ivars, ...) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_all_vector)(ivars, __VA_ARGS__)
#define gshmem_wait_until_any_vector(ivars, ...) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_any_vector)(ivars, __VA_ARGS__)
#define gshmem_wait_until_some_vector(ivars, ...) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_some_vector)(ivars, __VA_ARGS__)
#define gshmem_test(ivar, ...) GSHMEMI_GENERIC_SYNC(ivar, test)(ivar, __VA_ARGS__)
#define gshmem_test_all(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, test_all)(ivars, __VA_ARGS__)
#define gshmem_test_any(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, test_any)(ivars, __VA_ARGS__)
#define gshmem_test_some(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, test_some)(ivars, __VA_ARGS__)
#define gshmem_test_all_vector(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, test_all_vector)(ivars, __VA_ARGS__)
#define gshmem_test_any_vector(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, test_any_vector)(ivars, __VA_ARGS__)
#define gshmem_test_some_vector(ivars, ...) GSHMEMI_GENERIC_SYNC(ivars, test_some_vector)(ivars, __VA_ARGS__)

/* ---- Collectives: chosen by the type of dest -------------------------------------------------- */

#define gshmem_broadcast(team, dest, ...) GSHMEMI_GENERIC_RMA(dest, broadcast)(team, dest, __VA_ARGS__)
#define gshmem_collect(team, dest, ...) GSHMEMI_GENERIC_RMA(dest, collect)(team, dest, __VA_ARGS__)
#define gshmem_fcollect(team, dest, ...) GSHMEMI_GENERIC_RMA(dest, fcollect)(team, dest, __VA_ARGS__)
#define gshmem_alltoall(team, dest, ...) GSHMEMI_GENERIC_RMA(dest, alltoall)(team, dest, __VA_ARGS__)
#define gshmem_alltoalls(team, dest, ...) GSHMEMI_GENERIC_RMA(dest, alltoalls)(team, dest, __VA_ARGS__)

#define gshmem_and_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_BITWISE(dest, and_reduce)(team, dest, __VA_ARGS__)
#define gshmem_or_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_BITWISE(dest, or_reduce)(team, dest, __VA_ARGS__)
#define gshmem_xor_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_BITWISE(dest, xor_reduce)(team, dest, __VA_ARGS__)
#define gshmem_max_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_ARITH(dest, max_reduce)(team, dest, __VA_ARGS__)
#define gshmem_min_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_ARITH(dest, min_reduce)(team, dest, __VA_ARGS__)
#define gshmem_sum_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_ARITH(dest, sum_reduce)(team, dest, __VA_ARGS__)
#define gshmem_prod_reduce(team, dest, ...) GSHMEMI_GENERIC_REDUCE_ARITH(dest, prod_reduce)(team, dest, __VA_ARGS__)

#endif /* GSHMEM_GENERIC_H */
