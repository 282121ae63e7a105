/*
 * DapuStor H3100 drive model: profiles and parameters.
 *
 * Every number the model uses lives in H3100Config.  A profile
 * (h3100-3.2t, h3200-7.68t, ...) fills it from the reference figures;
 * any field can then be overridden by name ("dies_per_channel=1"), which
 * is how tests build tiny drives with the real parallelism.
 *
 * Units: time in nanoseconds, sizes in bytes, rates in MB/s (10^6 B/s).
 */
#ifndef H3100_CONFIG_H
#define H3100_CONFIG_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>

#define H3100_SLOT_BYTES 4096u        /* the FTL's mapping unit */
#define H3100_MAX_STREAMS 8u          /* host placement hints 1..7, 0 = none */
#define H3100_MAX_CORES 16u
#define H3100_PAGE_TYPES 3u           /* LSB, CSB, MSB of a TLC word line */

typedef enum H3100Family {
    H3100_FAMILY_H3100 = 0,           /* 3 DWPD, 37.4% over-provisioning */
    H3100_FAMILY_H3200 = 1,           /* 1 DWPD, 14.5% over-provisioning */
} H3100Family;

typedef struct H3100Geometry {
    uint32_t channels;
    uint32_t dies_per_channel;
    uint32_t planes_per_die;
    uint32_t blocks_per_plane;        /* physical, including spares */
    uint32_t spare_blocks_per_plane;  /* replace factory and grown bad blocks */
    uint32_t pages_per_block;         /* multiple of bits_per_cell */
    uint32_t page_bytes;              /* multiple of H3100_SLOT_BYTES */
    uint32_t bits_per_cell;           /* pages programmed together per WL */
    uint64_t user_bytes;              /* exported capacity (IDEMA) */
} H3100Geometry;

typedef struct H3100NandTiming {
    uint32_t t_read_ns[H3100_PAGE_TYPES];
    uint32_t t_prog_ns;               /* one-shot program of one word line */
    uint32_t t_erase_ns;
    uint32_t t_suspend_ns;            /* program/erase suspend latency */
    uint32_t t_resume_ns;
    uint32_t max_suspends;            /* per program, 0 disables suspend */
    uint32_t channel_mbps;            /* NAND bus rate per channel */
    uint32_t t_cmd_ns;                /* command and address cycles */
} H3100NandTiming;

typedef struct H3100CtrlTiming {
    uint32_t cores;
    uint32_t read_cmd_ns;             /* core time per read command */
    uint32_t read_slot_ns;            /* ... plus per 4 KiB */
    uint32_t write_cmd_ns;
    uint32_t write_slot_ns;
    uint32_t gc_slot_ns;              /* core time per relocated 4 KiB */
    uint32_t gc_page_ns;              /* ... per page reclaim reads */
    uint32_t trim_cmd_ns;
    uint32_t trim_slot_ns;
    uint32_t admin_cmd_ns;            /* flush and other non-data commands */
    uint32_t read_fw_ns;              /* read path latency, no core held */
    uint32_t write_fw_ns;             /* write path latency, no core held */
    uint32_t ecc_ns;                  /* LDPC decode of a NAND read */
    uint32_t dram_mbps;               /* buffer DRAM to PCIe staging */
} H3100CtrlTiming;

typedef struct H3100LinkTiming {
    uint32_t lanes;
    uint32_t mt_per_s;                /* 8000 for PCIe 3.0 */
    uint32_t encoding_num;            /* 128b/130b */
    uint32_t encoding_den;
    uint32_t mps;                     /* max TLP payload */
    uint32_t tlp_overhead;            /* header + framing bytes per TLP */
    uint32_t dllp_permille;           /* ACK/flow control share of link */
    uint32_t sq_fetch_ns;             /* doorbell to command in controller */
    uint32_t dma_read_ns;             /* host memory read round trip */
    uint32_t cq_post_ns;              /* completion entry + MSI-X */
} H3100LinkTiming;

typedef struct H3100CacheParams {
    uint64_t write_buffer_bytes;      /* power-loss-protected DRAM buffer */
    uint32_t readahead_bytes;         /* window prefetched per stream */
    uint32_t readahead_trigger;       /* sequential commands to trigger */
    uint32_t readahead_streams;
} H3100CacheParams;

typedef struct H3100FtlParams {
    uint32_t gc_bg_free;              /* free superblocks: reclaim starts */
    uint32_t gc_fg_free;              /* free superblocks: reclaim doubles */
    uint32_t wl_threshold;            /* erase-count spread for static WL */
    uint32_t wl_enabled;
    uint32_t factory_bad_ppm;         /* factory bad blocks per million */
    uint32_t grown_bad_ppm;           /* per erase at rated P/E cycles */
    uint32_t rated_pe;                /* rated program/erase cycles */
    uint32_t spare_threshold_pct;     /* SMART available spare threshold */
} H3100FtlParams;

/*
 * Thermal model: a first-order RC from the power drawn to the composite
 * temperature, and throttling of the NAND when it runs hot.
 */
typedef struct H3100ThermalParams {
    uint32_t ambient_k;               /* air at the drive's inlet */
    uint32_t thermal_r_mk_per_w;      /* thermal resistance, mK per W */
    uint32_t thermal_tau_ms;          /* time constant */
    uint32_t wctemp_k;                /* warning composite temperature */
    uint32_t cctemp_k;                /* critical composite temperature */
    uint32_t tmt1_k;                  /* light throttling from here */
    uint32_t tmt2_k;                  /* heavy throttling from here */
    uint32_t throttle_hyst_k;         /* a level ends this far below */
    uint32_t throttle_light_pct;      /* NAND throughput kept, light */
    uint32_t throttle_heavy_pct;      /* NAND throughput kept, heavy */
} H3100ThermalParams;

/*
 * NAND reliability and the controller's error correction (models/ecc.c):
 * the raw bit error rate of a page grows with its block's P/E cycles and
 * with the age of its data; the LDPC decoder corrects it with a hard
 * decode, then read retries at shifted read voltages, then a soft decode,
 * else the read is uncorrectable.  Rates in parts per 10^9, factors in
 * thousandths.
 */
typedef struct H3100ReliabilityParams {
    uint32_t rber_fresh_ppb;          /* a new block, data just written */
    uint32_t rber_rated_ppb;          /* ... added at the rated P/E cycles */
    uint32_t rber_wear_milli;         /* steepness of the growth with wear */
    uint32_t retention_milli;         /* data age's share, new block */
    uint32_t retention_wear_milli;    /* ... added at the rated P/E */
    uint32_t retention_tau_hours;     /* age scale of the retention loss */
    uint32_t page_sigma_milli;        /* page-to-page spread (lognormal) */
    uint32_t ptype_milli[H3100_PAGE_TYPES];  /* LSB, CSB, MSB */
    uint32_t codeword_bits;           /* one 4 KiB codeword with parity */
    uint32_t hard_limit_bits;         /* errors a hard decode corrects */
    uint32_t soft_limit_bits;         /* ... a soft decode corrects */
    uint32_t ecc_slow_pct;            /* hard decode time added at its limit */
    uint32_t read_retries;            /* re-reads at shifted voltages */
    uint32_t retry_keep_milli;        /* retention errors left per retry */
    uint32_t soft_reads;              /* extra senses for soft information */
    uint32_t soft_decode_ns;
    uint32_t age_days;                /* data age when the run starts */
} H3100ReliabilityParams;

/* the most read_retries may be */
#define H3100_READ_RETRIES_MAX 32

typedef struct H3100Config {
    char profile[32];
    H3100Family family;
    uint32_t nominal_gb;              /* marketing capacity, 10^9 B */
    uint32_t subsystem_u2;            /* PCI subsystem IDs */
    uint32_t subsystem_hhhl;
    uint32_t idle_mw;                 /* datasheet power */
    uint32_t active_mw;
    H3100Geometry geo;
    H3100NandTiming nand;
    H3100CtrlTiming ctrl;
    H3100LinkTiming link;
    H3100CacheParams cache;
    H3100FtlParams ftl;
    H3100ThermalParams thermal;
    H3100ReliabilityParams rel;
    uint64_t seed;
} H3100Config;

#define H3100_ERROR (h3100_error_quark())
GQuark h3100_error_quark(void);

typedef enum H3100Error {
    H3100_ERROR_INVALID,              /* bad option or geometry */
    H3100_ERROR_IO,                   /* state file could not be read */
    H3100_ERROR_CORRUPT,              /* state file fails its checks */
    H3100_ERROR_MISMATCH,             /* state file is for another drive */
} H3100Error;

/* Number of 512-byte LBAs of a drive of @gb GB (IDEMA LBA1-03). */
uint64_t h3100_idema_lba512(uint64_t gb);

/* Names of the built-in profiles, NULL-terminated. */
const char *const *h3100_profile_names(void);

/* Fill @cfg from profile @name ("h3100-3.2t", "h3200-7.68t", ...). */
bool h3100_profile_load(H3100Config *cfg, const char *name, GError **errp);

/* Set one field by name, e.g. "dies_per_channel", "t_prog_ns". */
bool h3100_config_set(H3100Config *cfg, const char *key, const char *value,
                      GError **errp);

/* Apply "key=value,key=value" overrides. */
bool h3100_config_apply(H3100Config *cfg, const char *list, GError **errp);

/* Check the configuration describes a drive that can work. */
bool h3100_config_validate(const H3100Config *cfg, GError **errp);

/* Print every field as "key = value" lines (for docs and --show-config). */
void h3100_config_print(const H3100Config *cfg, FILE *out);

/*
 * Every field as "key=value,..." (what h3100_config_apply() takes; the
 * profile is not a field), and the first field in which two
 * configurations differ, as "key=A here, B there", with the profile
 * first (NULL if none): how a receiver of a migrated drive tells that
 * the stream belongs to another drive.  g_free the strings.
 */
char *h3100_config_to_string(const H3100Config *cfg);
char *h3100_config_diff(const H3100Config *here, const H3100Config *there);

/* Derived geometry helpers. */
uint32_t h3100_dies(const H3100Config *cfg);
uint32_t h3100_slots_per_page(const H3100Config *cfg);
uint32_t h3100_slots_per_unit(const H3100Config *cfg);
uint64_t h3100_slots_per_superblock(const H3100Config *cfg);
uint32_t h3100_superblocks(const H3100Config *cfg);
uint64_t h3100_user_slots(const H3100Config *cfg);
uint64_t h3100_raw_data_bytes(const H3100Config *cfg);

#endif
