/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the bootstrap's job-secret
 * challenge-response. Not constant-time beyond gshmemi_hmac_equal; not for bulk data. */
#ifndef GSHMEMI_BOOTSTRAP_SHA256_H
#define GSHMEMI_BOOTSTRAP_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GSHMEMI_SHA256_SIZE 32
#define GSHMEMI_SHA256_BLOCK 64

struct gshmemi_sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed */
    uint8_t block[GSHMEMI_SHA256_BLOCK];
    size_t used;
};

void gshmemi_sha256_init(struct gshmemi_sha256 *s);
void gshmemi_sha256_update(struct gshmemi_sha256 *s, const void *data, size_t len);
void gshmemi_sha256_final(struct gshmemi_sha256 *s, uint8_t out[GSHMEMI_SHA256_SIZE]);
void gshmemi_sha256(const void *data, size_t len, uint8_t out[GSHMEMI_SHA256_SIZE]);

/* HMAC-SHA256 over the concatenation of nparts buffers. */
void gshmemi_hmac_sha256(const void *key, size_t keylen, const void *const *parts, const size_t *lens, int nparts,
                         uint8_t out[GSHMEMI_SHA256_SIZE]);

/* 1 when a and b hold the same len bytes; the time taken does not depend on where they differ. */
int gshmemi_hmac_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
