/* ptflame - decoder/perf_format.h: the perf.data (PERFILE2) on-disk format,
 * shared by the reader (decoder/perfdata.c) and the writer
 * (record/perfwriter.c). Facts from the kernel's tools/perf sources
 * (util/header.h, util/event.h, lib/perf/include/perf/event.h,
 * util/intel-pt.h) and Documentation/perf.data-file-format.txt.
 *
 * Layout of a file (little endian, everything 8-byte aligned):
 *   struct pf_file_header at offset 0
 *   attrs section: nr_attrs entries of header.attr_size bytes each, every
 *     entry a struct perf_event_attr (attr.size bytes) followed by a
 *     struct pf_file_section naming that attr's id array (u64 ids)
 *   data section: records, each starting with struct perf_event_header
 *     (an AUXTRACE record's payload follows its 48-byte header)
 *   feature section table at data.offset + data.size: one pf_file_section
 *     per bit set in adds_features, in bit order, each naming the feature's
 *     bytes.
 * Kernel record types (PERF_RECORD_*), PERF_SAMPLE_* bits and struct
 * perf_event_attr come from <linux/perf_event.h>.
 */
#ifndef PTFLAME_PERF_FORMAT_H
#define PTFLAME_PERF_FORMAT_H

#include <stdint.h>
#include <linux/perf_event.h>

/* "PERFILE2" read as a little-endian u64. */
#define PF_MAGIC2 0x32454c4946524550ULL

/* The biggest attr.size perf 6.1 reads (it rejects larger ones): write
 * attrs with this size or less. */
#define PF_ATTR_SIZE_MAX_PERF61 PERF_ATTR_SIZE_VER7

/* Strings in features (CMDLINE, HOSTNAME, BUILD_ID filenames) are padded
 * to this alignment, NUL included. */
#define PF_NAME_ALIGN 64

struct pf_file_section {
	uint64_t offset;
	uint64_t size;
};

#define PF_FEAT_BITS 256

struct pf_file_header {
	uint64_t magic;          /* PF_MAGIC2 */
	uint64_t size;           /* sizeof(struct pf_file_header) = 104;
				  * a pipe-mode stream has 16 here */
	uint64_t attr_size;      /* bytes per attrs entry: attr.size + 16 */
	struct pf_file_section attrs;
	struct pf_file_section data;
	struct pf_file_section event_types; /* obsolete, zero */
	uint64_t adds_features[PF_FEAT_BITS / 64];
};

#define PF_PIPE_HEADER_SIZE 16

/* Feature ids (bits in adds_features), perf's HEADER_* names. */
enum pf_feature {
	HEADER_RESERVED = 0,
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID = 2,     /* struct pf_build_id_event list */
	HEADER_HOSTNAME = 3,     /* pf string */
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,       /* u32 nr_cpus_avail, u32 nr_cpus_online */
	HEADER_CPUDESC = 8,
	HEADER_CPUID = 9,
	HEADER_TOTAL_MEM = 10,
	HEADER_CMDLINE = 11,     /* u32 nr, then nr pf strings */
	HEADER_EVENT_DESC = 12,
	HEADER_CPU_TOPOLOGY = 13,
	HEADER_NUMA_TOPOLOGY = 14,
	HEADER_BRANCH_STACK = 15,
	HEADER_PMU_MAPPINGS = 16,
	HEADER_GROUP_DESC = 17,
	HEADER_AUXTRACE = 18,    /* u64 nr, then nr pf_auxtrace_index_entry */
	HEADER_STAT = 19,
	HEADER_CACHE = 20,
	HEADER_SAMPLE_TIME = 21,
	HEADER_MEM_TOPOLOGY = 22,
	HEADER_CLOCKID = 23,
	HEADER_DIR_FORMAT = 24,
	HEADER_BPF_PROG_INFO = 25,
	HEADER_BPF_BTF = 26,
	HEADER_COMPRESSED = 27,
	HEADER_CPU_PMU_CAPS = 28,
	HEADER_CLOCK_DATA = 29,
	HEADER_HYBRID_TOPOLOGY = 30,
	HEADER_PMU_CAPS = 31,
	HEADER_LAST_FEATURE,
};

/* A "pf string" in a feature: u32 len (padded length, NUL included,
 * multiple of PF_NAME_ALIGN), then len bytes. */

/* HEADER_BUILD_ID entries (sizes are NOT multiples of 8). header.misc holds
 * the cpumode and, when PF_BUILD_ID_MISC_SIZE is set, build_id[20] holds
 * the id's length (else it is 20). */
#define PF_BUILD_ID_SIZE 20
#define PF_BUILD_ID_MISC_SIZE (1 << 15)
struct pf_build_id_event {
	struct perf_event_header header; /* type 0, size = 36 + filename bytes */
	int32_t pid;
	uint8_t build_id[24];            /* 20 bytes id, [20] = size */
	/* char filename[] padded to PF_NAME_ALIGN */
} __attribute__((packed));
#define PF_BUILD_ID_EVENT_SIZE 36

/* HEADER_AUXTRACE entries: where each AUXTRACE record is. sz is the
 * record's header.size (48), not the payload. */
struct pf_auxtrace_index_entry {
	uint64_t file_offset;
	uint64_t sz;
};

/* perf's own record types (not from the kernel), perf's names. */
enum pf_user_record_type {
	PERF_RECORD_USER_TYPE_START = 64,
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_EVENT_TYPE = 65,
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_ID_INDEX = 69,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_AUXTRACE_ERROR = 72,
	PERF_RECORD_THREAD_MAP = 73,
	PERF_RECORD_CPU_MAP = 74,
	PERF_RECORD_STAT_CONFIG = 75,
	PERF_RECORD_STAT = 76,
	PERF_RECORD_STAT_ROUND = 77,
	PERF_RECORD_EVENT_UPDATE = 78,
	PERF_RECORD_TIME_CONV = 79,
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,
	PERF_RECORD_FINISHED_INIT = 82,
	/* COMPRESSED with a u64 data size after the header and the record
	 * padded to 8 bytes (perf 6.15 on) */
	PERF_RECORD_COMPRESSED2 = 83,
};

/* HEADER_COMPRESSED: u32 version, type, level, ratio, mmap_len (the most
 * one compressed record decompresses to, for perf's own reader). */
#define PF_COMP_FEAT_SIZE 20
#define PF_COMP_ZSTD 1

/* On-disk bodies of the records we read and write (after the 8-byte
 * perf_event_header; kernel records are followed by the sample_id_all
 * trailer). Read them with memcpy: a file may misalign them. */
struct pf_comm_body { uint32_t pid, tid; /* char comm[] NUL, padded to 8 */ };
struct pf_mmap_body {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	/* char filename[] */
};
struct pf_mmap2_body {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; };
		struct { uint8_t build_id_size, reserved1; uint16_t reserved2;
			 uint8_t build_id[20]; };
	};
	uint32_t prot, flags;
	/* char filename[] */
};
struct pf_task_body { uint32_t pid, ppid, tid, ptid; uint64_t time; };
struct pf_switch_cpu_wide_body { uint32_t next_prev_pid, next_prev_tid; };
struct pf_itrace_start_body { uint32_t pid, tid; };
struct pf_aux_body { uint64_t aux_offset, aux_size, flags; };
struct pf_lost_body { uint64_t id, lost; };
struct pf_lost_samples_body { uint64_t lost; };

/* AUXTRACE_INFO: header, u32 type, u32 reserved, then u64 priv[]. */
#define PF_AUXTRACE_INFO_HDR 16
enum pf_auxtrace_type {
	PERF_AUXTRACE_UNKNOWN = 0,
	PERF_AUXTRACE_INTEL_PT = 1,
	PERF_AUXTRACE_INTEL_BTS = 2,
	PERF_AUXTRACE_CS_ETM = 3,
	PERF_AUXTRACE_ARM_SPE = 4,
	PERF_AUXTRACE_S390_CPUMSF = 5,
};

/* Intel PT priv[] indexes (tools/perf/arch/x86/util/intel-pt.c writes,
 * util/intel-pt.c reads). After priv[PF_PT_FILTER_STR_LEN] comes the
 * address filter string, NUL-terminated and padded to 8 bytes, when its
 * length is non-zero. */
enum pf_pt_priv {
	PF_PT_PMU_TYPE,
	PF_PT_TIME_SHIFT,
	PF_PT_TIME_MULT,
	PF_PT_TIME_ZERO,
	PF_PT_CAP_USER_TIME_ZERO,
	PF_PT_TSC_BIT,
	PF_PT_NORETCOMP_BIT,
	PF_PT_HAVE_SCHED_SWITCH,
	PF_PT_SNAPSHOT_MODE,
	PF_PT_PER_CPU_MMAPS,
	PF_PT_MTC_BIT,
	PF_PT_MTC_FREQ_BITS,
	PF_PT_TSC_CTC_N,
	PF_PT_TSC_CTC_D,
	PF_PT_CYC_BIT,
	PF_PT_MAX_NONTURBO_RATIO,
	PF_PT_FILTER_STR_LEN,
	PF_PT_PRIV_MAX,          /* 17 u64s */
};

/* AUXTRACE: 48-byte record, then `size` bytes of trace payload (perf pads
 * size to a multiple of 8). The reader steps over header.size + size. */
struct pf_auxtrace_event {
	struct perf_event_header header; /* size = 48 */
	uint64_t size;
	uint64_t offset;
	uint64_t reference;
	uint32_t idx;
	uint32_t tid;
	uint32_t cpu;
	uint32_t reserved;
};
#define PF_AUXTRACE_HDR_SIZE 48

/* TIME_CONV: the first three fields always; the rest when header.size
 * says so (perf >= 5.10 writes 56 bytes). */
struct pf_time_conv_event {
	struct perf_event_header header;
	uint64_t time_shift;
	uint64_t time_mult;
	uint64_t time_zero;
	uint64_t time_cycles;
	uint64_t time_mask;
	uint8_t cap_user_time_zero;
	uint8_t cap_user_time_short;
	uint8_t reserved[6];
};
#define PF_TIME_CONV_MIN_SIZE 32

/* ID_INDEX: header, u64 nr, then nr entries (newer perf appends nr
 * {machine_pid, vcpu} pairs after them). */
struct pf_id_index_entry { uint64_t id, idx, cpu, tid; };

#endif
