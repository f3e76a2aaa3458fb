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
 * The reference, timed in the same run with the same sizes and iteration counts:
 *   memcpy  a plain memcpy between two private buffers of PE 0 (putmem and getmem).
 *   socket  a plain TCP stream over 127.0.0.1 from PE 0 to PE 1 (putmem only; getmem
 *           prints "-"): PE 0 sends SIZE bytes ITERS times with a blocking send loop,
 *           PE 1 receives them all and answers with a 1-byte ack; timed on PE 0 from
 *           the first send to the ack, after WARMUP untimed sends and their own ack.
 *           Same buffers as putmem (PE 1 receives into its symmetric buffer); PE 1
 *           checks the last message it received (counted in #wrong).
 * --ref picks one. Without it: socket when PE 1's heap is not mapped (PE 1 is reached
 * through the remote transport: GSHMEM_DISABLE_P2P=1) and both PEs are on one node;
 * memcpy otherwise. --ref socket needs both PEs on one node.
 *
 * usage: gshmemrun -n 2 gshmem-perf-bw [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS]
 *                                      [-w WARMUP] [-t putmem,getmem]
 *                                      [--ref memcpy|socket] [--csv]
 */
#define _GNU_SOURCE
#include <gshmem.h>

#include "perf_host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum reference { REF_AUTO, REF_MEMCPY, REF_SOCKET };

struct options {
    size_t min_size, max_size, factor;
    long iters, warmup;
    int csv;
    const char *tests;
    enum reference ref;
};

static int g_me;
static unsigned char *g_sym;   /* symmetric: put destination on PE 1, get source on PE 1 */
static unsigned char *g_local; /* private: put source and get destination on PE 0 */
static unsigned char *g_scratch; /* private: destination of the memcpy reference */
static long *g_wrong;          /* symmetric: PE 1 reports its #wrong here */
static long *g_port;           /* symmetric: PE 1's listening port for the socket reference */
static int g_sock = -1;        /* the socket reference's connection, on both PEs */

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

static uint64_t salt_for(size_t size, int is_put)
{
    return size * 31 + (uint64_t)is_put;
}

/* Collective: PE 1 passes its #wrong to PE 0; returns it on PE 0, 0 on PE 1. */
static long wrong_from_pe1(long pe1_wrong)
{
    gshmem_barrier_all();
    if (g_me == 1) gshmem_long_p(g_wrong, pe1_wrong, 0);
    gshmem_barrier_all();
    return g_me == 0 ? *g_wrong : 0;
}

/* Times one size; returns GB/s on PE 0 and stores #wrong (both PEs' counts) in *wrong. */
static double run_size(const struct options *o, int is_put, size_t size, long iters, long *wrong)
{
    uint64_t salt = salt_for(size, is_put);
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
    long pe1_wrong = wrong_from_pe1(g_me == 1 && is_put ? count_wrong(g_sym, size, salt) : 0);
    *wrong = g_me == 0 ? pe1_wrong + (is_put ? 0 : count_wrong(g_local, size, salt)) : 0;
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

static void socket_fail(const char *what)
{
    fprintf(stderr, "gshmem-perf-bw: pe %d: socket reference: %s (peer pe %d): %s\n", g_me, what, 1 - g_me,
            strerror(errno));
    gshmem_global_exit(1);
}

/* Collective: PE 1 listens on 127.0.0.1 (ephemeral port) and publishes the port in
 * g_port; PE 0 reads it and connects. Any failure ends the job. */
static void socket_connect(void)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    if (g_me == 1) {
        int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listener, 1) != 0 ||
            getsockname(listener, (struct sockaddr *)&addr, &len) != 0)
            socket_fail("listen on 127.0.0.1");
        *g_port = ntohs(addr.sin_port);
        gshmem_barrier_all();
        g_sock = accept(listener, NULL, NULL);
        if (g_sock < 0) socket_fail("accept");
        close(listener);
    } else {
        gshmem_barrier_all();
        addr.sin_port = htons((uint16_t)gshmem_long_g(g_port, 1));
        g_sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (g_sock < 0 || connect(g_sock, (struct sockaddr *)&addr, sizeof addr) != 0)
            socket_fail("connect to 127.0.0.1");
    }
    /* As the tcp transport's connections: without it Nagle holds the last partial
     * segment of a burst until the peer's delayed ACK (up to 40 ms on Linux). */
    int one = 1;
    if (setsockopt(g_sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) socket_fail("TCP_NODELAY");
}

static void socket_send_all(const unsigned char *buf, size_t size)
{
    while (size > 0) {
        ssize_t n = send(g_sock, buf, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) socket_fail("send");
        buf += n;
        size -= (size_t)n;
    }
}

static void socket_recv_all(unsigned char *buf, size_t size)
{
    while (size > 0) {
        ssize_t n = recv(g_sock, buf, size, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ECONNRESET;
        if (n <= 0) socket_fail("recv");
        buf += n;
        size -= (size_t)n;
    }
}

/* The socket reference for one size (collective), between the buffers putmem used: PE 0's
 * g_local (still holding the putmem pattern) and PE 1's g_sym. Returns GB/s on PE 0 and
 * stores PE 1's #wrong for the last message in *wrong. */
static double socket_gbps(const struct options *o, size_t size, long iters, long *wrong)
{
    unsigned char ack = 1;
    double seconds = 0;
    if (g_me == 0) {
        for (long i = 0; i < o->warmup; i++) socket_send_all(g_local, size);
        socket_recv_all(&ack, 1);
        double t0 = perf_now_s();
        for (long i = 0; i < iters; i++) socket_send_all(g_local, size);
        socket_recv_all(&ack, 1);
        seconds = perf_now_s() - t0;
    } else {
        memset(g_sym, 0, size);
        for (long i = 0; i < o->warmup; i++) socket_recv_all(g_sym, size);
        socket_send_all(&ack, 1);
        for (long i = 0; i < iters; i++) socket_recv_all(g_sym, size);
        socket_send_all(&ack, 1);
    }
    *wrong = wrong_from_pe1(g_me == 1 ? count_wrong(g_sym, size, salt_for(size, 1)) : 0);
    return seconds > 0 ? (double)size * (double)iters / seconds / 1e9 : 0;
}

/* Without --ref: the socket stream when PE 1 is reached through the remote transport on
 * this node, memcpy otherwise. Both PEs decide alike: mapping is a setting of the job. */
static enum reference reference_pick(enum reference asked)
{
    if (asked != REF_AUTO) return asked;
    int same_node = gshmem_team_n_pes(GSHMEMX_TEAM_NODE) == 2;
    return same_node && gshmem_ptr(g_sym, 1 - g_me) == NULL ? REF_SOCKET : REF_MEMCPY;
}

static void print_header(const struct options *o)
{
    const char *ref_name = o->ref == REF_SOCKET ? "socket" : "memcpy";
    if (o->csv) {
        printf("op,size_bytes,iters,us_per_transfer,GBps,%s_GBps,ratio,wrong\n", ref_name);
        return;
    }
    printf("# gshmem-perf-bw: PE 0 -> PE 1 (putmem) and PE 0 <- PE 1 (getmem), heap %s, PE 1 %s\n",
           gshmemx_heap_kind(), gshmem_ptr(g_sym, 1) ? "mapped" : "not mapped (reached through the remote transport)");
    if (o->ref == REF_SOCKET)
        printf("# blocking calls in a loop, then quiet; GB/s = 10^9 bytes per second; socket: PE 0 sends\n"
               "# the same sizes and counts to PE 1 over a TCP stream on 127.0.0.1 in the same run\n"
               "# (blocking send loop, 1-byte ack at the end); ratio = GB/s / socket GB/s\n");
    else
        printf("# blocking calls in a loop, then quiet; GB/s = 10^9 bytes per second; memcpy: a private\n"
               "# memcpy of the same size on PE 0 in the same run; ratio = GB/s / memcpy GB/s\n");
    printf("%-7s %12s %8s %12s %10s %6s GB/s %6s %7s\n", "op", "size(B)", "iters", "us/transfer", "GB/s", ref_name,
           "ratio", "#wrong");
}

/* ref < 0: no reference for this row ("-", or empty fields in CSV). */
static void print_row(const struct options *o, const char *op, size_t size, long iters, double gbps, double ref,
                      long wrong)
{
    double us = gbps > 0 ? (double)size / (gbps * 1e3) : 0; /* per transfer */
    char ref_text[32] = "", ratio_text[32] = "";
    if (ref >= 0) {
        snprintf(ref_text, sizeof ref_text, "%.3f", ref);
        snprintf(ratio_text, sizeof ratio_text, o->csv ? "%.3f" : "%.2f", ref > 0 ? gbps / ref : 0);
    } else if (!o->csv) {
        strcpy(ref_text, "-");
        strcpy(ratio_text, "-");
    }
    if (o->csv)
        printf("%s,%zu,%ld,%.3f,%.3f,%s,%s,%ld\n", op, size, iters, us, gbps, ref_text, ratio_text, wrong);
    else
        printf("%-7s %12zu %8ld %12.3f %10.3f %11s %6s %7ld\n", op, size, iters, us, gbps, ref_text, ratio_text,
               wrong);
    fflush(stdout);
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
            "  --ref R   memcpy: a private memcpy on PE 0; socket: a TCP stream PE 0 -> PE 1 over\n"
            "            127.0.0.1, putmem only (default: socket when PE 1's heap is not mapped,\n"
            "            as with GSHMEM_DISABLE_P2P=1, and both PEs share a node; else memcpy)\n"
            "  --csv     comma-separated output\n",
            prog);
}

int main(int argc, char **argv)
{
    struct options o = {8, (size_t)64 << 20, 2, 100, 5, 0, "putmem,getmem", REF_AUTO};
    static const struct option longopts[] = {{"csv", no_argument, NULL, 'c'}, {"help", no_argument, NULL, 'h'},
                                             {"ref", required_argument, NULL, 'r'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "b:e:f:i:w:t:ch", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o.min_size = perf_parse_size(optarg); break;
        case 'e': o.max_size = perf_parse_size(optarg); break;
        case 'f': o.factor = perf_parse_size(optarg); break;
        case 'i': o.iters = perf_parse_long("-i", optarg, 1, LONG_MAX); break;
        case 'w': o.warmup = perf_parse_long("-w", optarg, 0, LONG_MAX); break;
        case 't': o.tests = optarg; perf_check_list("-t", optarg, "putmem,getmem"); break;
        case 'c': o.csv = 1; break;
        case 'r':
            if (strcmp(optarg, "memcpy") == 0) {
                o.ref = REF_MEMCPY;
            } else if (strcmp(optarg, "socket") == 0) {
                o.ref = REF_SOCKET;
            } else {
                usage(argv[0]);
                return 2;
            }
            break;
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
        if (g_me == 0) fprintf(stderr, "gshmem-perf-bw needs exactly 2 PEs (got %d)\n", gshmem_n_pes());
        gshmem_finalize();
        return 2;
    }
    if (o.ref == REF_SOCKET && gshmem_team_n_pes(GSHMEMX_TEAM_NODE) != 2) {
        if (g_me == 0) fprintf(stderr, "gshmem-perf-bw: --ref socket needs both PEs on one node\n");
        gshmem_finalize();
        return 2;
    }
    g_sym = gshmem_malloc(o.max_size);
    g_wrong = gshmem_calloc(1, sizeof(long));
    g_port = gshmem_calloc(1, sizeof(long));
    g_local = malloc(o.max_size);
    g_scratch = malloc(o.max_size);
    if (!g_sym || !g_wrong || !g_port || !g_local || !g_scratch) {
        fprintf(stderr, "gshmem-perf-bw: pe %d: cannot allocate %zu bytes (raise GSHMEM_SYMMETRIC_SIZE?)\n", g_me,
                o.max_size);
        gshmem_global_exit(1);
    }
    o.ref = reference_pick(o.ref);
    if (o.ref == REF_SOCKET && perf_wants(o.tests, "putmem")) socket_connect();

    if (g_me == 0) print_header(&o);
    long wrong_total = 0;
    for (int is_put = 1; is_put >= 0; is_put--) {
        const char *op = is_put ? "putmem" : "getmem";
        if (!perf_wants(o.tests, op)) continue;
        for (size_t size = o.min_size; size <= o.max_size; size *= o.factor) {
            long iters = iterations_for(&o, size), wrong = 0, ref_wrong = 0;
            double gbps = run_size(&o, is_put, size, iters, &wrong);
            double ref = -1; /* none: the socket reference has no getmem */
            if (o.ref == REF_SOCKET && is_put)
                ref = socket_gbps(&o, size, iters, &ref_wrong);
            else if (o.ref == REF_MEMCPY && g_me == 0)
                ref = memcpy_gbps(g_scratch, size, iters, o.warmup);
            wrong += ref_wrong;
            if (g_me == 0) print_row(&o, op, size, iters, gbps, ref, wrong);
            wrong_total += wrong;
        }
    }

    gshmem_barrier_all();
    if (g_sock >= 0) close(g_sock);
    free(g_local);
    free(g_scratch);
    gshmem_free(g_port);
    gshmem_free(g_wrong);
    gshmem_free(g_sym);
    gshmem_finalize();
    if (wrong_total) fprintf(stderr, "gshmem-perf-bw: %ld wrong bytes\n", wrong_total);
    return wrong_total ? 1 : 0;
}
