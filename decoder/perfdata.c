/* ptflame - decoder/perfdata.c: the perf.data (PERFILE2) reader.
 *
 * The whole file is mapped read-only; open validates every section against
 * the file size so that record iteration only has to check records against
 * the data section. All multi-byte reads go through memcpy (rd*()): a
 * damaged file may misalign anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/perfdata.h"
#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/packed.h"

struct dc_perf_file {
	char *path;
	const uint8_t *map;
	uint64_t size;
	size_t map_len;            /* the file's pages and a page of zeros  */
	struct pf_file_header hdr;

	struct dc_perf_attr *attrs;
	size_t nr_attrs;
	bool all_identifier;       /* every attr has PERF_SAMPLE_IDENTIFIER */
	bool same_sample_type;     /* every attr has the same sample_type */

	struct dc_hash ids;        /* sample id -> attr index */

	struct pf_file_section feat[PF_FEAT_BITS];
	bool has_feat[PF_FEAT_BITS];

	bool has_nrcpus;
	uint32_t nr_avail, nr_online;
	bool has_cmdline;
	char **cmdline;
	size_t cmdline_argc;
	struct dc_build_id *build_ids;
	char **build_id_names;
	size_t nr_build_ids, build_id_cap;
	struct pf_auxtrace_index_entry *auxidx;
	size_t nr_auxidx;

	uint64_t data_start, data_end, pos;
	bool pipe;                 /* a pipe-mode stream (perf record -o -) */
	bool unfinished;           /* header data size 0: the writer never closed it */
	bool read_cut;             /* open: read a data section the file cuts */
	uint64_t cut_end;          /* where that section should have ended   */
	uint64_t cut;              /* bytes of a last record cut by the file's end */
	const uint8_t *tracing;    /* a pipe's tracing data (in the map)   */
	uint64_t tracing_size;
	struct dc_packed *packed;  /* compressed records' (perf record -z)  */
	uint64_t packed_off;       /* ... the one read from                */
	char errmsg[512];
};

static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* A NUL-terminated string starting at p + off within the record's first
 * `limit` bytes; NULL if not terminated. */
static const char *rec_string(const uint8_t *p, size_t off, size_t limit)
{
	if (off >= limit || !memchr(p + off, 0, limit - off))
		return NULL;
	return (const char *)p + off;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *const kernel_names[] = {
	[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE", [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES", [PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE", [21] = "AUX_OUTPUT_HW_ID",
};

static const char *const user_names[] = {
	"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
	"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
	"THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
	"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT", "COMPRESSED2",
};

const char *dc_perf_type_name(uint32_t type)
{
	if (type < sizeof(kernel_names) / sizeof(kernel_names[0]))
		return kernel_names[type];
	if (type >= PERF_RECORD_USER_TYPE_START &&
	    type - PERF_RECORD_USER_TYPE_START < sizeof(user_names) / sizeof(user_names[0]))
		return user_names[type - PERF_RECORD_USER_TYPE_START];
	return NULL;
}

static const char *const feature_names[HEADER_LAST_FEATURE] = {
	"RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION",
	"ARCH", "NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE", "EVENT_DESC",
	"CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC",
	"AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID",
	"DIR_FORMAT", "BPF_PROG_INFO", "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS",
	"CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
};

const char *dc_perf_feature_name(int feat)
{
	if (feat < 0 || feat >= HEADER_LAST_FEATURE)
		return NULL;
	return feature_names[feat];
}

uint64_t dc_pt_tsc_to_ns(const struct dc_pt_info *pt, uint64_t tsc)
{
	uint64_t shift = pt->time_shift, quot, rem;

	if (shift >= 64)
		return pt->time_zero;
	quot = tsc >> shift;
	rem = tsc & ((UINT64_C(1) << shift) - 1);
	return pt->time_zero + quot * pt->time_mult + ((rem * pt->time_mult) >> shift);
}

/* ---- id -> attr map ---------------------------------------------------- */

/* (UINT64_MAX, the table's empty key, names no attr: a damaged file's) */
static int id_map_put(struct dc_perf_file *f, uint64_t id, size_t attr)
{
	return id == DC_HASH_EMPTY ? 0 : dc_hash_put(&f->ids, id, attr);
}

const struct dc_perf_attr *dc_perf_attr_by_id(const struct dc_perf_file *f, uint64_t id)
{
	uint64_t attr;

	if (!f || id == DC_HASH_EMPTY || !dc_hash_get(&f->ids, id, &attr))
		return NULL;
	return &f->attrs[attr];
}

/* ---- open: header, attrs, features ------------------------------------- */

/* Does [off, off+size) lie within the file? */
static bool in_file(const struct dc_perf_file *f, uint64_t off, uint64_t size)
{
	return off <= f->size && size <= f->size - off;
}

static int check_section(struct dc_perf_file *f, const char *what,
			 const struct pf_file_section *s, char *err, size_t errlen)
{
	if (in_file(f, s->offset, s->size))
		return 0;
	if (s->offset + s->size < s->offset)
		set_err(err, errlen, "%s: corrupt header: %s section offset 0x%" PRIx64
			" size 0x%" PRIx64 " overflows", f->path, what, s->offset, s->size);
	else
		set_err(err, errlen, "%s: truncated: %s section ends at %" PRIu64
			" but file has %" PRIu64 " bytes", f->path, what,
			s->offset + s->size, f->size);
	return -EINVAL;
}

static int read_header(struct dc_perf_file *f, char *err, size_t errlen)
{
	uint64_t magic;

	if (f->size == 0) {
		set_err(err, errlen, "%s: empty file, not a perf.data file", f->path);
		return -EINVAL;
	}
	if (f->size < 8) {
		set_err(err, errlen, "%s: not a perf.data file (only %" PRIu64 " bytes)",
			f->path, f->size);
		return -EINVAL;
	}
	magic = rd64(f->map);
	if (!memcmp(f->map, "PERFFILE", 8)) {
		set_err(err, errlen, "%s: perf.data version 1 is not supported", f->path);
		return -ENOTSUP;
	}
	if (magic == __builtin_bswap64(PF_MAGIC2)) {
		set_err(err, errlen, "%s: big-endian perf.data is not supported", f->path);
		return -ENOTSUP;
	}
	if (magic != PF_MAGIC2) {
		set_err(err, errlen, "%s: not a perf.data file (bad magic)", f->path);
		return -EINVAL;
	}
	if (f->size < 16) {
		set_err(err, errlen, "%s: truncated: header needs 104 bytes but file has %"
			PRIu64, f->path, f->size);
		return -EINVAL;
	}
	if (rd64(f->map + 8) == PF_PIPE_HEADER_SIZE) {
		f->pipe = true;
		return 0;
	}
	if (f->size < sizeof(f->hdr)) {
		set_err(err, errlen, "%s: truncated: header needs %zu bytes but file has %"
			PRIu64, f->path, sizeof(f->hdr), f->size);
		return -EINVAL;
	}
	memcpy(&f->hdr, f->map, sizeof(f->hdr));
	if (f->hdr.size < sizeof(f->hdr) || f->hdr.size > f->size) {
		set_err(err, errlen, "%s: corrupt header: header size %" PRIu64 " invalid",
			f->path, f->hdr.size);
		return -EINVAL;
	}
	if (check_section(f, "attrs", &f->hdr.attrs, err, errlen))
		return -EINVAL;
	/* (asked to, read what there is of a data section the file's end
	 * cuts: dump shows the records before the cut) */
	if (f->read_cut && f->hdr.data.offset <= f->size &&
	    f->hdr.data.offset + f->hdr.data.size > f->size &&
	    f->hdr.data.offset + f->hdr.data.size >= f->hdr.data.offset) {
		f->cut_end = f->hdr.data.offset + f->hdr.data.size;
		return 0;
	}
	if (check_section(f, "data", &f->hdr.data, err, errlen))
		return -EINVAL;
	return 0;
}

static int read_attrs(struct dc_perf_file *f, char *err, size_t errlen)
{
	uint64_t asz = f->hdr.attr_size;
	uint64_t first_type = 0;

	if (asz < PERF_ATTR_SIZE_VER0 + sizeof(struct pf_file_section) || asz % 8 ||
	    asz > 65536) {
		set_err(err, errlen, "%s: corrupt header: attr size %" PRIu64 " invalid",
			f->path, asz);
		return -EINVAL;
	}
	if (f->hdr.attrs.size % asz) {
		set_err(err, errlen, "%s: corrupt header: attrs section size %" PRIu64
			" is not a multiple of attr size %" PRIu64, f->path,
			f->hdr.attrs.size, asz);
		return -EINVAL;
	}
	f->nr_attrs = f->hdr.attrs.size / asz;
	if (!f->nr_attrs) {
		set_err(err, errlen, "%s: no event attrs in file", f->path);
		return -EINVAL;
	}
	f->attrs = calloc(f->nr_attrs, sizeof(*f->attrs));
	if (!f->attrs) {
		set_err(err, errlen, "%s: out of memory", f->path);
		return -ENOMEM;
	}
	f->all_identifier = f->same_sample_type = true;
	for (size_t i = 0; i < f->nr_attrs; i++) {
		const uint8_t *p = f->map + f->hdr.attrs.offset + i * asz;
		struct dc_perf_attr *a = &f->attrs[i];
		uint32_t sz = rd32(p + 4);
		struct pf_file_section ids;
		uint64_t *copy;

		if (sz == 0)
			sz = PERF_ATTR_SIZE_VER0; /* perf's reading of ABI0 */
		if (sz < PERF_ATTR_SIZE_VER0 || sz % 8 || sz + sizeof(ids) != asz) {
			set_err(err, errlen, "%s: attr %zu: attr size %" PRIu32
				" invalid (header says %" PRIu64 " per attr)",
				f->path, i, rd32(p + 4), asz);
			return -EINVAL;
		}
		memcpy(&a->attr, p, sz < sizeof(a->attr) ? sz : sizeof(a->attr));
		a->file_attr_size = rd32(p + 4);
		a->index = i;
		memcpy(&ids, p + sz, sizeof(ids));
		if (ids.size % 8) {
			set_err(err, errlen, "%s: attr %zu: ids size %" PRIu64
				" not a multiple of 8", f->path, i, ids.size);
			return -EINVAL;
		}
		if (check_section(f, "attr ids", &ids, err, errlen))
			return -EINVAL;
		a->nr_ids = ids.size / 8;
		copy = calloc(a->nr_ids ? a->nr_ids : 1, sizeof(*copy));
		if (!copy) {
			set_err(err, errlen, "%s: out of memory", f->path);
			return -ENOMEM;
		}
		memcpy(copy, f->map + ids.offset, a->nr_ids * 8);
		a->ids = copy;
		for (size_t k = 0; k < a->nr_ids; k++)
			if (id_map_put(f, copy[k], i)) {
				set_err(err, errlen, "%s: out of memory", f->path);
				return -ENOMEM;
			}
		if (!(a->attr.sample_type & PERF_SAMPLE_IDENTIFIER))
			f->all_identifier = false;
		if (i == 0)
			first_type = a->attr.sample_type;
		else if (a->attr.sample_type != first_type)
			f->same_sample_type = false;
	}
	return 0;
}

/* A pf string at *pos within [.., end): u32 len then len bytes. */
static int feat_string(const uint8_t *base, uint64_t *pos, uint64_t end, char **out)
{
	uint32_t len;
	size_t n;

	if (end - *pos < 4)
		return -EINVAL;
	len = rd32(base + *pos);
	*pos += 4;
	if (len > end - *pos)
		return -EINVAL;
	n = strnlen((const char *)base + *pos, len);
	*out = strndup((const char *)base + *pos, n);
	if (!*out)
		return -ENOMEM;
	*pos += len;
	return 0;
}

static int parse_cmdline(struct dc_perf_file *f, const struct pf_file_section *s)
{
	uint64_t pos = s->offset, end = s->offset + s->size;
	uint32_t nr;

	if (s->size < 4)
		return -EINVAL;
	nr = rd32(f->map + pos);
	pos += 4;
	if (nr > s->size / 4)
		return -EINVAL;
	f->cmdline = calloc(nr + 1, sizeof(char *));
	if (!f->cmdline)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		int ret = feat_string(f->map, &pos, end, &f->cmdline[i]);

		if (ret)
			return ret;
		f->cmdline_argc++;
	}
	f->has_cmdline = true;
	return 0;
}

/* The fixed part of a build-id entry at p (PF_BUILD_ID_EVENT_SIZE bytes):
 * a HEADER_BUILD_ID feature entry and a pipe's HEADER_BUILD_ID record have
 * the same layout. The id's length is in byte 20 of the id only when misc
 * has PF_BUILD_ID_MISC_SIZE (perf before 5.11: always 20, zero-padded). */
static void build_id_fixed(const uint8_t *p, struct dc_build_id *b)
{
	uint16_t misc = rd16(p + 4);

	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)rd32(p + 8);
	b->misc = misc & ~PF_BUILD_ID_MISC_SIZE;
	memcpy(b->id, p + 12, PF_BUILD_ID_SIZE);
	b->size = PF_BUILD_ID_SIZE;
	if ((misc & PF_BUILD_ID_MISC_SIZE) && p[12 + PF_BUILD_ID_SIZE] <= PF_BUILD_ID_SIZE)
		b->size = p[12 + PF_BUILD_ID_SIZE];
}

/* Appends *b to the table, its filename a copy of name's namelen bytes.
 * The table is one for both sources (feature and records), so that
 * report looks a path up the same way whichever the recording used. */
static int push_build_id(struct dc_perf_file *f, const struct dc_build_id *b,
			 const char *name, size_t namelen)
{
	size_t ncap = f->build_id_cap;   /* (build_ids owns the capacity: it grows last) */
	char *copy;

	if (DC_VEC_PUSH_ROOM(f->build_id_names, f->nr_build_ids, ncap, 16) ||
	    DC_VEC_PUSH_ROOM(f->build_ids, f->nr_build_ids, f->build_id_cap, 16) ||
	    !(copy = strndup(name, namelen)))
		return -ENOMEM;
	f->build_id_names[f->nr_build_ids] = copy;
	f->build_ids[f->nr_build_ids] = *b;
	f->build_ids[f->nr_build_ids].filename = copy;
	f->nr_build_ids++;
	return 0;
}

static int parse_build_ids(struct dc_perf_file *f, const struct pf_file_section *s)
{
	uint64_t pos = s->offset, end = s->offset + s->size;

	while (end - pos >= PF_BUILD_ID_EVENT_SIZE) {
		const uint8_t *p = f->map + pos;
		uint16_t size = rd16(p + 6);
		struct dc_build_id b;
		int ret;

		if (size < PF_BUILD_ID_EVENT_SIZE || size > end - pos)
			return -EINVAL;
		build_id_fixed(p, &b);
		/* the name is padded with NULs; one that fills its entry ends there */
		ret = push_build_id(f, &b, (const char *)p + PF_BUILD_ID_EVENT_SIZE,
				    strnlen((const char *)p + PF_BUILD_ID_EVENT_SIZE,
					    size - PF_BUILD_ID_EVENT_SIZE));
		if (ret)
			return ret;
		pos += size;
	}
	return 0;
}

static int parse_auxtrace_index(struct dc_perf_file *f, const struct pf_file_section *s)
{
	uint64_t nr;

	if (s->size < 8)
		return -EINVAL;
	nr = rd64(f->map + s->offset);
	if (nr > (s->size - 8) / sizeof(struct pf_auxtrace_index_entry))
		return -EINVAL;
	f->auxidx = calloc(nr ? nr : 1, sizeof(*f->auxidx));
	if (!f->auxidx)
		return -ENOMEM;
	memcpy(f->auxidx, f->map + s->offset + 8, nr * sizeof(*f->auxidx));
	f->nr_auxidx = nr;
	for (size_t i = 0; i < nr; i++)
		if (f->auxidx[i].file_offset < f->data_start ||
		    f->auxidx[i].file_offset >= f->data_end)
			return -EINVAL;
	return 0;
}

static int parse_features(struct dc_perf_file *f, char *err, size_t errlen);

/* Tracing data (HEADER_TRACING_DATA, or a pipe's TRACING_DATA record)
 * holds the events' format files, "name: NAME\nID: N\nformat:...": a
 * tracepoint attr (config N) that HEADER_EVENT_DESC did not name (a pipe
 * has none) gets its name from there, for the wake events. -ENOMEM only. */
static int tracepoint_names(struct dc_perf_file *f, const uint8_t *p, uint64_t len)
{
	static const char *const wanted[] = { "sched_waking", "sched_wakeup" };

	for (size_t w = 0; w < 2; w++) {
		char key[40];
		const uint8_t *at = p, *end = p + len;
		size_t kl = (size_t)snprintf(key, sizeof(key), "name: %s\nID: ", wanted[w]);

		while ((at = memmem(at, (size_t)(end - at), key, kl))) {
			uint64_t id = 0;
			const uint8_t *d = at + kl;

			for (; d < end && *d >= '0' && *d <= '9' && id < (UINT64_MAX - 9) / 10; d++)
				id = id * 10 + (uint64_t)(*d - '0');
			at = d;
			for (size_t i = 0; i < f->nr_attrs; i++) {
				struct dc_perf_attr *a = &f->attrs[i];

				if (a->attr.type != PERF_TYPE_TRACEPOINT || a->attr.config != id || a->name)
					continue;
				if (asprintf((char **)&a->name, "sched:%s", wanted[w]) < 0) {
					a->name = NULL;
					return -ENOMEM;
				}
			}
		}
	}
	return 0;
}

/* HEADER_EVENT_DESC: u32 nr, u32 attr size, then per event the attr, u32
 * nr_ids, its name (a perf string) and its u64 ids. Each name goes to the
 * attr owning the event's first id, or with no ids to the attr of the same
 * position when the counts agree. Only names: a malformed entry ends the
 * reading (the names read so far stay), it is no error. -ENOMEM only. */
static int parse_event_desc(struct dc_perf_file *f, const struct pf_file_section *s)
{
	uint64_t pos = s->offset, end = s->offset + s->size;
	uint32_t nr, asz;

	if (s->size < 8)
		return 0;
	nr = rd32(f->map + pos);
	asz = rd32(f->map + pos + 4);
	pos += 8;
	for (uint32_t i = 0; i < nr; i++) {
		const struct dc_perf_attr *by_id;
		uint32_t nids;
		size_t at = SIZE_MAX;
		char *name;
		int ret;

		if (asz > end - pos || end - pos - asz < 4)
			return 0;
		pos += asz;
		nids = rd32(f->map + pos);
		pos += 4;
		ret = feat_string(f->map, &pos, end, &name);
		if (ret)
			return ret == -ENOMEM ? ret : 0;
		if (nids > (end - pos) / 8) {
			free(name);
			return 0;
		}
		by_id = nids ? dc_perf_attr_by_id(f, rd64(f->map + pos)) : NULL;
		if (by_id)
			at = by_id->index;
		else if (!nids && nr == f->nr_attrs)
			at = i;
		pos += (uint64_t)nids * 8;
		if (at < f->nr_attrs && !f->attrs[at].name)
			f->attrs[at].name = name;
		else
			free(name);
	}
	return 0;
}

/* Do the header's feature table and every section it names lie in the
 * file? (Read nothing.) */
static bool features_fit(const struct dc_perf_file *f)
{
	uint64_t table = f->hdr.data.offset + f->hdr.data.size;
	size_t n = 0;

	for (int bit = 0; bit < PF_FEAT_BITS; bit++) {
		struct pf_file_section s;

		if (!(f->hdr.adds_features[bit / 64] & (UINT64_C(1) << (bit % 64))))
			continue;
		if (!in_file(f, table + n * sizeof(s), sizeof(s)))
			return false;
		memcpy(&s, f->map + table + n * sizeof(s), sizeof(s));
		if (!in_file(f, s.offset, s.size))
			return false;
		n++;
	}
	return true;
}

static int read_features(struct dc_perf_file *f, char *err, size_t errlen)
{
	uint64_t table = f->hdr.data.offset + f->hdr.data.size;
	size_t n = 0;

	for (int bit = 0; bit < PF_FEAT_BITS; bit++) {
		struct pf_file_section *s = &f->feat[bit];
		char what[64];

		if (!(f->hdr.adds_features[bit / 64] & (UINT64_C(1) << (bit % 64))))
			continue;
		if (!in_file(f, table + n * sizeof(*s), sizeof(*s))) {
			set_err(err, errlen, "%s: truncated: feature table ends at %" PRIu64
				" but file has %" PRIu64 " bytes", f->path,
				table + (n + 1) * sizeof(*s), f->size);
			return -EINVAL;
		}
		memcpy(s, f->map + table + n * sizeof(*s), sizeof(*s));
		n++;
		snprintf(what, sizeof(what), "feature %s",
			 dc_perf_feature_name(bit) ? dc_perf_feature_name(bit) : "?");
		if (check_section(f, what, s, err, errlen))
			return -EINVAL;
		f->has_feat[bit] = true;
	}
	return parse_features(f, err, errlen);
}

/* Records compressed another way than perf record -z's zstd could not be
 * read: say so at the start, not as corrupt data at the first of them. */
static int check_compressed(struct dc_perf_file *f, char *err, size_t errlen)
{
	const struct pf_file_section *s = &f->feat[HEADER_COMPRESSED];
	uint32_t type;

	if (s->size < PF_COMP_FEAT_SIZE) {
		set_err(err, errlen, "%s: corrupt COMPRESSED feature", f->path);
		return -EINVAL;
	}
	type = rd32(f->map + s->offset + 4);
	if (type != PF_COMP_ZSTD) {
		set_err(err, errlen, "%s: records compressed with method %" PRIu32 ", not zstd "
			"(perf record -z): unknown to ptflame; 'perf inject -i FILE -o OUT' "
			"writes them uncompressed", f->path, type);
		return -EINVAL;
	}
	return 0;
}

/* The features found (f->feat, has_feat) parsed. */
static int parse_features(struct dc_perf_file *f, char *err, size_t errlen)
{
	int ret = 0;

	if (f->has_feat[HEADER_NRCPUS]) {
		if (f->feat[HEADER_NRCPUS].size < 8) {
			ret = -EINVAL;
			goto bad;
		}
		f->nr_avail = rd32(f->map + f->feat[HEADER_NRCPUS].offset);
		f->nr_online = rd32(f->map + f->feat[HEADER_NRCPUS].offset + 4);
		f->has_nrcpus = true;
	}
	if (f->has_feat[HEADER_CMDLINE] && (ret = parse_cmdline(f, &f->feat[HEADER_CMDLINE])))
		goto bad_cmdline;
	if (f->has_feat[HEADER_BUILD_ID] &&
	    (ret = parse_build_ids(f, &f->feat[HEADER_BUILD_ID])))
		goto bad_build_id;
	if (f->has_feat[HEADER_AUXTRACE] &&
	    (ret = parse_auxtrace_index(f, &f->feat[HEADER_AUXTRACE])))
		goto bad_auxtrace;
	if (f->has_feat[HEADER_EVENT_DESC] && parse_event_desc(f, &f->feat[HEADER_EVENT_DESC]))
		goto oom;
	if (f->has_feat[HEADER_COMPRESSED] && (ret = check_compressed(f, err, errlen)))
		return ret;
	if (f->has_feat[HEADER_TRACING_DATA] &&
	    tracepoint_names(f, f->map + f->feat[HEADER_TRACING_DATA].offset,
			     f->feat[HEADER_TRACING_DATA].size))
		goto oom;
	if (f->tracing && tracepoint_names(f, f->tracing, f->tracing_size))
		goto oom;
	for (size_t i = 0; i < f->nr_attrs; i++) {
		struct dc_perf_attr *a = &f->attrs[i];
		uint64_t need = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;

		a->is_wake = a->attr.type == PERF_TYPE_TRACEPOINT && a->name &&
			     (!strcmp(a->name, "sched:sched_waking") ||
			      !strcmp(a->name, "sched:sched_wakeup")) &&
			     (a->attr.sample_type & need) == need;
	}
	return 0;
oom:
	set_err(err, errlen, "%s: out of memory", f->path);
	return -ENOMEM;
bad:
	set_err(err, errlen, "%s: corrupt NRCPUS feature", f->path);
	return ret;
bad_cmdline:
	set_err(err, errlen, "%s: corrupt CMDLINE feature", f->path);
	return ret;
bad_build_id:
	set_err(err, errlen, "%s: corrupt BUILD_ID feature", f->path);
	return ret;
bad_auxtrace:
	set_err(err, errlen, "%s: corrupt AUXTRACE index feature", f->path);
	return ret;
}

/* One attr of a pipe-mode stream: a HEADER_ATTR record's body (the attr,
 * then its u64 ids) at p, len bytes. */
static int pipe_attr(struct dc_perf_file *f, const uint8_t *p, uint64_t len, uint64_t off,
		     char *err, size_t errlen)
{
	struct dc_perf_attr *n, *a;
	uint32_t sz = len >= 8 ? rd32(p + 4) : 0;
	uint64_t *copy;

	if (sz == 0)
		sz = PERF_ATTR_SIZE_VER0;
	if (len < 8 || sz < PERF_ATTR_SIZE_VER0 || sz % 8 || sz > len || (len - sz) % 8) {
		set_err(err, errlen, "%s: HEADER_ATTR record at offset 0x%" PRIx64
			": attr size %" PRIu32 " invalid", f->path, off, sz);
		return -EINVAL;
	}
	n = realloc(f->attrs, (f->nr_attrs + 1) * sizeof(*n));
	if (!n)
		goto oom;
	f->attrs = n;
	a = &f->attrs[f->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, p, sz < sizeof(a->attr) ? sz : sizeof(a->attr));
	a->file_attr_size = rd32(p + 4);
	a->index = f->nr_attrs;
	a->nr_ids = (size_t)((len - sz) / 8);
	copy = calloc(a->nr_ids ? a->nr_ids : 1, sizeof(*copy));
	if (!copy)
		goto oom;
	memcpy(copy, p + sz, a->nr_ids * 8);
	a->ids = copy;
	f->nr_attrs++;
	for (size_t k = 0; k < a->nr_ids; k++)
		if (id_map_put(f, copy[k], a->index))
			goto oom;
	return 0;
oom:
	set_err(err, errlen, "%s: out of memory", f->path);
	return -ENOMEM;
}

/* A pipe's HEADER_BUILD_ID record at p (size bytes, at file offset off)
 * into the build-id table: a pipe has no feature section, so perf inject
 * -b / --buildid-all write each entry as a record of the entry's layout
 * (perf never writes the BUILD_ID feature as a HEADER_FEATURE record). A
 * record too small for an entry, or whose name is not terminated, makes
 * the file unreadable, as a bad entry of the feature does. */
static int pipe_build_id(struct dc_perf_file *f, const uint8_t *p, uint64_t size, uint64_t off,
			 char *err, size_t errlen)
{
	struct dc_build_id b;
	const char *name;

	if (size < PF_BUILD_ID_EVENT_SIZE) {
		set_err(err, errlen, "%s: HEADER_BUILD_ID record at offset 0x%" PRIx64
			": size %" PRIu64 " is under the %d bytes of a build-id entry",
			f->path, off, size, PF_BUILD_ID_EVENT_SIZE);
		return -EINVAL;
	}
	name = rec_string(p, PF_BUILD_ID_EVENT_SIZE, size);
	if (!name) {
		set_err(err, errlen, "%s: HEADER_BUILD_ID record at offset 0x%" PRIx64
			": file name not NUL-terminated", f->path, off);
		return -EINVAL;
	}
	build_id_fixed(p, &b);
	if (push_build_id(f, &b, name, strlen(name))) {
		set_err(err, errlen, "%s: out of memory", f->path);
		return -ENOMEM;
	}
	return 0;
}

/* A pipe-mode stream: no attrs section and no feature table; attrs
 * (HEADER_ATTR), features (HEADER_FEATURE) and build-ids (HEADER_BUILD_ID)
 * are records in the stream, the data section is everything after the
 * 16-byte header. One pass over the record headers finds them (their bytes
 * stay in the mapping; the build-id names are copied into the table). */
static int read_pipe(struct dc_perf_file *f, char *err, size_t errlen)
{
	uint64_t pos = PF_PIPE_HEADER_SIZE;

	memset(&f->hdr, 0, sizeof(f->hdr));
	f->hdr.magic = PF_MAGIC2;
	f->hdr.size = PF_PIPE_HEADER_SIZE;
	f->hdr.data.offset = PF_PIPE_HEADER_SIZE;
	f->hdr.data.size = f->size - PF_PIPE_HEADER_SIZE;
	while (pos + sizeof(struct perf_event_header) <= f->size) {
		const uint8_t *p = f->map + pos;
		uint32_t type = rd32(p);
		uint64_t size = rd16(p + 6), total = size;
		int ret;

		if (size < sizeof(struct perf_event_header) || size > f->size - pos)
			break;   /* dc_perf_next reports it where it is */
		if (type == PERF_RECORD_AUXTRACE && size >= 16)
			total += rd64(p + 8);
		/* tracepoint formats: header, u32 size, u32 pad, then size bytes
		 * (8-aligned); the names are read from them, the rest skipped */
		if (type == PERF_RECORD_HEADER_TRACING_DATA && size >= 16) {
			total += rd32(p + 8);
			if (total <= f->size - pos && !f->tracing) {
				f->tracing = p + size;
				f->tracing_size = total - size;
			}
		}
		if (type == PERF_RECORD_HEADER_ATTR &&
		    (ret = pipe_attr(f, p + 8, size - 8, pos, err, errlen)))
			return ret;
		if (type == PERF_RECORD_HEADER_BUILD_ID &&
		    (ret = pipe_build_id(f, p, size, pos, err, errlen)))
			return ret;
		if (type == PERF_RECORD_HEADER_FEATURE && size >= 16) {
			uint64_t id = rd64(p + 8);

			if (id < PF_FEAT_BITS) {
				f->feat[id].offset = pos + 16;
				f->feat[id].size = size - 16;
				f->has_feat[id] = true;
				f->hdr.adds_features[id / 64] |= UINT64_C(1) << (id % 64);
			}
		}
		if (total > f->size - pos)
			break;
		pos += total;
	}
	if (!f->nr_attrs) {
		set_err(err, errlen, "%s: pipe-mode perf.data without event attrs "
			"(HEADER_ATTR records)", f->path);
		return -EINVAL;
	}
	f->hdr.attr_size = 0;
	f->all_identifier = f->same_sample_type = true;
	for (size_t i = 0; i < f->nr_attrs; i++) {
		if (!(f->attrs[i].attr.sample_type & PERF_SAMPLE_IDENTIFIER))
			f->all_identifier = false;
		if (f->attrs[i].attr.sample_type != f->attrs[0].attr.sample_type)
			f->same_sample_type = false;
	}
	f->data_start = f->pos = PF_PIPE_HEADER_SIZE;
	f->data_end = f->size;
	return parse_features(f, err, errlen);
}

/* The file's size bytes, read-only, and a page of zeros after its last
 * page: a reader of a chunk that ends at the end of the file may look a
 * byte past it (DC_PT_SLACK). *len: what to unmap. MAP_FAILED (errno). */
static void *map_file(int fd, uint64_t size, size_t *len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *m;

	if (size > SIZE_MAX - 2 * pg) {
		errno = EFBIG;
		return MAP_FAILED;
	}
	*len = ((size_t)size + pg - 1) / pg * pg + pg;
	m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return m;
	if (mmap(m, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
		int e = errno;

		munmap(m, *len);
		errno = e;
		return MAP_FAILED;
	}
	return m;
}

int dc_perf_open(const char *path, struct dc_perf_file **out, char *err, size_t errlen)
{
	return dc_perf_open_cut(path, false, out, err, errlen);
}

int dc_perf_open_cut(const char *path, bool read_cut, struct dc_perf_file **out, char *err,
		     size_t errlen)
{
	struct dc_perf_file *f;
	struct stat st;
	int fd, ret;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		set_err(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	f->read_cut = read_cut;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		set_err(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		set_err(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	f->size = (uint64_t)st.st_size;
	if (f->size) {
		void *m = map_file(fd, f->size, &f->map_len);

		if (m == MAP_FAILED) {
			ret = -errno;
			set_err(err, errlen, "%s: mmap: %s", path, strerror(errno));
			goto fail;
		}
		f->map = m;
		madvise(m, f->size, MADV_SEQUENTIAL);
	}
	close(fd);
	fd = -1;
	if ((ret = read_header(f, err, errlen)))
		goto fail;
	if (f->pipe) {
		if ((ret = read_pipe(f, err, errlen)))
			goto fail;
		*out = f;
		return 0;
	}
	if ((ret = read_attrs(f, err, errlen)))
		goto fail;
	f->data_start = f->pos = f->hdr.data.offset;
	f->data_end = f->hdr.data.offset + f->hdr.data.size;
	if (f->cut_end) {       /* the features lay past the cut */
		f->data_end = f->size;
		*out = f;
		return 0;
	}
	/* perf record killed before its close: the header (written at the
	 * start) says data size 0 and the feature table was never written,
	 * but the records are there up to the file's end; perf reads them
	 * too, with a warning. (Data size 0 with a feature table that fits
	 * is a finished, empty recording.) */
	if (!f->hdr.data.size && f->size > f->hdr.data.offset && !features_fit(f)) {
		f->unfinished = true;
		f->data_end = f->size;
	} else if ((ret = read_features(f, err, errlen))) {
		goto fail;
	}
	*out = f;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	dc_perf_close(f);
	return ret;
}

void dc_perf_close(struct dc_perf_file *f)
{
	if (!f)
		return;
	if (f->map)
		munmap((void *)f->map, f->map_len);
	for (size_t i = 0; f->attrs && i < f->nr_attrs; i++) {
		free((void *)f->attrs[i].ids);
		free((void *)f->attrs[i].name);
	}
	free(f->attrs);
	dc_hash_free(&f->ids);
	for (size_t i = 0; i < f->cmdline_argc; i++)
		free(f->cmdline[i]);
	free(f->cmdline);
	for (size_t i = 0; i < f->nr_build_ids; i++)
		free(f->build_id_names[i]);
	free(f->build_id_names);
	free(f->build_ids);
	free(f->auxidx);
	dc_packed_free(f->packed);
	free(f->path);
	free(f);
}

const char *dc_perf_errmsg(const struct dc_perf_file *f) { return f->errmsg; }
const char *dc_perf_path(const struct dc_perf_file *f) { return f->path; }

uint64_t dc_perf_cut_end(const struct dc_perf_file *f)
{
	return f->cut_end;
}

bool dc_perf_unfinished(const struct dc_perf_file *f, char *note, size_t len)
{
	char cut[96] = "";

	if (!f->unfinished && !f->cut)
		return false;
	if (f->cut)
		snprintf(cut, sizeof(cut), "; its last record, cut after %" PRIu64
			 " bytes, is left out", f->cut);
	if (f->unfinished)
		snprintf(note, len, "%s: the recording was not finished (data size 0 in its "
			 "header: perf record killed?): read to the file's end, without the "
			 "header's features%s", f->path, cut);
	else
		snprintf(note, len, "%s: the stream was cut off%s", f->path, cut);
	return true;
}
const struct pf_file_header *dc_perf_header(const struct dc_perf_file *f) { return &f->hdr; }
uint64_t dc_perf_file_size(const struct dc_perf_file *f) { return f->size; }

void dc_drop_pages(const void *p, uint64_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(pg - 1);
	uintptr_t e = ((uintptr_t)p + (uintptr_t)len + pg - 1) & ~(pg - 1);

	if (len && e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

void dc_perf_drop(const struct dc_perf_file *f, uint64_t from, uint64_t to)
{
	if (to > f->size)
		to = f->size;
	if (f->map && from < to)
		dc_drop_pages(f->map + from, to - from);
}

uint64_t dc_perf_offset_of(const struct dc_perf_file *f, const void *p)
{
	return (uint64_t)((const uint8_t *)p - f->map);
}
size_t dc_perf_nr_attrs(const struct dc_perf_file *f) { return f->nr_attrs; }

const struct dc_perf_attr *dc_perf_attr_at(const struct dc_perf_file *f, size_t i)
{
	return i < f->nr_attrs ? &f->attrs[i] : NULL;
}

const void *dc_perf_feature(const struct dc_perf_file *f, int feat, uint64_t *size)
{
	if (feat < 0 || feat >= PF_FEAT_BITS || !f->has_feat[feat])
		return NULL;
	if (size)
		*size = f->feat[feat].size;
	return f->map + f->feat[feat].offset;
}

int dc_perf_nrcpus(const struct dc_perf_file *f, uint32_t *nr_avail, uint32_t *nr_online)
{
	if (!f->has_nrcpus)
		return -ENOENT;
	*nr_avail = f->nr_avail;
	*nr_online = f->nr_online;
	return 0;
}

int dc_perf_cmdline(const struct dc_perf_file *f, size_t *argc, const char *const **argv)
{
	if (!f->has_cmdline)
		return -ENOENT;
	*argc = f->cmdline_argc;
	*argv = (const char *const *)f->cmdline;
	return 0;
}

size_t dc_perf_nr_build_ids(const struct dc_perf_file *f) { return f->nr_build_ids; }

const struct dc_build_id *dc_perf_build_id_at(const struct dc_perf_file *f, size_t i)
{
	return i < f->nr_build_ids ? &f->build_ids[i] : NULL;
}

const struct pf_auxtrace_index_entry *dc_perf_auxtrace_index(const struct dc_perf_file *f,
							     size_t *nr)
{
	*nr = f->nr_auxidx;
	return f->auxidx;
}

/* ---- records ----------------------------------------------------------- */

/* Bytes of the sample_id_all trailer for sample_type. */
static size_t trailer_size(uint64_t st)
{
	size_t n = 0;

	n += !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID);
	n += !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU);
	n += !!(st & PERF_SAMPLE_IDENTIFIER);
	return n * 8;
}

/* Decode a trailer laid out per sample_type from p (trailer_size bytes). */
static void decode_trailer(const uint8_t *p, uint64_t st, struct dc_sample_id *sid)
{
	memset(sid, 0, sizeof(*sid));
	sid->valid = true;
	sid->sample_type = st;
	if (st & PERF_SAMPLE_TID) {
		sid->pid = rd32(p);
		sid->tid = rd32(p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = rd64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		sid->id = rd64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = rd64(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		sid->cpu = rd32(p);
		p += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		sid->id = rd64(p);
}

/* Which attr owns a kernel record (not SAMPLE) of `size` bytes at p. */
static const struct dc_perf_attr *trailer_attr(const struct dc_perf_file *f,
					       const uint8_t *p, uint16_t size)
{
	const struct dc_perf_attr *a0;
	size_t ts;

	if (!f || !f->nr_attrs)
		return NULL;
	if (f->nr_attrs == 1)
		return &f->attrs[0];
	if (f->all_identifier)
		return size >= 16 ? dc_perf_attr_by_id(f, rd64(p + size - 8)) : NULL;
	a0 = &f->attrs[0];
	if (!f->same_sample_type)
		return NULL;
	if (!(a0->attr.sample_type & PERF_SAMPLE_ID))
		return a0; /* one layout, no way to tell them apart */
	ts = trailer_size(a0->attr.sample_type);
	if (size < 8 + ts)
		return NULL;
	{
		struct dc_sample_id sid;

		decode_trailer(p + size - ts, a0->attr.sample_type, &sid);
		return dc_perf_attr_by_id(f, sid.id);
	}
}

static const struct dc_perf_attr *sample_attr(const struct dc_perf_file *f,
					      const uint8_t *p, uint16_t size)
{
	if (!f || !f->nr_attrs)
		return NULL;
	if (f->nr_attrs == 1)
		return &f->attrs[0];
	if (f->all_identifier)
		return size >= 16 ? dc_perf_attr_by_id(f, rd64(p + 8)) : NULL;
	return f->same_sample_type ? &f->attrs[0] : NULL;
}

/* Leading fields of a SAMPLE (the rest is variable and left to callers). */
static void parse_sample(const uint8_t *p, uint16_t size, const struct perf_event_attr *attr,
			 struct dc_perf_record *rec)
{
	uint64_t st = attr->sample_type;
	const uint8_t *q = p + 8, *end = p + size;
	struct dc_sample_id *sid = &rec->sid;

#define TAKE(bit, stmt) \
	if (st & (bit)) { if (end - q < 8) goto short_rec; stmt; q += 8; }
	memset(sid, 0, sizeof(*sid));
	sid->sample_type = st;
	TAKE(PERF_SAMPLE_IDENTIFIER, sid->id = rd64(q));
	TAKE(PERF_SAMPLE_IP, rec->sample.ip = rd64(q));
	TAKE(PERF_SAMPLE_TID, (sid->pid = rd32(q), sid->tid = rd32(q + 4)));
	TAKE(PERF_SAMPLE_TIME, sid->time = rd64(q));
	TAKE(PERF_SAMPLE_ADDR, rec->sample.addr = rd64(q));
	TAKE(PERF_SAMPLE_ID, sid->id = rd64(q));
	TAKE(PERF_SAMPLE_STREAM_ID, sid->stream_id = rd64(q));
	TAKE(PERF_SAMPLE_CPU, sid->cpu = rd32(q));
	TAKE(PERF_SAMPLE_PERIOD, rec->sample.period = rd64(q));
#undef TAKE
	sid->valid = true;
	if (!(st & PERF_SAMPLE_RAW))
		return;
	/* on to RAW: skip READ and CALLCHAIN (by the attr's read_format) */
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = attr->read_format, n, per;

		per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		if (rf & PERF_FORMAT_GROUP) {
			if (end - q < 8)
				goto short_rec;
			n = rd64(q);
			q += 8;
		} else {
			n = 1;
		}
		/* (n is checked before it is multiplied: per is at most 3) */
		if (n > (uint64_t)(end - q) / 8)
			goto short_rec;
		n = n * per + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		    !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
		if (n > (uint64_t)(end - q) / 8)
			goto short_rec;
		q += n * 8;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t n;

		if (end - q < 8)
			goto short_rec;
		n = rd64(q);
		q += 8;
		if (n > (uint64_t)(end - q) / 8)
			goto short_rec;
		q += n * 8;
	}
	if (end - q < 4 || rd32(q) > (uint64_t)(end - q) - 4)
		goto short_rec;
	rec->sample.raw_size = rd32(q);
	rec->sample.raw = q + 4;
	return;
short_rec:
	rec->sample.short_rec = true;
}

int dc_perf_wake(const struct dc_perf_record *rec, struct dc_wake *w)
{
	const struct dc_rec_sample *s = &rec->sample;
	int32_t pid;

	if (rec->type != PERF_RECORD_SAMPLE || !rec->attr || !rec->attr->is_wake)
		return 0;
	if (!rec->sid.valid || !s->raw || s->raw_size < DC_WAKE_RAW_MIN)
		return -EBADMSG;
	memcpy(&pid, s->raw + 24, 4);
	if (pid < 0)
		return -EBADMSG;
	memset(w, 0, sizeof(*w));
	w->time = rec->sid.time;
	w->cpu = rec->sid.sample_type & PERF_SAMPLE_CPU ? rec->sid.cpu : UINT32_MAX;
	w->waker_pid = rec->sid.pid;
	w->waker_tid = rec->sid.tid;
	w->wakee_tid = (uint32_t)pid;
	memcpy(w->wakee_comm, s->raw + 8, 16);
	w->wakee_comm[16] = '\0';
	return 1;
}

bool dc_perf_has_wakes(const struct dc_perf_file *f)
{
	for (size_t i = 0; i < f->nr_attrs; i++)
		if (f->attrs[i].is_wake)
			return true;
	return false;
}

static void parse_pt_info(const uint8_t *p, uint16_t size, struct dc_rec_auxtrace_info *ai)
{
	struct dc_pt_info *pt = &ai->pt;
	size_t nr = ai->nr_priv < PF_PT_PRIV_MAX ? ai->nr_priv : PF_PT_PRIV_MAX;
	uint64_t v[PF_PT_PRIV_MAX] = { 0 };

	for (size_t i = 0; i < nr; i++)
		v[i] = ai->priv[i];
	pt->pmu_type = v[PF_PT_PMU_TYPE];
	pt->time_shift = v[PF_PT_TIME_SHIFT];
	pt->time_mult = v[PF_PT_TIME_MULT];
	pt->time_zero = v[PF_PT_TIME_ZERO];
	pt->cap_user_time_zero = v[PF_PT_CAP_USER_TIME_ZERO];
	pt->tsc_bit = v[PF_PT_TSC_BIT];
	pt->noretcomp_bit = v[PF_PT_NORETCOMP_BIT];
	pt->have_sched_switch = v[PF_PT_HAVE_SCHED_SWITCH];
	pt->snapshot_mode = v[PF_PT_SNAPSHOT_MODE];
	pt->per_cpu_mmaps = v[PF_PT_PER_CPU_MMAPS];
	pt->mtc_bit = v[PF_PT_MTC_BIT];
	pt->mtc_freq_bits = v[PF_PT_MTC_FREQ_BITS];
	pt->tsc_ctc_ratio_n = v[PF_PT_TSC_CTC_N];
	pt->tsc_ctc_ratio_d = v[PF_PT_TSC_CTC_D];
	pt->cyc_bit = v[PF_PT_CYC_BIT];
	pt->max_non_turbo_ratio = v[PF_PT_MAX_NONTURBO_RATIO];
	pt->nr_priv = nr;
	pt->filter = "";
	if (nr > PF_PT_FILTER_STR_LEN && v[PF_PT_FILTER_STR_LEN]) {
		size_t off = PF_AUXTRACE_INFO_HDR + 8 * (PF_PT_FILTER_STR_LEN + 1);
		const char *s = rec_string(p, off, size);

		if (s)
			pt->filter = s;
	}
	ai->is_pt = true;
}

#define NEED(n) do { if (body_end < (n)) goto short_rec; } while (0)

/* Parse the body of a record of `size` bytes at p (payload bytes of an
 * AUXTRACE follow within avail). */
static int parse_body(const struct dc_perf_file *f, const uint8_t *p, uint64_t avail,
		      struct dc_perf_record *rec, char *err, size_t errlen)
{
	uint16_t size = rec->size, misc = rec->misc;
	size_t body_end = size; /* where the trailer starts */
	const char *name = dc_perf_type_name(rec->type);

	if (rec->type < PERF_RECORD_USER_TYPE_START) {
		const struct dc_perf_attr *a;

		if (rec->type == PERF_RECORD_SAMPLE) {
			a = sample_attr(f, p, size);
			rec->attr = a;
			if (a)
				parse_sample(p, size, &a->attr, rec);
			rec->parsed = true;
			return 0;
		}
		a = trailer_attr(f, p, size);
		if (a && a->attr.sample_id_all) {
			size_t ts = trailer_size(a->attr.sample_type);

			if (size >= 8 + ts) {
				decode_trailer(p + size - ts, a->attr.sample_type, &rec->sid);
				body_end = size - ts;
				rec->attr = a;
			}
		} else if (a) {
			rec->attr = a;
		}
	}
	rec->parsed = true;
	switch (rec->type) {
	case PERF_RECORD_COMM:
		NEED(16);
		rec->comm.pid = rd32(p + 8);
		rec->comm.tid = rd32(p + 12);
		rec->comm.exec = misc & PERF_RECORD_MISC_COMM_EXEC;
		rec->comm.comm = rec_string(p, 16, body_end);
		if (!rec->comm.comm)
			goto unterminated;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct dc_rec_mmap *m = &rec->mmap;
		size_t fname = rec->type == PERF_RECORD_MMAP ? 40 : 72;

		NEED(fname);
		m->pid = rd32(p + 8);
		m->tid = rd32(p + 12);
		m->start = rd64(p + 16);
		m->len = rd64(p + 24);
		m->pgoff = rd64(p + 32);
		m->cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
		m->data = misc & PERF_RECORD_MISC_MMAP_DATA;
		if (rec->type == PERF_RECORD_MMAP2) {
			m->is_mmap2 = true;
			if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				m->has_build_id = true;
				m->build_id_size = p[40] <= 20 ? p[40] : 20;
				memcpy(m->build_id, p + 44, 20);
			} else {
				m->maj = rd32(p + 40);
				m->min = rd32(p + 44);
				m->ino = rd64(p + 48);
				m->ino_generation = rd64(p + 56);
			}
			m->prot = rd32(p + 64);
			m->flags = rd32(p + 68);
		}
		m->filename = rec_string(p, fname, body_end);
		if (!m->filename)
			goto unterminated;
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		NEED(32);
		rec->task.pid = rd32(p + 8);
		rec->task.ppid = rd32(p + 12);
		rec->task.tid = rd32(p + 16);
		rec->task.ptid = rd32(p + 20);
		rec->task.time = rd64(p + 24);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		NEED(16);
		rec->sw.cpu_wide = true;
		rec->sw.next_prev_pid = rd32(p + 8);
		rec->sw.next_prev_tid = rd32(p + 12);
		/* fall through */
	case PERF_RECORD_SWITCH:
		rec->sw.out = misc & PERF_RECORD_MISC_SWITCH_OUT;
		rec->sw.preempt = rec->sw.out && (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		break;
	case PERF_RECORD_ITRACE_START:
		NEED(16);
		rec->itrace_start.pid = rd32(p + 8);
		rec->itrace_start.tid = rd32(p + 12);
		break;
	case PERF_RECORD_AUX:
		NEED(32);
		rec->aux.aux_offset = rd64(p + 8);
		rec->aux.aux_size = rd64(p + 16);
		rec->aux.flags = rd64(p + 24);
		break;
	case PERF_RECORD_LOST:
		NEED(24);
		rec->lost.id = rd64(p + 8);
		rec->lost.lost = rd64(p + 16);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		NEED(16);
		rec->lost_samples.lost = rd64(p + 8);
		break;
	case PERF_RECORD_AUXTRACE_INFO: {
		struct dc_rec_auxtrace_info *ai = &rec->auxtrace_info;

		NEED(PF_AUXTRACE_INFO_HDR);
		ai->type = rd32(p + 8);
		ai->nr_priv = (size - PF_AUXTRACE_INFO_HDR) / 8;
		for (size_t i = 0; i < ai->nr_priv && i < DC_PERF_MAX_PRIV; i++)
			ai->priv[i] = rd64(p + PF_AUXTRACE_INFO_HDR + 8 * i);
		if (ai->type == PERF_AUXTRACE_INTEL_PT)
			parse_pt_info(p, size, ai);
		break;
	}
	case PERF_RECORD_HEADER_TRACING_DATA: {
		uint32_t tsize;

		NEED(16);
		tsize = rd32(p + 8);
		if (tsize > avail - size) {
			set_err(err, errlen, "TRACING_DATA of %" PRIu32
				" bytes runs past the end of the data section", tsize);
			return -EINVAL;
		}
		rec->total_size = size + (uint64_t)tsize;
		break;
	}
	case PERF_RECORD_AUXTRACE: {
		struct dc_rec_auxtrace *at = &rec->auxtrace;

		NEED(PF_AUXTRACE_HDR_SIZE);
		at->size = rd64(p + 8);
		at->offset = rd64(p + 16);
		at->reference = rd64(p + 24);
		at->idx = rd32(p + 32);
		at->tid = rd32(p + 36);
		at->cpu = rd32(p + 40);
		if (at->size > avail - size) {
			set_err(err, errlen, "AUXTRACE payload of %" PRIu64
				" bytes runs past the end of the data section", at->size);
			return -EINVAL;
		}
		at->data = p + size;
		at->data_offset = rec->offset + size;
		rec->total_size = size + at->size;
		break;
	}
	case PERF_RECORD_TIME_CONV: {
		struct dc_rec_time_conv *tc = &rec->time_conv;

		NEED(PF_TIME_CONV_MIN_SIZE);
		tc->time_shift = rd64(p + 8);
		tc->time_mult = rd64(p + 16);
		tc->time_zero = rd64(p + 24);
		if (size >= sizeof(struct pf_time_conv_event)) {
			tc->has_ext = true;
			tc->time_cycles = rd64(p + 32);
			tc->time_mask = rd64(p + 40);
			tc->cap_user_time_zero = p[48];
			tc->cap_user_time_short = p[49];
		}
		break;
	}
	case PERF_RECORD_ID_INDEX:
		NEED(16);
		rec->id_index.nr = rd64(p + 8);
		if (rec->id_index.nr > (uint64_t)(size - 16) / sizeof(struct pf_id_index_entry)) {
			set_err(err, errlen, "ID_INDEX of %" PRIu64 " entries does not fit in %u bytes",
				rec->id_index.nr, size);
			return -EINVAL;
		}
		break;
	case PERF_RECORD_HEADER_BUILD_ID:
		NEED(PF_BUILD_ID_EVENT_SIZE);
		build_id_fixed(p, &rec->build_id);
		rec->build_id.filename = rec_string(p, PF_BUILD_ID_EVENT_SIZE, body_end);
		if (!rec->build_id.filename)
			goto unterminated;
		break;
	case PERF_RECORD_FINISHED_ROUND:
	case PERF_RECORD_FINISHED_INIT:
		break;
	default:
		rec->parsed = false;
		break;
	}
	return 0;
short_rec:
	set_err(err, errlen, "%s record too short (size %u)", name ? name : "?", size);
	return -EINVAL;
unterminated:
	set_err(err, errlen, "%s record has an unterminated string", name ? name : "?");
	return -EINVAL;
}

#undef NEED

static int parse_at(const struct dc_perf_file *f, const uint8_t *p, uint64_t avail,
		    uint64_t offset, struct dc_perf_record *rec, char *err, size_t errlen)
{
	memset(rec, 0, sizeof(*rec));
	rec->offset = offset;
	if (avail < sizeof(struct perf_event_header)) {
		set_err(err, errlen, "truncated record header (%" PRIu64
			" bytes left in the data section)", avail);
		return -EINVAL;
	}
	rec->type = rd32(p);
	rec->misc = rd16(p + 4);
	rec->size = rd16(p + 6);
	rec->raw = (const struct perf_event_header *)p;
	rec->total_size = rec->size;
	if (rec->size < sizeof(struct perf_event_header)) {
		set_err(err, errlen, "record size %u too small (type %u)", rec->size, rec->type);
		return -EINVAL;
	}
	if (rec->size > avail) {
		set_err(err, errlen, "record of size %u (type %u) runs past the end of the "
			"data section (%" PRIu64 " bytes left)", rec->size, rec->type, avail);
		return -EINVAL;
	}
	return parse_body(f, p, avail, rec, err, errlen);
}

int dc_perf_parse(const struct dc_perf_file *f, const void *buf, size_t avail,
		  struct dc_perf_record *rec, char *err, size_t errlen)
{
	return parse_at(f, buf, avail, 0, rec, err, errlen);
}

int dc_perf_read_at(const struct dc_perf_file *f, uint64_t file_offset,
		    struct dc_perf_record *rec, char *err, size_t errlen)
{
	char msg[256];
	int ret;

	if (file_offset < f->data_start || file_offset >= f->data_end) {
		set_err(err, errlen, "%s: offset 0x%" PRIx64 " is outside the data section",
			f->path, file_offset);
		return -EINVAL;
	}
	ret = parse_at(f, f->map + file_offset, f->data_end - file_offset, file_offset, rec,
		       msg, sizeof(msg));
	if (ret)
		set_err(err, errlen, "%s: record at offset 0x%" PRIx64 ": %s", f->path,
			file_offset, msg);
	return ret;
}

static void map_id_index(struct dc_perf_file *f, const struct dc_perf_record *rec)
{
	const uint8_t *e = (const uint8_t *)rec->raw + 16;

	for (uint64_t i = 0; i < rec->id_index.nr; i++, e += sizeof(struct pf_id_index_entry)) {
		uint64_t idx = rd64(e + 8);

		if (idx < f->nr_attrs && id_map_put(f, rd64(e), (size_t)idx))
			return; /* out of memory: the id stays unmapped */
	}
}

/* Does the record at p (avail bytes to the end of the data) run past the
 * end? Only the last record of a stream that was cut off can. */
static bool runs_past_end(const uint8_t *p, uint64_t avail)
{
	uint16_t size;

	if (avail < sizeof(struct perf_event_header))
		return true;
	size = rd16(p + 6);
	if (size > avail)
		return true;
	return rd32(p) == PERF_RECORD_AUXTRACE && size >= PF_AUXTRACE_HDR_SIZE &&
	       rd64(p + 8) > avail - size;
}

/* The payload of a compressed record: its records are read next. */
static int unpack(struct dc_perf_file *f, const struct dc_perf_record *rec)
{
	const uint8_t *p = (const uint8_t *)rec->raw;
	uint64_t size = rec->size - 8;
	char msg[256];
	int ret;

	p += 8;
	if (rec->type == PERF_RECORD_COMPRESSED2) {
		if (size < 8 || rd64(p) > size - 8) {
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: compressed record (COMPRESSED2) at "
				 "offset 0x%" PRIx64 ": its data size runs past the record", f->path,
				 rec->offset);
			return -EINVAL;
		}
		size = rd64(p);
		p += 8;
	}
	if (!f->packed && !(f->packed = dc_packed_new())) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: out of memory", f->path);
		return -ENOMEM;
	}
	ret = dc_packed_add(f->packed, rec->offset, p, size, msg, sizeof(msg));
	if (ret == -ENOMEM)
		snprintf(msg, sizeof(msg), "out of memory");
	if (ret)
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: compressed record at offset 0x%" PRIx64
			 ": %s", f->path, rec->offset, msg);
	f->packed_off = rec->offset;
	return ret;
}

/* The next record a compressed record held: 1, 0 none left, < 0 bad. Its
 * offset is the compressed record's. */
static int next_packed(struct dc_perf_file *f, struct dc_perf_record *rec)
{
	size_t avail;
	const uint8_t *p = dc_packed_next(f->packed, &avail);
	char msg[256];
	uint32_t type;
	int ret;

	if (!p)
		return 0;
	type = rd32(p);
	if (type == PERF_RECORD_AUXTRACE || type == PERF_RECORD_COMPRESSED ||
	    type == PERF_RECORD_COMPRESSED2) {
		/* perf writes neither compressed: an AUXTRACE's payload would
		 * lie outside the file's mapping */
		snprintf(msg, sizeof(msg), "holds a %s record", dc_perf_type_name(type));
		ret = -EINVAL;
	} else {
		ret = parse_at(f, p, avail, f->packed_off, rec, msg, sizeof(msg));
	}
	if (ret) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: compressed record at offset 0x%" PRIx64
			 ": %s", f->path, f->packed_off, msg);
		return ret;
	}
	rec->packed = true;
	if (rec->type == PERF_RECORD_ID_INDEX)
		map_id_index(f, rec);
	return 1;
}

/* The end of the data: a record begun in compressed data and not ended
 * there is cut (the file's own cut is told by dc_perf_unfinished and
 * dc_perf_cut_end). */
static int packed_end(struct dc_perf_file *f)
{
	size_t left = f->packed ? dc_packed_pending(f->packed) : 0;

	if (!left || f->unfinished || f->pipe || f->cut_end || f->cut)
		return 0;
	snprintf(f->errmsg, sizeof(f->errmsg), "%s: the compressed records end inside a record "
		 "(%zu bytes of it): the file is cut or corrupt", f->path, left);
	return -EINVAL;
}

int dc_perf_next(struct dc_perf_file *f, struct dc_perf_record *rec)
{
	char msg[256];
	int ret;

	for (;;) {
		if (f->packed && (ret = next_packed(f, rec)))
			return ret;
		if (f->pos >= f->data_end)
			return packed_end(f);
		/* a cut stream ends before its partial last record */
		if ((f->unfinished || f->pipe || f->cut_end) &&
		    runs_past_end(f->map + f->pos, f->data_end - f->pos)) {
			f->cut = f->data_end - f->pos;
			f->data_end = f->pos;
			return 0;
		}
		ret = parse_at(f, f->map + f->pos, f->data_end - f->pos, f->pos, rec, msg,
			       sizeof(msg));
		if (ret) {
			snprintf(f->errmsg, sizeof(f->errmsg), "%s: record at offset 0x%" PRIx64
				 ": %s", f->path, f->pos, msg);
			return ret;
		}
		f->pos += rec->total_size;
		if (rec->type != PERF_RECORD_COMPRESSED && rec->type != PERF_RECORD_COMPRESSED2)
			break;
		if ((ret = unpack(f, rec)))
			return ret;
	}
	if (rec->type == PERF_RECORD_ID_INDEX)
		map_id_index(f, rec);
	return 1;
}

int dc_perf_seek(struct dc_perf_file *f, uint64_t file_offset)
{
	if (file_offset == 0)
		file_offset = f->data_start;
	if (file_offset < f->data_start || file_offset > f->data_end) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s: offset 0x%" PRIx64
			 " is outside the data section", f->path, file_offset);
		return -EINVAL;
	}
	f->pos = file_offset;
	/* compressed records are one stream: read again from its start */
	if (f->packed)
		dc_packed_rewind(f->packed);
	return 0;
}
