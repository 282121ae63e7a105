/*
 * xoshiro256** seeded by splitmix64: fast, and the same seed gives the
 * same sequence on every machine.
 */
#ifndef H3100_RNG_H
#define H3100_RNG_H

#include <stdint.h>

typedef struct Rng {
    uint64_t s[4];
} Rng;

static inline uint64_t rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void rng_seed(Rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        r->s[i] = rng_splitmix(&seed);
    }
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(Rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rng_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n) without modulo bias worth noticing (Lemire). */
static inline uint64_t rng_below(Rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [0, 1). */
static inline double rng_unit(Rng *r)
{
    return (rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
