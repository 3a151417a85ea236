/* emu_check PERF_DATA DUMP_INSNS: decode every AUX queue of an emulated
 * recording with libipt's instruction decoder, over the code of the
 * recorded MMAP2 files, split the instructions per thread with the
 * SWITCH_CPU_WIDE sideband (by time), and compare each thread's
 * instruction addresses with what the emulator stepped (--dump-insns).
 * Exit 0 when every thread matches exactly and libipt saw no decode error.
 *
 * Independent of the emulator's code: only the perf.data reader and
 * libipt. Timing comes from AUXTRACE_INFO and the intel_pt attr's config.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <intel-pt.h>

#include "decoder/perfdata.h"

struct chunk { uint32_t idx; uint64_t offset, size; const uint8_t *data; };
struct map { uint32_t pid; uint64_t start, len, pgoff, time; const char *path; int fd; };
struct swin { uint32_t cpu, pid, tid; uint64_t time; };
struct exec_ev { uint32_t pid; uint64_t time; };
/* A decoded instruction of a thread: segments (from one enable on) from
 * different queues are put in time order by seg_time, then ord. */
struct ent { uint64_t seg_time, ord, ip; };
struct seq { uint32_t tid; struct ent *e; size_t n, cap; uint64_t *ip; };

struct ctx {
	struct chunk *ch; size_t nch, cch;
	struct map *maps; size_t nmaps, cmaps;
	struct swin *sw; size_t nsw, csw;
	struct exec_ev *ex; size_t nex, cex;
	struct seq *seqs; size_t nseq, cseq;
	struct dc_pt_info pt;
	bool have_pt;
	uint64_t pt_config;
	uint32_t pt_type;
	/* decoding state of the current queue */
	uint32_t cur_pid, cur_tid;
	uint64_t cur_time;
	uint64_t seg_time;  /* time of the current segment's enable */
	uint64_t slack;   /* how far the decoder's time may lag: 0 with CYC */
	long errors;
};

#define PUSH(arr, n, cap, item) do { \
	if ((n) == (cap)) { (cap) = (cap) ? (cap) * 2 : 64; \
		(arr) = realloc((arr), (cap) * sizeof(*(arr))); \
		if (!(arr)) { perror("realloc"); exit(2); } } \
	(arr)[(n)++] = (item); } while (0)

static struct seq *seq_of(struct ctx *c, uint32_t tid)
{
	for (size_t i = 0; i < c->nseq; i++)
		if (c->seqs[i].tid == tid)
			return &c->seqs[i];
	struct seq s = { .tid = tid };
	PUSH(c->seqs, c->nseq, c->cseq, s);
	return &c->seqs[c->nseq - 1];
}

static void seq_add(struct seq *s, uint64_t seg_time, uint64_t ip)
{
	struct ent e = { seg_time, s->n, ip };
	PUSH(s->e, s->n, s->cap, e);
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	if (x->seg_time != y->seg_time)
		return x->seg_time < y->seg_time ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Sort by time and expose the addresses as s->ip[]. */
static void seq_finish(struct seq *s)
{
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), cmp_ent);
	s->ip = malloc((s->n ? s->n : 1) * sizeof(*s->ip));
	if (!s->ip)
		exit(2);
	for (size_t i = 0; i < s->n; i++)
		s->ip[i] = s->e[i].ip;
}

/* The mapping of pid holding ip at time t (newest first, none from before
 * the pid's last exec). */
static struct map *find_map(struct ctx *c, uint32_t pid, uint64_t ip, uint64_t t)
{
	uint64_t exec_t = 0;
	for (size_t i = 0; i < c->nex; i++)
		if (c->ex[i].pid == pid && c->ex[i].time <= t && c->ex[i].time > exec_t)
			exec_t = c->ex[i].time;
	struct map *best = NULL;
	for (size_t i = 0; i < c->nmaps; i++) {
		struct map *m = &c->maps[i];
		if (m->pid != pid || ip < m->start || ip >= m->start + m->len || m->time > t ||
		    m->time < exec_t)
			continue;
		if (!best || m->time >= best->time)
			best = m;
	}
	return best;
}

static int read_image(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
		      void *arg)
{
	(void)asid;
	struct ctx *c = arg;
	struct map *m = find_map(c, c->cur_pid, ip, c->cur_time);
	if (!m)
		return -pte_nomap;
	uint64_t avail = m->start + m->len - ip;
	if (size > avail)
		size = (size_t)avail;
	if (!strcmp(m->path, "[vdso]")) {
		/* same kernel, same vDSO: read our own copy */
		const uint8_t *vdso = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
		if (!vdso)
			return -pte_nomap;
		memcpy(buf, vdso + (ip - m->start), size);
		return (int)size;
	}
	if (m->fd < 0)
		m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0)
		return -pte_nomap;
	ssize_t got = pread(m->fd, buf, size, (off_t)(m->pgoff + (ip - m->start)));
	return got > 0 ? (int)got : -pte_nomap;
}

/* The thread switched in last on cpu at or before time t. */
static void set_thread(struct ctx *c, uint32_t cpu, uint64_t t)
{
	const struct swin *best = NULL;
	for (size_t i = 0; i < c->nsw; i++)
		if (c->sw[i].cpu == cpu && c->sw[i].time <= t && (!best || c->sw[i].time >= best->time))
			best = &c->sw[i];
	c->cur_pid = best ? best->pid : 0;
	c->cur_tid = best ? best->tid : 0;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static uint64_t tsc_ns(struct ctx *c, uint64_t tsc)
{
	return dc_pt_tsc_to_ns(&c->pt, tsc);
}

static void update_time(struct ctx *c, struct pt_insn_decoder *d)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	if (pt_insn_time(d, &tsc, &lost_mtc, &lost_cyc) >= 0)
		c->cur_time = tsc_ns(c, tsc);
}

static int decode_queue(struct ctx *c, uint32_t cpu, uint8_t *buf, size_t size)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	cfg.cpuid_0x15_eax = (uint32_t)c->pt.tsc_ctc_ratio_d;
	cfg.cpuid_0x15_ebx = (uint32_t)c->pt.tsc_ctc_ratio_n;
	cfg.nom_freq = (uint8_t)c->pt.max_non_turbo_ratio;
	if (c->pt.mtc_freq_bits)
		cfg.mtc_freq = (uint8_t)((c->pt_config & c->pt.mtc_freq_bits) >>
					 __builtin_ctzll(c->pt.mtc_freq_bits));
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return -1;
	struct pt_image *img = pt_insn_get_image(d);
	pt_image_set_callback(img, read_image, c);
	c->cur_pid = c->cur_tid = 0;
	/* Without CYC the time at a PGE is the last MTC edge: up to one MTC
	 * period early. The emulator puts RC_EMU_SWITCH_NS (> one period)
	 * between a CPU's last enable and the next switch-in, so looking one
	 * period ahead still finds the right switch-in. */
	c->slack = 0;
	if (!(c->pt_config & c->pt.cyc_bit) && c->pt.tsc_ctc_ratio_d) {
		uint64_t tsc = ((uint64_t)1 << cfg.mtc_freq) * c->pt.tsc_ctc_ratio_n /
			       c->pt.tsc_ctc_ratio_d;
		c->slack = dc_pt_tsc_to_ns(&c->pt, tsc) - c->pt.time_zero;
	}
	int status;
	for (;;) {
		status = pt_insn_sync_forward(d);
		if (status < 0)
			break;
		for (;;) {
			while (status & pts_event_pending) {
				struct pt_event ev;
				status = pt_insn_event(d, &ev, sizeof(ev));
				if (status < 0)
					break;
				if (ev.has_tsc)
					c->cur_time = tsc_ns(c, ev.tsc);
				if (ev.type == ptev_enabled) {
					set_thread(c, cpu, c->cur_time + c->slack);
					c->seg_time = c->cur_time;
					if (getenv("EMU_CHECK_DEBUG"))
						fprintf(stderr, "cpu %u enabled at %#" PRIx64 " time %" PRIu64
							" (tsc %d) -> tid %u\n", cpu, ev.variant.enabled.ip,
							c->cur_time, ev.has_tsc, c->cur_tid);
				}
				if (ev.type == ptev_overflow) {
					fprintf(stderr, "cpu %u: unexpected overflow\n", cpu);
					c->errors++;
				}
			}
			if (status < 0)
				break;
			struct pt_insn insn;
			status = pt_insn_next(d, &insn, sizeof(insn));
			if (insn.iclass != ptic_error && status >= 0)
				seq_add(seq_of(c, c->cur_tid), c->seg_time, insn.ip);
			if (status < 0)
				break;
			update_time(c, d);
		}
		if (status == -pte_eos)
			break;
		uint64_t off = 0;
		pt_insn_get_offset(d, &off);
		fprintf(stderr, "cpu %u: decode error at offset %#" PRIx64 ": %s\n", cpu, off,
			pt_errstr(pt_errcode(status)));
		c->errors++;
	}
	if (status != -pte_eos) {
		fprintf(stderr, "cpu %u: sync failed: %s\n", cpu, pt_errstr(pt_errcode(status)));
		c->errors++;
	}
	pt_insn_free_decoder(d);
	return 0;
}

static int load(struct ctx *c, const char *path, struct dc_perf_file **fp)
{
	char err[512];
	struct dc_perf_file *f;
	if (dc_perf_open(path, &f, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	*fp = f;
	for (size_t i = 0; i < dc_perf_nr_attrs(f); i++) {
		const struct dc_perf_attr *a = dc_perf_attr_at(f, i);
		/* the PT event: not the dummy, nor the wake tracepoint */
		if (a->attr.type != PERF_TYPE_SOFTWARE && a->attr.type != PERF_TYPE_HARDWARE &&
		    a->attr.type != PERF_TYPE_TRACEPOINT) {
			c->pt_config = a->attr.config;
			c->pt_type = a->attr.type;
		}
	}
	struct dc_perf_record r;
	int rc;
	while ((rc = dc_perf_next(f, &r)) > 0) {
		if (!r.parsed)
			continue;
		switch (r.type) {
		case PERF_RECORD_AUXTRACE_INFO:
			if (r.auxtrace_info.is_pt) {
				c->pt = r.auxtrace_info.pt;
				c->have_pt = true;
			}
			break;
		case PERF_RECORD_AUXTRACE: {
			struct chunk ch = { r.auxtrace.idx, r.auxtrace.offset, r.auxtrace.size,
					    r.auxtrace.data };
			PUSH(c->ch, c->nch, c->cch, ch);
			break;
		}
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_MMAP: {
			struct map m = { r.mmap.pid, r.mmap.start, r.mmap.len, r.mmap.pgoff,
					 r.sid.time, r.mmap.filename, -1 };
			PUSH(c->maps, c->nmaps, c->cmaps, m);
			break;
		}
		case PERF_RECORD_COMM:
			if (r.comm.exec) {
				struct exec_ev x = { r.comm.pid, r.sid.time };
				PUSH(c->ex, c->nex, c->cex, x);
			}
			break;
		case PERF_RECORD_SWITCH_CPU_WIDE:
			if (!r.sw.out) {
				struct swin s = { r.sid.cpu, r.sid.pid, r.sid.tid, r.sid.time };
				PUSH(c->sw, c->nsw, c->csw, s);
			}
			break;
		default:
			break;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s\n", dc_perf_errmsg(f));
		return -1;
	}
	if (!c->have_pt) {
		fprintf(stderr, "%s: no Intel PT AUXTRACE_INFO\n", path);
		return -1;
	}
	return 0;
}

static int decode_all(struct ctx *c)
{
	qsort(c->ch, c->nch, sizeof(*c->ch), cmp_chunk);
	for (size_t i = 0; i < c->nch;) {
		uint32_t idx = c->ch[i].idx;
		size_t j = i, total = 0;
		uint64_t next = c->ch[i].offset;
		for (; j < c->nch && c->ch[j].idx == idx; j++) {
			if (c->ch[j].offset != next) {
				fprintf(stderr, "queue %u: hole at AUX offset %#" PRIx64 "\n", idx, next);
				c->errors++;
			}
			next = c->ch[j].offset + c->ch[j].size;
			total += c->ch[j].size;
		}
		uint8_t *buf = malloc(total ? total : 1);
		size_t at = 0;
		for (size_t k = i; k < j; k++) {
			memcpy(buf + at, c->ch[k].data, c->ch[k].size);
			at += c->ch[k].size;
		}
		decode_queue(c, idx, buf, total);
		free(buf);
		i = j;
	}
	return 0;
}

static int compare(struct ctx *c, const char *dump_path)
{
	FILE *f = fopen(dump_path, "r");
	if (!f) {
		perror(dump_path);
		return -1;
	}
	struct ctx want = { 0 };
	unsigned tid;
	unsigned long long ip;
	while (fscanf(f, "%u %llx", &tid, &ip) == 2)
		seq_add(seq_of(&want, tid), 0, ip);
	fclose(f);
	for (size_t i = 0; i < want.nseq; i++)
		seq_finish(&want.seqs[i]);
	for (size_t i = 0; i < c->nseq; i++)
		seq_finish(&c->seqs[i]);
	int bad = 0;
	size_t total = 0;
	for (size_t i = 0; i < want.nseq; i++) {
		struct seq *w = &want.seqs[i];
		struct seq *g = seq_of(c, w->tid);
		total += w->n;
		size_t k = 0;
		while (k < w->n && k < g->n && w->ip[k] == g->ip[k])
			k++;
		if (k == w->n && k == g->n) {
			printf("tid %u: %zu instructions match\n", w->tid, w->n);
			continue;
		}
		bad++;
		fprintf(stderr, "tid %u: stepped %zu, decoded %zu instructions; first difference at #%zu: "
			"stepped %#" PRIx64 ", decoded %#" PRIx64 "\n", w->tid, w->n, g->n, k,
			k < w->n ? w->ip[k] : 0, k < g->n ? g->ip[k] : 0);
	}
	for (size_t i = 0; i < c->nseq; i++) {
		bool known = false;
		for (size_t j = 0; j < want.nseq; j++)
			known |= want.seqs[j].tid == c->seqs[i].tid;
		if (!known && c->seqs[i].n) {
			bad++;
			fprintf(stderr, "tid %u: %zu decoded instructions the emulator never stepped\n",
				c->seqs[i].tid, c->seqs[i].n);
		}
	}
	for (size_t i = 0; i < want.nseq; i++) {
		free(want.seqs[i].ip);
		free(want.seqs[i].e);
	}
	free(want.seqs);
	if (total == 0) {
		fprintf(stderr, "%s: no instructions\n", dump_path);
		bad++;
	}
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: emu_check PERF_DATA DUMP_INSNS\n");
		return 2;
	}
	struct ctx c = { 0 };
	struct dc_perf_file *f = NULL;
	int rc = 1;
	if (load(&c, argv[1], &f) == 0) {
		decode_all(&c);
		int cmp = compare(&c, argv[2]);
		if (c.errors)
			fprintf(stderr, "%ld decode error(s)\n", c.errors);
		rc = (cmp == 0 && c.errors == 0) ? 0 : 1;
	}
	for (size_t i = 0; i < c.nmaps; i++)
		if (c.maps[i].fd >= 0)
			close(c.maps[i].fd);
	for (size_t i = 0; i < c.nseq; i++) {
		free(c.seqs[i].ip);
		free(c.seqs[i].e);
	}
	free(c.seqs);
	free(c.ch);
	free(c.maps);
	free(c.sw);
	free(c.ex);
	dc_perf_close(f);
	return rc;
}
