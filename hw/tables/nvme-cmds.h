/*
 * The drive's NVMe command sets, one line per command: the only list.
 *
 * X(opcode, ID, handler, name, effects, flags)
 *   ID       the test host's name for the opcode: NVME_ADM_<ID>,
 *            NVME_CMD_<ID> (tests/device/nvme_host.h)
 *   handler  h3100_<handler>, the device's function for it
 *   name     trace events and messages, nvme-cli's words
 *   effects  the Commands Supported and Effects log's entry (log 05h)
 *   flags    H3100_CMD_*: when the device may run it (hw/h3100-cmd.h)
 *
 * The device builds its dispatch tables from it (hw/h3100-admin.c,
 * hw/h3100-io.c), so dispatch, log 05h, the sanitize gate and the traces
 * agree; the device tests take the test host's opcodes, names and the
 * hostile guest's opcodes from it, the fuzzer its dictionary's opcode
 * tokens (tests/fuzz/gen-dict.sh) and the docs check the commands table
 * of docs/guide/usage.md.  effects and flags name hw/'s constants and expand
 * only there; the tests include this file without QEMU's headers.
 *
 * What keeps the opcodes themselves honest is a host that does not read
 * this file: Linux's driver and nvme-cli in the guest tests, and the
 * device test that checks the set against Identify's OACS and ONCS.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_NVME_CMDS_H
#define H3100_NVME_CMDS_H

#define H3100_ADMIN_COMMANDS(X) \
    X(0x00, DELETE_SQ, delete_sq, "delete-sq", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x01, CREATE_SQ, create_sq, "create-sq", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x02, GET_LOG_PAGE, get_log, "get-log-page", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x04, DELETE_CQ, delete_cq, "delete-cq", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x05, CREATE_CQ, create_cq, "create-cq", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x06, IDENTIFY, identify, "identify", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x08, ABORT, abort, "abort", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x09, SET_FEATURES, set_features, "set-features", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    X(0x0a, GET_FEATURES, get_features, "get-features", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE) \
    /* answered when an event comes, not after the firmware's time */ \
    X(0x0c, ASYNC_EVENT, aer, "async-event", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE | H3100_CMD_UNTIMED) \
    /* Linux rescans its namespaces after these (NIC, NCC) */ \
    X(0x0d, NS_MGMT, ns_mgmt, "namespace-management", \
      H3100_EFF_NS, 0) \
    X(0x10, FW_COMMIT, fw_commit, "firmware-commit", \
      H3100_EFF_CCC, 0) \
    X(0x11, FW_DOWNLOAD, fw_download, "firmware-download", \
      H3100_EFF_PLAIN, 0) \
    X(0x14, DEV_SELF_TEST, self_test, "device-self-test", \
      H3100_EFF_PLAIN, 0) \
    X(0x15, NS_ATTACH, ns_attach, "namespace-attachment", \
      H3100_EFF_NS, 0) \
    X(0x19, DIRECTIVE_SEND, dir_send, "directive-send", \
      H3100_EFF_PLAIN, 0) \
    X(0x1a, DIRECTIVE_RECV, dir_recv, "directive-receive", \
      H3100_EFF_PLAIN, 0) \
    X(0x7c, DBBUF_CONFIG, dbbuf_config, "doorbell-buffer-config", \
      H3100_EFF_PLAIN, 0) \
    X(0x80, FORMAT_NVM, format, "format-nvm", \
      H3100_EFF_ERASES, 0) \
    X(0x84, SANITIZE, sanitize, "sanitize", \
      H3100_EFF_ERASES, H3100_CMD_IN_SANITIZE) \
    X(0x86, GET_LBA_STATUS, get_lba_status, "get-lba-status", \
      H3100_EFF_PLAIN, 0)

#define H3100_IO_COMMANDS(X) \
    X(0x00, FLUSH, flush, "flush", \
      H3100_EFF_PLAIN, H3100_CMD_IN_SANITIZE | H3100_CMD_NSID_ALL) \
    X(0x01, WRITE, write, "write", \
      H3100_EFF_LBA, 0) \
    X(0x02, READ, read, "read", \
      H3100_EFF_PLAIN, 0) \
    X(0x04, WRITE_UNCOR, write_uncor, "write-uncorrectable", \
      H3100_EFF_LBA, 0) \
    X(0x05, COMPARE, compare, "compare", \
      H3100_EFF_PLAIN, 0) \
    X(0x08, WRITE_ZEROES, write_zeroes, "write-zeroes", \
      H3100_EFF_LBA, 0) \
    X(0x09, DSM, dsm, "dataset-management", \
      H3100_EFF_LBA, 0)

#endif
