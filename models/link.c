/*
 * PCIe link timing: see link.h.
 */
#include "link.h"
#include "timeline.h"

void link_init(Link *l, const H3100LinkTiming *lt)
{
    double bits_per_ns = (double)lt->lanes * lt->mt_per_s / 1000.0 *
                         lt->encoding_num / lt->encoding_den;

    l->lt = lt;
    l->ns_per_wire_byte = 8.0 / bits_per_ns /
                          (1.0 - lt->dllp_permille / 1000.0);
    cal_init(&l->to_host);
    cal_init(&l->to_dev);
    link_reset_time(l);
    l->to_host_bytes = 0;
    l->to_dev_bytes = 0;
}

void link_destroy(Link *l)
{
    cal_destroy(&l->to_host);
    cal_destroy(&l->to_dev);
}

void link_reset_time(Link *l)
{
    cal_clear(&l->to_host);
    cal_clear(&l->to_dev);
    l->present = 0;
}

uint64_t link_xfer_ns(const Link *l, uint64_t bytes)
{
    uint64_t tlps = (bytes + l->lt->mps - 1) / l->lt->mps;

    return (uint64_t)((bytes + tlps * l->lt->tlp_overhead) *
                      l->ns_per_wire_byte + 0.5);
}

uint64_t link_to_host(Link *l, uint64_t t, uint64_t bytes)
{
    l->to_host_bytes += bytes;
    return cal_book(&l->to_host, t, link_xfer_ns(l, bytes), l->present);
}

uint64_t link_from_host(Link *l, uint64_t t, uint64_t bytes)
{
    l->to_dev_bytes += bytes;
    return cal_book(&l->to_dev, t + l->lt->dma_read_ns,
                    link_xfer_ns(l, bytes), l->present);
}
