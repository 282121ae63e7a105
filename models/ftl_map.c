/*
 * FTL mapping: the logical-to-physical map (chunked, allocated on first
 * write so an unwritten drive costs almost nothing: 4 bytes per written
 * slot), and writing into open superblocks.  The reverse maps are a cache
 * of ftl_rmap.c's.
 */
#include <string.h>

#include "ftl.h"
#include "hugealloc.h"

static uint32_t *chunk_for_write(Ftl *f, uint64_t lpn)
{
    uint32_t **slot = &f->l2p[lpn >> FTL_CHUNK_SHIFT];

    if (G_UNLIKELY(!*slot)) {
        *slot = huge_alloc(FTL_CHUNK_SLOTS * sizeof(uint32_t));
        memset(*slot, 0xff, FTL_CHUNK_SLOTS * sizeof(uint32_t));
        if (f->track) {
            /* what a receiver holds of it is from before it was freed */
            ftl_track_mark_chunk(f, lpn >> FTL_CHUNK_SHIFT, false);
        }
    }
    return *slot;
}

void ftl_map_set(Ftl *f, uint64_t lpn, uint32_t ppn)
{
    uint32_t *chunk = chunk_for_write(f, lpn);
    uint32_t *e = &chunk[lpn & (FTL_CHUNK_SLOTS - 1)];

    if (*e == FTL_UNMAPPED && ppn != FTL_UNMAPPED) {
        f->mapped++;
    } else if (*e != FTL_UNMAPPED && ppn == FTL_UNMAPPED) {
        f->mapped--;
    }
    *e = ppn;
    ftl_track_l2p(f, lpn);
}

/* The caller repoints the logical map, which is what invalidates. */
void ftl_invalidate(Ftl *f, uint32_t ppn)
{
    f->sb[divide(&f->by_sps, ppn)].valid--;
}

/*
 * Open a new superblock for @stream.  Host streams take the least worn
 * free superblock; reclaim takes the most worn, since what it moves has
 * proven cold (the static half of wear levelling).
 */
static bool open_superblock(Ftl *f, uint32_t stream)
{
    uint32_t sbi = ftl_take_free(f, !ftl_is_gc_stream(stream));
    Superblock *sb;

    if (sbi == FTL_NO_SB) {
        return false;
    }
    sb = &f->sb[sbi];
    ftl_rmap_open(f, sbi);
    sb->state = SB_OPEN;
    sb->stream = stream;
    sb->wp = 0;
    sb->valid = 0;
    f->open[stream] = sbi;
    return true;
}

/*
 * Append @lpn to @stream's open superblock; returns its new ppn, or
 * FTL_NO_PPN when no superblock is left to open.  The caller updates the
 * logical map.
 */
uint64_t ftl_place(Ftl *f, uint32_t stream, uint64_t lpn)
{
    uint32_t sbi = f->open[stream];
    Superblock *sb;
    uint32_t slot;

    if (sbi == FTL_NO_SB) {
        if (!open_superblock(f, stream)) {
            return FTL_NO_PPN;
        }
        sbi = f->open[stream];
    }
    sb = &f->sb[sbi];
    slot = sb->wp++;
    if (sb->p2l) {
        sb->p2l[slot] = (uint32_t)lpn;   /* none if opened before a load */
    }
    sb->valid++;
    if (divisible(&f->by_spu, sb->wp) && f->hooks.unit_full) {
        f->hooks.unit_full(f->hooks.opaque, stream, sbi,
                           divide(&f->by_spu, sb->wp) - 1);
    }
    if (sb->wp == f->sps) {
        sb->state = SB_CLOSED;
        f->open[stream] = FTL_NO_SB;
        ftl_rmap_closed(f, sbi);
    }
    return (uint64_t)sbi * f->sps + slot;
}

/* Physical slot numbers fit in 32 bits (validated), so the geometry's
 * dividers (divide.h) take them. */
FtlAddr ftl_addr(const Ftl *f, uint64_t ppn)
{
    uint32_t p = (uint32_t)ppn;
    FtlAddr a;
    uint32_t within;

    a.sb = divide(&f->by_sps, p);
    a.slot = p - a.sb * (uint32_t)f->sps;
    a.unit = divide(&f->by_spu, a.slot);
    a.die = modulo(&f->by_dies, a.unit);
    within = a.slot - a.unit * f->spu;
    a.ptype = divide(&f->by_ptype, within);
    a.plane = modulo(&f->by_planes, divide(&f->by_spp, within));
    return a;
}

bool ftl_unit_is_full(const Ftl *f, const FtlAddr *a)
{
    const Superblock *sb = &f->sb[a->sb];

    return sb->state != SB_OPEN || (a->unit + 1) * f->spu <= sb->wp;
}

uint64_t ftl_memory_bytes(const Ftl *f)
{
    uint64_t chunks = 0;

    for (uint64_t i = 0; i < f->nchunks; i++) {
        chunks += f->l2p[i] != NULL;
    }
    return chunks * FTL_CHUNK_SLOTS * sizeof(uint32_t) +
           f->nchunks * sizeof(uint32_t *) + f->sb_bytes +
           f->rmap.young_cap * sizeof(uint32_t) +
           (uint64_t)f->nsb * (sizeof(Superblock) + sizeof(uint32_t) +
                               f->dies * f->planes * sizeof(uint16_t)) +
           (uint64_t)f->bb.planes * f->bb.blocks *
           (sizeof(uint8_t) + sizeof(uint32_t));
}

uint64_t ftl_memory_peak_bytes(const Ftl *f)
{
    return ftl_memory_bytes(f) - f->sb_bytes + f->sb_bytes_peak;
}
