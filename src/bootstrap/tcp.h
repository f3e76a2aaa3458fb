/* The TCP bootstrap client's entry for front ends that do not take everything from
 * the environment (the unique ID): which root, which rank, which secret. */
#ifndef GSHMEMI_BOOTSTRAP_TCP_H
#define GSHMEMI_BOOTSTRAP_TCP_H

#include <stddef.h>
#include <stdint.h>

struct gshmemi_bootstrap;

#define GSHMEMI_TCP_JOIN_ROOTS_MAX 8

struct gshmemi_tcp_join {
    const char *roots[GSHMEMI_TCP_JOIN_ROOTS_MAX]; /* "host:port" each, tried in order */
    int nroots;
    int rank;
    int nranks;
    const char *job_id; /* "" when none */
    const uint8_t *secret; /* NULL: say HELLO without proof */
    size_t secret_len;
    double timeout; /* GSHMEM_TIMEOUT */
};

/* Connects to the first root that answers and joins as j->rank; fills bs like
 * gshmemi_bootstrap_tcp_init. */
int gshmemi_bootstrap_tcp_join(const struct gshmemi_tcp_join *j, struct gshmemi_bootstrap *bs);

/* Splits a root address, "host:port" or "[IPv6]:port", into host (brackets removed) and
 * port (1..65535); 0, or GSHMEMX_ERR_CONFIG when it is neither. */
int gshmemi_tcp_parse_root(const char *text, char *host, size_t hostlen, char *port, size_t portlen);
/* Ends this PE's side of its root connection (the root then sees it leave); safe while
 * other threads still read the connection. For a job that is over. */
void gshmemi_bootstrap_tcp_hang_up(struct gshmemi_bootstrap *bs);

#endif
