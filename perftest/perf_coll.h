/*
 * Helpers shared by the collective perftests, host (C) and device (CUDA) alike, with no
 * library calls: per-PE statistics and their combination over PEs, the data patterns,
 * and nccl-tests-style output as text, CSV or JSON.
 *
 * Figures of one measurement (one size, one placement):
 *   time    the mean over PEs of each PE's mean time per call (nccl-tests' default -a 1)
 *   algbw   bytes / time in GB/s (10^9 bytes per second); bytes is given per test
 *   busbw   algbw times the test's factor ((n-1)/n for alltoall, 2(n-1)/n for reductions)
 *   p50/p99 each PE's median / 99th percentile of its per-call times, the largest over PEs
 *   spread  the largest PE mean divided by the smallest PE mean (1.00: every PE the same)
 *   #wrong  bytes (alltoall) or elements (reductions) that differ from the expected
 *           result, or barrier rounds that did not order, summed over PEs
 */
#ifndef GSHMEM_PERF_COLL_H
#define GSHMEM_PERF_COLL_H

#include "perf_host.h"

#include <getopt.h>

#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __CUDACC__
#define PERF_HD __host__ __device__ __forceinline__
#else
#define PERF_HD static inline
#endif

enum perf_format { PERF_TEXT, PERF_CSV, PERF_JSON };

/* The size sweep and output options every collective perftest takes: nccl-tests' -b/-e/-f
 * (smallest size, largest size, factor), -i timed and -w warmup calls, -c/--check, --csv,
 * --json. A program adds its own letters to PERF_SWEEP_SHORTOPTS and passes
 * perf_sweep_longopts to getopt_long. */
struct perf_sweep {
    size_t min_size, max_size, factor;
    long iters, warmup;
    int check, max_given; /* max_given: -e was given */
    enum perf_format format;
};
#define PERF_SWEEP_SHORTOPTS "b:e:f:i:w:ch"
static const struct option perf_sweep_longopts[] = {{"check", no_argument, NULL, 'c'},
                                                    {"csv", no_argument, NULL, 'C'},
                                                    {"json", no_argument, NULL, 'J'},
                                                    {"help", no_argument, NULL, 'h'},
                                                    {NULL, 0, NULL, 0}};

/* Applies getopt_long's answer c (argument arg) to s; 0 when c is not a sweep option. */
static inline int perf_sweep_option(struct perf_sweep *s, int c, const char *arg)
{
    switch (c) {
    case 'b': s->min_size = perf_parse_size(arg); return 1;
    case 'e': s->max_size = perf_parse_size(arg); s->max_given = 1; return 1;
    case 'f': s->factor = perf_parse_size(arg); return 1;
    case 'i': s->iters = perf_parse_long("-i", arg, 1, LONG_MAX); return 1;
    case 'w': s->warmup = perf_parse_long("-w", arg, 0, LONG_MAX); return 1;
    case 'c': s->check = 1; return 1;
    case 'C': s->format = PERF_CSV; return 1;
    case 'J': s->format = PERF_JSON; return 1;
    default: return 0;
    }
}

/* What each PE reports to PE 0 after a measurement (doubles, so one put moves it). */
struct perf_pe_stats {
    double mean_us, p50_us, p99_us, wrong;
};
#define PERF_PE_STATS_DOUBLES 4

struct perf_result {
    int valid; /* 0: not measured (printed as '-' or an empty field) */
    double time_us, algbw, busbw, p50_us, p99_us, spread;
    long wrong;
};

static inline int perf_cmp_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* This PE's statistics of n per-call samples (sorted in place). mean_us < 0 keeps the
 * samples' mean; otherwise it is given (a total timed apart, more exact). */
static inline struct perf_pe_stats perf_pe_summarize(double *samples, long n, double mean_us, long wrong)
{
    struct perf_pe_stats s = {mean_us, 0, 0, (double)wrong};
    if (n <= 0) return s;
    qsort(samples, (size_t)n, sizeof *samples, perf_cmp_doubles);
    if (mean_us < 0) {
        double sum = 0;
        for (long i = 0; i < n; i++) sum += samples[i];
        s.mean_us = sum / (double)n;
    }
    s.p50_us = samples[n / 2];
    s.p99_us = samples[(long)((double)(n - 1) * 0.99)];
    return s;
}

/* The figures over n PEs' statistics; bytes: what algbw counts per call. */
static inline struct perf_result perf_combine(const struct perf_pe_stats *pe, int n, double bytes, double bus_factor)
{
    struct perf_result r;
    memset(&r, 0, sizeof r);
    if (n <= 0) return r;
    double sum = 0, lo = pe[0].mean_us, hi = pe[0].mean_us;
    for (int i = 0; i < n; i++) {
        sum += pe[i].mean_us;
        lo = pe[i].mean_us < lo ? pe[i].mean_us : lo;
        hi = pe[i].mean_us > hi ? pe[i].mean_us : hi;
        r.p50_us = pe[i].p50_us > r.p50_us ? pe[i].p50_us : r.p50_us;
        r.p99_us = pe[i].p99_us > r.p99_us ? pe[i].p99_us : r.p99_us;
        r.wrong += (long)pe[i].wrong;
    }
    r.valid = 1;
    r.time_us = sum / n;
    r.spread = lo > 0 ? hi / lo : 0;
    r.algbw = r.time_us > 0 ? bytes / (r.time_us * 1e3) : 0;
    r.busbw = r.algbw * bus_factor;
    return r;
}

/* ---- Data patterns. alltoall: word k of the block PE src sends PE dst in round iter
 * (of a given per-peer size), so a block that lands at the wrong place, from the wrong
 * round or size, shows. The final mix spreads every input bit over all 8 bytes. */
PERF_HD uint64_t perf_a2a_word(int src, int dst, size_t k, long iter, size_t size)
{
    uint64_t x = ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ ((uint64_t)iter << 16) ^ (uint64_t)size;
    x += ((uint64_t)k + 1) * 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Reductions: small integers, so a float sum over any order is exact; int64 values
 * below 2^56, so a sum over up to 128 PEs cannot overflow. */
PERF_HD float perf_red_float(int pe, size_t i, long iter)
{
    return (float)((long)((i * 7 + (size_t)pe * 13 + (size_t)iter * 5) % 61) - 30);
}
PERF_HD int64_t perf_red_int64(int pe, size_t i, long iter)
{
    return (int64_t)((((uint64_t)i + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)pe * 0x51ed27u + (uint64_t)iter)) >> 8);
}

/* ---- Output. One table per program run; rows of one kind (sized or latency-only). */
struct perf_table {
    enum perf_format format;
    int rows; /* rows printed so far (JSON commas) */
};

struct perf_row {
    const char *test;  /* "alltoall", "reduce", "barrier", ... */
    const char *api;   /* "host", "stream", "kernel", ... */
    size_t size;       /* bytes (per peer for alltoall); 0 for latency-only rows */
    size_t count;      /* elements */
    const char *type;  /* "uint8", "float", "int64", "none" */
    const char *redop; /* "sum", "none" */
    long iters;
    struct perf_result oop, ip; /* ip.valid = 0 for latency-only rows */
};

static inline struct perf_row perf_row_init(const char *test, const char *api, size_t size, size_t count,
                                            const char *type, const char *redop, long iters)
{
    struct perf_row w;
    memset(&w, 0, sizeof w);
    w.test = test;
    w.api = api;
    w.size = size;
    w.count = count;
    w.type = type;
    w.redop = redop;
    w.iters = iters;
    return w;
}

/* Prints comment lines (text), nothing (CSV) or the document's start (JSON); then
 * the column header. desc: "key=value" pairs for JSON, one per line of text. */
static inline void perf_table_begin(struct perf_table *t, const char *bench, int n_pes, const char *heap,
                                    const char *const *desc, int ndesc)
{
    t->rows = 0;
    if (t->format == PERF_CSV) {
        printf("test,api,size,count,type,redop,iters,time_us,algbw_GBps,busbw_GBps,wrong,p50_us,p99_us,spread,"
               "ip_time_us,ip_algbw_GBps,ip_busbw_GBps,ip_wrong,ip_p50_us,ip_p99_us,ip_spread\n");
    } else if (t->format == PERF_JSON) {
        printf("{\"benchmark\": \"%s\", \"n_pes\": %d, \"heap\": \"%s\", \"notes\": [", bench, n_pes, heap);
        for (int i = 0; i < ndesc; i++) printf("%s\"%s\"", i ? ", " : "", desc[i]);
        printf("],\n \"rows\": [");
    } else {
        printf("# %s: %d PEs, heap %s\n", bench, n_pes, heap);
        for (int i = 0; i < ndesc; i++) printf("# %s\n", desc[i]);
    }
    fflush(stdout);
}

/* Text: the column header of a group of rows (an api and test); sized or latency-only. */
static inline void perf_table_group(const struct perf_table *t, const char *title, int sized)
{
    if (t->format != PERF_TEXT) return;
    printf("#\n# %s\n", title);
    if (sized) {
        printf("# %41s | %s | %s\n", "",
               "----------------------- out-of-place ------------------------",
               "------------------------- in-place --------------------------");
        printf("# %10s %10s %6s %5s %6s", "size(B)", "count", "type", "redop", "iters");
        for (int k = 0; k < 2; k++)
            printf(" | %9s %8s %8s %6s %9s %9s %6s", "time(us)", "algbw", "busbw", "#wrong", "p50(us)", "p99(us)",
                   "spread");
        printf("\n");
    } else {
        printf("# %-12s %8s %10s %10s %10s %7s %7s\n", "test", "iters", "time(us)", "p50(us)", "p99(us)", "spread",
               "#wrong");
    }
    fflush(stdout);
}

static inline void perf_text_result(const struct perf_result *r)
{
    if (!r->valid)
        printf(" | %9s %8s %8s %6s %9s %9s %6s", "-", "-", "-", "-", "-", "-", "-");
    else
        printf(" | %9.2f %8.3f %8.3f %6ld %9.2f %9.2f %6.2f", r->time_us, r->algbw, r->busbw, r->wrong, r->p50_us,
               r->p99_us, r->spread);
}

static inline void perf_csv_result(const struct perf_result *r)
{
    if (!r->valid)
        printf(",,,,,,,");
    else
        printf(",%.3f,%.4f,%.4f,%ld,%.3f,%.3f,%.3f", r->time_us, r->algbw, r->busbw, r->wrong, r->p50_us, r->p99_us,
               r->spread);
}

static inline void perf_json_result(const char *key, const struct perf_result *r)
{
    if (!r->valid) {
        printf(", \"%s\": null", key);
        return;
    }
    printf(", \"%s\": {\"time_us\": %.3f, \"algbw_GBps\": %.4f, \"busbw_GBps\": %.4f, \"wrong\": %ld, "
           "\"p50_us\": %.3f, \"p99_us\": %.3f, \"spread\": %.3f}",
           key, r->time_us, r->algbw, r->busbw, r->wrong, r->p50_us, r->p99_us, r->spread);
}

static inline void perf_table_row(struct perf_table *t, const struct perf_row *w)
{
    if (t->format == PERF_CSV) {
        printf("%s,%s,%zu,%zu,%s,%s,%ld", w->test, w->api, w->size, w->count, w->type, w->redop, w->iters);
        perf_csv_result(&w->oop);
        perf_csv_result(&w->ip);
        printf("\n");
    } else if (t->format == PERF_JSON) {
        printf("%s\n  {\"test\": \"%s\", \"api\": \"%s\", \"size\": %zu, \"count\": %zu, \"type\": \"%s\", "
               "\"redop\": \"%s\", \"iters\": %ld",
               t->rows ? "," : "", w->test, w->api, w->size, w->count, w->type, w->redop, w->iters);
        perf_json_result("out_of_place", &w->oop);
        perf_json_result("in_place", &w->ip);
        printf("}");
    } else if (w->size == 0 && !w->ip.valid) {
        printf("  %-12s %8ld %10.2f %10.2f %10.2f %7.2f %7ld\n", w->test, w->iters, w->oop.time_us, w->oop.p50_us,
               w->oop.p99_us, w->oop.spread, w->oop.wrong);
    } else {
        printf("  %10zu %10zu %6s %5s %6ld", w->size, w->count, w->type, w->redop, w->iters);
        perf_text_result(&w->oop);
        perf_text_result(&w->ip);
        printf("\n");
    }
    t->rows++;
    fflush(stdout);
}

static inline void perf_table_end(const struct perf_table *t)
{
    if (t->format == PERF_JSON) printf("\n ]}\n");
    fflush(stdout);
}

/* The symmetric heap's size as the library will read it (env_var, else dflt), to
 * fit the default size range into it. */
static inline size_t perf_heap_hint(const char *env_var, size_t dflt)
{
    const char *v = getenv(env_var);
    return v && *v ? perf_parse_size(v) : dflt;
}

/* Largest min * factor^k <= limit (0 when min > limit). */
static inline size_t perf_fit_size(size_t min, size_t factor, size_t limit)
{
    size_t s = 0;
    for (size_t x = min; x <= limit; x *= factor) {
        s = x;
        if (x > limit / factor) break;
    }
    return s;
}

#endif
