/* The unique-ID front end of the tcp bootstrap (gshmemx_get_uniqueid /
 * gshmemx_init_attr, or GSHMEM_BOOTSTRAP=uid with GSHMEM_BOOTSTRAP_UID). */
#ifndef GSHMEMI_BOOTSTRAP_UID_H
#define GSHMEMI_BOOTSTRAP_UID_H

#include <gshmem.h>

struct gshmemi_env;
struct gshmemi_bootstrap;

/* The attributes the next gshmemi_bootstrap_uid_init joins with; NULL clears them.
 * Set by gshmemx_init_attr around one initialization. */
void gshmemi_bootstrap_uid_attach(const gshmemx_init_attr_t *attr);

/* Joins with the attached attributes, else from the environment (GSHMEM_BOOTSTRAP_UID,
 * GSHMEM_RANK, GSHMEM_NRANKS, the job secret; rank 0 hosts the root at that address).
 * The process that made the ID (or rank 0) hosts the rendezvous in a thread until finalize. */
int gshmemi_bootstrap_uid_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs);

/* The ID's record, for tests: 0, or GSHMEMX_ERR_INVALID_ARG with the reason in err. */
#define GSHMEMI_UID_ADDRS_MAX 4
#define GSHMEMI_UID_SECRET_MAX 95
struct gshmemi_uid_record {
    int naddrs;
    uint32_t addrs[GSHMEMI_UID_ADDRS_MAX]; /* IPv4, network byte order */
    int port;
    char job_id[24]; /* "uid-" and 16 hex digits */
    uint8_t secret[GSHMEMI_UID_SECRET_MAX];
    size_t secret_len;
};
void gshmemi_uid_encode(const struct gshmemi_uid_record *r, gshmemx_uniqueid_t *id);
int gshmemi_uid_decode(const gshmemx_uniqueid_t *id, struct gshmemi_uid_record *r, char *err, size_t errlen);

#endif
