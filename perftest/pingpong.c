/*
 * gshmem-perf-pingpong: latency between 2 PEs on the host heap.
 *
 *   p           gshmem_long_p to the peer's flag; the peer answers the same way
 *   put         gshmem_putmem of SIZE bytes, gshmem_fence, gshmem_long_p of a flag
 *   put_signal  gshmem_putmem_signal (SET) of SIZE bytes; gshmem_signal_wait_until
 *   fetch_add   PE 0 alone: a dependent chain of gshmem_uint64_atomic_fetch_add on PE 1
 *   put_quiet   PE 0 alone: gshmem_putmem of 8 bytes to PE 1, then gshmem_quiet (remote
 *               completion; over tcp a QUIET frame and its ACK)
 *
 * Ping-pongs report half the round trip; fetch_add and put_quiet report the latency of
 * one operation. Every iteration is timed on PE 0: min, average, median and 99th
 * percentile in microseconds. Received data is verified once per size (#wrong:
 * bytes that differ; 0 expected).
 *
 * usage: gshmemrun -n 2 gshmem-perf-pingpong [-w WARMUP] [-i ITERS] [-b MIN] [-e MAX]
 *                                            [-f FACTOR] [-t TESTS] [--csv]
 */
#define _GNU_SOURCE
#include <gshmem.h>

#include "perf_host.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options {
    long warmup, iters;
    size_t min_size, max_size, factor;
    int csv;
    const char *tests;
};

struct stats {
    double min, avg, p50, p99;
};

static int g_me, g_peer;
static long *g_flag;       /* symmetric: ping-pong flag, counts up */
static uint64_t *g_sig;    /* symmetric: put_signal signal, counts up */
static uint64_t *g_counter; /* symmetric: fetch_add target */
static long *g_wrong;      /* symmetric: PE 1 reports its #wrong here */
static unsigned char *g_buf; /* symmetric: put destination */
static unsigned char *g_src; /* private: put source */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Statistics of n samples, each scaled by `scale` (0.5 for half round trips). */
static struct stats summarize(double *samples, long n, double scale)
{
    struct stats s = {0, 0, 0, 0};
    if (n <= 0) return s;
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    double sum = 0;
    for (long i = 0; i < n; i++) sum += samples[i];
    s.min = samples[0] * scale;
    s.avg = sum / (double)n * scale;
    s.p50 = samples[n / 2] * scale;
    s.p99 = samples[(long)((double)(n - 1) * 0.99)] * scale;
    return s;
}

static unsigned char pattern_byte(int pe, size_t size, size_t k)
{
    return (unsigned char)((size_t)pe * 131 + size * 7 + k * 13 + k / 251);
}

static void fill_source(size_t size)
{
    for (size_t k = 0; k < size; k++) g_src[k] = pattern_byte(g_me, size, k);
}

static long count_wrong(size_t size)
{
    long wrong = 0;
    for (size_t k = 0; k < size; k++) wrong += g_buf[k] != pattern_byte(g_peer, size, k);
    return wrong;
}

static void print_header(const struct options *o)
{
    if (o->csv) {
        printf("test,size_bytes,iters,measure,min_us,avg_us,p50_us,p99_us,wrong\n");
        return;
    }
    printf("# gshmem-perf-pingpong: 2 PEs, heap %s, %ld warmup + %ld timed iterations\n",
           gshmemx_heap_kind(), o->warmup, o->iters);
    printf("# p, put, put_signal: half round trip (one-way latency); fetch_add: one operation of a dependent chain; "
           "put_quiet: one put + quiet\n");
    printf("%-11s %10s %8s %-14s %9s %9s %9s %9s %7s\n", "test", "size(B)", "iters", "measure", "min(us)",
           "avg(us)", "p50(us)", "p99(us)", "#wrong");
}

static void print_row(const struct options *o, const char *test, size_t size, const char *measure,
                      struct stats s, long wrong)
{
    if (o->csv)
        printf("%s,%zu,%ld,%s,%.3f,%.3f,%.3f,%.3f,%ld\n", test, size, o->iters, measure, s.min, s.avg, s.p50,
               s.p99, wrong);
    else
        printf("%-11s %10zu %8ld %-14s %9.3f %9.3f %9.3f %9.3f %7ld\n", test, size, o->iters, measure, s.min,
               s.avg, s.p50, s.p99, wrong);
    fflush(stdout);
}

/* Sends one ping of `size` bytes numbered seq to the peer by the chosen method. */
enum method { M_P, M_PUT, M_PUT_SIGNAL };

static void send_ping(enum method m, size_t size, long seq)
{
    switch (m) {
    case M_P:
        gshmem_long_p(g_flag, seq, g_peer);
        break;
    case M_PUT:
        gshmem_putmem(g_buf, g_src, size, g_peer);
        gshmem_fence();
        gshmem_long_p(g_flag, seq, g_peer);
        break;
    case M_PUT_SIGNAL:
        gshmem_putmem_signal(g_buf, g_src, size, g_sig, (uint64_t)seq, GSHMEM_SIGNAL_SET, g_peer);
        break;
    }
}

static void wait_ping(enum method m, long seq)
{
    if (m == M_PUT_SIGNAL)
        gshmem_signal_wait_until(g_sig, GSHMEM_CMP_GE, (uint64_t)seq);
    else
        gshmem_long_wait_until(g_flag, GSHMEM_CMP_GE, seq);
}

/* One ping-pong series; returns #wrong bytes seen by PE 0 and PE 1 together. */
static long pingpong(const struct options *o, enum method m, size_t size, double *samples)
{
    gshmem_barrier_all();
    *g_flag = 0;
    *g_sig = 0;
    memset(g_buf, 0, size);
    fill_source(size);
    gshmem_barrier_all();
    long total = o->warmup + o->iters;
    for (long i = 1; i <= total; i++) {
        if (g_me == 0) {
            double t0 = (perf_now_s() * 1e6);
            send_ping(m, size, i);
            wait_ping(m, i);
            double t1 = (perf_now_s() * 1e6);
            if (i > o->warmup) samples[i - o->warmup - 1] = t1 - t0;
        } else {
            wait_ping(m, i);
            send_ping(m, size, i);
        }
    }
    gshmem_barrier_all();
    long wrong = m == M_P ? (*g_flag != total) : count_wrong(size);
    if (g_me == 1) gshmem_long_p(g_wrong, wrong, 0);
    gshmem_barrier_all();
    return g_me == 0 ? wrong + *g_wrong : 0;
}

static long fetch_add_chain(const struct options *o, double *samples)
{
    gshmem_barrier_all();
    *g_counter = 0;
    gshmem_barrier_all();
    long wrong = 0;
    if (g_me == 0) {
        uint64_t expect = 0, add = 1;
        long total = o->warmup + o->iters;
        for (long i = 0; i < total; i++) {
            double t0 = (perf_now_s() * 1e6);
            uint64_t old = gshmem_uint64_atomic_fetch_add(g_counter, add, 1);
            double t1 = (perf_now_s() * 1e6);
            if (i >= o->warmup) samples[i - o->warmup] = t1 - t0;
            wrong += old != expect;
            expect += add;
            add = (old & 1) + 1; /* the next operand depends on the fetched value */
        }
        wrong += gshmem_uint64_atomic_fetch(g_counter, 1) != expect;
    }
    gshmem_barrier_all();
    return wrong;
}

/* PE 0 alone: 8-byte puts of distinct values, each followed by a quiet. */
static long put_quiet_chain(const struct options *o, double *samples)
{
    gshmem_barrier_all();
    long total = o->warmup + o->iters;
    if (g_me == 0) {
        for (long i = 0; i < total; i++) {
            uint64_t v = ((uint64_t)i << 8) | 0x5a;
            double t0 = (perf_now_s() * 1e6);
            gshmem_putmem(g_counter, &v, sizeof(v), 1);
            gshmem_quiet();
            double t1 = (perf_now_s() * 1e6);
            if (i >= o->warmup) samples[i - o->warmup] = t1 - t0;
        }
    }
    gshmem_barrier_all();
    /* PE 1 checks the last value: every put landed in order. */
    long wrong = g_me == 1 && *g_counter != ((((uint64_t)total - 1) << 8) | 0x5a);
    if (g_me == 1) gshmem_long_p(g_wrong, wrong, 0);
    gshmem_barrier_all();
    return g_me == 0 ? *g_wrong : 0;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n 2 %s [options]\n"
            "  -w N      warmup iterations (default 1000)\n"
            "  -i N      timed iterations (default 10000)\n"
            "  -b SIZE   smallest put size (default 8)\n"
            "  -e SIZE   largest put size (default 4K)\n"
            "  -f N      size factor (default 2)\n"
            "  -t LIST   tests, comma separated: p,put,put_signal,fetch_add,put_quiet (default all)\n"
            "  --csv     comma-separated output\n",
            prog);
}

int main(int argc, char **argv)
{
    struct options o = {1000, 10000, 8, 4096, 2, 0, "p,put,put_signal,fetch_add,put_quiet"};
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "w:i:b:e:f:t:ch", longopts, NULL)) != -1) {
        switch (c) {
        case 'w': o.warmup = perf_parse_long("-w", optarg, 0, LONG_MAX); break;
        case 'i': o.iters = perf_parse_long("-i", optarg, 1, LONG_MAX); break;
        case 'b': o.min_size = perf_parse_size(optarg); break;
        case 'e': o.max_size = perf_parse_size(optarg); break;
        case 'f': o.factor = perf_parse_size(optarg); break;
        case 't': o.tests = optarg; perf_check_list("-t", optarg, "p,put,put_signal,fetch_add,put_quiet"); break;
        case 'c': o.csv = 1; break;
        default: usage(argv[0]); return c == 'h' ? 0 : 2;
        }
    }
    if (o.iters < 1 || o.warmup < 0 || o.min_size < 1 || o.max_size < o.min_size || o.factor < 2) {
        usage(argv[0]);
        return 2;
    }

    gshmem_init();
    if (perf_require_host_heap(argv[0])) return 2;
    g_me = gshmem_my_pe();
    if (gshmem_n_pes() != 2) {
        if (g_me == 0) fprintf(stderr, "gshmem-perf-pingpong needs exactly 2 PEs (got %d)\n", gshmem_n_pes());
        gshmem_finalize();
        return 2;
    }
    g_peer = 1 - g_me;
    g_flag = gshmem_calloc(1, sizeof(long));
    g_sig = gshmem_calloc(1, sizeof(uint64_t));
    g_counter = gshmem_calloc(1, sizeof(uint64_t));
    g_wrong = gshmem_calloc(1, sizeof(long));
    g_buf = gshmem_malloc(o.max_size);
    g_src = malloc(o.max_size);
    double *samples = malloc(sizeof(double) * (size_t)o.iters);
    if (!g_flag || !g_sig || !g_counter || !g_wrong || !g_buf || !g_src || !samples) {
        fprintf(stderr, "gshmem-perf-pingpong: pe %d: allocation failed (max size %zu)\n", g_me, o.max_size);
        gshmem_global_exit(1);
    }

    if (g_me == 0) print_header(&o);
    long wrong_total = 0;
    if (perf_wants(o.tests, "p")) {
        long w = pingpong(&o, M_P, sizeof(long), samples);
        if (g_me == 0) print_row(&o, "p", sizeof(long), "half-RTT", summarize(samples, o.iters, 0.5), w);
        wrong_total += w;
    }
    static const struct { const char *name; enum method m; } sized[] = {{"put", M_PUT}, {"put_signal", M_PUT_SIGNAL}};
    for (size_t t = 0; t < sizeof sized / sizeof sized[0]; t++) {
        if (!perf_wants(o.tests, sized[t].name)) continue;
        for (size_t size = o.min_size; size <= o.max_size; size *= o.factor) {
            long w = pingpong(&o, sized[t].m, size, samples);
            if (g_me == 0) print_row(&o, sized[t].name, size, "half-RTT", summarize(samples, o.iters, 0.5), w);
            wrong_total += w;
        }
    }
    if (perf_wants(o.tests, "fetch_add")) {
        long w = fetch_add_chain(&o, samples);
        if (g_me == 0)
            print_row(&o, "fetch_add", sizeof(uint64_t), "per-op", summarize(samples, o.iters, 1.0), w);
        wrong_total += w;
    }
    if (perf_wants(o.tests, "put_quiet")) {
        long w = put_quiet_chain(&o, samples);
        if (g_me == 0)
            print_row(&o, "put_quiet", sizeof(uint64_t), "per-op", summarize(samples, o.iters, 1.0), w);
        wrong_total += w;
    }

    gshmem_barrier_all();
    free(samples);
    free(g_src);
    gshmem_free(g_buf);
    gshmem_free(g_wrong);
    gshmem_free(g_counter);
    gshmem_free(g_sig);
    gshmem_free(g_flag);
    gshmem_finalize();
    if (wrong_total) fprintf(stderr, "gshmem-perf-pingpong: %ld wrong values\n", wrong_total);
    return wrong_total ? 1 : 0;
}
