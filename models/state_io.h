/*
 * What the state file (state.c) and the migration core (migrate.c) write
 * the same way: a byte stream over a file or memory with a running
 * CRC-32C, and the sections of a saved drive both hold.
 */
#ifndef H3100_STATE_IO_H
#define H3100_STATE_IO_H

#include <stdio.h>

#include "model_priv.h"

typedef struct Stream {
    FILE *f;                          /* a file, or */
    GByteArray *out;                  /* ... memory being written, or */
    const uint8_t *in;                /* ... memory being read */
    uint32_t crc;
    uint64_t bytes;
    uint64_t limit;                   /* reading: bytes left */
    bool failed;
} Stream;

void stream_put(Stream *s, const void *p, size_t n);
/* Zeroes and false past the end or after a failure. */
bool stream_get(Stream *s, void *p, size_t n);
bool stream_holds(const Stream *s, uint64_t n);

#define PUT(s, v) stream_put((s), &(v), sizeof(v))
#define GET(s, v) stream_get((s), &(v), sizeof(v))

bool state_refuse(GString *why, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Counters, reclaim state and block tables. */
void state_put_counters(H3100Model *m, Stream *s);
bool state_get_counters(H3100Model *m, Stream *s, GString *why);
/* A superblock's header; *@has: its reverse map is in use. */
void state_put_sb(const Superblock *sb, Stream *s);
bool state_get_sb(Ftl *f, uint32_t i, Stream *s, uint8_t *has,
                  uint32_t *open, GString *why);
/* Thermal (state version 3) and LDPC (4) lifetime counters. */
void state_put_lifetime(H3100Model *m, Stream *s);
bool state_get_lifetime(H3100Model *m, Stream *s, uint32_t version,
                        GString *why);

#endif
