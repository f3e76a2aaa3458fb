/* SHA-256 against FIPS 180-4 example vectors, HMAC-SHA256 against RFC 4231's test cases. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "bootstrap/sha256.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

static void unhex(const char *h, uint8_t *out, size_t *n)
{
    *n = strlen(h) / 2;
    for (size_t i = 0; i < *n; i++) sscanf(h + 2 * i, "%2hhx", &out[i]);
}

static void check_sha(const void *msg, size_t len, const char *want)
{
    uint8_t d[GSHMEMI_SHA256_SIZE];
    char got[65];
    gshmemi_sha256(msg, len, d);
    hex(d, sizeof(d), got);
    cr_assert_str_eq(got, want, "message of %zu bytes", len);
}

Test(sha256, fips_vectors)
{
    check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, million_a_in_odd_pieces)
{
    static uint8_t buf[1000000];
    memset(buf, 'a', sizeof(buf));
    struct gshmemi_sha256 s;
    uint8_t d[GSHMEMI_SHA256_SIZE];
    char got[65];
    gshmemi_sha256_init(&s);
    for (size_t off = 0, step = 1; off < sizeof(buf); off += step, step = step % 97 + 13)
        gshmemi_sha256_update(&s, buf + off, off + step > sizeof(buf) ? sizeof(buf) - off : step);
    gshmemi_sha256_final(&s, d);
    hex(d, sizeof(d), got);
    cr_assert_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Every block-boundary length hashes the same in one piece and byte by byte. */
Test(sha256, padding_boundaries)
{
    uint8_t msg[130], one[GSHMEMI_SHA256_SIZE], bytewise[GSHMEMI_SHA256_SIZE];
    for (size_t i = 0; i < sizeof(msg); i++) msg[i] = (uint8_t)(i * 7 + 3);
    for (size_t len = 50; len < sizeof(msg); len++) {
        struct gshmemi_sha256 s;
        gshmemi_sha256(msg, len, one);
        gshmemi_sha256_init(&s);
        for (size_t i = 0; i < len; i++) gshmemi_sha256_update(&s, msg + i, 1);
        gshmemi_sha256_final(&s, bytewise);
        cr_assert_eq(memcmp(one, bytewise, sizeof(one)), 0, "length %zu", len);
    }
}

/* Cases 6 and 7: a key of 131 bytes 0xaa, longer than the block. */
#define AA_10 "aaaaaaaaaaaaaaaaaaaa"
#define KEY_131_AA AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 AA_10 "aa"

struct hmac_case {
    const char *key_hex, *data_hex, *mac_hex;
    size_t mac_len; /* bytes compared (case 5 truncates to 128 bits) */
};

static const struct hmac_case rfc4231[] = {
    {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32},
    {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32},
    {"0102030405060708090a0b0c0d0e0f10111213141516171819",
     "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32},
    {"0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
     "a3b6167473100ee06e0c796c2955552b", 16},
    {KEY_131_AA,
     "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32},
    {KEY_131_AA,
     "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061"
     "206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564"
     "206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32},
};

Test(hmac_sha256, rfc4231_cases)
{
    for (size_t c = 0; c < sizeof(rfc4231) / sizeof(rfc4231[0]); c++) {
        uint8_t key[256], data[256], mac[GSHMEMI_SHA256_SIZE];
        size_t klen, dlen;
        char got[65];
        unhex(rfc4231[c].key_hex, key, &klen);
        unhex(rfc4231[c].data_hex, data, &dlen);
        const void *parts[1] = {data};
        gshmemi_hmac_sha256(key, klen, parts, &dlen, 1, mac);
        hex(mac, rfc4231[c].mac_len, got);
        cr_assert_str_eq(got, rfc4231[c].mac_hex, "RFC 4231 test case %zu", c + 1);
    }
}

Test(hmac_sha256, parts_concatenate)
{
    const char *msg = "what do ya want for nothing?";
    uint8_t whole[GSHMEMI_SHA256_SIZE], split[GSHMEMI_SHA256_SIZE];
    const void *p1[1] = {msg};
    size_t l1[1] = {strlen(msg)};
    gshmemi_hmac_sha256("Jefe", 4, p1, l1, 1, whole);
    const void *p3[3] = {msg, msg + 5, msg + 20};
    size_t l3[3] = {5, 15, strlen(msg) - 20};
    gshmemi_hmac_sha256("Jefe", 4, p3, l3, 3, split);
    cr_assert_eq(memcmp(whole, split, sizeof(whole)), 0);
    cr_assert(gshmemi_hmac_equal(whole, split, sizeof(whole)));
    split[31] ^= 1;
    cr_assert_not(gshmemi_hmac_equal(whole, split, sizeof(whole)));
}
