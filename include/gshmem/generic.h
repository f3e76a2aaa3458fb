/*
 * OpenSHMEM 1.5 generic interfaces for C11: gshmem_put(dest, source, nelems, pe) and
 * the other type-generic names select the typed routine (gshmem_int_put, ...) from the
 * type of the object they act on, by _Generic. C only: <gshmem.h> includes this header
 * when compiled as C11 or later, never as C++ (CUDA sources, device code), where the
 * typed names are the interface. Each name takes exactly the typed routine's arguments;
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

#define gshmem_put(dest, source, nelems, pe) GSHMEMI_GENERIC_RMA(dest, put)(dest, source, nelems, pe)
#define gshmem_get(dest, source, nelems, pe) GSHMEMI_GENERIC_RMA(dest, get)(dest, source, nelems, pe)
#define gshmem_put_nbi(dest, source, nelems, pe) GSHMEMI_GENERIC_RMA(dest, put_nbi)(dest, source, nelems, pe)
#define gshmem_get_nbi(dest, source, nelems, pe) GSHMEMI_GENERIC_RMA(dest, get_nbi)(dest, source, nelems, pe)
#define gshmem_p(dest, value, pe) GSHMEMI_GENERIC_RMA(dest, p)(dest, value, pe)
#define gshmem_g(source, pe) GSHMEMI_GENERIC_RMA(source, g)(source, pe)
#define gshmem_iput(dest, source, dst, sst, nelems, pe) \
    GSHMEMI_GENERIC_RMA(dest, iput)(dest, source, dst, sst, nelems, pe)
#define gshmem_iget(dest, source, dst, sst, nelems, pe) \
    GSHMEMI_GENERIC_RMA(dest, iget)(dest, source, dst, sst, nelems, pe)
#define gshmem_put_signal(dest, source, nelems, sig_addr, signal, sig_op, pe) \
    GSHMEMI_GENERIC_RMA(dest, put_signal)(dest, source, nelems, sig_addr, signal, sig_op, pe)
#define gshmem_put_signal_nbi(dest, source, nelems, sig_addr, signal, sig_op, pe) \
    GSHMEMI_GENERIC_RMA(dest, put_signal_nbi)(dest, source, nelems, sig_addr, signal, sig_op, pe)

/* ---- AMOs: chosen by the type of dest (source for fetch) ------------------------------------ */

#define gshmem_atomic_fetch(source, pe) GSHMEMI_GENERIC_AMO_EXTENDED(source, atomic_fetch)(source, pe)
#define gshmem_atomic_set(dest, value, pe) GSHMEMI_GENERIC_AMO_EXTENDED(dest, atomic_set)(dest, value, pe)
#define gshmem_atomic_swap(dest, value, pe) GSHMEMI_GENERIC_AMO_EXTENDED(dest, atomic_swap)(dest, value, pe)
#define gshmem_atomic_fetch_nbi(fetch, source, pe) \
    GSHMEMI_GENERIC_AMO_EXTENDED(source, atomic_fetch_nbi)(fetch, source, pe)
#define gshmem_atomic_swap_nbi(fetch, dest, value, pe) \
    GSHMEMI_GENERIC_AMO_EXTENDED(dest, atomic_swap_nbi)(fetch, dest, value, pe)

#define gshmem_atomic_compare_swap(dest, cond, value, pe) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_compare_swap)(dest, cond, value, pe)
#define gshmem_atomic_fetch_inc(dest, pe) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_inc)(dest, pe)
#define gshmem_atomic_inc(dest, pe) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_inc)(dest, pe)
#define gshmem_atomic_fetch_add(dest, value, pe) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_add)(dest, value, pe)
#define gshmem_atomic_add(dest, value, pe) GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_add)(dest, value, pe)
#define gshmem_atomic_compare_swap_nbi(fetch, dest, cond, value, pe) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_compare_swap_nbi)(fetch, dest, cond, value, pe)
#define gshmem_atomic_fetch_inc_nbi(fetch, dest, pe) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_inc_nbi)(fetch, dest, pe)
#define gshmem_atomic_fetch_add_nbi(fetch, dest, value, pe) \
    GSHMEMI_GENERIC_AMO_STANDARD(dest, atomic_fetch_add_nbi)(fetch, dest, value, pe)

#define gshmem_atomic_fetch_and(dest, value, pe) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_and)(dest, value, pe)
#define gshmem_atomic_and(dest, value, pe) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_and)(dest, value, pe)
#define gshmem_atomic_fetch_or(dest, value, pe) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_or)(dest, value, pe)
#define gshmem_atomic_or(dest, value, pe) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_or)(dest, value, pe)
#define gshmem_atomic_fetch_xor(dest, value, pe) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_xor)(dest, value, pe)
#define gshmem_atomic_xor(dest, value, pe) GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_xor)(dest, value, pe)
#define gshmem_atomic_fetch_and_nbi(fetch, dest, value, pe) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_and_nbi)(fetch, dest, value, pe)
#define gshmem_atomic_fetch_or_nbi(fetch, dest, value, pe) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_or_nbi)(fetch, dest, value, pe)
#define gshmem_atomic_fetch_xor_nbi(fetch, dest, value, pe) \
    GSHMEMI_GENERIC_AMO_BITWISE(dest, atomic_fetch_xor_nbi)(fetch, dest, value, pe)

/* ---- Point-to-point synchronization: chosen by the type of the ivars ------------------------ */

#define gshmem_wait_until(ivar, cmp, cmp_value) GSHMEMI_GENERIC_SYNC(ivar, wait_until)(ivar, cmp, cmp_value)
#define gshmem_wait_until_all(ivars, nelems, status, cmp, cmp_value) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_all)(ivars, nelems, status, cmp, cmp_value)
#define gshmem_wait_until_any(ivars, nelems, status, cmp, cmp_value) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_any)(ivars, nelems, status, cmp, cmp_value)
#define gshmem_wait_until_some(ivars, nelems, indices, status, cmp, cmp_value) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_some)(ivars, nelems, indices, status, cmp, cmp_value)
#define gshmem_wait_until_all_vector(ivars, nelems, status, cmp, cmp_values) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_all_vector)(ivars, nelems, status, cmp, cmp_values)
#define gshmem_wait_until_any_vector(ivars, nelems, status, cmp, cmp_values) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_any_vector)(ivars, nelems, status, cmp, cmp_values)
#define gshmem_wait_until_some_vector(ivars, nelems, indices, status, cmp, cmp_values) \
    GSHMEMI_GENERIC_SYNC(ivars, wait_until_some_vector)(ivars, nelems, indices, status, cmp, cmp_values)
#define gshmem_test(ivar, cmp, cmp_value) GSHMEMI_GENERIC_SYNC(ivar, test)(ivar, cmp, cmp_value)
#define gshmem_test_all(ivars, nelems, status, cmp, cmp_value) \
    GSHMEMI_GENERIC_SYNC(ivars, test_all)(ivars, nelems, status, cmp, cmp_value)
#define gshmem_test_any(ivars, nelems, status, cmp, cmp_value) \
    GSHMEMI_GENERIC_SYNC(ivars, test_any)(ivars, nelems, status, cmp, cmp_value)
#define gshmem_test_some(ivars, nelems, indices, status, cmp, cmp_value) \
    GSHMEMI_GENERIC_SYNC(ivars, test_some)(ivars, nelems, indices, status, cmp, cmp_value)
#define gshmem_test_all_vector(ivars, nelems, status, cmp, cmp_values) \
    GSHMEMI_GENERIC_SYNC(ivars, test_all_vector)(ivars, nelems, status, cmp, cmp_values)
#define gshmem_test_any_vector(ivars, nelems, status, cmp, cmp_values) \
    GSHMEMI_GENERIC_SYNC(ivars, test_any_vector)(ivars, nelems, status, cmp, cmp_values)
#define gshmem_test_some_vector(ivars, nelems, indices, status, cmp, cmp_values) \
    GSHMEMI_GENERIC_SYNC(ivars, test_some_vector)(ivars, nelems, indices, status, cmp, cmp_values)

/* ---- Collectives: chosen by the type of dest -------------------------------------------------- */

#define gshmem_broadcast(team, dest, source, nelems, PE_root) \
    GSHMEMI_GENERIC_RMA(dest, broadcast)(team, dest, source, nelems, PE_root)
#define gshmem_collect(team, dest, source, nelems) \
    GSHMEMI_GENERIC_RMA(dest, collect)(team, dest, source, nelems)
#define gshmem_fcollect(team, dest, source, nelems) \
    GSHMEMI_GENERIC_RMA(dest, fcollect)(team, dest, source, nelems)
#define gshmem_alltoall(team, dest, source, nelems) \
    GSHMEMI_GENERIC_RMA(dest, alltoall)(team, dest, source, nelems)
#define gshmem_alltoalls(team, dest, source, dst, sst, nelems) \
    GSHMEMI_GENERIC_RMA(dest, alltoalls)(team, dest, source, dst, sst, nelems)

#define gshmem_and_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_BITWISE(dest, and_reduce)(team, dest, source, nreduce)
#define gshmem_or_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_BITWISE(dest, or_reduce)(team, dest, source, nreduce)
#define gshmem_xor_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_BITWISE(dest, xor_reduce)(team, dest, source, nreduce)
#define gshmem_max_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_ARITH(dest, max_reduce)(team, dest, source, nreduce)
#define gshmem_min_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_ARITH(dest, min_reduce)(team, dest, source, nreduce)
#define gshmem_sum_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_ARITH(dest, sum_reduce)(team, dest, source, nreduce)
#define gshmem_prod_reduce(team, dest, source, nreduce) \
    GSHMEMI_GENERIC_REDUCE_ARITH(dest, prod_reduce)(team, dest, source, nreduce)

#endif /* GSHMEM_GENERIC_H */
