/*
 * The raw log page bytes h3100-vlog and h3100-tlog decode: the one FILE
 * argument, or standard input without one (or with "-").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_LOG_INPUT_H
#define H3100_LOG_INPUT_H

#include <stddef.h>

/*
 * Parse [FILE] (-h / --help print @usage) and read at most @max bytes of
 * it into @buf.  Returns the bytes read, or -1 with *rc the exit status
 * (0 after --help, 2 for a usage error, 1 when FILE cannot be opened).
 */
long h3100_log_input(int argc, char **argv, const char *usage, void *buf,
                     size_t max, int *rc);

#endif
