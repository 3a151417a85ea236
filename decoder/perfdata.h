/* ptflame - decoder/perfdata.h: the perf.data (PERFILE2) reader.
 *
 * The file is mmapped read-only (files > 4 GB work, nothing is loaded, AUX
 * payloads are returned zero-copy). dc_perf_open validates the header,
 * attrs and sections against the file size; dc_perf_next streams the data
 * section record by record in FILE order (not time order: use
 * FINISHED_ROUND / sample times to sort if you need to). Pointers handed
 * out (strings, payloads, attrs) live until dc_perf_close and may be used
 * from any thread; dc_perf_next/dc_perf_seek move one cursor (one thread),
 * dc_perf_read_at is read-only.
 * Part of decoder/decoder.h's public interface.
 */
#ifndef PTFLAME_PERFDATA_H
#define PTFLAME_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/perf_format.h"

struct dc_perf_file;

/* One attr of the file. attr is copied from the file, zero-padded up to
 * sizeof(struct perf_event_attr) (a longer on-disk attr is cut). */
struct dc_perf_attr {
	struct perf_event_attr attr;
	uint32_t file_attr_size;   /* attr.size as found in the file */
	const uint64_t *ids;       /* owned by the dc_perf_file */
	size_t nr_ids;
	size_t index;              /* position in the attrs section */
	const char *name;          /* HEADER_EVENT_DESC's name of the event
	                              ("sched:sched_waking"), NULL if none */
	bool is_wake;              /* a wake: see dc_perf_wake()         */
};

/* The sample_id_all trailer of a kernel record (or the matching fields of
 * a SAMPLE). valid is false for user records (types >= 64) and when no
 * attr could be chosen. sample_type says which fields were present. */
struct dc_sample_id {
	bool valid;
	uint64_t sample_type;      /* PERF_SAMPLE_* bits of the owning attr */
	uint32_t pid, tid;         /* PERF_SAMPLE_TID */
	uint64_t time;             /* PERF_SAMPLE_TIME */
	uint64_t id;               /* PERF_SAMPLE_ID or _IDENTIFIER */
	uint64_t stream_id;        /* PERF_SAMPLE_STREAM_ID */
	uint32_t cpu;              /* PERF_SAMPLE_CPU */
};

/* Intel PT's AUXTRACE_INFO priv[] by name (PF_PT_* indexes). Fields the
 * file's record was too short to hold are 0. The writer takes the same
 * struct; filter may be NULL there. */
struct dc_pt_info {
	uint64_t pmu_type;         /* must equal the intel_pt attr's type */
	uint64_t time_shift, time_mult, time_zero;
	uint64_t cap_user_time_zero;
	uint64_t tsc_bit, noretcomp_bit;
	uint64_t have_sched_switch; /* 3 = SWITCH_CPU_WIDE per-cpu */
	uint64_t snapshot_mode, per_cpu_mmaps;
	uint64_t mtc_bit, mtc_freq_bits;
	uint64_t tsc_ctc_ratio_n, tsc_ctc_ratio_d;
	uint64_t cyc_bit, max_non_turbo_ratio;
	const char *filter;        /* address filter, "" if none */
	size_t nr_priv;            /* priv[] entries present in the record */
};

/* A build-id entry: of the HEADER_BUILD_ID feature, or of a pipe's
 * HEADER_BUILD_ID record (perf inject -b / --buildid-all). */
struct dc_build_id {
	int32_t pid;
	uint16_t misc;             /* cpumode bits */
	uint8_t id[20];
	size_t size;               /* bytes of id used */
	const char *filename;
};

/* Parsed record bodies (which one is set depends on dc_perf_record.type). */
struct dc_rec_comm {
	uint32_t pid, tid;
	const char *comm;          /* NUL-terminated, in the mapping */
	bool exec;                 /* PERF_RECORD_MISC_COMM_EXEC */
};

struct dc_rec_mmap {               /* PERF_RECORD_MMAP and MMAP2 */
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	bool is_mmap2;
	bool has_build_id;         /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint32_t maj, min;         /* when !has_build_id */
	uint64_t ino, ino_generation;
	uint8_t build_id[20];      /* when has_build_id */
	uint8_t build_id_size;
	uint32_t prot, flags;      /* MMAP2 only */
	uint16_t cpumode;          /* misc & PERF_RECORD_MISC_CPUMODE_MASK */
	bool data;                 /* PERF_RECORD_MISC_MMAP_DATA (not exec) */
	const char *filename;      /* NUL-terminated, in the mapping */
};

struct dc_rec_task {               /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct dc_rec_switch {             /* SWITCH and SWITCH_CPU_WIDE */
	bool out;                  /* PERF_RECORD_MISC_SWITCH_OUT */
	bool preempt;              /* out and PERF_RECORD_MISC_SWITCH_OUT_PREEMPT */
	bool cpu_wide;
	uint32_t next_prev_pid;    /* cpu_wide: the task switched to (out) or */
	uint32_t next_prev_tid;    /* from (in) */
};

struct dc_rec_itrace_start { uint32_t pid, tid; };

struct dc_rec_aux {
	uint64_t aux_offset, aux_size;
	uint64_t flags;            /* PERF_AUX_FLAG_TRUNCATED/OVERWRITE/PARTIAL/COLLISION */
};

#define DC_PERF_MAX_PRIV 64
struct dc_rec_auxtrace_info {
	uint32_t type;             /* PERF_AUXTRACE_INTEL_PT = 1 */
	size_t nr_priv;            /* entries in the record (priv[] holds the
				    * first DC_PERF_MAX_PRIV of them) */
	uint64_t priv[DC_PERF_MAX_PRIV];
	bool is_pt;                /* type == INTEL_PT and pt parsed */
	struct dc_pt_info pt;
};

struct dc_rec_auxtrace {
	uint64_t size;             /* payload bytes (incl. perf's padding) */
	uint64_t offset;           /* offset of the payload in the AUX area */
	uint64_t reference;
	uint32_t idx;              /* mmap index (the CPU in per-cpu mode) */
	uint32_t tid;              /* (uint32_t)-1 in per-cpu mode */
	uint32_t cpu;              /* (uint32_t)-1 in per-thread mode */
	const void *data;          /* the payload, zero-copy in the mapping */
	uint64_t data_offset;      /* file offset of the payload */
};

struct dc_rec_time_conv {
	uint64_t time_shift, time_mult, time_zero;
	bool has_ext;              /* the fields below are present */
	uint64_t time_cycles, time_mask;
	bool cap_user_time_zero, cap_user_time_short;
};

struct dc_rec_lost { uint64_t id, lost; };
struct dc_rec_lost_samples { uint64_t lost; };
struct dc_rec_id_index { uint64_t nr; };   /* ids are mapped by the reader */
struct dc_rec_sample {             /* PERF_RECORD_SAMPLE */
	uint64_t ip, addr, period; /* when the attr samples them */
	const uint8_t *raw;        /* PERF_SAMPLE_RAW's bytes (after its u32
	                              size), in the record; NULL if none  */
	uint32_t raw_size;
	bool short_rec;            /* the record ends before a field its
	                              sample_type says it has           */
};

struct dc_perf_record {
	uint32_t type;             /* PERF_RECORD_* (kernel or user) */
	uint16_t misc;
	uint16_t size;             /* header.size (AUXTRACE: without payload) */
	uint64_t offset;           /* file offset of the header */
	uint64_t total_size;       /* bytes to the next record (size + payload) */
	const struct perf_event_header *raw; /* in the mapping */
	struct dc_sample_id sid;
	const struct dc_perf_attr *attr; /* the owning attr or NULL */
	bool parsed;               /* false for types not listed below */
	bool packed;               /* held by the compressed record at offset
	                              (perf record -z): raw is not in the
	                              mapping, but stays until close too  */
	union {
		struct dc_rec_comm comm;
		struct dc_rec_mmap mmap;            /* MMAP, MMAP2 */
		struct dc_rec_task task;            /* FORK, EXIT */
		struct dc_rec_switch sw;            /* SWITCH, SWITCH_CPU_WIDE */
		struct dc_rec_itrace_start itrace_start;
		struct dc_rec_aux aux;
		struct dc_rec_auxtrace_info auxtrace_info;
		struct dc_rec_auxtrace auxtrace;
		struct dc_rec_time_conv time_conv;
		struct dc_rec_lost lost;
		struct dc_rec_lost_samples lost_samples;
		struct dc_rec_id_index id_index;
		struct dc_rec_sample sample;
		struct dc_build_id build_id;         /* HEADER_BUILD_ID (filename
		                                        in the mapping) */
	};
};

/* Open and validate path. On failure returns a negative errno code, sets
 * *out = NULL and writes one line naming the file and the problem to err
 * (e.g. "x.txt: not a perf.data file (bad magic)"). A pipe-mode stream
 * (perf record -o -) saved to a file reads the same: its HEADER_ATTR and
 * HEADER_FEATURE records give the attrs and features, its HEADER_BUILD_ID
 * records the build-id table, its data section is all records after the
 * 16-byte header (dc_perf_header: size 16). */
int dc_perf_open(const char *path, struct dc_perf_file **out, char *err, size_t errlen);
/* The same; read_cut: a data section that the file's end cuts is read up
 * to the last whole record (without the features, which lay past it), and
 * dc_perf_cut_end says where it should have ended (0: not cut). For dump,
 * which shows what there is and then says the file is truncated. */
int dc_perf_open_cut(const char *path, bool read_cut, struct dc_perf_file **out, char *err,
		     size_t errlen);
uint64_t dc_perf_cut_end(const struct dc_perf_file *f);
void dc_perf_close(struct dc_perf_file *f);

/* The last error of dc_perf_next/dc_perf_seek, one line naming the file
 * ("" if none). */
const char *dc_perf_errmsg(const struct dc_perf_file *f);
const char *dc_perf_path(const struct dc_perf_file *f);

/* Was the file left unfinished by its writer: a perf.data whose header
 * says data size 0 (perf record killed: read to the file's end, without
 * the features), or a stream whose last record the file's end cuts (known
 * once dc_perf_next has reached the end)? If so, a one-line note naming
 * the file into note. */
bool dc_perf_unfinished(const struct dc_perf_file *f, char *note, size_t len);

const struct pf_file_header *dc_perf_header(const struct dc_perf_file *f);
uint64_t dc_perf_file_size(const struct dc_perf_file *f);
/* Memory: the file is mapped read-only and never written, so pages that
 * were read can be dropped from the process (MADV_DONTNEED) at any time;
 * touched again they are read back from the file. dc_perf_drop drops the
 * pages of file bytes [from, to), dc_drop_pages those of [p, p + len) of
 * such a mapping (both rounded out to whole pages), so that peak memory
 * does not grow with the file. */
void dc_perf_drop(const struct dc_perf_file *f, uint64_t from, uint64_t to);
void dc_drop_pages(const void *p, uint64_t len);
/* File offset of p, a pointer into the mapping (a record's raw bytes). */
uint64_t dc_perf_offset_of(const struct dc_perf_file *f, const void *p);

size_t dc_perf_nr_attrs(const struct dc_perf_file *f);
const struct dc_perf_attr *dc_perf_attr_at(const struct dc_perf_file *f, size_t i);
/* The attr owning sample id `id` (attr id sections and ID_INDEX records
 * seen so far); NULL if none. */
const struct dc_perf_attr *dc_perf_attr_by_id(const struct dc_perf_file *f, uint64_t id);

/* Raw bytes of feature `feat` (HEADER_*) or NULL if the file lacks it. */
const void *dc_perf_feature(const struct dc_perf_file *f, int feat, uint64_t *size);

/* Parsed features; each returns -ENOENT when the file lacks it. */
int dc_perf_nrcpus(const struct dc_perf_file *f, uint32_t *nr_avail, uint32_t *nr_online);
/* argv strings as perf stores them (perf's first is its own path). */
int dc_perf_cmdline(const struct dc_perf_file *f, size_t *argc, const char *const **argv);

/* The build-id table: a pipe's HEADER_BUILD_ID records (in stream order),
 * then the BUILD_ID feature's entries. */
size_t dc_perf_nr_build_ids(const struct dc_perf_file *f);
const struct dc_build_id *dc_perf_build_id_at(const struct dc_perf_file *f, size_t i);

/* HEADER_AUXTRACE: file offsets of AUXTRACE records. *nr = 0 if absent. */
const struct pf_auxtrace_index_entry *dc_perf_auxtrace_index(const struct dc_perf_file *f,
							     size_t *nr);

/* Next record of the data section: 1 got one, 0 end, < 0 error (message in
 * dc_perf_errmsg, naming the offset). Unknown types come back with
 * parsed == false. ID_INDEX records also extend dc_perf_attr_by_id.
 * Compressed records (COMPRESSED, COMPRESSED2: perf record -z) are not
 * returned: the records they hold are, in their place (rec->packed). */
int dc_perf_next(struct dc_perf_file *f, struct dc_perf_record *rec);

/* Restart iteration at file_offset (a record start within the data
 * section, e.g. an AUXTRACE index entry); dc_perf_seek(f, 0) rewinds to
 * the start of the data section. Compressed records are one stream, read
 * in order: those read before are found again after a seek; one after a
 * seek past compressed records never read cannot be read (corrupt data). */
int dc_perf_seek(struct dc_perf_file *f, uint64_t file_offset);

/* Parse the record at file_offset (within the data section) without
 * moving the iteration cursor or touching the file: safe from several
 * threads at once (e.g. workers reading AUXTRACE index entries). Errors go
 * to err (one line naming the file and offset). */
int dc_perf_read_at(const struct dc_perf_file *f, uint64_t file_offset,
		    struct dc_perf_record *rec, char *err, size_t errlen);

/* Parse one record held in memory: buf has avail bytes (an AUXTRACE's
 * payload included). f supplies the attrs for the sample_id trailer and may
 * be NULL (then sid.valid is false). rec->offset is set to 0. Returns 0 or
 * a negative errno code with a message in err. */
int dc_perf_parse(const struct dc_perf_file *f, const void *buf, size_t avail,
		  struct dc_perf_record *rec, char *err, size_t errlen);

/* Name of a record type ("COMM", "AUXTRACE", ...) or NULL if unknown. */
const char *dc_perf_type_name(uint32_t type);
/* Name of a feature id ("NRCPUS", ...) or NULL if unknown. */
const char *dc_perf_feature_name(int feat);

/* A wake: a sample of a tracepoint attr named sched:sched_waking or
 * sched:sched_wakeup (HEADER_EVENT_DESC) whose sample_type has TID, TIME
 * and RAW (dc_perf_attr.is_wake). The sample's pid/tid is the waker (the
 * task that ran the wake-up), time its moment, cpu the waker's CPU; RAW is
 * the kernel's sched_waking payload, whose pid at offset 24 (s32) is the
 * woken task and comm at 8 (char[16]) its name. */
struct dc_wake {
	uint64_t time;
	uint32_t cpu;              /* UINT32_MAX without PERF_SAMPLE_CPU */
	uint32_t waker_pid, waker_tid;
	uint32_t wakee_tid;
	char wakee_comm[17];
};
#define DC_WAKE_RAW_MIN 28         /* RAW bytes up to and with the pid */
/* 1: rec is a wake (*w filled); 0: it is no wake; -EBADMSG: a sample of a
 * wake attr that cannot be read (RAW missing or shorter than
 * DC_WAKE_RAW_MIN, no TID or TIME, a negative pid): to be counted and
 * skipped. */
int dc_perf_wake(const struct dc_perf_record *rec, struct dc_wake *w);
/* Does the file have a wake attr? */
bool dc_perf_has_wakes(const struct dc_perf_file *f);

/* Convert a TSC value to perf time with an AUXTRACE_INFO's clock fields. */
uint64_t dc_pt_tsc_to_ns(const struct dc_pt_info *pt, uint64_t tsc);

#endif
