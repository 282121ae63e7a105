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
 * docs/calibration.md, "Ageing".
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

double ecc_expected_errors(const H3100Config *cfg, uint64_t seed,
                           const EccPage *p, double *wear_errors)
{
    const H3100ReliabilityParams *r = &cfg->rel;
    double x = (double)p->erase_count / cfg->ftl.rated_pe;
    double a = r->rber_wear_milli / 1000.0;
    double wear = expm1(a * x) / expm1(a);
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

void ecc_decode(const H3100Config *cfg, uint64_t seed, const EccPage *p,
                uint64_t draw, EccOutcome *out)
{
    const H3100ReliabilityParams *r = &cfg->rel;
    double wear, lam = ecc_expected_errors(cfg, seed, p, &wear);
    double keep = r->retry_keep_milli / 1000.0;
    /* the worst of n codewords: the max of n uniforms is U^(1/n) */
    double u = pow(unit_of(ecc_hash(seed, draw, 3)),
                   1.0 / (p->codewords ? p->codewords : 1));

    out->retries = 0;
    out->soft = false;
    out->uncorrectable = false;
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
