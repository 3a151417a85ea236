/* ptflame - record/perfwriter.c: the perf.data (PERFILE2) writer.
 *
 * File layout we produce (all sections 8-byte aligned):
 *   [header 104 bytes, zero until close]
 *   [ids of attr 0][ids of attr 1]...[attrs section]     at the first record
 *   [data section: records]
 *   [feature table][feature bodies]                        at close
 * The magic is written last, with the header, so a file that was never
 * closed is not a perf.data file. Where it goes follows the one output rule
 * (decoder/outfile.h): a regular file lives under a temporary name until
 * rc_perf_close renames it; a device, FIFO or stdout gets the whole file at
 * rc_perf_close, copied from an anonymous spool (the writer seeks back).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/outfile.h"
#include "decoder/symbols.h"
#include "record/perfwriter.h"

#include <zstd.h>

#define WBUF_SIZE (1u << 20)
#define REC_MAX 65535u

struct wattr {
	struct perf_event_attr attr;
	uint32_t size;             /* on-disk attr.size */
	uint64_t *ids;
	size_t nr_ids;
	char *name;                /* HEADER_EVENT_DESC name, NULL: derived */
};

struct feat_buf {
	bool set;
	uint8_t *data;
	size_t size;
};

/* A file a user MMAP/MMAP2 of code named, with its build-id as read when
 * it was first mapped. */
struct mapped_file {
	char *name;
	uint8_t bid[PF_BUILD_ID_SIZE];
	uint8_t bid_size;          /* 0: none read */
	bool written;              /* its entry is in HEADER_BUILD_ID already */
};

struct rc_perf_writer {
	char *path;
	struct dc_out out;
	int fd;                    /* out.fd */
	uint64_t off;              /* file offset of the next byte written */
	uint8_t *buf;
	size_t used;
	struct wattr *attrs;
	size_t nr_attrs;
	bool started;              /* attrs written, data section open */
	struct pf_file_header hdr;
	struct feat_buf feat[HEADER_LAST_FEATURE];
	bool raw_auxtrace;         /* HEADER_AUXTRACE set raw by the caller */
	uint64_t pt_type;          /* AUXTRACE_INFO's PMU type, 0: none */
	struct pf_auxtrace_index_entry *auxidx;
	size_t nr_auxidx, cap_auxidx;
	struct mapped_file *mapped; /* user files mapped executable, each once */
	size_t nr_mapped, cap_mapped;
	struct dc_hash mapped_idx; /* chained hash of the name -> index in mapped */
	bool same_kernel;          /* [vdso] is ours: rc_perf_same_kernel */
	ZSTD_CCtx *zc;             /* rc_perf_compress: kernel records are  */
	uint8_t *stage;            /* gathered here, written compressed     */
	size_t staged;
	int zlevel;
	uint64_t zin, zout;        /* bytes gathered, bytes written for them */
	int err;
	char errmsg[512];
};

static int fail(struct rc_perf_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct rc_perf_writer *w, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->err)
		return w->err;
	w->err = err;
	n = snprintf(w->errmsg, sizeof(w->errmsg), "%s: ", w->path);
	if (n < 0 || (size_t)n >= sizeof(w->errmsg))  /* a very long path */
		n = (int)sizeof(w->errmsg) - 1;
	va_start(ap, fmt);
	vsnprintf(w->errmsg + n, sizeof(w->errmsg) - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

const char *rc_perf_errmsg(const struct rc_perf_writer *w) { return w->errmsg; }

static int write_all(struct rc_perf_writer *w, const void *p, size_t n)
{
	const uint8_t *q = p;

	while (n) {
		ssize_t r = write(w->fd, q, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return fail(w, -errno, "write: %s", strerror(errno));
		}
		q += r;
		n -= (size_t)r;
	}
	return 0;
}

static int flush(struct rc_perf_writer *w)
{
	int ret = write_all(w, w->buf, w->used);

	w->used = 0;
	return ret;
}

/* Append n bytes (buffered). */
static int emit(struct rc_perf_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (w->used + n > WBUF_SIZE) {
		if (flush(w))
			return w->err;
		if (n > WBUF_SIZE) {
			if (write_all(w, p, n))
				return w->err;
			w->off += n;
			return 0;
		}
	}
	memcpy(w->buf + w->used, p, n);
	w->used += n;
	w->off += n;
	return 0;
}

static int emit_zeros(struct rc_perf_writer *w, size_t n)
{
	static const uint8_t zeros[64];

	while (n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		if (emit(w, zeros, k))
			return w->err;
		n -= k;
	}
	return 0;
}

/* perf record -z writes what it copies from the ring buffers (kernel
 * records) as one zstd stream, flushed at the end of each COMPRESSED record
 * and never ended; user records (AUXTRACE and its data, FINISHED_ROUND,
 * ...) as they are. Gathered kernel records are written before any user
 * record, so the file's order is the order of the calls. COMPRESSED (81),
 * not COMPRESSED2: Debian 12's perf 6.1 reads only the first. */
#define STAGE_MAX ((size_t)256 << 10)

static int flush_stage(struct rc_perf_writer *w)
{
	uint8_t rec[REC_MAX];
	ZSTD_inBuffer in = { w->stage, w->staged, 0 };
	size_t left;

	if (!w->staged || w->err)
		return w->err;
	do {
		ZSTD_outBuffer out = { rec + 8, sizeof(rec) - 8, 0 };

		left = ZSTD_compressStream2(w->zc, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return fail(w, -EIO, "zstd: %s", ZSTD_getErrorName(left));
		if (out.pos) {
			struct perf_event_header h = { .type = PERF_RECORD_COMPRESSED,
						       .size = (uint16_t)(8 + out.pos) };

			memcpy(rec, &h, sizeof(h));
			if (emit(w, rec, 8 + out.pos))
				return w->err;
			w->zout += 8 + out.pos;
		}
	} while (left);
	w->zin += w->staged;
	w->staged = 0;
	return 0;
}

/* A whole record of n bytes: gathered when compressing a kernel record. */
static int emit_record(struct rc_perf_writer *w, const void *p, size_t n)
{
	struct perf_event_header h;

	memcpy(&h, p, sizeof(h));
	if (!w->zc || h.type >= PERF_RECORD_USER_TYPE_START)
		return flush_stage(w) ? w->err : emit(w, p, n);
	if (w->staged + n > STAGE_MAX && flush_stage(w))
		return w->err;
	memcpy(w->stage + w->staged, p, n);
	w->staged += n;
	return 0;
}

int rc_perf_compress(struct rc_perf_writer *w, int level)
{
	if (w->err)
		return w->err;
	if (w->started || w->zc)
		return fail(w, -EINVAL, "compression set after the first record");
	if (level < 1 || level > ZSTD_maxCLevel())
		return fail(w, -EINVAL, "compression level %d is not 1..%d", level,
			    ZSTD_maxCLevel());
	if (!(w->stage = malloc(STAGE_MAX)) || !(w->zc = ZSTD_createCCtx()))
		return fail(w, -ENOMEM, "out of memory");
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, level)))
		return fail(w, -EINVAL, "zstd refuses level %d", level);
	w->zlevel = level;
	return 0;
}

int rc_perf_create(const char *path, struct rc_perf_writer **out, char *err, size_t errlen)
{
	struct rc_perf_writer *w;
	int ret;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path)) || !(w->buf = malloc(WBUF_SIZE))) {
		if (w) {
			free(w->path);
			free(w->buf);
			free(w);
		}
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	ret = dc_out_open(&w->out, path, DC_OUT_SEEKABLE | DC_OUT_SYNC, 0600, err, errlen);
	if (ret) {
		free(w->path);
		free(w->buf);
		free(w);
		return ret;
	}
	w->fd = w->out.fd;
	/* Placeholder header: zero magic until close fixes it. */
	if (emit_zeros(w, sizeof(struct pf_file_header))) {
		snprintf(err, errlen, "%s", w->errmsg);
		rc_perf_abort(w);
		return -EIO;
	}
	*out = w;
	return 0;
}

static void free_writer(struct rc_perf_writer *w)
{
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].ids);
		free(w->attrs[i].name);
	}
	free(w->attrs);
	for (int i = 0; i < HEADER_LAST_FEATURE; i++)
		free(w->feat[i].data);
	free(w->auxidx);
	for (size_t i = 0; i < w->nr_mapped; i++)
		free(w->mapped[i].name);
	free(w->mapped);
	dc_hash_free(&w->mapped_idx);
	ZSTD_freeCCtx(w->zc);
	free(w->stage);
	free(w->buf);
	free(w->path);
	free(w);
}

void rc_perf_abort(struct rc_perf_writer *w)
{
	if (!w)
		return;
	dc_out_abort(&w->out);
	free_writer(w);
}

int rc_perf_add_attr(struct rc_perf_writer *w, const struct perf_event_attr *attr,
		     const uint64_t *ids, size_t nr_ids)
{
	return rc_perf_add_attr_named(w, attr, ids, nr_ids, NULL);
}

int rc_perf_add_attr_named(struct rc_perf_writer *w, const struct perf_event_attr *attr,
			   const uint64_t *ids, size_t nr_ids, const char *name)
{
	struct wattr *a, *n;
	uint32_t size = attr->size ? attr->size : PF_ATTR_SIZE_MAX_PERF61;

	if (w->err)
		return w->err;
	if (w->started)
		return fail(w, -EINVAL, "attr added after the first record");
	if (size > PF_ATTR_SIZE_MAX_PERF61 || size < PERF_ATTR_SIZE_VER0 || size % 8 ||
	    (w->nr_attrs && size != w->attrs[0].size))
		return fail(w, -EINVAL, "attr size %" PRIu32 " invalid (perf 6.1 reads 64..128,"
			    " all attrs the same)", size);
	n = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*n));
	if (!n)
		return fail(w, -ENOMEM, "out of memory");
	w->attrs = n;
	a = &w->attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->attr, attr, size < sizeof(a->attr) ? size : sizeof(a->attr));
	a->attr.size = size;
	a->size = size;
	a->attr.sample_id_all = 1;
	a->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	a->ids = malloc((nr_ids ? nr_ids : 1) * sizeof(uint64_t));
	if (!a->ids)
		return fail(w, -ENOMEM, "out of memory");
	if (nr_ids)
		memcpy(a->ids, ids, nr_ids * sizeof(uint64_t));
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	if (name && !(a->name = strdup(name)))
		return fail(w, -ENOMEM, "out of memory");
	return 0;
}

/* Lay out the ids and attrs sections and open the data section. */
static int start_data(struct rc_perf_writer *w)
{
	uint64_t *id_off;

	if (w->started || w->err)
		return w->err;
	if (!w->nr_attrs)
		return fail(w, -EINVAL, "no attr added before the first record");
	id_off = calloc(w->nr_attrs, sizeof(*id_off));
	if (!id_off)
		return fail(w, -ENOMEM, "out of memory");
	for (size_t i = 0; i < w->nr_attrs; i++) {
		id_off[i] = w->off;
		emit(w, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(uint64_t));
	}
	w->hdr.attr_size = w->attrs[0].size + sizeof(struct pf_file_section);
	w->hdr.attrs.offset = w->off;
	w->hdr.attrs.size = w->nr_attrs * w->hdr.attr_size;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		struct pf_file_section ids = {
			id_off[i], w->attrs[i].nr_ids * sizeof(uint64_t) };

		emit(w, &w->attrs[i].attr, w->attrs[i].size);
		emit(w, &ids, sizeof(ids));
	}
	free(id_off);
	w->hdr.data.offset = w->off;
	w->started = true;
	return w->err;
}

/* The index of file name `name` in w->mapped, added if new (*added set);
 * -1: no memory. */
static ssize_t mapped_slot(struct rc_perf_writer *w, const char *name, size_t len, bool *added)
{
	uint64_t k = dc_hash_chain_start(dc_strhash(name, len)), idx;
	struct mapped_file *m;

	*added = false;
	while (dc_hash_chain(&w->mapped_idx, &k, &idx))
		if (dc_str_eq(w->mapped[idx].name, name, len))
			return (ssize_t)idx;
	if (DC_VEC_PUSH_ROOM(w->mapped, w->nr_mapped, w->cap_mapped, 16))
		return -1;
	m = &w->mapped[w->nr_mapped];
	memset(m, 0, sizeof(*m));
	m->name = strndup(name, len);
	if (!m->name || dc_hash_put(&w->mapped_idx, k, w->nr_mapped)) {
		free(m->name);
		return -1;
	}
	*added = true;
	return (ssize_t)w->nr_mapped++;
}

/* The GNU build-id note of the ELF file open at fd (closed here): its
 * size, 0 if none or not a regular file (a FIFO or device at the path
 * must not block or be read). */
static size_t fd_build_id(int fd, uint8_t out[PF_BUILD_ID_SIZE])
{
	const void *id;
	struct stat st;
	ssize_t n = 0;
	Elf *elf = NULL;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF)
		n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > PF_BUILD_ID_SIZE)
		n = PF_BUILD_ID_SIZE;
	if (n > 0)
		memcpy(out, id, (size_t)n);
	if (elf)
		elf_end(elf);
	close(fd);
	return n > 0 ? (size_t)n : 0;
}

/* The build-id of file `name` as process pid sees it: through
 * /proc/PID/root, so that a process in another mount namespace (a
 * container) gets its own file, not ours at that path; our path when that
 * cannot be opened (the process gone, no permission). 0: none. */
static size_t mapped_build_id(int32_t pid, const char *name, uint8_t out[PF_BUILD_ID_SIZE])
{
	const int fl = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
	char path[PATH_MAX + 32];
	int fd = -1;

	if (!strcmp(name, "[vdso]"))
		return dc_sym_own_vdso_build_id(out);
	if (pid > 0 && (size_t)snprintf(path, sizeof(path), "/proc/%" PRId32 "/root%s", pid,
					name) < sizeof(path))
		fd = open(path, fl);
	if (fd < 0)
		fd = open(name, fl);
	return fd < 0 ? 0 : fd_build_id(fd, out);
}

/* Whether a mapping's name can be a file with a build-id: not anonymous
 * memory (//anon), a memfd, or a file deleted since it was mapped. */
static bool mapped_name_ok(const char *name, size_t len, bool same_kernel)
{
	static const char del[] = " (deleted)";

	if (same_kernel && len == 6 && !memcmp(name, "[vdso]", 6))
		return true;
	return name[0] == '/' && name[1] != '/' && strncmp(name, "/memfd:", 7) &&
	       !(len >= sizeof(del) - 1 && !memcmp(name + len - (sizeof(del) - 1), del,
						   sizeof(del) - 1));
}

/* Remember the file of a user MMAP/MMAP2 of code that names no build-id,
 * with its build-id read now, while the process still maps it:
 * rc_perf_finish writes it into HEADER_BUILD_ID, as perf record does, so
 * that a decoder elsewhere (another machine, the binary upgraded since) can
 * tell the file it finds from the one that ran. Keyed by path, the first
 * mapping's file wins: two processes in different mount namespaces with
 * different files at one path get the first one's (the table, like perf's,
 * has one entry per path that a decoder looks at). */
static int note_mapping(struct rc_perf_writer *w, const uint8_t *rec, size_t size)
{
	struct perf_event_header h;
	const char *name;
	size_t at, len;
	uint32_t prot;
	int32_t pid;
	ssize_t i;
	bool added;

	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_MMAP && h.type != PERF_RECORD_MMAP2)
		return 0;
	at = h.type == PERF_RECORD_MMAP ? 40 : 72;
	if ((h.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER ||
	    (h.misc & (PERF_RECORD_MISC_MMAP_DATA | PERF_RECORD_MISC_MMAP_BUILD_ID)) ||
	    size <= at)
		return 0;
	if (h.type == PERF_RECORD_MMAP2) {
		memcpy(&prot, rec + 64, 4);
		if (!(prot & PROT_EXEC))
			return 0;
	}
	name = (const char *)rec + at;
	len = strnlen(name, size - at);
	if (len == size - at || !mapped_name_ok(name, len, w->same_kernel))
		return 0;   /* (unterminated: the reader will say so) */
	i = mapped_slot(w, name, len, &added);
	if (i < 0)
		return fail(w, -ENOMEM, "out of memory for the mapped files' names");
	if (added) {
		memcpy(&pid, rec + 8, 4);
		w->mapped[i].bid_size = (uint8_t)mapped_build_id(pid, w->mapped[i].name,
								 w->mapped[i].bid);
	}
	return 0;
}

int rc_perf_write(struct rc_perf_writer *w, const void *rec)
{
	struct perf_event_header h;

	if (start_data(w))
		return w->err;
	memcpy(&h, rec, sizeof(h));
	if (h.size < sizeof(h))
		return fail(w, -EINVAL, "record of type %" PRIu32 " has size %u", h.type, h.size);
	if (h.type == PERF_RECORD_AUXTRACE)
		return fail(w, -EINVAL, "AUXTRACE must be written with rc_perf_auxtrace");
	if (note_mapping(w, rec, h.size))
		return w->err;
	return emit_record(w, rec, h.size);
}

static const struct wattr *attr_for(const struct rc_perf_writer *w, uint64_t id)
{
	for (size_t i = 0; i < w->nr_attrs; i++)
		for (size_t k = 0; k < w->attrs[i].nr_ids; k++)
			if (w->attrs[i].ids[k] == id)
				return &w->attrs[i];
	return w->nr_attrs == 1 ? &w->attrs[0] : NULL;
}

/* Append the trailer for a to buf (which has room), return its size. */
static size_t put_trailer(uint8_t *buf, const struct wattr *a, const struct dc_sample_id *sid)
{
	uint64_t st = a->attr.sample_type;
	uint64_t id = sid->id;
	uint8_t *p = buf;

	if (!id && a->nr_ids == 1)
		id = a->ids[0];
	if (st & PERF_SAMPLE_TID) {
		memcpy(p, &sid->pid, 4);
		memcpy(p + 4, &sid->tid, 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		memcpy(p, &sid->time, 8);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(p, &id, 8);
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		memcpy(p, &sid->stream_id, 8);
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		uint64_t v = sid->cpu; /* cpu, then a zero u32 */

		memcpy(p, &v, 8);
		p += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		memcpy(p, &id, 8);
		p += 8;
	}
	return (size_t)(p - buf);
}

int rc_perf_write_sid(struct rc_perf_writer *w, const void *rec,
		      const struct dc_sample_id *sid)
{
	uint8_t buf[REC_MAX + 64];
	struct perf_event_header h;
	const struct wattr *a;
	size_t ts;

	if (start_data(w))
		return w->err;
	memcpy(&h, rec, sizeof(h));
	if (!sid)
		return fail(w, -EINVAL, "record of type %" PRIu32 " written without sample id",
			    h.type);
	a = attr_for(w, sid->id);
	if (!a)
		return fail(w, -EINVAL, "sample id %" PRIu64 " belongs to no attr", sid->id);
	if (h.size < sizeof(h) || h.size > REC_MAX - 64)
		return fail(w, -EINVAL, "record of type %" PRIu32 " has size %u", h.type, h.size);
	if (note_mapping(w, rec, h.size))
		return w->err;
	memcpy(buf, rec, h.size);
	ts = put_trailer(buf + h.size, a, sid);
	h.size = (uint16_t)(h.size + ts);
	memcpy(buf, &h, sizeof(h));
	return emit_record(w, buf, h.size);
}

static void put_header(uint8_t *buf, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = size };

	memcpy(buf, &h, sizeof(h));
}

int rc_perf_sample(struct rc_perf_writer *w, const struct dc_sample_id *sid, uint64_t ip,
		   const void *raw, uint32_t raw_size)
{
	static const uint64_t known = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				      PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
				      PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
	uint8_t buf[REC_MAX + 1];
	const struct wattr *a;
	uint64_t st, id, v;
	size_t n = sizeof(struct perf_event_header);

	if (start_data(w))
		return w->err;
	a = attr_for(w, sid->id);
	if (!a)
		return fail(w, -EINVAL, "sample id %" PRIu64 " belongs to no attr", sid->id);
	st = a->attr.sample_type;
	if (st & ~known)
		return fail(w, -EINVAL, "sample_type %#" PRIx64 " has fields the writer cannot fill",
			    st);
	if (raw_size > REC_MAX - 128)
		return fail(w, -EINVAL, "sample RAW of %" PRIu32 " bytes too large", raw_size);
	id = sid->id;
	if (!id && a->nr_ids == 1)
		id = a->ids[0];
	/* perf's order of the fields */
#define PUT(p, k) (memcpy(buf + n, (p), (k)), n += (k))
	if (st & PERF_SAMPLE_IDENTIFIER)
		PUT(&id, 8);
	if (st & PERF_SAMPLE_IP)
		PUT(&ip, 8);
	if (st & PERF_SAMPLE_TID) {
		PUT(&sid->pid, 4);
		PUT(&sid->tid, 4);
	}
	if (st & PERF_SAMPLE_TIME)
		PUT(&sid->time, 8);
	if (st & PERF_SAMPLE_ID)
		PUT(&id, 8);
	if (st & PERF_SAMPLE_CPU) {
		v = sid->cpu;
		PUT(&v, 8);
	}
	if (st & PERF_SAMPLE_PERIOD) {
		v = 1;
		PUT(&v, 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size + data ends on an 8-byte boundary */
		uint32_t padded = (uint32_t)(((raw_size + 4 + 7) & ~(size_t)7) - 4);

		PUT(&padded, 4);
		if (raw_size)
			PUT(raw, raw_size);
		memset(buf + n, 0, padded - raw_size);
		n += padded - raw_size;
	}
#undef PUT
	put_header(buf, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (uint16_t)n);
	return emit_record(w, buf, n);
}

void rc_perf_wake_attr(struct perf_event_attr *a, uint64_t tp_id)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_TRACEPOINT;
	a->size = PF_ATTR_SIZE_MAX_PERF61;
	a->config = tp_id;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	a->exclude_hv = 1;
}

void rc_perf_wake_raw(uint8_t raw[RC_WAKE_RAW_SIZE], uint64_t tp_id, int32_t waker_tid,
		      const char *wakee_comm, int32_t wakee_tid, int32_t prio,
		      int32_t target_cpu)
{
	uint16_t type = (uint16_t)tp_id;
	size_t len = wakee_comm ? strnlen(wakee_comm, 15) : 0;

	memset(raw, 0, RC_WAKE_RAW_SIZE);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &waker_tid, 4);
	if (len)
		memcpy(raw + RC_WAKE_OFF_COMM, wakee_comm, len);
	memcpy(raw + RC_WAKE_OFF_PID, &wakee_tid, 4);
	memcpy(raw + RC_WAKE_OFF_PRIO, &prio, 4);
	memcpy(raw + RC_WAKE_OFF_TARGET_CPU, &target_cpu, 4);
}

int rc_perf_wake(struct rc_perf_writer *w, const struct dc_sample_id *sid,
		 const uint8_t raw[RC_WAKE_RAW_SIZE])
{
	return rc_perf_sample(w, sid, 0, raw, RC_WAKE_RAW_SIZE);
}

/* A record body with a NUL-terminated string at its end, padded to 8. */
static int write_with_string(struct rc_perf_writer *w, uint8_t *buf, size_t fixed,
			     const char *s, const struct dc_sample_id *sid)
{
	size_t len = strlen(s) + 1, padded = (len + 7) & ~(size_t)7;
	struct perf_event_header h;

	if (fixed + padded > 8192)
		return fail(w, -EINVAL, "string too long in record: %.40s...", s);
	memset(buf + fixed, 0, padded);
	memcpy(buf + fixed, s, len);
	memcpy(&h, buf, sizeof(h));
	h.size = (uint16_t)(fixed + padded);
	memcpy(buf, &h, sizeof(h));
	return rc_perf_write_sid(w, buf, sid);
}

/* A record of a fixed-size body: header, body, then the sample_id trailer. */
static int write_fixed(struct rc_perf_writer *w, uint32_t type, uint16_t misc,
		       const void *body, size_t len, const struct dc_sample_id *sid)
{
	uint8_t buf[8 + 32];

	if (len > sizeof(buf) - 8)
		return -EINVAL;
	put_header(buf, type, misc, (uint16_t)(8 + len));
	memcpy(buf + 8, body, len);
	return rc_perf_write_sid(w, buf, sid);
}

int rc_perf_comm(struct rc_perf_writer *w, uint32_t pid, uint32_t tid, const char *comm,
		 bool exec, const struct dc_sample_id *sid)
{
	uint8_t buf[8192];
	struct pf_comm_body b = { pid, tid };

	put_header(buf, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, 0);
	memcpy(buf + 8, &b, sizeof(b));
	return write_with_string(w, buf, 8 + sizeof(b), comm, sid);
}

int rc_perf_mmap2(struct rc_perf_writer *w, const struct dc_rec_mmap *m,
		  const struct dc_sample_id *sid)
{
	uint8_t buf[8192];
	struct pf_mmap2_body b;
	uint16_t misc = m->cpumode ? m->cpumode : PERF_RECORD_MISC_USER;

	if (!m->filename)
		return fail(w, -EINVAL, "MMAP2 without a filename");
	memset(&b, 0, sizeof(b));
	b.pid = m->pid;
	b.tid = m->tid;
	b.start = m->start;
	b.len = m->len;
	b.pgoff = m->pgoff;
	if (m->has_build_id) {
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		b.build_id_size = m->build_id_size <= 20 ? m->build_id_size : 20;
		memcpy(b.build_id, m->build_id, 20);
	} else {
		b.maj = m->maj;
		b.min = m->min;
		b.ino = m->ino;
		b.ino_generation = m->ino_generation;
	}
	b.prot = m->prot;
	b.flags = m->flags;
	if (m->data)
		misc |= PERF_RECORD_MISC_MMAP_DATA;
	put_header(buf, PERF_RECORD_MMAP2, misc, 0);
	memcpy(buf + 8, &b, sizeof(b));
	return write_with_string(w, buf, 8 + sizeof(b), m->filename, sid);
}

static int task(struct rc_perf_writer *w, uint32_t type, uint32_t pid, uint32_t ppid,
		uint32_t tid, uint32_t ptid, uint64_t time, const struct dc_sample_id *sid)
{
	struct pf_task_body b = { pid, ppid, tid, ptid, time };

	return write_fixed(w, type, 0, &b, sizeof(b), sid);
}

int rc_perf_fork(struct rc_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid, uint64_t time, const struct dc_sample_id *sid)
{
	return task(w, PERF_RECORD_FORK, pid, ppid, tid, ptid, time, sid);
}

int rc_perf_exit(struct rc_perf_writer *w, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid, uint64_t time, const struct dc_sample_id *sid)
{
	return task(w, PERF_RECORD_EXIT, pid, ppid, tid, ptid, time, sid);
}

static uint16_t switch_misc(bool out, bool preempt)
{
	uint16_t misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0;

	if (out && preempt)
		misc |= PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
	return misc;
}

int rc_perf_switch(struct rc_perf_writer *w, bool out, bool preempt,
		   const struct dc_sample_id *sid)
{
	uint8_t buf[8];

	put_header(buf, PERF_RECORD_SWITCH, switch_misc(out, preempt), sizeof(buf));
	return rc_perf_write_sid(w, buf, sid);
}

int rc_perf_switch_cpu_wide(struct rc_perf_writer *w, bool out, bool preempt,
			    uint32_t next_prev_pid, uint32_t next_prev_tid,
			    const struct dc_sample_id *sid)
{
	struct pf_switch_cpu_wide_body b = { next_prev_pid, next_prev_tid };

	return write_fixed(w, PERF_RECORD_SWITCH_CPU_WIDE, switch_misc(out, preempt), &b,
			   sizeof(b), sid);
}

int rc_perf_itrace_start(struct rc_perf_writer *w, uint32_t pid, uint32_t tid,
			 const struct dc_sample_id *sid)
{
	struct pf_itrace_start_body b = { pid, tid };

	return write_fixed(w, PERF_RECORD_ITRACE_START, 0, &b, sizeof(b), sid);
}

int rc_perf_aux(struct rc_perf_writer *w, uint64_t aux_offset, uint64_t aux_size,
		uint64_t flags, const struct dc_sample_id *sid)
{
	struct pf_aux_body b = { aux_offset, aux_size, flags };

	return write_fixed(w, PERF_RECORD_AUX, 0, &b, sizeof(b), sid);
}

int rc_perf_lost(struct rc_perf_writer *w, uint64_t id, uint64_t lost,
		 const struct dc_sample_id *sid)
{
	struct pf_lost_body b = { id, lost };

	return write_fixed(w, PERF_RECORD_LOST, 0, &b, sizeof(b), sid);
}

static bool has_attr_type(const struct rc_perf_writer *w, uint64_t type)
{
	for (size_t i = 0; i < w->nr_attrs; i++)
		if (w->attrs[i].attr.type == type)
			return true;
	return false;
}

int rc_perf_auxtrace_info_pt(struct rc_perf_writer *w, const struct dc_pt_info *pt)
{
	uint8_t buf[PF_AUXTRACE_INFO_HDR + 8 * PF_PT_PRIV_MAX + 4096];
	uint64_t priv[PF_PT_PRIV_MAX] = { 0 };
	const char *filter = pt->filter ? pt->filter : "";
	size_t flen = strlen(filter), fbytes = flen ? (flen + 1 + 7) & ~(size_t)7 : 0;
	size_t size = PF_AUXTRACE_INFO_HDR + sizeof(priv) + fbytes;
	uint32_t type = PERF_AUXTRACE_INTEL_PT, reserved = 0;

	if (fbytes > 4096)
		return fail(w, -EINVAL, "PT address filter too long");
	if (!has_attr_type(w, pt->pmu_type))
		return fail(w, -EINVAL, "AUXTRACE_INFO pmu_type %" PRIu64 " matches no attr's type"
			    " (perf decodes only the attr whose type is priv[0])", pt->pmu_type);
	priv[PF_PT_PMU_TYPE] = pt->pmu_type;
	w->pt_type = pt->pmu_type;
	priv[PF_PT_TIME_SHIFT] = pt->time_shift;
	priv[PF_PT_TIME_MULT] = pt->time_mult;
	priv[PF_PT_TIME_ZERO] = pt->time_zero;
	priv[PF_PT_CAP_USER_TIME_ZERO] = pt->cap_user_time_zero;
	priv[PF_PT_TSC_BIT] = pt->tsc_bit;
	priv[PF_PT_NORETCOMP_BIT] = pt->noretcomp_bit;
	priv[PF_PT_HAVE_SCHED_SWITCH] = pt->have_sched_switch;
	priv[PF_PT_SNAPSHOT_MODE] = pt->snapshot_mode;
	priv[PF_PT_PER_CPU_MMAPS] = pt->per_cpu_mmaps;
	priv[PF_PT_MTC_BIT] = pt->mtc_bit;
	priv[PF_PT_MTC_FREQ_BITS] = pt->mtc_freq_bits;
	priv[PF_PT_TSC_CTC_N] = pt->tsc_ctc_ratio_n;
	priv[PF_PT_TSC_CTC_D] = pt->tsc_ctc_ratio_d;
	priv[PF_PT_CYC_BIT] = pt->cyc_bit;
	priv[PF_PT_MAX_NONTURBO_RATIO] = pt->max_non_turbo_ratio;
	priv[PF_PT_FILTER_STR_LEN] = flen;
	memset(buf, 0, size);
	put_header(buf, PERF_RECORD_AUXTRACE_INFO, 0, (uint16_t)size);
	memcpy(buf + 8, &type, 4);
	memcpy(buf + 12, &reserved, 4);
	memcpy(buf + PF_AUXTRACE_INFO_HDR, priv, sizeof(priv));
	memcpy(buf + PF_AUXTRACE_INFO_HDR + sizeof(priv), filter, flen);
	return rc_perf_write(w, buf);
}

int rc_perf_auxtrace(struct rc_perf_writer *w, const void *data, uint64_t size,
		     uint64_t offset, uint64_t reference, uint32_t idx, uint32_t tid,
		     uint32_t cpu)
{
	struct pf_auxtrace_event ev;
	uint64_t padded = (size + 7) & ~UINT64_C(7);

	if (start_data(w))
		return w->err;
	if (!reference)
		return fail(w, -EINVAL, "AUXTRACE reference must be non-zero");
	if (flush_stage(w))
		return w->err;
	if (DC_VEC_PUSH_ROOM(w->auxidx, w->nr_auxidx, w->cap_auxidx, 64))
		return fail(w, -ENOMEM, "out of memory");
	w->auxidx[w->nr_auxidx].file_offset = w->off;
	w->auxidx[w->nr_auxidx].sz = PF_AUXTRACE_HDR_SIZE;
	w->nr_auxidx++;
	memset(&ev, 0, sizeof(ev));
	ev.header.type = PERF_RECORD_AUXTRACE;
	ev.header.size = PF_AUXTRACE_HDR_SIZE;
	ev.size = padded;
	ev.offset = offset;
	ev.reference = reference;
	ev.idx = idx;
	ev.tid = tid;
	ev.cpu = cpu;
	if (emit(w, &ev, sizeof(ev)) || emit(w, data, size) || emit_zeros(w, padded - size))
		return w->err;
	return 0;
}

int rc_perf_time_conv(struct rc_perf_writer *w, const struct dc_rec_time_conv *tc)
{
	struct pf_time_conv_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.header.type = PERF_RECORD_TIME_CONV;
	ev.header.size = sizeof(ev);
	ev.time_shift = tc->time_shift;
	ev.time_mult = tc->time_mult;
	ev.time_zero = tc->time_zero;
	ev.time_cycles = tc->time_cycles;
	ev.time_mask = tc->time_mask;
	ev.cap_user_time_zero = tc->cap_user_time_zero;
	ev.cap_user_time_short = tc->cap_user_time_short;
	return rc_perf_write(w, &ev);
}

int rc_perf_finished_round(struct rc_perf_writer *w)
{
	struct perf_event_header h = { .type = PERF_RECORD_FINISHED_ROUND, .size = 8 };

	return rc_perf_write(w, &h);
}

/* ---- features ---------------------------------------------------------- */

static int feat_append(struct rc_perf_writer *w, int feat, const void *p, size_t n)
{
	struct feat_buf *fb = &w->feat[feat];
	uint8_t *d;

	if (w->err)
		return w->err;
	d = realloc(fb->data, fb->size + n + 1);
	if (!d)
		return fail(w, -ENOMEM, "out of memory");
	fb->data = d;
	if (n)
		memcpy(d + fb->size, p, n);
	fb->size += n;
	fb->set = true;
	return 0;
}

static void feat_reset(struct rc_perf_writer *w, int feat)
{
	free(w->feat[feat].data);
	memset(&w->feat[feat], 0, sizeof(w->feat[feat]));
}

/* perf's feature string: u32 padded length, then the bytes, NUL-padded. */
static int feat_string(struct rc_perf_writer *w, int feat, const char *s)
{
	uint8_t pad[PF_NAME_ALIGN] = { 0 };
	uint32_t len = (uint32_t)strlen(s) + 1;
	uint32_t padded = (len + PF_NAME_ALIGN - 1) & ~(uint32_t)(PF_NAME_ALIGN - 1);

	if (feat_append(w, feat, &padded, 4) || feat_append(w, feat, s, len))
		return w->err;
	return feat_append(w, feat, pad, padded - len);
}

static bool feat_ok(struct rc_perf_writer *w, int feat)
{
	if (feat <= HEADER_RESERVED || feat >= HEADER_LAST_FEATURE) {
		fail(w, -EINVAL, "feature %d unknown", feat);
		return false;
	}
	return !w->err;
}

int rc_perf_set_nrcpus(struct rc_perf_writer *w, uint32_t nr_avail, uint32_t nr_online)
{
	uint32_t v[2] = { nr_avail, nr_online };

	feat_reset(w, HEADER_NRCPUS);
	return feat_append(w, HEADER_NRCPUS, v, sizeof(v));
}

int rc_perf_set_cmdline(struct rc_perf_writer *w, size_t argc, const char *const *argv)
{
	uint32_t nr = (uint32_t)argc;

	feat_reset(w, HEADER_CMDLINE);
	if (feat_append(w, HEADER_CMDLINE, &nr, 4))
		return w->err;
	for (size_t i = 0; i < argc; i++)
		if (feat_string(w, HEADER_CMDLINE, argv[i]))
			return w->err;
	return 0;
}

int rc_perf_set_string(struct rc_perf_writer *w, int feat, const char *s)
{
	if (!feat_ok(w, feat))
		return w->err;
	feat_reset(w, feat);
	return feat_string(w, feat, s);
}

int rc_perf_add_build_id(struct rc_perf_writer *w, int32_t pid, uint16_t cpumode,
			 const uint8_t *id, size_t size, const char *filename)
{
	uint8_t ev[PF_BUILD_ID_EVENT_SIZE], pad[PF_NAME_ALIGN] = { 0 };
	size_t len = strlen(filename) + 1;
	size_t padded = (len + PF_NAME_ALIGN - 1) & ~(size_t)(PF_NAME_ALIGN - 1);
	struct perf_event_header h = { 0 };

	if (size > PF_BUILD_ID_SIZE || PF_BUILD_ID_EVENT_SIZE + padded > REC_MAX)
		return fail(w, -EINVAL, "build id of %zu bytes or file name too long", size);
	memset(ev, 0, sizeof(ev));
	h.misc = cpumode | PF_BUILD_ID_MISC_SIZE;
	h.size = (uint16_t)(PF_BUILD_ID_EVENT_SIZE + padded);
	memcpy(ev, &h, sizeof(h));
	memcpy(ev + 8, &pid, 4);
	memcpy(ev + 12, id, size);
	ev[12 + PF_BUILD_ID_SIZE] = (uint8_t)size;
	if (feat_append(w, HEADER_BUILD_ID, ev, sizeof(ev)) ||
	    feat_append(w, HEADER_BUILD_ID, filename, len))
		return w->err;
	if ((cpumode & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
		bool added;
		ssize_t i = mapped_slot(w, filename, len - 1, &added);

		if (i < 0)
			return fail(w, -ENOMEM, "out of memory for the mapped files' names");
		w->mapped[i].written = true;
	}
	return feat_append(w, HEADER_BUILD_ID, pad, padded - len);
}

void rc_perf_same_kernel(struct rc_perf_writer *w)
{
	w->same_kernel = true;
}

/* A build-id for every mapped file that has none in HEADER_BUILD_ID yet,
 * the one read when it was first mapped (none when it could not be read). */
static int add_mapped_build_ids(struct rc_perf_writer *w)
{
	for (size_t i = 0; i < w->nr_mapped && !w->err; i++) {
		const struct mapped_file *m = &w->mapped[i];

		if (!m->written && m->bid_size)
			rc_perf_add_build_id(w, -1, PERF_RECORD_MISC_USER, m->bid, m->bid_size,
					     m->name);
	}
	return w->err;
}

int rc_perf_set_feature(struct rc_perf_writer *w, int feat, const void *data, size_t size)
{
	if (!feat_ok(w, feat))
		return w->err;
	feat_reset(w, feat);
	if (feat == HEADER_AUXTRACE)
		w->raw_auxtrace = true;
	return feat_append(w, feat, data, size);
}

/* The AUXTRACE index from the AUXTRACE records written. */
static int build_auxtrace_feature(struct rc_perf_writer *w)
{
	uint64_t nr = w->nr_auxidx;

	if (w->raw_auxtrace || !nr)
		return 0;
	feat_reset(w, HEADER_AUXTRACE);
	if (feat_append(w, HEADER_AUXTRACE, &nr, 8))
		return w->err;
	return feat_append(w, HEADER_AUXTRACE, w->auxidx, nr * sizeof(*w->auxidx));
}

/* HEADER_EVENT_DESC, as perf record writes it (names for perf script and
 * perf report --header-only): u32 nr, u32 attr size, then per attr: the
 * attr, u32 nr_ids, its name (a perf string), its ids. */
static void event_name(const struct rc_perf_writer *w, const struct wattr *wa,
		       char *buf, size_t len)
{
	const struct perf_event_attr *a = &wa->attr;
	const char *mod = a->exclude_kernel && !a->exclude_user ? "u" :
			  !a->exclude_kernel && a->exclude_user ? "k" : "";

	if (wa->name)
		snprintf(buf, len, "%s", wa->name);
	else if (w->pt_type && a->type == w->pt_type)
		snprintf(buf, len, "intel_pt//%s", mod);
	else if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY)
		snprintf(buf, len, "dummy%s%s", *mod ? ":" : "", mod);
	else
		snprintf(buf, len, "type%u/%#llx/%s", a->type, (unsigned long long)a->config, mod);
}

static int build_event_desc(struct rc_perf_writer *w)
{
	uint32_t v[2] = { (uint32_t)w->nr_attrs, w->nr_attrs ? w->attrs[0].size : 0 };
	char name[64];

	if (w->feat[HEADER_EVENT_DESC].set || !w->nr_attrs)
		return w->err;
	if (feat_append(w, HEADER_EVENT_DESC, v, sizeof(v)))
		return w->err;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		const struct wattr *a = &w->attrs[i];
		uint32_t nr = (uint32_t)a->nr_ids;

		event_name(w, a, name, sizeof(name));
		if (feat_append(w, HEADER_EVENT_DESC, &a->attr, a->size) ||
		    feat_append(w, HEADER_EVENT_DESC, &nr, 4) || feat_string(w, HEADER_EVENT_DESC, name) ||
		    feat_append(w, HEADER_EVENT_DESC, a->ids, a->nr_ids * sizeof(uint64_t)))
			return w->err;
	}
	return 0;
}

/* HEADER_COMPRESSED, as perf writes it: version, method (zstd), level,
 * ratio, and the most one COMPRESSED record decompresses to (perf's reader
 * sizes its buffer by it). */
static int build_compressed(struct rc_perf_writer *w)
{
	uint32_t v[5] = { 1, PF_COMP_ZSTD, (uint32_t)w->zlevel, 0, (uint32_t)STAGE_MAX };

	if (!w->zc)
		return 0;
	v[3] = w->zout ? (uint32_t)(w->zin / w->zout) : 0;
	feat_reset(w, HEADER_COMPRESSED);
	return feat_append(w, HEADER_COMPRESSED, v, sizeof(v));
}

static int write_features(struct rc_perf_writer *w)
{
	struct pf_file_section table[HEADER_LAST_FEATURE];
	size_t n = 0;
	uint64_t off;

	for (int i = 1; i < HEADER_LAST_FEATURE; i++)
		if (w->feat[i].set)
			n++;
	off = w->off + n * sizeof(struct pf_file_section);
	n = 0;
	for (int i = 1; i < HEADER_LAST_FEATURE; i++) {
		if (!w->feat[i].set)
			continue;
		w->hdr.adds_features[i / 64] |= UINT64_C(1) << (i % 64);
		table[n].offset = off;
		table[n].size = w->feat[i].size;
		off += w->feat[i].size;
		n++;
	}
	if (emit(w, table, n * sizeof(table[0])))
		return w->err;
	for (int i = 1; i < HEADER_LAST_FEATURE; i++)
		if (w->feat[i].set && emit(w, w->feat[i].data, w->feat[i].size))
			return w->err;
	return 0;
}

/* HEADER_TRACING_DATA for a file with a wake attr: perf refuses a file
 * with a tracepoint attr whose format it cannot find there ("broken or
 * missing trace data"), so it gets the one format the file needs, the
 * layout rc_perf_wake_raw writes, under the attr's config as its ID. The
 * feature is trace-cmd's "tracing" data, version 0.6 (little-endian, 8-byte
 * longs): the ring buffer's page header of x86-64 (perf reads no page, but
 * cannot read an empty one), no header_event text, no ftrace formats, one event system "sched" with one
 * format, and empty kallsyms, printk formats and saved cmdlines. */
static int build_tracing_data(struct rc_perf_writer *w)
{
	static const uint8_t magic[] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const int f = HEADER_TRACING_DATA;
	const struct wattr *a = NULL;
	char fmt[1024];
	uint8_t b[4] = { 0, 8, 0, 0 };  /* little-endian, sizeof(long) */
	uint32_t page = 4096, one = 1, zero4 = 0;
	static const char hpage[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
	uint64_t zero8 = 0, len, hlen = sizeof(hpage) - 1;

	for (size_t i = 0; i < w->nr_attrs && !a; i++)
		if (w->attrs[i].attr.type == PERF_TYPE_TRACEPOINT && w->attrs[i].name &&
		    !strcmp(w->attrs[i].name, RC_WAKE_EVENT_NAME))
			a = &w->attrs[i];
	if (!a || w->feat[f].set)
		return w->err;
	len = (uint64_t)snprintf(fmt, sizeof(fmt),
		"name: sched_waking\n"
		"ID: %llu\n"
		"format:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\n"
		"\tfield:char comm[16];\toffset:%u;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t pid;\toffset:%u;\tsize:4;\tsigned:1;\n"
		"\tfield:int prio;\toffset:%u;\tsize:4;\tsigned:1;\n"
		"\tfield:int target_cpu;\toffset:%u;\tsize:4;\tsigned:1;\n"
		"\n"
		"print fmt: \"comm=%%s pid=%%d prio=%%d target_cpu=%%03d\", REC->comm, REC->pid,"
		" REC->prio, REC->target_cpu\n",
		(unsigned long long)a->attr.config, RC_WAKE_OFF_COMM, RC_WAKE_OFF_PID,
		RC_WAKE_OFF_PRIO, RC_WAKE_OFF_TARGET_CPU);
	if (feat_append(w, f, magic, sizeof(magic)) || feat_append(w, f, "0.6", 4) ||
	    feat_append(w, f, b, 2) || feat_append(w, f, &page, 4) ||
	    feat_append(w, f, "header_page", 12) || feat_append(w, f, &hlen, 8) ||
	    feat_append(w, f, hpage, hlen) ||
	    feat_append(w, f, "header_event", 13) || feat_append(w, f, &zero8, 8) ||
	    feat_append(w, f, &zero4, 4) ||                      /* ftrace formats */
	    feat_append(w, f, &one, 4) || feat_append(w, f, "sched", 6) ||
	    feat_append(w, f, &one, 4) || feat_append(w, f, &len, 8) ||
	    feat_append(w, f, fmt, len) ||
	    feat_append(w, f, &zero4, 4) ||                      /* kallsyms */
	    feat_append(w, f, &zero4, 4) ||                      /* printk formats */
	    feat_append(w, f, &zero8, 8))                        /* saved cmdlines */
		return w->err;
	return 0;
}

int rc_perf_close(struct rc_perf_writer *w)
{
	return rc_perf_finish(w, NULL, 0);
}

int rc_perf_finish(struct rc_perf_writer *w, char *err, size_t errlen)
{
	uint8_t hb[sizeof(struct pf_file_header)];
	int ret;

	if (start_data(w) || flush_stage(w) || build_compressed(w) ||
	    build_auxtrace_feature(w) || build_event_desc(w) || build_tracing_data(w) ||
	    add_mapped_build_ids(w))
		goto out;
	w->hdr.data.size = w->off - w->hdr.data.offset;
	if (write_features(w) || flush(w))
		goto out;
	w->hdr.magic = PF_MAGIC2;
	w->hdr.size = sizeof(w->hdr);
	memcpy(hb, &w->hdr, sizeof(hb));
	if (pwrite(w->fd, hb, sizeof(hb), 0) != (ssize_t)sizeof(hb)) {
		fail(w, errno ? -errno : -EIO, "write header: %s", strerror(errno));
		goto out;
	}
	{
		char msg[400];

		ret = dc_out_commit(&w->out, msg, sizeof(msg));
		w->fd = -1;
		if (ret) {
			fail(w, ret, "%s", msg);
			goto out;
		}
	}
	free_writer(w);
	return 0;
out:
	ret = w->err ? w->err : -EIO;
	if (err && errlen)
		snprintf(err, errlen, "%s", w->errmsg[0] ? w->errmsg : "write failed");
	rc_perf_abort(w);
	return ret;
}
