/* gshmem public types, constants and the type tables that generate the typed API. */
#ifndef GSHMEM_TYPES_H
#define GSHMEM_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* The OpenSHMEM specification version this library follows. */
#define GSHMEM_MAJOR_VERSION 1
#define GSHMEM_MINOR_VERSION 5
#define GSHMEM_VENDOR_STRING "gshmem"
#define GSHMEM_MAX_NAME_LEN 256

/* The library's own version. */
#define GSHMEMX_VERSION_MAJOR 0
#define GSHMEMX_VERSION_MINOR 1
#define GSHMEMX_VERSION_PATCH 0

/* Thread support levels (gshmem_init_thread). */
enum {
    GSHMEM_THREAD_SINGLE = 0,
    GSHMEM_THREAD_FUNNELED = 1,
    GSHMEM_THREAD_SERIALIZED = 2,
    GSHMEM_THREAD_MULTIPLE = 3
};

/* Comparison operators for wait_until, test and signal_wait_until. */
enum {
    GSHMEM_CMP_EQ = 0,
    GSHMEM_CMP_NE = 1,
    GSHMEM_CMP_GT = 2,
    GSHMEM_CMP_GE = 3,
    GSHMEM_CMP_LT = 4,
    GSHMEM_CMP_LE = 5
};

/* Signal update operators for put_signal. As OpenSHMEM says, updates of one signal word
 * are atomic only against updates with the same operator: a SET may overwrite a
 * concurrent ADD (over ibv a SET is a plain RDMA write, an ADD a remote fetch-add). */
enum {
    GSHMEM_SIGNAL_SET = 0,
    GSHMEM_SIGNAL_ADD = 1
};

/*
 * Type tables. Each row is X(C type, name used in function names).
 * The typed API (gshmem_int_put, gshmem_uint64_atomic_fetch_add, ...) is
 * declared from these rows in gshmem/host.h; docs/API.md lists every name.
 */

/* OpenSHMEM 1.5 Table 5: standard RMA types. Device code has no long double, so the
 * device API covers GSHMEM_RMA_DEVICE_TYPES. */
#define GSHMEM_RMA_TYPES(X) X(long double, longdouble) GSHMEM_RMA_DEVICE_TYPES(X)
#define GSHMEM_RMA_DEVICE_TYPES(X)                                            \
    X(float, float) X(double, double)                                         \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)           \
    X(long, long) X(long long, longlong) X(unsigned char, uchar)              \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)   \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)        \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)                   \
    X(ptrdiff_t, ptrdiff)

/* Table 6: standard AMO types (every AMO). */
#define GSHMEM_AMO_STANDARD_TYPES(X)                                          \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)    \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                  \
    X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)                   \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

/* Extended AMO types: fetch, set and swap only. */
#define GSHMEM_AMO_EXTENDED_TYPES(X) GSHMEM_AMO_STANDARD_TYPES(X) X(float, float) X(double, double)

/* Bitwise AMO types: and, or, xor and their fetching forms. */
#define GSHMEM_AMO_BITWISE_TYPES(X)                                           \
    X(unsigned int, uint) X(unsigned long, ulong)                             \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)      \
    X(uint32_t, uint32) X(uint64_t, uint64)

/* Point-to-point synchronization types: wait_until and test. */
#define GSHMEM_P2P_SYNC_TYPES(X)                                              \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)          \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)   \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)      \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)                   \
    X(ptrdiff_t, ptrdiff)

/* Sized RMA: X(bits, element type used for the copy). */
#define GSHMEM_SIZED_TYPES(X) X(8, uint8_t) X(16, uint16_t) X(32, uint32_t) X(64, uint64_t) X(128, gshmemi_u128_t)

typedef struct { uint64_t lo, hi; } gshmemi_u128_t;

#endif /* GSHMEM_TYPES_H */
