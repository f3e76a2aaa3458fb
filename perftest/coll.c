/*
 * gshmem-perf-coll: barrier latency and sum reductions on GSHMEM_TEAM_WORLD from the
 * host, on whichever heap gshmem_init chose, any number of PEs. The figures are
 * defined in perf_coll.h.
 *
 *   barrier_all  gshmem_barrier_all             latency per call
 *   barrier      gshmem_barrier(WORLD)
 *   team_sync    gshmem_team_sync(WORLD)
 *   sync_all     gshmem_sync_all
 *   reduce       gshmem_{float,int64}_sum_reduce(WORLD), out-of-place and in-place, in
 *                the shape of nccl-tests' all_reduce_perf: size = bytes per PE,
 *                algbw = size / time, busbw = algbw * 2 (n_pes - 1) / n_pes
 *
 * Barriers: before each timed call a PE puts the round number to the next PE; after
 * it the round from the previous PE must be there (#wrong counts rounds where it was
 * not). team_sync and sync_all order nothing, so they have no check. Reductions: as
 * gshmem-perf-alltoall (back-to-back calls, one extra checked call per row, or with
 * --check every call on fresh data and every element checked); in place the timed
 * calls run on zeros, since repeated in-place sums of the pattern would overflow.
 *
 * usage: gshmemrun -n N gshmem-perf-coll [-t TESTS] [-d TYPES] [-b MIN] [-e MAX]
 *            [-f FACTOR] [-i ITERS] [-w WARMUP] [-c|--check] [--csv|--json]
 */
#define _GNU_SOURCE
#include <gshmem.h>

#include "perf_coll.h"
#include "perf_host.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES_PER_SIZE ((size_t)256 << 20) /* most bytes reduced per PE per size and placement */

struct options {
    struct perf_sweep sweep;
    long barrier_iters;
    const char *tests, *types;
};

static int g_me, g_n;
static unsigned char *g_src, *g_dst; /* symmetric, max_size each */
static long *g_token;                /* symmetric: the previous PE's round number */
static double *g_stats;              /* symmetric: [pe][PERF_PE_STATS_DOUBLES], read on PE 0 */

static struct perf_result gather(struct perf_pe_stats mine, double bytes, double bus_factor)
{
    struct perf_result r;
    memset(&r, 0, sizeof r);
    gshmem_double_put(g_stats + (size_t)g_me * PERF_PE_STATS_DOUBLES, (const double *)&mine, PERF_PE_STATS_DOUBLES,
                      0);
    gshmem_barrier_all();
    if (g_me == 0) r = perf_combine((const struct perf_pe_stats *)g_stats, g_n, bytes, bus_factor);
    gshmem_barrier_all();
    return r;
}

/* ---- Barriers. */
enum barrier_op { B_BARRIER_ALL, B_BARRIER, B_TEAM_SYNC, B_SYNC_ALL };
static const char *const barrier_names[] = {"barrier_all", "barrier", "team_sync", "sync_all"};

static double barrier_us(enum barrier_op op)
{
    int rc = 0;
    double t0 = perf_now_s();
    switch (op) {
    case B_BARRIER_ALL: gshmem_barrier_all(); break;
    case B_BARRIER: rc = gshmem_barrier(GSHMEM_TEAM_WORLD); break;
    case B_TEAM_SYNC: rc = gshmem_team_sync(GSHMEM_TEAM_WORLD); break;
    case B_SYNC_ALL: gshmem_sync_all(); break;
    }
    double t1 = perf_now_s();
    if (rc != 0) {
        fprintf(stderr, "gshmem-perf-coll: PE %d: %s returned %d (%s)\n", g_me, barrier_names[op], rc,
                gshmemx_strerror(rc));
        gshmem_global_exit(1);
    }
    return (t1 - t0) * 1e6;
}

static struct perf_pe_stats barrier_measure(const struct options *o, enum barrier_op op, double *samples)
{
    int orders = op == B_BARRIER_ALL || op == B_BARRIER;
    long wrong = 0, total = o->sweep.warmup + o->barrier_iters;
    gshmem_barrier_all();
    *g_token = 0;
    gshmem_barrier_all();
    for (long i = 1; i <= total; i++) {
        if (orders) gshmem_long_p(g_token, i, (g_me + 1) % g_n);
        double us = barrier_us(op);
        if (i > o->sweep.warmup) samples[i - o->sweep.warmup - 1] = us;
        /* the next round's put may already be here: at least this round's */
        if (orders) wrong += *(volatile long *)g_token < i;
    }
    gshmem_barrier_all();
    return perf_pe_summarize(samples, o->barrier_iters, -1, wrong);
}

/* ---- Reductions. */
struct red_type {
    const char *name;
    size_t elem;
    void (*fill)(void *buf, size_t count, long iter);
    long (*wrong)(const void *buf, size_t count, long iter); /* elements that differ from the sum */
    int (*reduce)(void *dest, const void *source, size_t count);
};

static void fill_float(void *buf, size_t count, long iter)
{
    for (size_t i = 0; i < count; i++) ((float *)buf)[i] = perf_red_float(g_me, i, iter);
}
static long wrong_float(const void *buf, size_t count, long iter)
{
    long wrong = 0;
    for (size_t i = 0; i < count; i++) {
        float sum = 0;
        for (int p = 0; p < g_n; p++) sum += perf_red_float(p, i, iter);
        wrong += ((const float *)buf)[i] != sum;
    }
    return wrong;
}
static int reduce_float(void *dest, const void *source, size_t count)
{
    return gshmem_float_sum_reduce(GSHMEM_TEAM_WORLD, dest, source, count);
}
static void fill_int64(void *buf, size_t count, long iter)
{
    for (size_t i = 0; i < count; i++) ((int64_t *)buf)[i] = perf_red_int64(g_me, i, iter);
}
static long wrong_int64(const void *buf, size_t count, long iter)
{
    long wrong = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t sum = 0;
        for (int p = 0; p < g_n; p++) sum += perf_red_int64(p, i, iter);
        wrong += ((const int64_t *)buf)[i] != sum;
    }
    return wrong;
}
static int reduce_int64(void *dest, const void *source, size_t count)
{
    return gshmem_int64_sum_reduce(GSHMEM_TEAM_WORLD, dest, source, count);
}

static const struct red_type red_types[] = {
    {"float", sizeof(float), fill_float, wrong_float, reduce_float},
    {"int64", sizeof(int64_t), fill_int64, wrong_int64, reduce_int64},
};

static double reduce_us(const struct red_type *ty, void *dst, const void *src, size_t count)
{
    double t0 = perf_now_s();
    int rc = ty->reduce(dst, src, count);
    double t1 = perf_now_s();
    if (rc != 0) {
        fprintf(stderr, "gshmem-perf-coll: PE %d: gshmem_%s_sum_reduce(nreduce %zu) returned %d (%s)\n", g_me,
                ty->name, count, rc, gshmemx_strerror(rc));
        gshmem_global_exit(1);
    }
    return (t1 - t0) * 1e6;
}

/* One call on fresh data, checked; the barriers as in gshmem-perf-alltoall. */
static long reduce_checked(const struct red_type *ty, void *dst, void *src, size_t count, long iter, double *us)
{
    gshmem_barrier_all();
    ty->fill(src, count, iter);
    if (dst != src) memset(dst, 0xa5, count * ty->elem);
    gshmem_barrier_all();
    double t = reduce_us(ty, dst, src, count);
    if (us) *us = t;
    return ty->wrong(dst, count, iter);
}

static struct perf_pe_stats reduce_measure(const struct options *o, const struct red_type *ty, size_t count,
                                           int in_place, long iters, double *samples)
{
    void *dst = g_dst, *src = in_place ? g_dst : g_src;
    long warmup = o->sweep.warmup < iters ? o->sweep.warmup : iters, wrong = 0;
    if (o->sweep.check) {
        for (long i = 0; i < warmup; i++) wrong += reduce_checked(ty, dst, src, count, iters + 1 + i, NULL);
        for (long i = 0; i < iters; i++) wrong += reduce_checked(ty, dst, src, count, i, &samples[i]);
    } else {
        gshmem_barrier_all();
        if (in_place)
            memset(src, 0, count * ty->elem);
        else
            ty->fill(src, count, 0);
        gshmem_barrier_all();
        for (long i = 0; i < warmup; i++) reduce_us(ty, dst, src, count);
        for (long i = 0; i < iters; i++) samples[i] = reduce_us(ty, dst, src, count);
        wrong = reduce_checked(ty, dst, src, count, iters, NULL);
    }
    return perf_pe_summarize(samples, iters, -1, wrong);
}

static long reduce_rows(const struct options *o, struct perf_table *t, const struct red_type *ty, double *samples)
{
    long wrong_total = 0;
    double bus = 2.0 * (g_n - 1) / g_n;
    char title[96];
    snprintf(title, sizeof title, "gshmem_%s_sum_reduce(GSHMEM_TEAM_WORLD), host API", ty->name);
    if (g_me == 0) perf_table_group(t, title, 1);
    for (size_t size = o->sweep.min_size; size <= o->sweep.max_size; size *= o->sweep.factor) {
        size_t count = size / ty->elem, bytes = count * ty->elem;
        if (count > 0) {
            long cap = (long)(BYTES_PER_SIZE / bytes), iters = o->sweep.iters < cap ? o->sweep.iters : (cap < 3 ? 3 : cap);
            struct perf_row w = perf_row_init("reduce", "host", bytes, count, ty->name, "sum", iters);
            w.oop = gather(reduce_measure(o, ty, count, 0, iters, samples), (double)bytes, bus);
            w.ip = gather(reduce_measure(o, ty, count, 1, iters, samples), (double)bytes, bus);
            if (g_me == 0) perf_table_row(t, &w);
            wrong_total += w.oop.wrong + w.ip.wrong;
        }
        if (size > o->sweep.max_size / o->sweep.factor) break;
    }
    return wrong_total;
}

static void print_header(struct perf_table *t, const struct options *o)
{
    char it[320];
    snprintf(it, sizeof it, "barriers: %ld warmup + %ld timed calls; reduce: %ld + %ld per size and placement, "
             "fewer for large sizes (at most 256 MiB per PE, at least 3)%s", o->sweep.warmup, o->barrier_iters, o->sweep.warmup,
             o->sweep.iters, o->sweep.check ? "; --check: every call on fresh data, fully checked" : "");
    const char *desc[] = {
        "time: mean over PEs of each PE's mean per call; p50/p99: per call, largest over PEs; "
        "spread: largest PE mean / smallest",
        "barrier_all, barrier: #wrong = rounds whose put from the previous PE was not visible after the call",
        "reduce: size = bytes per PE; algbw = size / time (GB/s); busbw = algbw * 2 (n_pes - 1) / n_pes "
        "(nccl-tests all_reduce)",
        it,
    };
    perf_table_begin(t, "gshmem-perf-coll", g_n, gshmemx_heap_kind(), desc, 4);
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n N %s [options]\n"
            "  -t LIST     barrier_all,barrier,team_sync,sync_all,reduce (default all)\n"
            "  -d LIST     reduce types: float,int64 (default both)\n"
            "  -b SIZE     smallest reduce size in bytes (default 4)\n"
            "  -e SIZE     largest (default 64M, or what GSHMEM_SYMMETRIC_SIZE holds)\n"
            "  -f N        size factor (default 2)\n"
            "  -i N        timed reduce calls per size (default 100; at most 256 MiB per PE, at least 3)\n"
            "  -n N        timed barrier calls (default 10000)\n"
            "  -w N        warmup calls (default 10)\n"
            "  -c, --check every reduce call on fresh data, every element checked\n"
            "  --csv       comma-separated output\n"
            "  --json      one JSON document\n",
            prog);
}

static int parse(int argc, char **argv, struct options *o)
{
    int c;
    while ((c = getopt_long(argc, argv, PERF_SWEEP_SHORTOPTS "t:d:n:", perf_sweep_longopts, NULL)) != -1) {
        switch (c) {
        case 't': o->tests = optarg; perf_check_list("-t", optarg, "barrier_all,barrier,team_sync,sync_all,reduce"); break;
        case 'd': o->types = optarg; perf_check_list("-d", optarg, "float,int64"); break;
        case 'n': o->barrier_iters = perf_parse_long("-n", optarg, 1, LONG_MAX); break;
        default:
            if (perf_sweep_option(&o->sweep, c, optarg)) break;
            usage(argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (o->sweep.iters < 1 || o->barrier_iters < 1 || o->sweep.warmup < 0 || o->sweep.min_size < 1 || o->sweep.max_size < o->sweep.min_size ||
        o->sweep.factor < 2) {
        usage(argv[0]);
        return 2;
    }
    return -1;
}

/* Without -e: two buffers of the largest size in 3/4 of the heap. */
static void fit_heap(struct options *o)
{
    size_t heap = perf_heap_hint("GSHMEM_SYMMETRIC_SIZE", (size_t)256 << 20);
    size_t fit = perf_fit_size(o->sweep.min_size, o->sweep.factor, heap / 4 * 3 / 2);
    if (!o->sweep.max_given && fit && fit < o->sweep.max_size) {
        if (g_me == 0)
            fprintf(stderr, "gshmem-perf-coll: largest reduce size %zu bytes, what a %zu-byte heap holds "
                    "(GSHMEM_SYMMETRIC_SIZE)\n", fit, heap);
        o->sweep.max_size = fit;
    }
}

int main(int argc, char **argv)
{
    struct options o = {.sweep = {.min_size = 4, .max_size = (size_t)64 << 20, .factor = 2, .iters = 100, .warmup = 10},
                        .barrier_iters = 10000,
                        .tests = "barrier_all,barrier,team_sync,sync_all,reduce",
                        .types = "float,int64"};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;

    gshmem_init();
    if (perf_require_host_heap(argv[0])) return 2;
    g_me = gshmem_my_pe();
    g_n = gshmem_n_pes();
    int reduce = perf_wants(o.tests, "reduce");
    if (reduce) fit_heap(&o);
    g_src = reduce ? gshmem_malloc(o.sweep.max_size) : NULL;
    g_dst = reduce ? gshmem_malloc(o.sweep.max_size) : NULL;
    g_token = gshmem_calloc(1, sizeof(long));
    g_stats = gshmem_calloc((size_t)g_n * PERF_PE_STATS_DOUBLES, sizeof(double));
    long nsamples = o.sweep.iters > o.barrier_iters ? o.sweep.iters : o.barrier_iters;
    double *samples = malloc(sizeof(double) * (size_t)nsamples);
    if ((reduce && (!g_src || !g_dst)) || !g_token || !g_stats || !samples) {
        fprintf(stderr, "gshmem-perf-coll: PE %d: cannot allocate 2 x %zu symmetric bytes (raise "
                "GSHMEM_SYMMETRIC_SIZE or lower -e)\n", g_me, o.sweep.max_size);
        gshmem_global_exit(1);
    }

    struct perf_table t = {o.sweep.format, 0};
    if (g_me == 0) print_header(&t, &o);
    long wrong_total = 0;
    int barrier_group = 0;
    for (int op = B_BARRIER_ALL; op <= B_SYNC_ALL; op++) {
        if (!perf_wants(o.tests, barrier_names[op])) continue;
        if (g_me == 0 && !barrier_group++) perf_table_group(&t, "barriers (GSHMEM_TEAM_WORLD), host API", 0);
        struct perf_row w = perf_row_init(barrier_names[op], "host", 0, 0, "none", "none", o.barrier_iters);
        w.oop = gather(barrier_measure(&o, (enum barrier_op)op, samples), 0, 0);
        if (g_me == 0) perf_table_row(&t, &w);
        wrong_total += w.oop.wrong;
    }
    for (size_t k = 0; reduce && k < sizeof red_types / sizeof red_types[0]; k++)
        if (perf_wants(o.types, red_types[k].name)) wrong_total += reduce_rows(&o, &t, &red_types[k], samples);
    if (g_me == 0) perf_table_end(&t);

    gshmem_barrier_all();
    free(samples);
    gshmem_free(g_stats);
    gshmem_free(g_token);
    if (reduce) {
        gshmem_free(g_dst);
        gshmem_free(g_src);
    }
    gshmem_finalize();
    if (wrong_total) fprintf(stderr, "gshmem-perf-coll: %ld wrong results\n", wrong_total);
    return wrong_total ? 1 : 0;
}
