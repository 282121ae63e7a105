/*
 * Faults on demand: the table of armed faults, their specs and triggers.
 *
 * A fault is armed from a spec, KIND[,key=value]... (the device's `fault`
 * property; docs/guide/faults.md), and fires on the commands it matches
 * (queue, opcode, namespace, LBA range), as its trigger says (after,
 * every, count, prob, a window of model time).  Plain C with GLib: the
 * same commands at the same model times, with the same seed, fire the
 * same faults.  What a kind does to a command is the device's (hw/).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_FAULT_H
#define H3100_FAULT_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#define H3100_FAULT_MAX         32      /* armed at once */
#define H3100_FAULT_SPEC_MAX    256     /* bytes of one spec */
#define H3100_FAULT_MS_MAX      600000  /* delay: ten minutes */

/*
 * The kinds, one line each: X(ID, name).  What each does to a command,
 * and when it looks at one, is the device's (hw/h3100-fault.c).
 */
#define H3100_FAULT_KINDS(X) \
    X(TIMEOUT, "timeout") \
    X(FATAL, "fatal") \
    X(READY_DELAY, "ready-delay") \
    X(AER, "aer") \
    X(WARNING, "warning") \
    X(STATUS, "status") \
    X(DELAY, "delay") \
    X(LOST_IRQ, "lost-irq") \
    X(READ_ONLY, "read-only") \
    X(NS_DETACH, "ns-detach") \
    X(NS_ATTACH, "ns-attach") \
    X(LINK_DOWN, "link-down") \
    X(MEDIA, "media")

#define H3100_FAULT_KIND_ID(id, name) H3100_FAULT_##id,
typedef enum H3100FaultKind {
    H3100_FAULT_KINDS(H3100_FAULT_KIND_ID)
    H3100_FAULT_NKINDS
} H3100FaultKind;
#undef H3100_FAULT_KIND_ID

/* Which queues a fault watches */
typedef enum H3100FaultQueue {
    H3100_FAULT_Q_ANY,
    H3100_FAULT_Q_ADMIN,
    H3100_FAULT_Q_IO,                 /* every I/O queue */
    H3100_FAULT_Q_ONE,                /* I/O queue qid */
} H3100FaultQueue;

/* What a spec says; zero is "any" / "none" / the default. */
typedef struct H3100FaultSpec {
    H3100FaultKind kind;
    /* match */
    H3100FaultQueue queue;
    uint16_t qid;
    bool has_opc;
    uint8_t opc;
    uint32_t nsid;                    /* 0: any */
    bool has_lba;
    uint64_t slba, elba;              /* inclusive, the namespace's LBAs */
    /* trigger */
    uint64_t after;                   /* matches let pass first */
    uint64_t every;                   /* then one in every N (0, 1: all) */
    uint64_t count;                   /* fires at most; 0: until cleared */
    uint32_t prob_ppm;                /* chance per match, of 1000000 */
    uint64_t at_ns, for_ns;           /* window from arming; for 0: open */
    /* action */
    uint16_t sc;                      /* status: SCT << 8 | SC */
    bool dnr, more;
    uint32_t ms;                      /* delay, ready-delay */
    bool never;                       /* ready-delay: ms=never */
    uint32_t resets;                  /* fatal: resets it outlives */
    uint8_t aer_type, aer_info, aer_log;  /* aer: the event */
    uint8_t warn_bits;                /* warning: SMART critical warning */
    bool abort_ignored;               /* timeout: Abort leaves it held */
    bool nsattr;                      /* read-only: NSATTR.WP and notice */
    bool write;                       /* media: rw=write (else rw=read) */
} H3100FaultSpec;

typedef struct H3100Fault {
    uint32_t id;                      /* 0: a free slot */
    H3100FaultSpec spec;
    uint64_t armed_ns;                /* model time it was armed */
    uint64_t matched, fired;
    uint64_t rng;                     /* splitmix64 state (prob) */
} H3100Fault;

typedef struct H3100FaultTable {
    H3100Fault f[H3100_FAULT_MAX];
    uint32_t last_id;
} H3100FaultTable;

/* fatal: resets=never */
#define H3100_FAULT_RESETS_NEVER    UINT32_MAX

/* A command as the faults see it (NULL: the controller's enable) */
typedef struct H3100FaultCmd {
    bool admin;
    uint16_t qid;
    uint8_t opc;
    uint32_t nsid;
    bool has_lba;
    uint64_t slba, nlb;               /* nlb >= 1 */
} H3100FaultCmd;

/* An opcode's name in a spec (opc=read): the device's command lists */
typedef struct H3100FaultOpName {
    const char *name;
    bool admin;
    uint8_t opc;
} H3100FaultOpName;

/*
 * Parse @text into @spec; @names ends with a NULL name.  False with
 * @errp set (one line naming the key) when the spec is not valid.
 */
bool h3100_fault_parse(const char *text, const H3100FaultOpName *names,
                       H3100FaultSpec *spec, GError **errp);
/* The spec in canonical form: parses back to the same spec. */
char *h3100_fault_spec_str(const H3100FaultSpec *spec);
const char *h3100_fault_kind_name(H3100FaultKind kind);

/* Arm @spec at model time @now; its id, or 0 with @errp (table full). */
uint32_t h3100_fault_arm(H3100FaultTable *t, const H3100FaultSpec *spec,
                         uint64_t now, uint64_t seed, GError **errp);
/* Each fault's generator anew from @seed (faults armed before it was set) */
void h3100_fault_reseed(H3100FaultTable *t, uint64_t seed);
/* "all" or an id; false with @errp for an id not armed. */
bool h3100_fault_clear(H3100FaultTable *t, const char *what, GError **errp);
/* Has @f fired as often as its count allows? */
bool h3100_fault_spent(const H3100Fault *f);
unsigned h3100_fault_armed(const H3100FaultTable *t);

/*
 * The next fault, from @from on (an index; start at 0), of @kind that
 * fires on @cmd at model time @now: its index, with its counters moved
 * on, or -1.  Every fault of @kind it passes that matches counts the
 * match.
 */
int h3100_fault_next(H3100FaultTable *t, int from, H3100FaultKind kind,
                     const H3100FaultCmd *cmd, uint64_t now);

/* One line per armed fault: id, canonical spec, counters. */
char *h3100_fault_list(const H3100FaultTable *t);

/*
 * The table as text for a migration stream, and back.  Loading checks
 * every line (the stream is hostile); on failure @t is unchanged.
 */
char *h3100_fault_save(const H3100FaultTable *t);
bool h3100_fault_load(H3100FaultTable *t, const char *text,
                      const H3100FaultOpName *names, GError **errp);

#endif
