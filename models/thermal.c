/*
 * Thermal model: see thermal.h.
 */
#include <math.h>
#include <string.h>

#include "thermal.h"

static double tau_ns(const Thermal *th)
{
    return th->cfg->thermal.thermal_tau_ms * 1e6;
}

static double power_for(const Thermal *th, double activity)
{
    double idle = th->cfg->idle_mw, active = th->cfg->active_mw;

    return idle + (active - idle) * activity;
}

/* Where the temperature settles while the drive draws @power_mw. */
static double steady_k(const Thermal *th, double power_mw)
{
    const H3100ThermalParams *p = &th->cfg->thermal;

    return p->ambient_k + p->thermal_r_mk_per_w * power_mw / 1e6;
}

/* A host may set TMT1 above TMT2: light throttling then starts with heavy. */
static double light_k(const Thermal *th)
{
    return MIN(th->tmt1_k, th->tmt2_k);
}

static void set_level(Thermal *th, uint32_t level)
{
    if (level > th->level) {
        /* going straight to heavy passes TMT1 on the way */
        th->stats.tmt1_transitions += th->level == 0;
        th->stats.tmt2_transitions += level == 2;
    }
    th->level = level;
}

/* The level temperature @t asks for; a level ends only hyst below. */
static uint32_t level_for(const Thermal *th, double t)
{
    double hyst = th->cfg->thermal.throttle_hyst_k;
    double light = light_k(th), heavy = th->tmt2_k;
    uint32_t up = t >= heavy ? 2 : t >= light ? 1 : 0;
    uint32_t stay = t >= heavy - hyst ? 2 : t >= light - hyst ? 1 : 0;

    return MAX(up, MIN(th->level, stay));
}

/*
 * The threshold whose crossing, on the way from the temperature now to
 * @tss, changes the level; false if there is none.  level_for() keeps the
 * temperature on the right side of it.
 */
static bool next_threshold(const Thermal *th, double tss, double *x)
{
    double hyst = th->cfg->thermal.throttle_hyst_k;

    if (tss > th->temp_k && th->level < 2) {
        *x = th->level == 0 ? light_k(th) : th->tmt2_k;
        return tss > *x;
    }
    if (tss < th->temp_k && th->level > 0) {
        *x = (th->level == 2 ? th->tmt2_k : light_k(th)) - hyst;
        return tss < *x;
    }
    return false;
}

/* Time for the temperature to go from @t0 to @x on its way to @tss. */
static double time_to(const Thermal *th, double t0, double tss, double x)
{
    if (x == tss) {
        return INFINITY;
    }
    return tau_ns(th) * log((t0 - tss) / (x - tss));
}

/* Of @len ns going from @t0 to @t1 toward @tss, the time at/above @thr. */
static uint64_t time_above(const Thermal *th, double t0, double t1,
                           double tss, uint64_t len, double thr)
{
    double cross;

    if (t0 >= thr && t1 >= thr) {
        return len;
    }
    if (t0 < thr && t1 < thr) {
        return 0;
    }
    cross = CLAMP(time_to(th, t0, tss, thr), 0.0, (double)len);
    return t0 < thr ? len - (uint64_t)cross : (uint64_t)cross;
}

static void account(Thermal *th, double t1, double tss, uint64_t len)
{
    const H3100ThermalParams *p = &th->cfg->thermal;
    ThermalStats *s = &th->stats;

    s->warn_ns += time_above(th, th->temp_k, t1, tss, len, p->wctemp_k);
    s->crit_ns += time_above(th, th->temp_k, t1, tss, len, p->cctemp_k);
    s->tmt1_ns += th->level == 1 ? len : 0;
    s->tmt2_ns += th->level == 2 ? len : 0;
}

/*
 * @len ns at constant @power_mw: the exact exponential, split where the
 * temperature crosses a threshold so the level changes there.  Each
 * crossing moves the level one way, so there are at most two.
 */
static void advance(Thermal *th, uint64_t len, double power_mw)
{
    double tss = steady_k(th, power_mw);

    th->power_mw = power_mw;
    for (int i = 0; len; i++) {
        uint64_t seg = len;
        bool crossed = false;
        double x = 0, t1;

        set_level(th, level_for(th, th->temp_k));
        if (i < 4 && next_threshold(th, tss, &x)) {
            double c = ceil(time_to(th, th->temp_k, tss, x));

            if (c < (double)len) {
                seg = (uint64_t)MAX(c, 0.0);
                crossed = true;
            }
        }
        t1 = crossed ? x : tss + (th->temp_k - tss) * exp(-(seg / tau_ns(th)));
        account(th, t1, tss, seg);
        th->temp_k = t1;
        len -= seg;
        if (crossed) {
            set_level(th, tss > x ? th->level + 1 : th->level - 1);
        }
    }
    set_level(th, level_for(th, th->temp_k));
}

void thermal_init(Thermal *th, const H3100Config *cfg)
{
    memset(th, 0, sizeof(*th));
    th->cfg = cfg;
    th->dies = h3100_dies(cfg);
    th->cores = cfg->ctrl.cores;
}

void thermal_power_on(Thermal *th, uint64_t nand_busy, uint64_t core_busy)
{
    th->tmt1_k = th->cfg->thermal.tmt1_k;
    th->tmt2_k = th->cfg->thermal.tmt2_k;
    th->power_mw = power_for(th, 0);
    th->temp_k = steady_k(th, th->power_mw);
    th->last = 0;
    th->next = THERMAL_STEP_NS;
    thermal_skip_work(th, nand_busy, core_busy);
    th->level = 0;
    set_level(th, level_for(th, th->temp_k));
}

void thermal_skip_work(Thermal *th, uint64_t nand_busy, uint64_t core_busy)
{
    th->nand_heat = nand_busy;
    th->core_heat = core_busy;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Work done since it was last turned into heat (done may step back a
 * little when a read pushes queued programs later). */
static uint64_t fresh(uint64_t done, uint64_t heat)
{
    return done > heat ? done - heat : 0;
}

bool thermal_update(Thermal *th, uint64_t now, uint64_t nand_done,
                    uint64_t core_done)
{
    uint32_t before = th->level;
    uint64_t dt, pend_n, pend_c, need, len, take_n, take_c;
    double activity;

    if (now <= th->last) {
        return false;
    }
    dt = now - th->last;
    pend_n = fresh(nand_done, th->nand_heat);
    pend_c = fresh(core_done, th->core_heat);
    /*
     * Work done over a long gap ran at its start, as fast as every die
     * and core at once allows, and the rest of the gap was idle; what
     * does not fit in @dt (the queues are estimates) heats the next step.
     */
    need = MAX(div_up(pend_n, th->dies), div_up(pend_c, th->cores));
    len = MIN(dt, MAX(THERMAL_SPREAD_NS, need));
    take_n = MIN(pend_n, (uint64_t)th->dies * len);
    take_c = MIN(pend_c, (uint64_t)th->cores * len);
    th->nand_heat += take_n;
    th->core_heat += take_c;
    activity = MAX((double)take_n / ((double)th->dies * len),
                   (double)take_c / ((double)th->cores * len));
    advance(th, len, power_for(th, activity));
    if (dt > len) {
        advance(th, dt - len, power_for(th, 0));
    }
    th->last = now;
    th->next = now + THERMAL_STEP_NS;
    return th->level != before;
}

bool thermal_set_limits(Thermal *th, uint32_t tmt1_k, uint32_t tmt2_k)
{
    uint32_t before = th->level;

    th->tmt1_k = tmt1_k ? tmt1_k : th->cfg->thermal.tmt1_k;
    th->tmt2_k = tmt2_k ? tmt2_k : th->cfg->thermal.tmt2_k;
    set_level(th, level_for(th, th->temp_k));
    return th->level != before;
}

uint32_t thermal_keep_pct(const Thermal *th)
{
    const H3100ThermalParams *p = &th->cfg->thermal;

    return th->level == 2 ? p->throttle_heavy_pct :
           th->level == 1 ? p->throttle_light_pct : 100;
}
