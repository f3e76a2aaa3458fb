/*
 * Helpers shared by the multi-PE conformance tests: a CHECK that names the PE
 * and the values and ends the whole job, data patterns that mix the sending
 * PE, the receiving PE and the index, and poison/guard checks.
 */
#ifndef MP_CHECK_H
#define MP_CHECK_H

#include <gshmem.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte written over every destination before an operation; the patterns below never produce it
 * as a whole element (values stay below 0x7f, 0x7fff or 2^24, and no float pattern has it). */
#define MP_POISON 0xA5

__attribute__((format(printf, 4, 5))) _Noreturn static inline void
mp_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!gshmem_query_initialized()) {
        fprintf(stderr, "[mp pe ? (not initialized)] %s:%d: CHECK(%s) failed: %s\n", file, line, expr, msg);
        exit(1);
    }
    fprintf(stderr, "[mp pe %d of %d] %s:%d: CHECK(%s) failed: %s\n", gshmem_my_pe(), gshmem_n_pes(),
            file, line, expr, msg);
    fflush(stderr);
    gshmem_global_exit(1);
    exit(1);
}

/* CHECK(condition, printf format, values...) */
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) mp_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);     \
    } while (0)

/* Integer equality; prints both sides. */
#define CHECK_EQ(got, want)                                                                 \
    do {                                                                                    \
        unsigned long long mp_g_ = (unsigned long long)(got);                               \
        unsigned long long mp_w_ = (unsigned long long)(want);                              \
        if (mp_g_ != mp_w_)                                                                 \
            mp_fail(__FILE__, __LINE__, #got " == " #want, "got %llu (0x%llx), want %llu (0x%llx)", \
                    mp_g_, mp_g_, mp_w_, mp_w_);                                            \
    } while (0)

/* A 64-bit mix of up to four numbers: the basis of every data pattern. */
static inline uint64_t mp_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    uint64_t in[4] = {a, b, c, d};
    for (int k = 0; k < 4; k++) {
        h ^= in[k] + 0x632be59bd9b4e5f3ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

/* Largest pattern value for an element of the given size plus one: keeps char values
 * positive, keeps every value clear of the poison, and keeps floats exact. */
static inline uint64_t mp_value_range(size_t elem_size)
{
    return elem_size == 1 ? 0x7f : elem_size == 2 ? 0x7fff : (uint64_t)1 << 24;
}

/* Pattern value for element i sent by src_pe to dst_pe; salt tells tests apart. */
#define MP_VALUE(T, src_pe, dst_pe, i, salt) \
    ((T)(mp_mix((uint64_t)(src_pe), (uint64_t)(dst_pe), (uint64_t)(i), (uint64_t)(salt)) % mp_value_range(sizeof(T))))

/* Pattern byte k for bulk copies (one mix per 8 bytes keeps large buffers cheap); never
 * MP_POISON, so every byte that should change is seen to. */
static inline unsigned char mp_byte_of(uint64_t block_hash, size_t k)
{
    unsigned char b = (unsigned char)(block_hash >> (8 * (k % 8)));
    return b == MP_POISON ? 0x5a : b;
}

static inline uint64_t mp_block_hash(int src_pe, int dst_pe, size_t k, uint64_t salt)
{
    return mp_mix((uint64_t)src_pe, (uint64_t)dst_pe, k / 8, salt);
}

static inline unsigned char mp_byte(int src_pe, int dst_pe, size_t k, uint64_t salt)
{
    return mp_byte_of(mp_block_hash(src_pe, dst_pe, k, salt), k);
}

static inline void mp_fill_bytes(void *buf, size_t n, int src_pe, int dst_pe, uint64_t salt)
{
    unsigned char *p = buf;
    uint64_t h = 0;
    for (size_t k = 0; k < n; k++) {
        if (k % 8 == 0) h = mp_block_hash(src_pe, dst_pe, k, salt);
        p[k] = mp_byte_of(h, k);
    }
}

static inline void mp_poison(void *buf, size_t n) { memset(buf, MP_POISON, n); }

/* Index of the first byte in [0, n) that differs from the pattern, or n. */
static inline size_t mp_find_bad_bytes(const void *buf, size_t n, int src_pe, int dst_pe, uint64_t salt)
{
    const unsigned char *p = buf;
    uint64_t h = 0;
    for (size_t k = 0; k < n; k++) {
        if (k % 8 == 0) h = mp_block_hash(src_pe, dst_pe, k, salt);
        if (p[k] != mp_byte_of(h, k)) return k;
    }
    return n;
}

/* Index of the first byte in [0, n) that is not poison, or n. */
static inline size_t mp_find_unpoisoned(const void *buf, size_t n)
{
    const unsigned char *p = buf;
    for (size_t k = 0; k < n; k++)
        if (p[k] != MP_POISON) return k;
    return n;
}

/* The n bytes at buf hold the pattern (src_pe -> dst_pe, salt). */
#define CHECK_BYTES(buf, n, src_pe, dst_pe, salt, what)                                              \
    do {                                                                                             \
        const unsigned char *mp_b_ = (const unsigned char *)(buf);                                   \
        size_t mp_n_ = (n), mp_k_ = mp_find_bad_bytes(mp_b_, mp_n_, (src_pe), (dst_pe), (salt));    \
        if (mp_k_ != mp_n_)                                                                          \
            mp_fail(__FILE__, __LINE__, "pattern", "%s: byte %zu of %zu from pe %d is 0x%02x, want 0x%02x", \
                    (what), mp_k_, mp_n_, (int)(src_pe), mp_b_[mp_k_],                              \
                    mp_byte((src_pe), (dst_pe), mp_k_, (salt)));                                     \
    } while (0)

/* The n bytes at buf are still poison (guards and gaps that must not change). */
#define CHECK_POISON(buf, n, what)                                                                   \
    do {                                                                                             \
        const unsigned char *mp_b_ = (const unsigned char *)(buf);                                   \
        size_t mp_n_ = (n), mp_k_ = mp_find_unpoisoned(mp_b_, mp_n_);                                \
        if (mp_k_ != mp_n_)                                                                          \
            mp_fail(__FILE__, __LINE__, "untouched", "%s: byte %zu of %zu changed to 0x%02x",        \
                    (what), mp_k_, mp_n_, mp_b_[mp_k_]);                                             \
    } while (0)

#endif /* MP_CHECK_H */
