/*
 * A resource calendar: busy intervals kept in order, so a request made
 * later but needing the resource earlier can use a gap.  Used for the
 * NAND channel buses, where data-out of a read is booked when its array
 * read ends, often before transfers booked by earlier requests.
 */
#ifndef H3100_CALENDAR_H
#define H3100_CALENDAR_H

#include <stdint.h>

typedef struct CalSpan {
    uint64_t start;
    uint64_t end;
} CalSpan;

typedef struct Calendar {
    CalSpan *span;
    uint32_t len;
    uint32_t cap;
} Calendar;

void cal_init(Calendar *c);
void cal_destroy(Calendar *c);
void cal_clear(Calendar *c);

/* When a booking of @len at or after @t would end, without booking. */
uint64_t cal_probe(const Calendar *c, uint64_t t, uint64_t len);

/*
 * Book @len ns at the earliest gap at or after @t; returns the end.
 * Intervals that ended before @forget (the present) are dropped.
 */
uint64_t cal_book(Calendar *c, uint64_t t, uint64_t len, uint64_t forget);

/* Booked time after @t. */
uint64_t cal_ahead(const Calendar *c, uint64_t t);

#endif
