/*
 * CRC-32C (Castagnoli), as used by iSCSI and ext4: hardware instruction
 * when the CPU has it, a table otherwise.
 */
#ifndef H3100_CRC32C_H
#define H3100_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c_update(uint32_t crc, const void *data, size_t len);

static inline uint32_t crc32c(const void *data, size_t len)
{
    return crc32c_update(0, data, len);
}

#endif
