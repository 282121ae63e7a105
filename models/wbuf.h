/*
 * The power-loss-protected DRAM write buffer.
 *
 * A host write completes once its data is in the buffer.  Buffer space
 * comes back when the program unit holding the data has been programmed
 * (the NAND die queues say when), so the host stalls only when programs,
 * its own and reclaim's, fall behind.
 */
#ifndef H3100_WBUF_H
#define H3100_WBUF_H

#include "nand.h"

typedef struct WbufStats {
    uint64_t stalls;                  /* admissions that had to wait */
    uint64_t stall_ns;
    uint64_t peak_bytes;
} WbufStats;

typedef struct Wbuf {
    uint64_t cap;
    uint64_t held;                    /* in units not yet full */
    uint64_t pending;                 /* in units handed to the NAND */
    uint64_t last_admit;              /* admissions stay in order */
    WbufStats stats;
} Wbuf;

void wbuf_init(Wbuf *w, uint64_t cap);
void wbuf_reset_time(Wbuf *w);

/* Admit @bytes asked for at @t; returns when they are in the buffer. */
uint64_t wbuf_admit(Wbuf *w, Nand *n, uint64_t t, uint64_t bytes);

/* A full unit of @bytes went to the NAND. */
void wbuf_handed_over(Wbuf *w, uint64_t bytes);

/* Admitted bytes that will never be programmed (a failed write). */
void wbuf_cancel(Wbuf *w, uint64_t bytes);

/* Account units the NAND finished by @t; returns bytes in the buffer. */
uint64_t wbuf_occupancy(Wbuf *w, Nand *n, uint64_t t);

#endif
