/*
 * NAND array timing: dies, planes and channel buses.
 *
 * Each die keeps the queue of array operations (programs, erases) the
 * firmware has handed it, with the times they will run.  Reads are not
 * queued behind them: a read goes in at the end of the operation running
 * when it arrives (or suspends it, for host reads) and the operations
 * queued after it move back, as firmware that favours reads does.  The
 * write buffer learns from the same queues when a host unit is done.
 *
 * Dies are numbered so that die d sits on channel d % channels: the
 * superblock stripes consecutive program units over consecutive dies and
 * so over every channel first.
 */
#ifndef H3100_NAND_H
#define H3100_NAND_H

#include "h3100/config.h"
#include "calendar.h"

typedef struct NandStats {
    uint64_t page_reads;
    uint64_t programs;
    uint64_t erases;
    uint64_t suspends;
    uint64_t busy_ns;                 /* sum of array time over all dies */
} NandStats;

typedef struct DieOp {
    uint64_t start;
    uint64_t end;
    uint32_t host_bytes;              /* write buffer bytes it frees */
    uint32_t suspends;                /* reads that suspended it */
} DieOp;

typedef struct DieQueue {
    DieOp *op;                        /* ring */
    uint32_t head;
    uint32_t len;
    uint32_t cap;
    uint64_t last_end;                /* end of the last op ever queued */
} DieQueue;

typedef struct Nand {
    const H3100Config *cfg;
    uint32_t dies;
    uint32_t planes;
    uint64_t slot_xfer_ns;            /* one 4 KiB over a channel bus */
    uint64_t unit_xfer_ns;            /* one program unit over the bus */
    Calendar *bus;                    /* per channel */
    DieQueue *q;                      /* per die */
    uint64_t *read_free;              /* per plane (die * planes + plane) */
    uint64_t present;                 /* bookings before this are past */
    uint64_t next_retire;             /* no queued op ends before this */
    /* how long an operation holds its die or plane: the array time, or
     * longer when throttled (nand_set_throttle) */
    uint64_t read_hold_ns[H3100_PAGE_TYPES];
    uint64_t prog_hold_ns;
    uint64_t erase_hold_ns;
    uint32_t keep_pct;                /* throughput kept when throttled */
    NandStats stats;
    uint64_t *die_busy_ns;            /* array time per die */
    uint64_t *bus_busy_ns;            /* transfer time per channel bus */
} Nand;

void nand_init(Nand *n, const H3100Config *cfg);
void nand_destroy(Nand *n);
void nand_reset_time(Nand *n);

/*
 * Thermal throttling: from now on the array delivers @keep_pct percent of
 * its throughput.  Each operation holds its die (or plane) 100 / @keep_pct
 * times as long, while busy_ns still counts the array time only: the die
 * idles in between, as firmware spacing out operations to cool down.
 */
void nand_set_throttle(Nand *n, uint32_t keep_pct);

/* Nothing will be booked before @t any more. */
static inline void nand_set_present(Nand *n, uint64_t t)
{
    if (t > n->present) {
        n->present = t;
    }
}

/*
 * Read @slots 4 KiB pieces of a page of type @ptype on (@die, @plane),
 * asked for at @t; returns when the data is in controller SRAM.  Host
 * reads may suspend a program or erase; reclaim's reads wait for it.
 */
uint64_t nand_read(Nand *n, uint64_t t, uint32_t die, uint32_t plane,
                   uint32_t ptype, uint32_t slots, bool host);

/*
 * Program one unit on @die with data ready at @t; returns when it is
 * planned to finish.  @host_bytes of the write buffer free up then.
 */
uint64_t nand_program(Nand *n, uint64_t t, uint32_t die,
                      uint32_t host_bytes);

/* Erase one block on every plane of @die, from @t; returns when done. */
uint64_t nand_erase(Nand *n, uint64_t t, uint32_t die);

/* Drop operations finished by @t; returns the host bytes they freed. */
uint64_t nand_retire(Nand *n, uint64_t t);

/* When the next queued host unit finishes, or UINT64_MAX. */
uint64_t nand_next_host_done(const Nand *n);

/* Earliest time any die's array is free (for idle reclaim). */
uint64_t nand_earliest_free(const Nand *n);

/*
 * Array time of the programs and erases queued to run after @t, summed
 * over dies (reads are short and left out), at the current throttle.
 */
uint64_t nand_ahead_ns(const Nand *n, uint64_t t);

#endif
