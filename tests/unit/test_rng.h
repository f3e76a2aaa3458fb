/* A fixed-seed generator for unit tests that feed random input (xorshift64*). */
#ifndef GSHMEM_TEST_RNG_H
#define GSHMEM_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state;

static inline void rng_seed(uint64_t seed)
{
    rng_state = seed ? seed : 1;
}

static inline uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

#endif
