/*
 * The reference datasheet, run on the model.
 */
#ifndef SIM_DATASHEET_H
#define SIM_DATASHEET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Run every datasheet figure for each H3100 capacity (or only @profile),
 * print target, model and error.  Returns the number of figures off by
 * more than 5%, or -1 on a setup error.
 */
int sim_datasheet(const char *profile, const char *overrides, bool json,
                  uint64_t seed);

#endif
