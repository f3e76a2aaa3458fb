/*
 * gshmem-perf-alltoall: gshmem_alltoallmem on GSHMEM_TEAM_WORLD from the host, on
 * whichever heap gshmem_init chose, any number of PEs. Output in the shape of
 * nccl-tests' alltoall_perf (size, count, type, then time/algbw/busbw/#wrong per
 * placement) plus per-call percentiles and the spread across PEs; the figures are
 * defined in perf_coll.h.
 *
 *   size     bytes per peer (each PE sends size bytes to every PE, itself included);
 *            nccl-tests' size column is size * n_pes
 *   algbw    size * n_pes / time, as nccl-tests computes it for alltoall
 *   busbw    algbw * (n_pes - 1) / n_pes
 *   placements: out-of-place (dest != source) and in-place (dest == source)
 *
 * Calls run back to back after warmup, each timed on its own. Large sizes take fewer
 * iterations: at most 256 MiB sent per PE per size and placement, at least 3. Block j
 * of PE s's source holds a pattern of (s, j, index, round, size). Without --check one
 * extra call with fresh data per size and placement is checked in full; with --check
 * every call gets fresh data (refill, barrier) and every byte of its result is checked.
 *
 * usage: gshmemrun -n N gshmem-perf-alltoall [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS]
 *            [-w WARMUP] [-c|--check] [--csv|--json]
 * Without -e the largest size is 64 MiB or what GSHMEM_SYMMETRIC_SIZE holds (two
 * buffers of n_pes * size), whichever is smaller.
 */
#define _GNU_SOURCE
#include <gshmem.h>

#include "perf_coll.h"
#include "perf_host.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES_PER_SIZE ((size_t)256 << 20) /* most bytes one PE sends per size and placement */

struct options {
    struct perf_sweep sweep;
};

static int g_me, g_n;
static unsigned char *g_src, *g_dst; /* symmetric, n_pes * max_size each */
static double *g_stats;              /* symmetric: [pe][PERF_PE_STATS_DOUBLES], read on PE 0 */

/* Block j of a source: what this PE sends PE j in round iter. */
static void fill_source(unsigned char *src, size_t size, long iter)
{
    for (int j = 0; j < g_n; j++) {
        unsigned char *b = src + (size_t)j * size;
        for (size_t k = 0; k < size; k += 8) {
            uint64_t v = perf_a2a_word(g_me, j, k / 8, iter, size);
            memcpy(b + k, &v, size - k < 8 ? size - k : 8);
        }
    }
}

/* Bytes of dest that differ from what every PE j sent this PE in round iter. */
static long count_wrong(const unsigned char *dst, size_t size, long iter)
{
    long wrong = 0;
    for (int j = 0; j < g_n; j++) {
        const unsigned char *b = dst + (size_t)j * size;
        for (size_t k = 0; k < size; k += 8) {
            uint64_t v = perf_a2a_word(j, g_me, k / 8, iter, size);
            size_t n = size - k < 8 ? size - k : 8;
            if (memcmp(b + k, &v, n) != 0)
                for (size_t i = 0; i < n; i++) wrong += b[k + i] != ((const unsigned char *)&v)[i];
        }
    }
    return wrong;
}

static double call_us(unsigned char *dst, const unsigned char *src, size_t size)
{
    double t0 = perf_now_s();
    int rc = gshmem_alltoallmem(GSHMEM_TEAM_WORLD, dst, src, size);
    double t1 = perf_now_s();
    if (rc != 0) {
        fprintf(stderr, "gshmem-perf-alltoall: PE %d: gshmem_alltoallmem(size %zu) returned %d (%s)\n", g_me, size,
                rc, gshmemx_strerror(rc));
        gshmem_global_exit(1);
    }
    return (t1 - t0) * 1e6;
}

/* One call on fresh data, its result checked. Every PE has left the previous call
 * before anyone refills (first barrier), and every dest is poisoned before anyone
 * writes into it (second). Returns #wrong; *us: the call's time. */
static long checked_round(unsigned char *dst, unsigned char *src, size_t size, long iter, double *us)
{
    gshmem_barrier_all();
    fill_source(src, size, iter);
    if (dst != src) memset(dst, 0xa5, size * (size_t)g_n);
    gshmem_barrier_all();
    double t = call_us(dst, src, size);
    if (us) *us = t;
    return count_wrong(dst, size, iter);
}

static long iterations_for(const struct options *o, size_t size)
{
    long cap = (long)(BYTES_PER_SIZE / (size * (size_t)g_n));
    if (cap < 3) cap = 3;
    return o->sweep.iters < cap ? o->sweep.iters : cap;
}

/* This PE's statistics for one size and placement. Collective. */
static struct perf_pe_stats measure(const struct options *o, size_t size, int in_place, long iters, double *samples)
{
    unsigned char *dst = g_dst, *src = in_place ? g_dst : g_src;
    long warmup = o->sweep.warmup < iters ? o->sweep.warmup : iters, wrong = 0;
    if (o->sweep.check) {
        for (long i = 0; i < warmup; i++) wrong += checked_round(dst, src, size, iters + 1 + i, NULL);
        for (long i = 0; i < iters; i++) wrong += checked_round(dst, src, size, i, &samples[i]);
    } else {
        gshmem_barrier_all();
        fill_source(src, size, 0);
        gshmem_barrier_all();
        for (long i = 0; i < warmup; i++) call_us(dst, src, size);
        for (long i = 0; i < iters; i++) samples[i] = call_us(dst, src, size);
        /* in place, the timed calls left a permutation: check a call of its own */
        wrong = checked_round(dst, src, size, iters, NULL);
    }
    return perf_pe_summarize(samples, iters, -1, wrong);
}

/* The figures over every PE, on PE 0 (valid = 0 elsewhere). Collective. */
static struct perf_result gather(struct perf_pe_stats mine, size_t size)
{
    struct perf_result r;
    memset(&r, 0, sizeof r);
    gshmem_double_put(g_stats + (size_t)g_me * PERF_PE_STATS_DOUBLES, (const double *)&mine, PERF_PE_STATS_DOUBLES,
                      0);
    gshmem_barrier_all();
    if (g_me == 0)
        r = perf_combine((const struct perf_pe_stats *)g_stats, g_n, (double)size * g_n,
                         (double)(g_n - 1) / g_n);
    gshmem_barrier_all();
    return r;
}

static void print_header(struct perf_table *t, const struct options *o)
{
    char it[256], chk[160];
    snprintf(it, sizeof it, "%ld warmup + %ld timed calls per size and placement, back to back; fewer for large "
             "sizes (at most 256 MiB sent per PE, at least 3)", o->sweep.warmup, o->sweep.iters);
    snprintf(chk, sizeof chk, "%s", o->sweep.check ? "--check: every call on fresh data (refill, barrier), every byte checked"
                                             : "#wrong: one more call per row on fresh data, every byte checked");
    const char *desc[] = {
        "size: bytes per peer; count: elements (uint8) per peer; nccl-tests' size = size * n_pes",
        "algbw = size * n_pes / time (GB/s, as nccl-tests for alltoall); busbw = algbw * (n_pes - 1) / n_pes",
        "time: mean over PEs of each PE's mean per call; p50/p99: per call, largest over PEs",
        "spread: largest PE mean / smallest PE mean",
        it,
        chk,
    };
    perf_table_begin(t, "gshmem-perf-alltoall", g_n, gshmemx_heap_kind(), desc, 6);
    perf_table_group(t, "gshmem_alltoallmem(GSHMEM_TEAM_WORLD), host API", 1);
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n N %s [options]\n"
            "  -b SIZE     smallest size per peer (default 8)\n"
            "  -e SIZE     largest size per peer (default 64M, or what GSHMEM_SYMMETRIC_SIZE holds)\n"
            "  -f N        size factor (default 2)\n"
            "  -i N        timed calls per size (default 100; at most 256 MiB sent per PE, at least 3)\n"
            "  -w N        warmup calls per size (default 10)\n"
            "  -c, --check every call on fresh data, every byte of every result checked\n"
            "  --csv       comma-separated output\n"
            "  --json      one JSON document\n",
            prog);
}

static int parse(int argc, char **argv, struct options *o)
{
    int c;
    while ((c = getopt_long(argc, argv, PERF_SWEEP_SHORTOPTS "", perf_sweep_longopts, NULL)) != -1) {
        switch (c) {
        default:
            if (perf_sweep_option(&o->sweep, c, optarg)) break;
            usage(argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (o->sweep.iters < 1 || o->sweep.warmup < 0 || o->sweep.min_size < 1 || o->sweep.max_size < o->sweep.min_size || o->sweep.factor < 2) {
        usage(argv[0]);
        return 2;
    }
    return -1;
}

/* Without -e: the largest size whose two buffers fit in 3/4 of the heap (the rest
 * for the program's other objects and the allocator's rounding). */
static void fit_heap(struct options *o)
{
    if (o->sweep.max_given) return;
    size_t heap = perf_heap_hint("GSHMEM_SYMMETRIC_SIZE", (size_t)256 << 20);
    size_t fit = perf_fit_size(o->sweep.min_size, o->sweep.factor, heap / 4 * 3 / (2 * (size_t)g_n));
    if (fit && fit < o->sweep.max_size) {
        if (g_me == 0)
            fprintf(stderr, "gshmem-perf-alltoall: largest size %zu bytes per peer, what a %zu-byte heap holds "
                    "(GSHMEM_SYMMETRIC_SIZE; 64M per peer needs %zuM)\n", fit, heap,
                    ((size_t)64 << 20) * 2 * (size_t)g_n / 3 * 4 >> 20);
        o->sweep.max_size = fit;
    }
}

int main(int argc, char **argv)
{
    struct options o = {.sweep = {.min_size = 8, .max_size = (size_t)64 << 20, .factor = 2, .iters = 100, .warmup = 10}};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;

    gshmem_init();
    if (perf_require_host_heap(argv[0])) return 2;
    g_me = gshmem_my_pe();
    g_n = gshmem_n_pes();
    fit_heap(&o);
    g_src = gshmem_malloc(o.sweep.max_size * (size_t)g_n);
    g_dst = gshmem_malloc(o.sweep.max_size * (size_t)g_n);
    g_stats = gshmem_calloc((size_t)g_n * PERF_PE_STATS_DOUBLES, sizeof(double));
    double *samples = malloc(sizeof(double) * (size_t)o.sweep.iters);
    if (!g_src || !g_dst || !g_stats || !samples) {
        fprintf(stderr, "gshmem-perf-alltoall: PE %d: cannot allocate 2 x %zu symmetric bytes (raise "
                "GSHMEM_SYMMETRIC_SIZE or lower -e)\n", g_me, o.sweep.max_size * (size_t)g_n);
        gshmem_global_exit(1);
    }

    struct perf_table t = {o.sweep.format, 0};
    if (g_me == 0) print_header(&t, &o);
    long wrong_total = 0;
    for (size_t size = o.sweep.min_size; size <= o.sweep.max_size; size *= o.sweep.factor) {
        long iters = iterations_for(&o, size);
        struct perf_row w = perf_row_init("alltoall", "host", size, size, "uint8", "none", iters);
        w.oop = gather(measure(&o, size, 0, w.iters, samples), size);
        w.ip = gather(measure(&o, size, 1, w.iters, samples), size);
        if (g_me == 0) {
            perf_table_row(&t, &w);
            wrong_total += w.oop.wrong + w.ip.wrong;
        }
        if (size > o.sweep.max_size / o.sweep.factor) break;
    }
    if (g_me == 0) perf_table_end(&t);

    gshmem_barrier_all();
    free(samples);
    gshmem_free(g_stats);
    gshmem_free(g_dst);
    gshmem_free(g_src);
    gshmem_finalize();
    if (wrong_total) fprintf(stderr, "gshmem-perf-alltoall: %ld wrong bytes\n", wrong_total);
    return wrong_total ? 1 : 0;
}
