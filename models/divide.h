/*
 * Division of 32-bit numbers by a divisor fixed at set-up, by multiplies
 * (Lemire, Kaser, Kurz: "Faster remainder by direct computation", 2019).
 *
 * The FTL divides a physical slot number on every write and every slot
 * reclaim moves (which superblock, unit, page); a hardware division takes
 * 25-40 cycles on the hosts we run on, a multiply 3-4, and the geometry's
 * divisors are rarely powers of two.
 */
#ifndef H3100_DIVIDE_H
#define H3100_DIVIDE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct Divider {
    uint32_t d;
    uint64_t magic;                   /* ceil(2^64 / d); 0 for d == 1 */
} Divider;

/* @d >= 1 */
static inline Divider divider(uint32_t d)
{
    Divider q = { d, d > 1 ? UINT64_MAX / d + 1 : 0 };

    return q;
}

static inline uint32_t divide(const Divider *q, uint32_t n)
{
#ifdef __SIZEOF_INT128__
    return q->magic ? (uint32_t)(((unsigned __int128)q->magic * n) >> 64)
                    : n;
#else
    return n / q->d;
#endif
}

static inline uint32_t modulo(const Divider *q, uint32_t n)
{
#ifdef __SIZEOF_INT128__
    return q->magic ? (uint32_t)(((unsigned __int128)(q->magic * n) * q->d)
                                 >> 64)
                    : 0;
#else
    return n % q->d;
#endif
}

static inline bool divisible(const Divider *q, uint32_t n)
{
#ifdef __SIZEOF_INT128__
    return !q->magic || q->magic * n <= q->magic - 1;
#else
    return n % q->d == 0;
#endif
}

#endif
