/*
 * Speed and memory of the model itself, as "name: value unit" lines.
 */
#ifndef SIM_BENCH_H
#define SIM_BENCH_H

#include <stdint.h>

int sim_bench(const char *profile, uint64_t seed);

#endif
