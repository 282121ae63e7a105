/*
 * PCIe link timing: one timeline per direction, TLP and DLLP overhead.
 */
#ifndef H3100_LINK_H
#define H3100_LINK_H

#include "h3100/config.h"
#include "calendar.h"

typedef struct Link {
    const H3100LinkTiming *lt;
    double ns_per_wire_byte;          /* after encoding and DLLP share */
    Calendar to_host;                 /* device to host (read data, CQEs) */
    Calendar to_dev;                  /* host to device (write data, SQEs) */
    uint64_t present;                 /* nothing is booked before this */
    uint64_t to_host_bytes;
    uint64_t to_dev_bytes;
} Link;

void link_init(Link *l, const H3100LinkTiming *lt);
void link_destroy(Link *l);
void link_reset_time(Link *l);

static inline void link_set_present(Link *l, uint64_t t)
{
    if (t > l->present) {
        l->present = t;
    }
}

/* Wire time of @bytes of payload, with a TLP header per MPS bytes. */
uint64_t link_xfer_ns(const Link *l, uint64_t bytes);

/* Move @bytes to the host from @t; returns when the last byte is there. */
uint64_t link_to_host(Link *l, uint64_t t, uint64_t bytes);

/* Fetch @bytes from host memory asked at @t (DMA read round trip). */
uint64_t link_from_host(Link *l, uint64_t t, uint64_t bytes);

#endif
