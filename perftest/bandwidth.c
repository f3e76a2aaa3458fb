/*
 * gshmem-perf-bw: one-directional bandwidth between 2 PEs on the host heap.
 *
 *   putmem  PE 0 writes SIZE bytes into PE 1's symmetric buffer, ITERS times, then quiet
 *   getmem  PE 0 reads SIZE bytes from PE 1's symmetric buffer, ITERS times, then quiet
 *
 * GB/s = SIZE * ITERS / time (10^9 bytes per second), timed on PE 0 after WARMUP
 * untimed transfers. For large sizes the iteration count is reduced so that each
 * size moves about 1 GiB at most (at least 3 iterations). After each size the
 * received data is compared with the pattern (#wrong: bytes that differ).
 *
 * usage: gshmemrun -n 2 gshmem-perf-bw [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS]
 *                                      [-w WARMUP] [-t putmem,getmem] [--csv]
 */
#define _GNU_SOURCE
#include <gshmem.h>

#include "perf_host.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options {
    size_t min_size, max_size, factor;
    long iters, warmup;
    int csv;
    const char *tests;
};

static int g_me;
static unsigned char *g_sym;   /* symmetric: put destination on PE 1, get source on PE 1 */
static unsigned char *g_local; /* private: put source and get destination on PE 0 */
static unsigned char *g_scratch; /* private: destination of the memcpy reference */
static long *g_wrong;          /* symmetric: PE 1 reports its #wrong here */

/* Pattern of 8-byte words, cheap enough for 64 MiB buffers. */
static void fill(unsigned char *buf, size_t size, uint64_t salt)
{
    for (size_t k = 0; k < size; k += 8) {
        uint64_t v = (k / 8 + 1) * 0x9e3779b97f4a7c15ull ^ salt;
        memcpy(buf + k, &v, size - k < 8 ? size - k : 8);
    }
}

static long count_wrong(const unsigned char *buf, size_t size, uint64_t salt)
{
    long wrong = 0;
    for (size_t k = 0; k < size; k += 8) {
        uint64_t v = (k / 8 + 1) * 0x9e3779b97f4a7c15ull ^ salt;
        size_t n = size - k < 8 ? size - k : 8;
        if (memcmp(buf + k, &v, n) != 0)
            for (size_t b = 0; b < n; b++) wrong += buf[k + b] != ((unsigned char *)&v)[b];
    }
    return wrong;
}

static long iterations_for(const struct options *o, size_t size)
{
    long cap = (long)(((size_t)1 << 30) / size);
    long n = o->iters < cap ? o->iters : cap;
    return n < 3 ? 3 : n;
}

/* Times one size; returns GB/s on PE 0 and stores #wrong (both PEs' counts) in *wrong. */
static double run_size(const struct options *o, int is_put, size_t size, long iters, long *wrong)
{
    uint64_t salt = size * 31 + (uint64_t)is_put;
    gshmem_barrier_all();
    if (is_put) {
        if (g_me == 0) fill(g_local, size, salt);
        if (g_me == 1) memset(g_sym, 0, size);
    } else {
        if (g_me == 0) memset(g_local, 0, size);
        if (g_me == 1) fill(g_sym, size, salt);
    }
    gshmem_barrier_all();
    double seconds = 0;
    if (g_me == 0) {
        for (long i = 0; i < o->warmup; i++) {
            if (is_put)
                gshmem_putmem(g_sym, g_local, size, 1);
            else
                gshmem_getmem(g_local, g_sym, size, 1);
        }
        gshmem_quiet();
        double t0 = perf_now_s();
        for (long i = 0; i < iters; i++) {
            if (is_put)
                gshmem_putmem(g_sym, g_local, size, 1);
            else
                gshmem_getmem(g_local, g_sym, size, 1);
        }
        gshmem_quiet();
        seconds = perf_now_s() - t0;
    }
    gshmem_barrier_all();
    if (g_me == 1) gshmem_long_p(g_wrong, is_put ? count_wrong(g_sym, size, salt) : 0, 0);
    gshmem_barrier_all();
    *wrong = g_me == 0 ? *g_wrong + (is_put ? 0 : count_wrong(g_local, size, salt)) : 0;
    return seconds > 0 ? (double)size * (double)iters / seconds / 1e9 : 0;
}

/* The reference in the same run: a plain memcpy between two private buffers of PE 0. */
static double memcpy_gbps(unsigned char *scratch, size_t size, long iters, long warmup)
{
    for (long i = 0; i < warmup; i++) memcpy(scratch, g_local, size);
    double t0 = perf_now_s();
    for (long i = 0; i < iters; i++) {
        memcpy(scratch, g_local, size);
        __asm__ __volatile__("" ::"r"(scratch) : "memory"); /* keep every copy */
    }
    double seconds = perf_now_s() - t0;
    return seconds > 0 ? (double)size * (double)iters / seconds / 1e9 : 0;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: gshmemrun -n 2 %s [options]\n"
            "  -b SIZE   smallest size (default 8)\n"
            "  -e SIZE   largest size (default 64M; the heap must hold it: GSHMEM_SYMMETRIC_SIZE)\n"
            "  -f N      size factor (default 2)\n"
            "  -i N      iterations per size (default 100; fewer for large sizes, at most 1 GiB per size)\n"
            "  -w N      warmup transfers per size (default 5)\n"
            "  -t LIST   putmem,getmem (default both)\n"
            "  --csv     comma-separated output\n",
            prog);
}

int main(int argc, char **argv)
{
    struct options o = {8, (size_t)64 << 20, 2, 100, 5, 0, "putmem,getmem"};
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "b:e:f:i:w:t:ch", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o.min_size = perf_parse_size(optarg); break;
        case 'e': o.max_size = perf_parse_size(optarg); break;
        case 'f': o.factor = perf_parse_size(optarg); break;
        case 'i': o.iters = atol(optarg); break;
        case 'w': o.warmup = atol(optarg); break;
        case 't': o.tests = optarg; break;
        case 'c': o.csv = 1; break;
        default: usage(argv[0]); return c == 'h' ? 0 : 2;
        }
    }
    if (o.iters < 1 || o.warmup < 0 || o.min_size < 1 || o.max_size < o.min_size || o.factor < 2) {
        usage(argv[0]);
        return 2;
    }

    gshmem_init();
    g_me = gshmem_my_pe();
    if (gshmem_n_pes() != 2) {
        if (g_me == 0) fprintf(stderr, "gshmem-perf-bw needs exactly 2 PEs (got %d)\n", gshmem_n_pes());
        gshmem_finalize();
        return 2;
    }
    g_sym = gshmem_malloc(o.max_size);
    g_wrong = gshmem_calloc(1, sizeof(long));
    g_local = malloc(o.max_size);
    g_scratch = malloc(o.max_size);
    if (!g_sym || !g_wrong || !g_local || !g_scratch) {
        fprintf(stderr, "gshmem-perf-bw: pe %d: cannot allocate %zu bytes (raise GSHMEM_SYMMETRIC_SIZE?)\n", g_me,
                o.max_size);
        gshmem_global_exit(1);
    }

    if (g_me == 0) {
        if (o.csv) {
            printf("op,size_bytes,iters,us_per_transfer,GBps,memcpy_GBps,ratio,wrong\n");
        } else {
            printf("# gshmem-perf-bw: PE 0 -> PE 1 (putmem) and PE 0 <- PE 1 (getmem), heap %s\n",
                   gshmemx_heap_kind());
            printf("# blocking calls in a loop, then quiet; GB/s = 10^9 bytes per second; memcpy: a private\n"
                   "# memcpy of the same size on PE 0 in the same run; ratio = GB/s / memcpy GB/s\n");
            printf("%-7s %12s %8s %12s %10s %11s %6s %7s\n", "op", "size(B)", "iters", "us/transfer", "GB/s",
                   "memcpy GB/s", "ratio", "#wrong");
        }
    }
    long wrong_total = 0;
    for (int is_put = 1; is_put >= 0; is_put--) {
        const char *op = is_put ? "putmem" : "getmem";
        if (!perf_wants(o.tests, op)) continue;
        for (size_t size = o.min_size; size <= o.max_size; size *= o.factor) {
            long iters = iterations_for(&o, size), wrong = 0;
            double gbps = run_size(&o, is_put, size, iters, &wrong);
            if (g_me == 0) {
                double ref = memcpy_gbps(g_scratch, size, iters, o.warmup);
                double us = gbps > 0 ? (double)size / (gbps * 1e3) : 0; /* per transfer */
                double ratio = ref > 0 ? gbps / ref : 0;
                if (o.csv)
                    printf("%s,%zu,%ld,%.3f,%.3f,%.3f,%.3f,%ld\n", op, size, iters, us, gbps, ref, ratio, wrong);
                else
                    printf("%-7s %12zu %8ld %12.3f %10.3f %11.3f %6.2f %7ld\n", op, size, iters, us, gbps, ref, ratio,
                           wrong);
                fflush(stdout);
            }
            wrong_total += wrong;
        }
    }

    gshmem_barrier_all();
    free(g_local);
    free(g_scratch);
    gshmem_free(g_wrong);
    gshmem_free(g_sym);
    gshmem_finalize();
    if (wrong_total) fprintf(stderr, "gshmem-perf-bw: %ld wrong bytes\n", wrong_total);
    return wrong_total ? 1 : 0;
}
