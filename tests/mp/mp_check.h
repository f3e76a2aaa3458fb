/*
 * Helpers shared by the multi-PE conformance tests: a CHECK that names the PE
 * and the values and ends the whole job, data patterns that mix the sending
 * PE, the receiving PE and the index, poison/guard checks, and the node layout (which PEs
 * share this PE's node and which it reaches by loads and stores) for runs over several nodes.
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

/* ---- Node layout: which PEs share this PE's node, which it reaches by loads and stores ---- */

/* This PE's node as gshmem identifies it: GSHMEM_NODE_ID when set, else "<hostname>/<boot id>"
 * (the host name of this PE's UTS namespace: each simulated pod of tests/mp/k8s_pods.sh is a node). */
static inline void mp_node_name(char *out, size_t len)
{
    const char *id = getenv("GSHMEM_NODE_ID");
    if (id && *id) {
        snprintf(out, len, "%s", id);
        return;
    }
    char host[128] = "unknown-host", boot[64] = "no-boot-id";
    const char *files[2] = {"/proc/sys/kernel/hostname", "/proc/sys/kernel/random/boot_id"};
    char *dst[2] = {host, boot};
    size_t cap[2] = {sizeof host, sizeof boot};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(files[k], "r");
        if (!f) continue;
        if (fgets(dst[k], (int)cap[k], f)) dst[k][strcspn(dst[k], "\r\n")] = '\0';
        fclose(f);
    }
    snprintf(out, len, "%s/%s", host, boot);
}

/* GSHMEM_DISABLE_P2P is set to a true value: node-local peers go through the remote transport. */
static inline int mp_p2p_disabled(void)
{
    static const char *const yes[] = {"1", "y", "yes", "true", "on"};
    const char *v = getenv("GSHMEM_DISABLE_P2P");
    if (!v) return 0;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        size_t k = 0;
        while (v[k] && yes[i][k] && (v[k] | 0x20) == yes[i][k]) k++;
        if (!v[k] && !yes[i][k]) return 1;
    }
    return 0;
}

#define MP_NODE_NAME_LEN 256

/* What the tests expect of the node layout, gathered from every PE's node name. */
struct mp_layout {
    int n_pes;
    unsigned char *on_my_node; /* [n_pes]: 1 for the PEs on this PE's node, this PE included */
    unsigned char *load_store; /* [n_pes]: 1 where gshmem_ptr must reach the PE's heap */
    int node_size;             /* PEs on this PE's node */
    int nodes;                 /* distinct nodes in the job */
};

/* Collective over every PE (symmetric allocation, puts and barriers). gshmem_ptr reaches a PE
 * when it is this PE, or when it is on this PE's node and p2p is not disabled. */
static inline struct mp_layout mp_layout_create(void)
{
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    char mine[MP_NODE_NAME_LEN] = {0};
    mp_node_name(mine, sizeof mine);
    char *names = gshmem_calloc((size_t)n, MP_NODE_NAME_LEN);
    struct mp_layout l = {n, calloc((size_t)n, 1), calloc((size_t)n, 1), 0, 0};
    CHECK(names && l.on_my_node && l.load_store, "layout allocation failed");
    gshmem_barrier_all();
    for (int pe = 0; pe < n; pe++) gshmem_putmem(names + (size_t)me * MP_NODE_NAME_LEN, mine, sizeof mine, pe);
    gshmem_barrier_all();
    int p2p = !mp_p2p_disabled();
    for (int pe = 0; pe < n; pe++) {
        const char *name = names + (size_t)pe * MP_NODE_NAME_LEN;
        l.on_my_node[pe] = strcmp(name, mine) == 0;
        l.load_store[pe] = pe == me || (p2p && l.on_my_node[pe]);
        l.node_size += l.on_my_node[pe];
        int first = 1; /* first PE of its node: count each node once */
        for (int q = 0; q < pe && first; q++) first = strcmp(names + (size_t)q * MP_NODE_NAME_LEN, name) != 0;
        l.nodes += first;
    }
    gshmem_barrier_all();
    gshmem_free(names);
    return l;
}

static inline void mp_layout_destroy(struct mp_layout *l)
{
    free(l->on_my_node);
    free(l->load_store);
    l->on_my_node = l->load_store = NULL;
}

/* A predefined team built from a member set (gshmem/team.h): the members when evenly strided
 * in world order, else this PE alone. Writes start, stride and size. */
static inline void mp_team_of_members(const unsigned char *member, int n_pes, int me, int *start, int *stride,
                                      int *size)
{
    int count = 0, first = -1, step = 1, even = 1, prev = -1;
    for (int pe = 0; pe < n_pes; pe++) {
        if (!member[pe]) continue;
        if (count == 0) first = pe;
        else if (count == 1) step = pe - prev;
        else if (pe - prev != step) even = 0;
        prev = pe;
        count++;
    }
    if (!even || count == 0) {
        *start = me, *stride = 1, *size = 1;
        return;
    }
    *start = first, *stride = step, *size = count;
}

/* gshmem_init_thread(GSHMEM_THREAD_MULTIPLE) for the threaded tests, which need that level. */
static inline void mp_init_thread_multiple(void)
{
    int provided = -1;
    CHECK(gshmem_init_thread(GSHMEM_THREAD_MULTIPLE, &provided) == 0, "gshmem_init_thread failed");
    CHECK_EQ(provided, GSHMEM_THREAD_MULTIPLE);
}

#endif /* MP_CHECK_H */
