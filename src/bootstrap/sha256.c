/* SHA-256 from FIPS 180-4 section 6.2; HMAC from RFC 2104. */
#include "bootstrap/sha256.h"

#include <string.h>

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t sha256_rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_compress(uint32_t h[8], const uint8_t block[GSHMEMI_SHA256_BLOCK])
{
    uint32_t w[64], v[8];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 | (uint32_t)block[4 * t + 2] << 8 |
               block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = sha256_rotr(w[t - 15], 7) ^ sha256_rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = sha256_rotr(w[t - 2], 17) ^ sha256_rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(v, h, sizeof(v));
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = sha256_rotr(v[4], 6) ^ sha256_rotr(v[4], 11) ^ sha256_rotr(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + S1 + ch + sha256_k[t] + w[t];
        uint32_t S0 = sha256_rotr(v[0], 2) ^ sha256_rotr(v[0], 13) ^ sha256_rotr(v[0], 22);
        uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        uint32_t t2 = S0 + maj;
        memmove(v + 1, v, 7 * sizeof(uint32_t));
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) h[i] += v[i];
}

void gshmemi_sha256_init(struct gshmemi_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof(h0));
    s->total = 0;
    s->used = 0;
}

void gshmemi_sha256_update(struct gshmemi_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->total += len;
    while (len > 0) {
        size_t n = GSHMEMI_SHA256_BLOCK - s->used;
        if (n > len) n = len;
        memcpy(s->block + s->used, p, n);
        s->used += n;
        p += n;
        len -= n;
        if (s->used == GSHMEMI_SHA256_BLOCK) {
            sha256_compress(s->h, s->block);
            s->used = 0;
        }
    }
}

void gshmemi_sha256_final(struct gshmemi_sha256 *s, uint8_t out[GSHMEMI_SHA256_SIZE])
{
    uint64_t bits = s->total * 8;
    uint8_t pad[GSHMEMI_SHA256_BLOCK + 8] = {0x80};
    size_t padlen = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++) pad[padlen + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
    gshmemi_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
    memset(s, 0, sizeof(*s));
}

void gshmemi_sha256(const void *data, size_t len, uint8_t out[GSHMEMI_SHA256_SIZE])
{
    struct gshmemi_sha256 s;
    gshmemi_sha256_init(&s);
    gshmemi_sha256_update(&s, data, len);
    gshmemi_sha256_final(&s, out);
}

void gshmemi_hmac_sha256(const void *key, size_t keylen, const void *const *parts, const size_t *lens, int nparts,
                         uint8_t out[GSHMEMI_SHA256_SIZE])
{
    uint8_t k[GSHMEMI_SHA256_BLOCK] = {0}, pad[GSHMEMI_SHA256_BLOCK], inner[GSHMEMI_SHA256_SIZE];
    struct gshmemi_sha256 s;
    if (keylen > GSHMEMI_SHA256_BLOCK) gshmemi_sha256(key, keylen, k);
    else if (keylen > 0) memcpy(k, key, keylen);
    for (int i = 0; i < GSHMEMI_SHA256_BLOCK; i++) pad[i] = k[i] ^ 0x36;
    gshmemi_sha256_init(&s);
    gshmemi_sha256_update(&s, pad, sizeof(pad));
    for (int i = 0; i < nparts; i++) gshmemi_sha256_update(&s, parts[i], lens[i]);
    gshmemi_sha256_final(&s, inner);
    for (int i = 0; i < GSHMEMI_SHA256_BLOCK; i++) pad[i] = k[i] ^ 0x5c;
    gshmemi_sha256_init(&s);
    gshmemi_sha256_update(&s, pad, sizeof(pad));
    gshmemi_sha256_update(&s, inner, sizeof(inner));
    gshmemi_sha256_final(&s, out);
    memset(k, 0, sizeof(k));
    memset(pad, 0, sizeof(pad));
}

int gshmemi_hmac_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < len; i++) diff |= a[i] ^ b[i];
    return diff == 0;
}
