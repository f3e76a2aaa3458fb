/*
 * What the unit tests of the rendezvous root share: an in-process root on 127.0.0.1
 * (its log captured to a file), a wait for a log line, a raw socket to the root, a
 * fixed-seed generator and little-endian helpers. Header-only: each test file is its
 * own executable.
 */
#ifndef GSHMEM_TEST_ROOT_HARNESS_H
#define GSHMEM_TEST_ROOT_HARNESS_H

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/tcp_root.h"
#include "core/log.h"

static struct gshmemi_tcp_root *root;
static char log_path[64];

/* A root for 2 PEs of job `job`, with secret (or none) and a HELLO timeout of timeout_s. */
static inline void root_harness_up(const char *job, const char *secret, int timeout_s, const char *tag)
{
    snprintf(log_path, sizeof(log_path), "/tmp/gshmem-%s-test-%d.log", tag, (int)getpid());
    unlink(log_path);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_WARN, "ALL", log_path), 0);
    struct gshmemi_tcp_root_config cfg = {.bind_host = "127.0.0.1", .nranks = 2, .job_id = job,
                                          .timeout = timeout_s, .secret = secret,
                                          .secret_len = secret ? strlen(secret) : 0};
    cr_assert_eq(gshmemi_tcp_root_create(&cfg, &root), 0);
    cr_assert_eq(gshmemi_tcp_root_start_thread(root), 0);
}

static inline void root_down(void)
{
    gshmemi_tcp_root_stop(root);
    gshmemi_tcp_root_join(root);
    gshmemi_tcp_root_destroy(root);
    gshmemi_log_close();
    unlink(log_path);
}

/* 1 once the log holds a line containing both a and b; waits up to 5 s for the root thread. */
static inline int log_has(const char *a, const char *b)
{
    for (int tries = 0; tries < 500; tries++) {
        char line[2048];
        int found = 0;
        FILE *f = fopen(log_path, "r");
        while (f && !found && fgets(line, sizeof(line), f)) found = strstr(line, a) && strstr(line, b);
        if (f) fclose(f);
        if (found) return 1;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    return 0;
}

/* A TCP connection to the root; *local_port (if given) is this end's port. */
static inline int raw_connect(int *local_port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)gshmemi_tcp_root_port(root))};
    socklen_t sl = sizeof(sa);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    if (local_port) *local_port = ntohs(sa.sin_port);
    return fd;
}

static uint64_t rng_state;

static inline void rng_seed(uint64_t seed)
{
    rng_state = seed;
}

/* xorshift64*: deterministic, so a failure replays. */
static inline uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static inline uint32_t rng_below(uint32_t n)
{
    return (uint32_t)(rng_next() % n);
}

static inline void rng_fill(uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) p[i] = (uint8_t)rng_next();
}

/* A heap copy of exactly len bytes: a read past it is a sanitizer error. */
static inline uint8_t *exact(const uint8_t *src, size_t len)
{
    uint8_t *p = malloc(len);
    cr_assert(p != NULL || len == 0);
    if (len) memcpy(p, src, len);
    return p;
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

#endif
