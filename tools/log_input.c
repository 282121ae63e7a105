/*
 * The raw log page bytes the decoders read: see log_input.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "log_input.h"

long h3100_log_input(int argc, char **argv, const char *usage, void *buf,
                     size_t max, int *rc)
{
    FILE *f = stdin;
    size_t n;

    if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") ||
                                   !strcmp(argv[1], "--help")))) {
        fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        *rc = argc > 2 ? 2 : 0;
        return -1;
    }
    if (argc == 2 && strcmp(argv[1], "-")) {
        f = fopen(argv[1], "rb");
        if (!f) {
            perror(argv[1]);
            *rc = 1;
            return -1;
        }
    }
    n = fread(buf, 1, max, f);
    if (f != stdin) {
        fclose(f);
    }
    return (long)n;
}
