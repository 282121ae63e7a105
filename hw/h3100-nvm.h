/*
 * DapuStor H3100 NVMe SSD: the NVM command set and its data path
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * h3100-io.c (the I/O commands), h3100-io-done.c (their block requests
 * back), h3100-blkerr.c (host I/O errors),
 * h3100-vcache.c (the volatile cache), h3100-durable.c (durability
 * against QEMU's death), h3100-unmap.c (zeroing) and h3100-directive.c
 * (streams).
 */
#ifndef HW_DAPUSTOR_H3100_NVM_H
#define HW_DAPUSTOR_H3100_NVM_H

#include "h3100.h"

/* h3100-io-done.c: an NVM command's block request is back */
void h3100_rw_cb(void *opaque, int ret);
void h3100_write_landed(H3100Req *req);

/* h3100-blkerr.c */
bool h3100_blk_failed(H3100Req *req, int ret);
void h3100_blk_unpark(H3100Req *req);
void h3100_blk_unpark_all(H3100State *s);
void h3100_blk_resend(H3100QGroup *g);
void h3100_blkerr_init(H3100State *s);

/* h3100-vcache.c */
void h3100_vcache_init(H3100State *s);
void h3100_vcache_free_all(H3100State *s);
bool h3100_vcache_before_write(H3100State *s, H3100Req *req);
void h3100_vcache_landed(H3100Req *req);
uint64_t h3100_vcache_flush_begin(H3100State *s);
void h3100_vcache_flushed(H3100State *s, uint64_t gen);
void h3100_vcache_settle(H3100State *s);
unsigned h3100_vcache_drop(H3100State *s);

/* h3100-unmap.c */
void h3100_unmap(H3100State *s, H3100Req *req, uint64_t offset,
                 uint64_t bytes, BdrvRequestFlags flags,
                 BlockCompletionFunc *cb, void *opaque);
void h3100_unmap_wait(H3100State *s, bool all);
void h3100_unmap_settle(H3100State *s);
void h3100_unmap_resume(H3100State *s);
typedef void H3100UnmapFn(void *opaque, H3100Req *req, uint64_t offset,
                          uint64_t end, BdrvRequestFlags flags, bool finished,
                          int ret, BlockCompletionFunc *cb, void *cb_opaque);
void h3100_unmap_foreach(H3100State *s, H3100UnmapFn *fn, void *opaque);
void h3100_unmap_restore(H3100State *s, H3100Req *req, uint64_t offset,
                         uint64_t end, BdrvRequestFlags flags, bool finished,
                         int ret, BlockCompletionFunc *cb, void *opaque);

/* h3100-durable.c */
enum { H3100_DURABLE_NEXT = 1, H3100_DURABLE_BATCH = 2 };
void h3100_durable_init(H3100State *s);
void h3100_durable_kick(H3100State *s);
void h3100_durable_drop(H3100State *s, H3100Req *req);
bool h3100_durable_wait(H3100Req *req);
BdrvRequestFlags h3100_durable_flags(H3100State *s);

/* h3100-directive.c */
void h3100_streams_reset(H3100State *s);
uint16_t h3100_write_stream(H3100State *s, H3100Req *req, uint32_t *hint);
uint16_t h3100_dir_send(H3100State *s, H3100Req *req);
uint16_t h3100_dir_recv(H3100State *s, H3100Req *req);

/* h3100-io.c */
uint16_t h3100_io_cmd(H3100State *s, H3100Req *req);
void h3100_dsm_cb(void *opaque, int ret);
bool h3100_io_restored_ok(H3100State *s, H3100Req *req, bool ranges);
void h3100_compare_cb(void *opaque, int ret);
void h3100_read_send(H3100State *s, H3100Req *req);
void h3100_write_send(H3100State *s, H3100Req *req);
uint16_t h3100_media_error(H3100State *s, H3100Req *req, uint16_t status,
                           bool dnr);
bool h3100_uncor_add(H3100State *s, uint64_t start, uint64_t end,
                     uint8_t flags);
bool h3100_uncor_remove(H3100State *s, uint64_t start, uint64_t end);
uint16_t h3100_get_lba_status(H3100State *s, H3100Req *req);
void h3100_lsi_grew(H3100State *s);
void h3100_lsi_check(H3100State *s);
void h3100_lsi_restart(H3100State *s);
uint16_t h3100_lsi_log(H3100State *s, H3100Req *req, uint64_t off,
                       uint64_t len, bool rae);

#endif
