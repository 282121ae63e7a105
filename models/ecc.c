/*
 * The NAND's bit errors and the controller's LDPC.
 *
 * A page's raw bit error rate (RBER) grows with its block's P/E cycles,
 * steeply near and past the rated count, and with the age of its data
 * (charge lost since the program, faster on worn cells).  Pages differ:
 * by type (a TLC word line's MSB page has the most errors) and by place
 * (layers and strings of a 3D array: a lognormal factor per physical
 * page, fixed by the seed, capped at 3 sigma).
 *
 * Each codeword read carries Poisson(lambda) bit errors.  The decoder
 * tries a hard decode (slower as the errors approach its limit: more
 * iterations); failing that, the firmware re-reads the page at shifted
 * read voltages, each retry recovering part of the retention errors;
 * failing those, it senses extra soft information and runs a soft
 * decode; failing that, the read is uncorrectable.  A read of several
 * codewords waits for its worst one.  Sources and estimates:
 * docs/design/calibration.md, "Ageing".
 */
#include <math.h>

#include "ecc.h"
#include "rng.h"

#define ECC_SIGMA_CAP 3.0

static uint64_t ecc_hash(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed ^ (a * 0x9e3779b97f4a7c15ULL) ^
                 (b * 0xc2b2ae3d27d4eb4fULL);

    rng_splitmix(&x);
    return rng_splitmix(&x);
}

static double unit_of(uint64_t h)
{
    return ((h >> 11) + 0.5) * 0x1.0p-53;      /* (0, 1) */
}

/* This page's place in the array: exp(sigma * z), |z| <= 3. */
static double page_variation(const H3100ReliabilityParams *r, uint64_t seed,
                             uint64_t page)
{
    double u1 = unit_of(ecc_hash(seed, page, 1));
    double u2 = unit_of(ecc_hash(seed, page, 2));
    double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);

    z = fmin(fmax(z, -ECC_SIGMA_CAP), ECC_SIGMA_CAP);
    return exp(r->page_sigma_milli / 1000.0 * z);
}

/* The wear term of the error rate: 0 fresh, 1 at the rated count. */
static double wear_term(const H3100Config *cfg, uint32_t erase_count)
{
    double x = (double)erase_count / cfg->ftl.rated_pe;
    double a = cfg->rel.rber_wear_milli / 1000.0;

    return expm1(a * x) / expm1(a);
}

double ecc_expected_errors(const H3100Config *cfg, uint64_t seed,
                           const EccPage *p, double *wear_errors)
{
    const H3100ReliabilityParams *r = &cfg->rel;
    double x = (double)p->erase_count / cfg->ftl.rated_pe;
    double wear = wear_term(cfg, p->erase_count);
    double rber = (r->rber_fresh_ppb + r->rber_rated_ppb * wear) * 1e-9;
    double ret = (r->retention_milli + r->retention_wear_milli * x) / 1000.0 *
                 log1p(fmax(p->age_hours, 0) / r->retention_tau_hours);
    double lam = rber * r->codeword_bits *
                 r->ptype_milli[p->ptype % H3100_PAGE_TYPES] / 1000.0 *
                 page_variation(r, seed, p->page);

    *wear_errors = lam;
    return lam * (1.0 + ret);
}

/* P(Poisson(lam) <= k), Wilson-Hilferty: within 1e-3 where it matters. */
static double poisson_cdf(uint32_t k, double lam)
{
    double nu = 2.0 * (k + 1.0), v = 2.0 / (9.0 * nu), z;

    if (lam <= 0 || k >= lam + 12.0 * sqrt(lam) + 12.0) {
        return 1.0;
    }
    z = (cbrt(2.0 * lam / nu) - (1.0 - v)) / sqrt(v);
    return 0.5 * erfc(z / M_SQRT2);
}

/* A hard decode takes longer as the errors near its limit. */
static uint64_t hard_decode_ns(const H3100Config *cfg, double lam)
{
    const H3100ReliabilityParams *r = &cfg->rel;
    double q = r->hard_limit_bits ? fmin(lam / r->hard_limit_bits, 1.0) : 1.0;

    return (uint64_t)llround(cfg->ctrl.ecc_ns *
                             (1.0 + r->ecc_slow_pct / 100.0 * q * q * q * q));
}

static double memo_wear(const H3100Config *cfg, EccMemo *memo,
                        uint32_t erase_count)
{
    uint32_t i = erase_count % ECC_MEMO;

    if (memo->erase_count[i] != erase_count + 1) {
        memo->erase_count[i] = erase_count + 1;
        memo->wear[i] = wear_term(cfg, erase_count);
    }
    return memo->wear[i];
}

/*
 * A read that cannot fail (ecc.h): even at the page variation's cap, its
 * expected errors leave the hard decode certain (poisson_cdf() is
 * exactly 1) and at its fastest (hard_decode_ns() of no errors).  Both
 * grow with the errors, so what holds at a bound holds at the errors the
 * page has, and the outcome is the one ecc_decode() would reach, without
 * the page's variation or the read's draw.  Most reads of a drive short
 * of its rated wear are such, and drawing them was most of a reclaim
 * read's work.
 */
bool ecc_read_is_sure(const H3100Config *cfg, const EccPage *p,
                      EccMemo *memo, EccOutcome *out)
{
    const H3100ReliabilityParams *r = &cfg->rel;
    double x = (double)p->erase_count / cfg->ftl.rated_pe;
    double rber = (r->rber_fresh_ppb + r->rber_rated_ppb *
                   memo_wear(cfg, memo, p->erase_count)) * 1e-9;
    double ret = (r->retention_milli + r->retention_wear_milli * x) / 1000.0 *
                 log1p(fmax(p->age_hours, 0) / r->retention_tau_hours);
    /* a hair over the bound, against rounding in the exact sums */
    double lam = rber * r->codeword_bits *
                 r->ptype_milli[p->ptype % H3100_PAGE_TYPES] / 1000.0 *
                 exp(r->page_sigma_milli / 1000.0 * ECC_SIGMA_CAP) *
                 (1.0 + ret) * (1.0 + 1e-9);
    uint64_t fastest = hard_decode_ns(cfg, 0);

    if (poisson_cdf(r->hard_limit_bits, lam) < 1.0 ||
        hard_decode_ns(cfg, lam) != fastest) {
        return false;
    }
    out->retries = 0;
    out->soft = false;
    out->uncorrectable = false;
    out->hard_ns[0] = fastest;
    return true;
}

void ecc_decode(const H3100Config *cfg, uint64_t seed, const EccPage *p,
                uint64_t draw, EccMemo *memo, EccOutcome *out)
{
    const H3100ReliabilityParams *r = &cfg->rel;
    double wear, lam, keep = r->retry_keep_milli / 1000.0;
    double u;

    if (memo && ecc_read_is_sure(cfg, p, memo, out)) {
        return;
    }
    lam = ecc_expected_errors(cfg, seed, p, &wear);
    out->retries = 0;
    out->soft = false;
    out->uncorrectable = false;
    out->hard_ns[0] = hard_decode_ns(cfg, lam);
    if (poisson_cdf(r->hard_limit_bits, lam) == 1.0) {
        return;                       /* decoded, whatever the draw */
    }
    /* the worst of n codewords: the max of n uniforms is U^(1/n) */
    u = pow(unit_of(ecc_hash(seed, draw, 3)),
            1.0 / (p->codewords ? p->codewords : 1));
    for (;;) {
        out->hard_ns[out->retries] = hard_decode_ns(cfg, lam);
        if (u <= poisson_cdf(r->hard_limit_bits, lam)) {
            return;
        }
        if (out->retries == r->read_retries) {
            break;
        }
        out->retries++;
        lam = wear + (lam - wear) * keep;
    }
    out->soft = true;
    out->uncorrectable = u > poisson_cdf(r->soft_limit_bits, lam);
}
