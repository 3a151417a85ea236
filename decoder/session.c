/* ptflame - decoder/session.c: decode a perf.data recording.
 *
 * Open: one pass over the records indexes the AUX queues (AUXTRACE chunks,
 * TRUNCATED AUX records) without touching payloads. Run: the sideband is
 * read again round by round (sorted by time within a FINISHED_ROUND), and
 * a heap picks whatever comes first: a sideband record or a queue's next
 * event. A queue stops at every point where tracing (re)starts; that point
 * is taken only when all sideband up to its time has been applied, so the
 * thread on its CPU and that process's mappings are the ones of that
 * moment.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/decoder.h"
#include "decoder/prescan.h"

struct sq {                        /* a queue as the session sees it */
	struct dc_ptq *q;
	uint32_t idx;
	uint32_t cpu;              /* UINT32_MAX in per-thread mode */
	uint32_t tid;              /* per-thread mode: the traced thread */
	uint64_t *breaks;          /* stream offsets after lost data */
	size_t nbreaks, cap_breaks;
	uint64_t next_off;         /* expected offset of the next chunk */
	uint64_t bytes;            /* AUX bytes of the queue            */
	bool have_chunk;
	uint32_t ctx_pid, ctx_tid; /* the last traced thread it answered */
	uint64_t pge_since;        /* coarse clock: the stint a TIP.PGE was
				    * last given to began then (pge_thread) */
	uint32_t pge_tid;          /* ... and its thread                     */
};

struct img {
	uint32_t pid;
	uint32_t maps_gen;
	uint32_t exec_gen;              /* the process's, when built      */
	bool built;
	struct pt_image *image;
	uint64_t vdso_start, vdso_end;  /* the process's [vdso], if ours fits */
	const uint8_t *vdso;            /* our own vdso's bytes */
	uint64_t version;               /* image_build calls */
	struct dc_wsec *secs;           /* its sections, for ...            */
	size_t nsecs, cap_secs;
	struct dc_wcode *code;          /* ... our walker (ptwalk.h)        */
};

/* The prescan's share of each queue and of all (decoder/prescan.h): a
 * program's start and first work, where it meets most of its binaries. */
enum { PRESCAN_QUEUE = 4 << 20, PRESCAN_TOTAL = 16 << 20 };

struct snap {                      /* an image's copy for a worker thread */
	struct pt_image *image;
	struct dc_wcode *code;
	uint64_t vdso_start, vdso_end;
	const uint8_t *vdso;
};

struct sbrec {                     /* a sideband record of the current round */
	uint64_t time;
	uint64_t late;             /* 0: a wake (first at its time), else 1 */
	const void *raw;
	uint64_t size;
	uint64_t seq;
	bool early;                /* applied already (early_maps)          */
};

/* Queues a worker thread decodes ahead for, at most (report -j). */
enum { AHEAD_PER_THREAD = 4 };

struct dc_session {
	struct dc_session_opts opts;
	struct dc_perf_file *pf;
	struct dc_pt_info pt;
	struct pt_config ptcfg;
	bool no_cyc;               /* the PT event's config has no CYC     */
	bool merge_step;           /* PTFLAME_MERGE=step: no deliver_run   */
	bool mtc;                  /* ... and has MTC                      */
	struct dc_sideband *sb;
	struct dc_symbols *sym;
	struct pt_image_section_cache *isc;
	struct dc_ptq_pool *pool;  /* the threads that decode ahead (jobs > 1) */
	struct pt_image *empty_image;
	struct dc_kernel *kern;    /* the kernel's code and names, or NULL */

	struct sq *qs;
	size_t nq;
	struct dc_hash q_by_idx;

	struct img **imgs;         /* stable: libipt callbacks point at them */
	struct img *last_img;      /* image_for's last (q_image_gen)        */
	size_t nimgs, cap_imgs;
	struct dc_hash img_by_pid;
	struct dc_prescan *prescan;/* jobs > 1, inline frames: the binaries
				    * the trace runs, for DWARF opened ahead */
	struct snap **snaps;       /* dc_ptq image_snapshot copies          */
	size_t nsnaps;

	struct dc_hash seen;       /* tids with events */
	struct dc_hash resume;     /* coarse clock: tid -> where its code goes
				    * on after its last TRACE_OFF           */
	struct dc_hash resume_t;   /* ... and that TRACE_OFF's time         */
	struct dc_hash last_in;    /* ... tid -> its last switch-in applied  */
	struct dc_hash born;       /* on_fork: tids a FORK made that have had
	                              no event yet: 1 no switch-in yet, 2
	                              switched in (on_first_in), 0 done     */
	bool seen_any;             /* seen_last is in seen (never removed)  */
	uint32_t seen_last;
	/* A per-task recording (perf record -- CMD: AUXTRACE records name
	 * both a task and a CPU) traces only the task and its children: the
	 * threads with records of their own (not switch records: perf
	 * makes those CPU-wide when it can). Another thread the sideband puts
	 * on a CPU (a SWITCH_CPU_WIDE's next/prev) owns no PT data: data
	 * there is the traced thread's, in the kernel switching. */
	bool per_task;
	struct dc_hash traced;

	struct sbrec *round;       /* read, sorted; [rpos, rdue) are due */
	size_t rn, rcap, rpos, rdue;
	uint64_t rseq;             /* file order, to keep sorting stable  */
	uint64_t rounds_max;       /* newest time of the rounds read before */
	uint64_t sb_whole;         /* round[] holds every record up to it    */
	bool sb_eof;
	const void *next_raw;      /* the due record parsed into next_rec  */
	struct dc_perf_record next_rec;
	bool next_late;            /* next_rec goes after queue items of its
				    * time (sb_next; asked before every event) */

	/* The queues by their next event's time. The time is kept with
	 * the queue: only the queue on top is filled or popped, and the
	 * callbacks its fill makes change no other queue's head (a context
	 * point raises only its own queue's time), so the others' times
	 * hold. Reading them from the queues again on every event took 2 %
	 * more time at -j 1 on xz traces of 8 and 16 CPUs. */
	struct hent { size_t q; uint64_t key; } *heap;
	size_t nheap;

	bool per_cpu, ran;
	bool wakes;                /* on_wake and a wake attr: samples are read */
	bool wake_warned;
	uint64_t progress_mark;
	uint64_t dropped_off;      /* file pages before this are dropped    */
	struct dc_session_stats st;
	char err[512];
};

static void set_err(struct dc_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

const char *dc_session_errmsg(const struct dc_session *s) { return s->err; }
struct dc_symbols *dc_session_symbols(struct dc_session *s) { return s->sym; }
struct dc_sideband *dc_session_sideband(struct dc_session *s) { return s->sb; }

/* ---- queue ops ---------------------------------------------------------- */

static void sym_warn(void *ctx, const char *msg)
{
	struct dc_session *s = ctx;

	if (s->opts.on_warning)
		s->opts.on_warning(s->opts.ctx, msg);
}

static uint64_t round_page(uint64_t n)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

/* libipt asks for memory no section holds: serve the [vdso] from ours. */
static int vdso_read(const uint8_t *vdso, uint64_t start, uint64_t end, uint8_t *buffer,
		     size_t size, uint64_t ip)
{
	size_t n;

	if (!vdso || ip < start || ip >= end)
		return -pte_nomap;
	n = end - ip < size ? (size_t)(end - ip) : size;
	memcpy(buffer, vdso + (ip - start), n);
	return (int)n;
}

static int read_vdso(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
		     void *context)
{
	const struct img *im = context;

	(void)asid;
	return vdso_read(im->vdso, im->vdso_start, im->vdso_end, buffer, size, ip);
}

static int read_vdso_snap(uint8_t *buffer, size_t size, const struct pt_asid *asid,
			  uint64_t ip, void *context)
{
	const struct snap *sn = context;

	(void)asid;
	return vdso_read(sn->vdso, sn->vdso_start, sn->vdso_end, buffer, size, ip);
}

/* The image section cache's section of mapping m's code (m->isid, kept:
 * a rebuilt image adds its live mappings again, hundreds of them in a
 * process that loads many libraries, and a stat and an add to the cache,
 * which searches its sections, for each was most of a report of 1000
 * dlopens). A dso error < 0 is returned; m->isid -1 says no code. */
static int map_section(struct dc_session *s, struct dc_sb_map *m)
{
	const char *file;
	struct stat st;
	uint64_t size;

	if (m->isid)
		return 0;
	if (m->dso < 0) {
		int id = dc_sym_dso(s->sym, m->path, m->build_id, m->build_id_size);

		if (id < 0)
			return id;
		m->dso = id;
	}
	m->isid = -1;
	file = dc_sym_dso_file(s->sym, m->dso);
	if (!file || stat(file, &st) || (uint64_t)st.st_size <= m->pgoff)
		return 0;
	size = m->end - m->start;
	if (size > (uint64_t)st.st_size - m->pgoff)
		size = (uint64_t)st.st_size - m->pgoff;
	m->isid = pt_iscache_add_file(s->isc, file, m->pgoff, size, m->start);
	m->isize = size;
	if (m->isid <= 0)
		m->isid = -1;
	return 0;
}

static bool map_live(const struct dc_sb_map *m) { return m->t_end == UINT64_MAX; }

static const char *map_file(struct dc_session *s, const struct dc_sb_map *m)
{
	return m->dso < 0 ? NULL : dc_sym_dso_file(s->sym, m->dso);
}

/* Add live mapping m's code to the image (m->isid -1 when it cannot). */
static int image_add(struct dc_session *s, struct img *im, struct dc_sb_map *m)
{
	int ret = map_section(s, m);

	if (!ret && m->isid > 0 && pt_image_add_cached(im->image, s->isc, m->isid, NULL) < 0)
		m->isid = -1;
	return ret;
}

/* The image from scratch: every live mapping, the [vdso], the kernel. */
static int image_fill(struct dc_session *s, struct img *im, struct dc_sb_proc *p)
{
	int ret = pt_image_remove_by_asid(im->image, NULL);

	if (ret < 0)
		return -ENOMEM;
	im->vdso = NULL;
	for (size_t i = 0; i < p->nmaps; i++) {
		struct dc_sb_map *m = &p->maps[i];

		if (!map_live(m))
			continue;
		if (!strcmp(m->path, "[vdso]")) {
			size_t len;
			const uint8_t *v = dc_sym_vdso(s->sym, m->build_id, m->build_id_size, &len);

			/* the same kernel's vdso fills the same pages */
			if (v && round_page(len) == m->end - m->start) {
				im->vdso = v;
				im->vdso_start = m->start;
				im->vdso_end = m->start + len;
			}
			continue;
		}
		if ((ret = image_add(s, im, m)))
			return ret;
	}
	return dc_kernel_add_to_image(s->kern, im->image, s->isc);
}

/* The image of generation im->maps_gen brought to the process's current
 * one in place: a mapping ended since goes with every section of its file
 * (libipt removes by file), whose live ones come back, and mappings made
 * since are added. Adding a section walks the image's sections, so a
 * rebuild from scratch of a process with hundreds of mappings (one that
 * loads many libraries: perf records no munmap, so a dlclosed library's
 * mapping stays until something is mapped over it) cost its square at
 * every new mapping. Not across an exec (its mappings all end; the [vdso]
 * moves). */
static int image_patch(struct dc_session *s, struct img *im, struct dc_sb_proc *p)
{
	const char *gone[16];
	size_t ngone = 0;
	int ret;

	for (size_t i = 0; i < p->nmaps; i++) {
		const struct dc_sb_map *m = &p->maps[i];
		const char *file = map_file(s, m);
		bool seen = false;

		if (m->isid <= 0 || m->gen_start > im->maps_gen || m->gen_end <= im->maps_gen ||
		    m->gen_end > p->maps_gen || !file)
			continue;         /* (not in the image, or still live) */
		for (size_t k = 0; k < ngone && !seen; k++)
			seen = !strcmp(gone[k], file);
		if (seen)
			continue;
		if (ngone == sizeof(gone) / sizeof(gone[0]))
			return 1;         /* many files at once: from scratch */
		if (pt_image_remove_by_filename(im->image, file, NULL) < 0)
			return -ENOMEM;
		gone[ngone++] = file;
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		struct dc_sb_map *m = &p->maps[i];
		const char *file = map_file(s, m);
		bool again = false;

		if (!map_live(m) || !strcmp(m->path, "[vdso]"))
			continue;
		for (size_t k = 0; k < ngone && file && !again; k++)
			again = m->isid > 0 && !strcmp(gone[k], file);
		if ((again || m->gen_start > im->maps_gen) && (ret = image_add(s, im, m)))
			return ret;
	}
	return 0;
}

/* The walker's sections: the image's, the [vdso]'s bytes as libipt reads
 * them through the image's callback, and the kernel's code, which is
 * libipt's to walk (dc_wsec.opaque). */
static int image_secs(struct dc_session *s, struct img *im, const struct dc_sb_proc *p)
{
	uint64_t lo, hi;

	im->nsecs = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct dc_sb_map *m = &p->maps[i];

		if (!map_live(m) || m->isid <= 0 || !strcmp(m->path, "[vdso]"))
			continue;
		if (DC_VEC_PUSH_ROOM(im->secs, im->nsecs, im->cap_secs, 16))
			return -ENOMEM;
		im->secs[im->nsecs++] = (struct dc_wsec){ m->start, m->start + m->isize, m->isid,
							  NULL, false };
	}
	if (im->vdso) {
		if (DC_VEC_PUSH_ROOM(im->secs, im->nsecs, im->cap_secs, 16))
			return -ENOMEM;
		im->secs[im->nsecs++] = (struct dc_wsec){ im->vdso_start, im->vdso_end, 0, im->vdso,
							  false };
	}
	for (size_t i = 0; dc_kernel_code_range(s->kern, i, &lo, &hi); i++) {
		if (DC_VEC_PUSH_ROOM(im->secs, im->nsecs, im->cap_secs, 16))
			return -ENOMEM;
		im->secs[im->nsecs++] = (struct dc_wsec){ lo, hi, 0, NULL, true };
	}
	return 0;
}

/* The process's image as its mappings are now. */
static int image_build(struct dc_session *s, struct img *im, struct dc_sb_proc *p)
{
	int ret = 1;

	if (im->built) {
		for (size_t i = 0; i < s->nq; i++)
			if (s->qs[i].q && (ret = dc_ptq_image_changing(s->qs[i].q, im->image)))
				return ret;
		ret = im->exec_gen == p->exec_gen ? image_patch(s, im, p) : 1;
	}
	if (ret > 0)
		ret = image_fill(s, im, p);
	if (ret || (ret = image_secs(s, im, p)))
		return ret;
	if (im->code && dc_wcode_set(im->code, im->secs, im->nsecs))
		return -ENOMEM;
	im->maps_gen = p->maps_gen;
	im->exec_gen = p->exec_gen;
	/* (the queues' lookups ask as of the image's generation: the one
	 * image of the process, so the oldest they ask for) */
	dc_sb_hold_gen(p, im->maps_gen);
	im->version++;
	if (im->built) {
		/* changed in place: workers decoding ahead with a copy stop */
		for (size_t i = 0; i < s->nq; i++)
			if (s->qs[i].q)
				dc_ptq_image_changed(s->qs[i].q, im->image);
	}
	im->built = true;
	return 0;
}

static int image_for(struct dc_session *s, uint32_t pid, struct pt_image **out)
{
	struct dc_sb_proc *p = dc_sb_proc(s->sb, pid);
	struct img *im;
	uint64_t i;
	int ret;

	*out = s->empty_image;
	if (!p)
		return 0;
	if (!dc_hash_get(&s->img_by_pid, pid, &i)) {
		if (DC_VEC_PUSH_ROOM(s->imgs, s->nimgs, s->cap_imgs, 16))
			return -ENOMEM;
		i = s->nimgs;
		im = calloc(1, sizeof(*im));
		if (!im)
			return -ENOMEM;
		im->pid = pid;
		im->image = pt_image_alloc(NULL);
		im->code = dc_wcode_new(s->isc);
		if (!im->image || !im->code || dc_hash_put(&s->img_by_pid, pid, i)) {
			dc_wcode_free(im->code);
			pt_image_free(im->image);
			free(im);
			return -ENOMEM;
		}
		pt_image_set_callback(im->image, read_vdso, im);
		s->imgs[s->nimgs++] = im;
	}
	im = s->imgs[i];
	s->last_img = im;
	if (!im->built || im->maps_gen != p->maps_gen) {
		ret = image_build(s, im, p);
		if (ret)
			return ret;
	}
	*out = im->image;
	return 0;
}

/* ---- the thread at a TIP.PGE on a coarse clock ----------------------------
 *
 * Without CYC the time read at a TIP.PGE is only a lower bound L: the code
 * after it ran in [L, L + P) (P: one MTC period), and the thread on the CPU
 * at L may be one switched out before that code ran. Looked up at L, whole
 * stretches went to the thread switched out before (or to the idle task).
 * So the candidates are the thread on the CPU at L and every one the
 * sideband switches in on that CPU before L + P (read ahead in the sorted
 * records, not applied), each over the part of [L, L + P) it held the CPU;
 * a stint older than the one the queue's last PGE went to is out (the
 * trace's stretches follow the switches in order), as are the idle task
 * and threads that own no trace, and a stint that ended before the code
 * after the PGE was still running (MTCs before its PGD tell until when).
 * The PGEs that follow in the same period follow the stints in order: see
 * pge_pick. The PGE's time is raised to the start of the chosen stint:
 * its code ran after the switch-in. What no packet and no record tells
 * stays open: two threads resuming at the same ip in one period (the
 * same code, a clone's parent and child) are told apart only by the
 * order of the switches and what each stint must hold. */

enum { PGE_CANDS = 16, PGE_INS = 256 };

struct pge_cand {
	uint32_t pid, tid;
	uint64_t from, to;         /* its part of [L, L + P)                 */
	uint64_t since;            /* its stint began (switch record time)   */
	bool preempted;            /* it ends in [L, L + P) by a preemption  */
	bool blocked;              /* ... by a switch-out that is none: its
	                              thread waits (a syscall blocked)     */
};

struct pge_in {                    /* a switch-in read ahead, on any cpu */
	uint32_t tid;
	uint64_t t;
};

static bool owns_trace(struct dc_session *s, uint32_t tid)
{
	uint64_t v;

	return tid && tid != UINT32_MAX && (!s->per_task || dc_hash_get(&s->traced, tid, &v));
}

/* Read ahead: the stints on cpu after c[0] until `end`, the count; the
 * switch-ins on any cpu in in[0, *nin). */
static size_t pge_peek(struct dc_session *s, uint32_t cpu, uint64_t end, struct pge_cand *c,
		       struct pge_in *in, size_t *nin)
{
	size_t n = 1;

	*nin = 0;

	for (size_t i = s->rpos; i < s->rn && s->round[i].time < end; i++) {
		struct dc_perf_record rec;
		char err[64];
		uint64_t t = s->round[i].time;

		if (t < c[0].from)
			continue;
		if (dc_perf_parse(s->pf, s->round[i].raw, s->round[i].size, &rec, err,
				  sizeof(err)) < 0 ||
		    (rec.type != PERF_RECORD_SWITCH && rec.type != PERF_RECORD_SWITCH_CPU_WIDE) ||
		    !rec.sid.valid)
			continue;
		if (!rec.sw.out && *nin < PGE_INS) {
			in[*nin].tid = rec.sid.tid;
			in[(*nin)++].t = t;
		}
		if (!(rec.sid.sample_type & PERF_SAMPLE_CPU) || rec.sid.cpu != cpu)
			continue;
		if (rec.sw.out) {
			/* (a per-thread record: only that its stint ended) */
			if (c[n - 1].to > t) {
				c[n - 1].to = t;
				c[n - 1].preempted = rec.sw.preempt;
				c[n - 1].blocked = !rec.sw.preempt;
			}
			if (!rec.sw.cpu_wide || n == PGE_CANDS)
				continue;
			c[n].pid = rec.sw.next_prev_pid;
			c[n].tid = rec.sw.next_prev_tid;
		} else if (c[n - 1].tid == rec.sid.tid && c[n - 1].to == end) {
			/* the switch-in the switch-out announced: from here */
			c[n - 1].from = c[n - 1].since = t;
			continue;
		} else {
			if (n == PGE_CANDS)
				continue;
			if (c[n - 1].to > t)
				c[n - 1].to = t;
			c[n].pid = rec.sid.pid;
			c[n].tid = rec.sid.tid;
		}
		c[n].from = c[n].since = t;
		c[n].to = end;
		c[n].preempted = c[n].blocked = false;
		n++;
	}
	return n;
}

/* Pick the PGE's thread among the candidates (see above): the index, or
 * SIZE_MAX. ips[0, m): the PGE's ip and those of the TIP.PGEs after it up
 * to the next timing packet, at time lim (at most the window's end: a PGE
 * after that packet is not among them). They follow the stints in order:
 * an assignment of them to stints, never going back, costs PGE_BIG for
 * each stint that began in the window and ended by lim without one (a
 * thread switched in runs user code before it is switched out again; a
 * stint that may have run on past lim may have had its first one after
 * the packet) and 1 for each stint's first PGE not where its thread
 * stopped (a thread's code goes on there), and 1 for each PGE after an
 * asynchronous TIP.PGD (an interrupt) left in a stint that a preemption
 * ends in the window (that interrupt most likely was the preemption:
 * without this a clone's child, resuming at its parent's ip, lost its
 * first stint to a parent preempted right after the clone returned; for
 * the PGE itself only when that preemption comes within a period of its
 * TIP.PGD: pge_thread); and, to choose among equals, a little for a stint
 * that a switch-out other than a preemption ends in the window, its thread
 * waiting until a stint of its own later in the window, when the TIP.PGD
 * that ends its code is asynchronous (an interrupt does not wait: a
 * syscall does; the TIP.PGD before the next stint's first PGE, or the one
 * after the stint's last PGE read ahead, tail_async; not known to be a
 * syscall's counts as not one: without this, a
 * thread that blocked in a read and, back from it, was interrupted in
 * the same period had its switch-out put under the interrupt, and the
 * read's wait under the code in between). A
 * stint that ended before runs_to cannot have the PGE (its code ran past
 * MTCs up to there: a PGD is never later than the switch-out after it),
 * nor one that began at or after lim (the PGEs came before the timing
 * packet that ends the read-ahead: an MTC, or the TSC of a switch-in).
 * The PGE gets the stint of the cheapest, the earliest of equals. */
/* (costs are in PGE_UNITs; pge_waits's is a tie-break below one: its
 * kind of end cannot be avoided by every stint, and fewer than PGE_UNIT
 * stints end in a window) */
enum { PGE_UNIT = 64, PGE_BIG = 1000 * PGE_UNIT, PGE_MAX = 64 };

static unsigned pge_ipc(const bool *have, const uint64_t *res, const bool *dup,
			const uint64_t *ips, size_t j, size_t k)
{
	/* (a thread that had a stint earlier in the window may have stopped
	 * since its last TRACE_OFF that is out: not checked there) */
	return have[k] && res[k] != ips[j] && (!j || !dup[k]) ? PGE_UNIT : 0;
}

/* Where c's thread goes on, if known: not when it got a CPU after its last
 * TRACE_OFF that is out and before c's stint (it may have stopped elsewhere
 * since: its TRACE_OFF there is still to come, later than L). */
static bool pge_resume(struct dc_session *s, const struct pge_cand *c,
		       const struct pge_in *in, size_t nin, uint64_t *ip)
{
	uint64_t t_off, y;

	if (!dc_hash_get(&s->resume, c->tid, ip) || !dc_hash_get(&s->resume_t, c->tid, &t_off))
		return false;
	if (dc_hash_get(&s->last_in, c->tid, &y) && y > t_off && y < c->since)
		return false;
	for (size_t i = 0; i < nin; i++)
		if (in[i].tid == c->tid && in[i].t > t_off && in[i].t < c->since)
			return false;
	return true;
}

/* c's thread waits from its switch-out on in the window until its stint
 * `again` there, but its code ends with a TIP.PGD not known to be a
 * syscall's (pge_pick) */
static unsigned pge_waits(const struct pge_cand *c, bool again, uint64_t end, bool sys_end)
{
	return again && c->blocked && c->to < end && !sys_end ? 1 : 0;
}

static size_t pge_pick(struct dc_session *s, const struct pge_cand *c, size_t n,
		       const struct pge_in *in, size_t nin,
		       const uint64_t *ips, const bool *async, bool sys0, size_t m, int tail_async,
		       uint64_t after, uint32_t after_tid, uint64_t end, uint64_t lim,
		       uint64_t runs_to)
{
	bool ok[PGE_CANDS], owe[PGE_CANDS], dup[PGE_CANDS], have[PGE_CANDS], again[PGE_CANDS];
	uint64_t res[PGE_CANDS];
	unsigned g[PGE_MAX][PGE_CANDS], best_cost = UINT_MAX, skipped = 0;
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		/* (c[0], the thread on the CPU from the history, may be the
		 * last PGE's stint itself, its start told by the switch-out
		 * before the switch-in) */
		ok[i] = owns_trace(s, c[i].tid) && c[i].from < c[i].to && c[i].from < lim &&
			(c[i].since >= after || (!i && c[i].tid == after_tid));
		/* (the stint the last PGE went to has had one) */
		owe[i] = i && ok[i] && c[i].to < end && c[i].to <= lim && c[i].since > after;
		dup[i] = again[i] = false;
		for (size_t k = 0; k < i; k++)
			dup[i] |= c[k].tid == c[i].tid;
		for (size_t k = i + 1; k < n; k++)
			again[i] |= c[k].tid == c[i].tid;
		have[i] = pge_resume(s, &c[i], in, nin, &res[i]);
	}
	/* g[j][i]: the least cost of PGEs j+1.. with PGE j in stint i */
	for (size_t j = m; j-- > 0;) {
		for (size_t i = 0; i < n; i++) {
			unsigned v = UINT_MAX, gap = 0;

			if (j + 1 == m) {
				v = pge_waits(&c[i], again[i], end, tail_async == 0);
				for (size_t k = i + 1; k < n; k++)
					v += owe[k] ? PGE_BIG : 0;
				g[j][i] = v;
				continue;
			}
			if (ok[i] && g[j + 1][i] != UINT_MAX)   /* the next one in the same stint */
				v = g[j + 1][i] +
				    (async[j + 1] && c[i].preempted && c[i].to < end ? PGE_UNIT : 0);
			for (size_t k = i + 1; k < n; k++) {
				if (ok[k] && g[j + 1][k] != UINT_MAX) {
					unsigned w = gap + pge_ipc(have, res, dup, ips, j + 1, k) +
						     pge_waits(&c[i], c[k].tid == c[i].tid, end,
							       !async[j + 1]) +
						     g[j + 1][k];

					v = w < v ? w : v;
				}
				gap += owe[k] ? PGE_BIG : 0;
			}
			g[j][i] = v;
		}
	}
	for (size_t i = 0; i < n; i++) {
		/* (the PGE's code ran until past runs_to: a stint that ended
		 * before cannot be its) */
		if (ok[i] && g[0][i] != UINT_MAX && (c[i].to >= end || c[i].to > runs_to)) {
			unsigned v = skipped + pge_ipc(have, res, dup, ips, 0, i) + g[0][i] +
				     (!i && async[0] && c[0].preempted && c[0].to < end ? PGE_UNIT : 0) +
				     (i ? pge_waits(&c[0], c[i].tid == c[0].tid, end, sys0) : 0);

			if (v < best_cost) {
				best_cost = v;
				best = i;
			}
		}
		skipped += owe[i] ? PGE_BIG : 0;
	}
	return best;
}

static void pge_thread(struct dc_session *s, struct sq *sq, struct dc_ptq *q, uint64_t L,
		       uint32_t *pid, uint32_t *tid, uint64_t *since)
{
	struct pge_cand c[PGE_CANDS];
	struct pge_in in[PGE_INS];
	bool async[PGE_MAX], sys0;
	uint64_t per, after, ip = dc_ptq_ctx_enable(q, &per, &after, &async[0], &sys0), ips[PGE_MAX];
	uint64_t from, lim;
	size_t n, m, k, nin;
	unsigned mtcs;
	int tail_async;

	if (!per)
		return;
	from = after > L && after < L + per ? after : L;
	if (from != L) {
		/* the code after the PGE ran after the queue's last event: the
		 * thread on the CPU then (the one at L may have left since, and
		 * the records of that switch are applied, not read ahead) */
		uint32_t p, t;
		uint64_t since_t;

		if (!dc_sb_cpu_tid_since(s->sb, sq->cpu, after, &p, &t, &since_t)) {
			*pid = p;
			*tid = t;
			*since = since_t;
		}
	}
	c[0].pid = *pid;
	c[0].tid = *tid;
	c[0].from = from;
	c[0].to = L + per;
	c[0].since = *since;
	c[0].preempted = c[0].blocked = false;
	n = pge_peek(s, sq->cpu, L + per, c, in, &nin);
	/* (the interrupt before the PGE was no preemption that ends c[0]
	 * when the switch-out came more than a period after its TIP.PGD:
	 * the thread went on after it, and the PGE is its return) */
	if (async[0] && c[0].preempted && c[0].to > after + per)
		async[0] = false;
	ips[0] = ip;
	m = 1 + dc_ptq_ctx_next_pges(q, ips + 1, async + 1, PGE_MAX - 1, &mtcs, &lim, &tail_async);
	/* (the MTC's time not known: the period's end, where it is when the
	 * PGE's time was read at an MTC) */
	if (!lim || lim > L + per)
		lim = L + per;
	/* (and after the queue's last event: the stint before it held the
	 * CPU only from there) */
	for (size_t i = 0; i < n; i++)
		if (c[i].from < after)
			c[i].from = after;
	k = pge_pick(s, c, n, in, nin, ips, async, sys0, m, tail_async, sq->pge_since, sq->pge_tid,
		     L + per, lim, mtcs > 1 ? L + (mtcs - 1) * per : 0);
	if (k == SIZE_MAX)
		return;
	*pid = c[k].pid;
	*tid = c[k].tid;
	*since = c[k].since;
	sq->pge_since = c[k].since;
	sq->pge_tid = c[k].tid;
	dc_ptq_ctx_raise(q, c[k].from);
}

/* A thread's code goes on after a syscall's instruction (syscall and
 * sysenter: 2 bytes) or at the FUP of an interrupt (coarse clocks only). */
static int note_resume(struct dc_session *s, const struct dc_event *ev)
{
	if (ev->kind != DC_EV_TRACE_OFF || !ev->from_ip)
		return 0;
	if (ev->reason != DC_OFF_SYSCALL && ev->reason != DC_OFF_FAULT)
		return 0;
	if (dc_hash_put(&s->resume_t, ev->tid, ev->time_ns))
		return -ENOMEM;
	return dc_hash_put(&s->resume, ev->tid,
			   ev->reason == DC_OFF_SYSCALL ? ev->from_ip + 2 : ev->from_ip);
}

static int apply_sideband(struct dc_session *s, const struct dc_perf_record *rec, uint64_t t,
			  int (*cb)(const struct dc_event *, void *), void *ctx);

/* Does [lo, hi) overlap a mapping process p has now? */
static bool maps_overlap(const struct dc_sb_proc *p, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].t_end == UINT64_MAX && p->maps[i].start < hi && lo < p->maps[i].end)
			return true;
	return false;
}

/* A TIP.PGE on a coarse clock (no CYC) is placed at a lower bound of its
 * time, up to a period early (end: the bound above). The code after it
 * may have run after a mapping that the kernel stamped within that period
 * (the mmap whose return the PGE is): a library's code, called before the
 * next timing packet, would not be in the image, and its trace lost up to
 * the next PSB. So a mapping of the process stamped before end that adds
 * code where it had none is applied now, for the image and the symbols;
 * nothing ran there before it (a time placed before the record is the
 * clock's coarseness). One that overlaps a mapping replaces code that may
 * still have run: it and what follows wait for their time, as does
 * everything after an exec of the process or a fork of a child (which
 * copies the mappings). 0 or a negative errno code. */
static int early_maps(struct dc_session *s, uint32_t pid, uint64_t end)
{
	struct dc_sb_proc *p = dc_sb_proc(s->sb, pid);

	/* (only records whose order is final, up to rdue: one of a round not
	 * read yet may be older) */
	for (size_t i = s->rpos; p && i < s->rdue && s->round[i].time < end; i++) {
		struct sbrec *r = &s->round[i];
		struct dc_perf_record rec;
		char err[64];
		int ret;

		if (r->early || dc_perf_parse(s->pf, r->raw, r->size, &rec, err, sizeof(err)) < 0)
			continue;
		if ((rec.type == PERF_RECORD_COMM && rec.comm.exec && rec.comm.pid == pid) ||
		    (rec.type == PERF_RECORD_FORK && rec.parsed && rec.task.ppid == pid &&
		     rec.task.pid != pid))
			return 0;   /* (a child made before the mapping has not got it) */
		if ((rec.type != PERF_RECORD_MMAP && rec.type != PERF_RECORD_MMAP2) ||
		    !rec.parsed || rec.mmap.pid != pid || !dc_sb_user_code_map(&rec.mmap))
			continue;
		if (maps_overlap(p, rec.mmap.start, rec.mmap.start + rec.mmap.len))
			return 0;
		if ((ret = apply_sideband(s, &rec, r->time, NULL, NULL)) < 0)
			return ret;
		r->early = true;
		if (r->raw == s->next_raw)
			s->next_raw = NULL;
		s->st.early_maps++;
	}
	return 0;
}

/* The time of the first switch record of q's CPU in [lo, hi) (read ahead
 * in the sorted sideband, not applied) when it is thread tid's switch-out
 * (after its switch-in, if that is in there too); else 0. (lo: at least
 * the switch-in of the stint the last TIP.PGE went to, pge_thread.)
 * (ptdecode.c, piece_event: a TIP.PGD's bound above) */
static uint64_t q_switch_out(void *ctx, struct dc_ptq *q, uint32_t tid, uint64_t lo,
			     uint64_t hi, bool *none)
{
	struct dc_session *s = ctx;
	struct sq *sq = dc_ptq_user(q);

	*none = false;
	if (sq->cpu == UINT32_MAX)
		return 0;
	/* (not before the stint the last TIP.PGE went to: the time read may
	 * be older than it, and the thread's switch-out before it ended an
	 * earlier stint) */
	if (sq->pge_tid == tid && sq->pge_since > lo)
		lo = sq->pge_since;
	for (size_t i = s->rpos; i < s->rn && s->round[i].time < hi; i++) {
		struct dc_perf_record rec;
		char err[64];

		if (s->round[i].time < lo ||
		    dc_perf_parse(s->pf, s->round[i].raw, s->round[i].size, &rec, err,
				  sizeof(err)) < 0 ||
		    (rec.type != PERF_RECORD_SWITCH && rec.type != PERF_RECORD_SWITCH_CPU_WIDE) ||
		    !rec.sid.valid || !(rec.sid.sample_type & PERF_SAMPLE_CPU) ||
		    rec.sid.cpu != sq->cpu)
			continue;
		/* (its own switch-in, and the switch-out before it that
		 * names it, may come after the time read at the PGD) */
		if (rec.sw.out ? rec.sw.cpu_wide && rec.sw.next_prev_tid == tid && rec.sid.tid != tid
			       : rec.sid.tid == tid)
			continue;
		return rec.sw.out && rec.sid.tid == tid ? s->round[i].time : 0;
	}
	/* none there, if the sideband read holds all of [lo, hi) */
	*none = hi - 1 <= s->sb_whole;
	return 0;
}

static int q_context(void *ctx, struct dc_ptq *q, uint64_t time_ns, uint32_t *pid,
		     uint32_t *tid, struct pt_image **image, bool *first, uint64_t *since)
{
	struct dc_session *s = ctx;
	struct sq *sq = dc_ptq_user(q);
	uint64_t v, per, after;
	bool async, sys;
	int ret;

	*since = 0;
	/* (the PGE's bound above, before pge_thread raises its time) */
	if (!dc_ptq_ctx_enable(q, &per, &after, &async, &sys))
		per = 0;
	if (sq->cpu != UINT32_MAX) {
		if (dc_sb_cpu_tid_since(s->sb, sq->cpu, time_ns, pid, tid, since))
			*pid = *tid = UINT32_MAX;
		if (s->no_cyc)
			pge_thread(s, sq, q, time_ns, pid, tid, since);
		if (*tid == UINT32_MAX) {
			*pid = UINT32_MAX;
		} else if (s->per_task && !dc_hash_get(&s->traced, *tid, &v) && sq->ctx_tid) {
			*pid = sq->ctx_pid;
			*tid = sq->ctx_tid;
			*since = 0;
		}
		if (*tid != UINT32_MAX && *tid && (!s->per_task || dc_hash_get(&s->traced, *tid, &v))) {
			sq->ctx_pid = *pid;
			sq->ctx_tid = *tid;
		}
	} else {
		*tid = sq->tid;
		if (dc_sb_thread_pid(s->sb, sq->tid, pid))
			*pid = sq->tid;
	}
	*first = !dc_hash_get(&s->seen, *tid, &v);
	if (per && *pid != UINT32_MAX && (ret = early_maps(s, *pid, time_ns + per)))
		return ret;
	return image_for(s, *pid, image);
}

static const struct img *img_of(const struct dc_session *s, const struct pt_image *image)
{
	for (size_t i = 0; i < s->nimgs; i++)
		if (s->imgs[i]->image == image)
			return s->imgs[i];
	return NULL;
}

static uint64_t q_image_version(void *ctx, struct pt_image *image)
{
	const struct img *im = img_of(ctx, image);

	return im ? im->version : 0;
}

/* A copy of image (and of its [vdso]) that a worker thread can decode
 * with while this one rebuilds the original; kept until close. */
static struct pt_image *q_image_snapshot(void *ctx, struct pt_image *image)
{
	struct dc_session *s = ctx;
	const struct img *im = img_of(s, image);
	struct snap *sn, **n;

	n = realloc(s->snaps, (s->nsnaps + 1) * sizeof(*n));
	if (!n)
		return NULL;
	s->snaps = n;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return NULL;
	sn->image = pt_image_alloc(NULL);
	if (!sn->image || pt_image_copy(sn->image, image) < 0) {
		pt_image_free(sn->image);
		free(sn);
		return NULL;
	}
	sn->code = dc_wcode_new(s->isc);
	if (!sn->code || (im && dc_wcode_set(sn->code, im->secs, im->nsecs))) {
		dc_wcode_free(sn->code);
		pt_image_free(sn->image);
		free(sn);
		return NULL;
	}
	if (im) {
		sn->vdso = im->vdso;
		sn->vdso_start = im->vdso_start;
		sn->vdso_end = im->vdso_end;
	}
	pt_image_set_callback(sn->image, read_vdso_snap, sn);
	s->snaps[s->nsnaps++] = sn;
	return sn->image;
}

static struct dc_wcode *q_image_code(void *ctx, struct pt_image *image)
{
	struct dc_session *s = ctx;
	const struct img *im = img_of(s, image);

	if (im)
		return im->code;
	for (size_t i = 0; i < s->nsnaps; i++)
		if (s->snaps[i]->image == image)
			return s->snaps[i]->code;
	return NULL;
}

/* The queue's lookups are answered as of its image's mappings generation
 * (gen: the process's maps_gen when image_build last built it), not as
 * the merge has applied the mappings by now: a mapping record applied
 * before the queue's next context point (where image_for rebuilds the
 * image) changes nothing for code decoded with the image before it, and
 * a thread that decodes ahead could ask the same. */
static uint64_t q_func_range(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip, uint64_t *lo,
			     uint64_t *hi)
{
	struct dc_session *s = ctx;

	/* (a .cold part is a function of its own here: jumps into it and
	 * back are events, as in the truth log; the stack machine, given
	 * func_key, sees them within one function) */
	return dc_sym_func_part_gen(s->sym, pid, gen, ip, lo, hi);
}

static uint32_t q_inline_at(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip, uint64_t *lo,
			    uint64_t *hi)
{
	struct dc_session *s = ctx;

	return dc_sym_inline_at_gen(s->sym, pid, gen, ip, lo, hi);
}

static uint32_t q_image_gen(void *ctx, struct pt_image *image)
{
	struct dc_session *s = ctx;
	const struct img *im = s->last_img && s->last_img->image == image ? s->last_img :
			       img_of(s, image);

	return im ? im->maps_gen : 0;
}

static bool q_is_missing(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip)
{
	struct dc_session *s = ctx;
	struct dc_sb_map *m = dc_sb_map_at_gen(dc_sb_proc(s->sb, pid), gen, ip);

	if (!m)
		return false;
	if (m->dso < 0) {
		int id = dc_sym_dso(s->sym, m->path, m->build_id, m->build_id_size);

		if (id < 0)
			return false;
		m->dso = id;
	}
	return dc_sym_dso_file(s->sym, m->dso) == NULL;
}

static bool q_kernel_code(void *ctx, uint64_t ip, bool *named)
{
	struct dc_session *s = ctx;

	*named = dc_kernel_named(s->kern, ip);
	return dc_kernel_has_code(s->kern, ip);
}

/* ---- open: index the queues --------------------------------------------- */

static struct sq *queue_add(struct dc_session *s, uint32_t idx, uint32_t cpu, uint32_t tid)
{
	struct sq *n = realloc(s->qs, (s->nq + 1) * sizeof(*n));

	if (!n)
		return NULL;
	s->qs = n;
	memset(&s->qs[s->nq], 0, sizeof(s->qs[s->nq]));
	s->qs[s->nq].idx = idx;
	s->qs[s->nq].cpu = cpu;
	s->qs[s->nq].tid = tid;
	return &s->qs[s->nq++];
}

static struct sq *queue_get(struct dc_session *s, const struct dc_rec_auxtrace *a)
{
	uint64_t i;

	if (dc_hash_get(&s->q_by_idx, a->idx, &i))
		return &s->qs[i];
	if (dc_hash_put(&s->q_by_idx, a->idx, s->nq))
		return NULL;
	return queue_add(s, a->idx, a->cpu, a->tid);
}

static int queue_decoder(struct dc_session *s, struct sq *q)
{
	struct dc_ptq_config cfg = { 0 };
	struct dc_ptq_ops ops = {
		.context = q_context, .func_range = q_func_range, .is_missing = q_is_missing,
		.kernel_code = s->kern ? q_kernel_code : NULL,
		.inline_at = s->opts.inline_frames ? q_inline_at : NULL, .image_gen = q_image_gen,
		.image_snapshot = q_image_snapshot, .image_version = q_image_version,
		.image_code = q_image_code, .switch_out = q_switch_out,
	};

	cfg.idx = q->idx;
	cfg.decoder = s->opts.libipt_only ? DC_WDEC_LIBIPT : dc_wdec_mode_env();
	cfg.cpu = q->cpu == UINT32_MAX ? UINT16_MAX : (uint16_t)q->cpu;
	q->q = dc_ptq_new(&cfg, &ops, s);
	return q->q ? 0 : -ENOMEM;
}

/* A TRUNCATED AUX record: the queue it belongs to and where data was
 * lost (the record may come before the queue's first AUXTRACE, or the
 * queue may have none: all its data was lost). */
struct trunc {
	uint32_t cpu, tid;         /* UINT32_MAX: not in the record */
	uint64_t off;              /* data lost before this stream offset */
};

static struct sq *queue_of_trunc(struct dc_session *s, const struct trunc *t)
{
	for (size_t i = 0; i < s->nq; i++) {
		struct sq *q = &s->qs[i];

		if (q->cpu != UINT32_MAX ? t->cpu == q->cpu : t->tid == q->tid)
			return q;
	}
	return NULL;
}

/* Hand each TRUNCATED record to its queue; a CPU (per-thread mode: a
 * thread) whose data was all lost gets a queue without chunks, so the
 * threads it ran still get their LOST events. */
static int attach_truncs(struct dc_session *s, const struct trunc *t, size_t n)
{
	bool per_cpu = s->nq ? s->qs[0].cpu != UINT32_MAX : s->pt.per_cpu_mmaps != 0;

	for (size_t i = 0; i < n; i++) {
		struct sq *q = queue_of_trunc(s, &t[i]);

		if (!q) {
			uint32_t key = per_cpu ? t[i].cpu : t[i].tid;

			if (key == UINT32_MAX)
				continue;
			q = queue_add(s, key, per_cpu ? key : UINT32_MAX,
				      per_cpu ? UINT32_MAX : key);
			if (!q || queue_decoder(s, q))
				return -ENOMEM;
		}
		if (DC_VEC_PUSH_ROOM(q->breaks, q->nbreaks, q->cap_breaks, 16))
			return -ENOMEM;
		q->breaks[q->nbreaks++] = t[i].off;
	}
	return 0;
}

/* The cpu of the recording from HEADER_CPUID ("GenuineIntel,6,142,10"),
 * so libipt applies that model's errata. */
static void set_cpu(struct dc_session *s)
{
	uint64_t size;
	const char *d = dc_perf_feature(s->pf, HEADER_CPUID, &size);
	char buf[128];
	unsigned fam, model, step;

	if (!d || size < 8)
		return;
	/* a pf string: u32 len then text */
	snprintf(buf, sizeof(buf), "%.*s", (int)(size - 4 < 127 ? size - 4 : 127), d + 4);
	if (strncmp(buf, "GenuineIntel,", 13) ||
	    sscanf(buf + 13, "%u,%u,%u", &fam, &model, &step) != 3)
		return;
	s->ptcfg.cpu.vendor = pcv_intel;
	s->ptcfg.cpu.family = (uint16_t)fam;
	s->ptcfg.cpu.model = (uint8_t)model;
	s->ptcfg.cpu.stepping = (uint8_t)step;
	pt_cpu_errata(&s->ptcfg.errata, &s->ptcfg.cpu);
}

/* MTC period from the PT attr's config, as perf computes it. */
static void set_timing(struct dc_session *s)
{
	s->ptcfg.cpuid_0x15_eax = (uint32_t)s->pt.tsc_ctc_ratio_d;
	s->ptcfg.cpuid_0x15_ebx = (uint32_t)s->pt.tsc_ctc_ratio_n;
	s->ptcfg.nom_freq = (uint8_t)s->pt.max_non_turbo_ratio;
	for (size_t i = 0; i < dc_perf_nr_attrs(s->pf); i++) {
		const struct dc_perf_attr *a = dc_perf_attr_at(s->pf, i);

		if (a->attr.type != s->pt.pmu_type)
			continue;
		/* no CYC packets without the cyc bit (an unknown bit: maybe) */
		s->no_cyc = s->pt.cyc_bit && !(a->attr.config & s->pt.cyc_bit);
		s->mtc = s->pt.mtc_bit && (a->attr.config & s->pt.mtc_bit);
		if (s->pt.mtc_freq_bits) {
			uint64_t bits = s->pt.mtc_freq_bits;

			s->ptcfg.mtc_freq = (uint8_t)((a->attr.config & bits) >> __builtin_ctzll(bits));
			/* 4 bits in hardware; more is a damaged file (and an
			 * undefined shift below) */
			if (s->ptcfg.mtc_freq > 15)
				s->ptcfg.mtc_freq = 0;
		}
		break;
	}
	if (s->pt.tsc_ctc_ratio_d && s->pt.tsc_ctc_ratio_n) {
		uint64_t tsc = (UINT64_C(1) << s->ptcfg.mtc_freq) * s->pt.tsc_ctc_ratio_n /
			       s->pt.tsc_ctc_ratio_d;

		s->st.mtc_period_ns = dc_pt_tsc_to_ns(&s->pt, tsc) - dc_pt_tsc_to_ns(&s->pt, 0);
	}
}

struct index_state {
	struct trunc *truncs;
	size_t ntruncs;
	bool have_info;
};

/* A user code mapping, for the prescan (its build-id as the sideband
 * gives it). */
static int note_code_map(struct dc_session *s, const struct dc_rec_mmap *r)
{
	const uint8_t *bid = r->has_build_id ? r->build_id : NULL;
	size_t n = r->has_build_id ? r->build_id_size : 0;

	if (!n)
		bid = dc_sb_header_build_id(s->sb, r->filename, &n);
	return dc_prescan_add_map(s->prescan, r->start, r->start + r->len, r->filename, bid,
				  bid ? n : 0);
}

/* One record of the indexing pass. 0 or a negative errno code. */
static int index_record(struct dc_session *s, const struct dc_perf_record *rec,
			struct index_state *is)
{
	if (rec->type == PERF_RECORD_AUXTRACE_INFO && rec->parsed) {
		if (!rec->auxtrace_info.is_pt) {
			set_err(s, "%s: AUX data is not Intel PT (type %u)",
				dc_perf_path(s->pf), rec->auxtrace_info.type);
			return -EINVAL;
		}
		s->pt = rec->auxtrace_info.pt;
		is->have_info = true;
	} else if (rec->type == PERF_RECORD_AUXTRACE && rec->parsed) {
		const struct dc_rec_auxtrace *a = &rec->auxtrace;
		struct sq *q = queue_get(s, a);
		struct dc_ptq_chunk c;

		if (!q)
			return -ENOMEM;
		if (a->tid != UINT32_MAX && a->cpu != UINT32_MAX)
			s->per_task = true;
		if (q->have_chunk && a->offset < q->next_off)
			return 0;        /* overlapping (snapshot) data */
		c = (struct dc_ptq_chunk){
			.data = a->data, .size = a->size, .offset = a->offset,
			.lost_before = q->have_chunk && (a->offset != q->next_off),
		};
		if ((!q->q && queue_decoder(s, q)) || dc_ptq_add_chunk(q->q, &c) ||
		    (s->prescan && dc_prescan_add_chunk(s->prescan, (uint32_t)(q - s->qs), a->data,
							a->size, c.lost_before)))
			return -ENOMEM;
		q->have_chunk = true;
		q->next_off = a->offset + a->size;
		q->bytes += a->size;
		s->st.bytes_total += a->size;
	} else if (rec->type == PERF_RECORD_AUX && rec->parsed &&
		   (rec->aux.flags & PERF_AUX_FLAG_TRUNCATED)) {
		struct trunc *n = realloc(is->truncs, (is->ntruncs + 1) * sizeof(*n));
		bool sid = rec->sid.valid;

		if (!n)
			return -ENOMEM;
		is->truncs = n;
		n += is->ntruncs++;
		n->cpu = sid && (rec->sid.sample_type & PERF_SAMPLE_CPU) ? rec->sid.cpu : UINT32_MAX;
		n->tid = sid && (rec->sid.sample_type & PERF_SAMPLE_TID) ? rec->sid.tid : UINT32_MAX;
		n->off = rec->aux.aux_offset + rec->aux.aux_size;
	} else if ((rec->type == PERF_RECORD_MMAP || rec->type == PERF_RECORD_MMAP2) &&
		   rec->parsed && s->kern && !rec->mmap.data &&
		   (rec->mmap.cpumode == PERF_RECORD_MISC_KERNEL || rec->mmap.pid == UINT32_MAX)) {
		/* where the kernel and its modules ran */
		return dc_kernel_map(s->kern, rec->mmap.start, rec->mmap.len, rec->mmap.pgoff,
				     rec->mmap.filename);
	} else if ((rec->type == PERF_RECORD_MMAP || rec->type == PERF_RECORD_MMAP2) &&
		   rec->parsed && s->prescan && dc_sb_user_code_map(&rec->mmap)) {
		return note_code_map(s, &rec->mmap);
	}
	return 0;
}

static int index_file(struct dc_session *s)
{
	struct dc_perf_record rec;
	struct index_state is = { 0 };
	uint64_t dropped = 0;
	int ret, err = 0;

	while ((ret = dc_perf_next(s->pf, &rec)) > 0) {
		if ((err = index_record(s, &rec, &is)))
			break;
		/* reading each header maps its pages (and those around it):
		 * gone as the pass moves on, so memory stays flat */
		if (rec.offset - dropped >= (16u << 20)) {
			dc_perf_drop(s->pf, dropped, rec.offset);
			dropped = rec.offset;
		}
	}
	if (!err && ret < 0) {
		set_err(s, "%s", dc_perf_errmsg(s->pf));
		err = ret;
	}
	if (!err && s->opts.on_warning) {
		char note[512];

		if (dc_perf_unfinished(s->pf, note, sizeof(note)))
			s->opts.on_warning(s->opts.ctx, note);
	}
	if (!err && is.have_info)
		err = attach_truncs(s, is.truncs, is.ntruncs);
	free(is.truncs);
	if (err)
		return err;
	if (!is.have_info) {
		set_err(s, "%s: no Intel PT in this recording (no AUXTRACE_INFO record): record "
			"with 'ptflame record' or 'perf record -e intel_pt//u'", dc_perf_path(s->pf));
		return -EINVAL;
	}
	if (!s->nq) {
		set_err(s, "%s: the recording holds no trace (no AUXTRACE data): no traced thread "
			"ran in user space while it was recorded", dc_perf_path(s->pf));
		return -EINVAL;
	}
	return 0;
}

/* TRUNCATED AUX records, once all chunks are known: mark the chunk that
 * starts at a break (the queue's chunks were added in order), or a loss
 * at the queue's start or end. */
static void apply_breaks(struct dc_session *s)
{
	for (size_t i = 0; i < s->nq; i++) {
		struct sq *q = &s->qs[i];

		if (!q->nbreaks)
			continue;
		dc_ptq_mark_breaks(q->q, q->breaks, q->nbreaks);
	}
}

/* jobs - 1 worker threads (no more than there are queues for them) decode
 * ahead for the largest queues, up to AHEAD_PER_THREAD each, with a ring
 * of 2 MiB per queue while a thread has one or two of them, 1 MiB from
 * three on: at most 4 MiB per thread, so memory stays bounded however many
 * CPUs the trace has; the rest are decoded in this thread. With no thread
 * to be had, every queue is (a warning says so). (2 MiB rather than 1: a
 * quarter of the futex calls, and report -j 2 8-9 % faster on sqlite3 and
 * xz; 4 MiB gained nothing more: doc/DESIGN.md section 7.) */
static void ahead_queues(struct dc_session *s)
{
	size_t max = (size_t)(s->opts.jobs - 1) * AHEAD_PER_THREAD, n = 0;
	unsigned threads, ring;

	for (; n < max; n++) {
		struct dc_ptq_config *best = NULL;
		uint64_t most = 0;

		for (size_t i = 0; i < s->nq; i++) {
			struct dc_ptq_config *cfg = (struct dc_ptq_config *)dc_ptq_config(s->qs[i].q);

			if (!cfg->ahead && s->qs[i].bytes > most) {
				most = s->qs[i].bytes;
				best = cfg;
			}
		}
		if (!best)
			break;
		best->ahead = true;
		best->ahead_eager = s->opts.ahead_eager;
	}
	threads = n < s->opts.jobs - 1 ? (unsigned)n : s->opts.jobs - 1;
	if (threads && !(s->pool = dc_ptq_pool_new(threads)))
		sym_warn(s, "cannot start a decoding thread: decoding in one thread (as -j 1)");
	/* (the pool gives each queue to the thread with the fewest) */
	ring = threads && (n + threads - 1) / threads > 2 ? DC_PTQ_RING_DEFAULT / 2
							  : DC_PTQ_RING_DEFAULT;
	for (size_t i = 0; i < s->nq; i++) {
		struct dc_ptq_config *cfg = (struct dc_ptq_config *)dc_ptq_config(s->qs[i].q);

		cfg->pool = s->pool;
		cfg->ahead = cfg->ahead && s->pool;
		cfg->ahead_ring = ring;
	}
}

int dc_session_open(const char *path, const struct dc_session_opts *opts,
		    struct dc_session **out, char *err, size_t errlen)
{
	struct dc_session *s = calloc(1, sizeof(*s));
	struct dc_symbols_opts so = { 0 };
	int ret;

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (opts)
		s->opts = *opts;
	/* (a test's knob: every event through the heap, as before runs, to
	 * compare with: e2e-decode-jobs) */
	s->merge_step = getenv("PTFLAME_MERGE") && !strcmp(getenv("PTFLAME_MERGE"), "step");
	ret = dc_perf_open(path, &s->pf, err, errlen);
	if (ret) {
		free(s);
		return ret;
	}
	s->ptcfg.size = sizeof(s->ptcfg);
	so.symfs = s->opts.symfs;
	so.debug_dir = s->opts.debug_dir;
	so.buildid_dir = s->opts.buildid_dir;
	so.warn = sym_warn;
	so.warn_ctx = s;
	ret = dc_sb_new(&s->sb);
	if (!ret)
		ret = dc_sb_use_build_ids(s->sb, s->pf);
	if (!ret)
		ret = dc_symbols_new(&so, s->sb, &s->sym);
	if (!ret) {
		s->isc = pt_iscache_alloc(NULL);
		s->empty_image = pt_image_alloc(NULL);
		if (!s->isc || !s->empty_image)
			ret = -ENOMEM;
	}
	if (!ret && s->opts.jobs > 1 && s->opts.inline_frames &&
	    !(s->prescan = dc_prescan_new(PRESCAN_QUEUE, PRESCAN_TOTAL, true)))
		ret = -ENOMEM;
	if (!ret && (s->opts.vmlinux || s->opts.kcore_dir || s->opts.kallsyms)) {
		struct dc_kernel_opts ko = {
			.vmlinux = s->opts.vmlinux, .kcore_dir = s->opts.kcore_dir,
			.kallsyms = s->opts.kallsyms, .warn = sym_warn, .ctx = s,
		};

		ret = dc_kernel_new(&ko, &s->kern);
	}
	if (!ret)
		ret = index_file(s);
	if (!ret && s->kern) {
		struct dc_sym_kernel hook = { dc_kernel_range, dc_kernel_name, s->kern };

		ret = dc_kernel_load(s->kern, s->pf, s->sym, s->isc, s->err, sizeof(s->err));
		if (!ret)
			ret = dc_kernel_add_to_image(s->kern, s->empty_image, s->isc);
		dc_sym_set_kernel(s->sym, &hook);
	}
	if (ret) {
		snprintf(err, errlen, "%s", s->err[0] ? s->err : strerror(-ret));
		dc_session_close(s);
		return ret;
	}
	apply_breaks(s);
	set_cpu(s);
	set_timing(s);
	if (s->prescan)
		dc_prescan_config(s->prescan, &s->ptcfg);
	s->per_cpu = s->qs[0].cpu != UINT32_MAX;
	for (size_t i = 0; i < s->nq; i++) {
		struct dc_ptq_config *cfg = (struct dc_ptq_config *)dc_ptq_config(s->qs[i].q);

		cfg->pt = s->ptcfg;
		cfg->conv = s->pt;
		cfg->iscache = s->isc;
		cfg->syscall_numbers = s->opts.syscall_numbers;
		cfg->no_cyc = s->no_cyc;
		cfg->mtc = s->mtc;
		cfg->drop_chunks = true;
	}
	s->st.queues = s->nq;
	s->st.per_cpu = s->per_cpu;
	s->st.wake_attr = dc_perf_has_wakes(s->pf);
	s->wakes = s->st.wake_attr && s->opts.on_wake;
	if (s->opts.jobs > 1)
		ahead_queues(s);
	/* the index pass touched every record's header: the run reads what
	 * it needs again */
	dc_perf_drop(s->pf, 0, dc_perf_file_size(s->pf));
	ret = dc_perf_seek(s->pf, 0);
	if (ret) {
		snprintf(err, errlen, "%s", dc_perf_errmsg(s->pf));
		dc_session_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

void dc_session_close(struct dc_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nq; i++) {
		dc_ptq_free(s->qs[i].q);
		free(s->qs[i].breaks);
	}
	dc_ptq_pool_free(s->pool);   /* (after the queues it served) */
	free(s->qs);
	for (size_t i = 0; i < s->nimgs; i++) {
		pt_image_free(s->imgs[i]->image);
		dc_wcode_free(s->imgs[i]->code);
		free(s->imgs[i]->secs);
		free(s->imgs[i]);
	}
	free(s->imgs);
	for (size_t i = 0; i < s->nsnaps; i++) {
		pt_image_free(s->snaps[i]->image);
		dc_wcode_free(s->snaps[i]->code);
		free(s->snaps[i]);
	}
	free(s->snaps);
	pt_image_free(s->empty_image);
	pt_iscache_free(s->isc);
	dc_symbols_free(s->sym);       /* (its thread runs the prescan) */
	dc_prescan_free(s->prescan);
	dc_kernel_free(s->kern);
	dc_sb_free(s->sb);
	dc_hash_free(&s->q_by_idx);
	dc_hash_free(&s->img_by_pid);
	dc_hash_free(&s->seen);
	dc_hash_free(&s->resume);
	dc_hash_free(&s->resume_t);
	dc_hash_free(&s->last_in);
	dc_hash_free(&s->born);
	dc_hash_free(&s->traced);
	free(s->round);
	free(s->heap);
	dc_perf_close(s->pf);
	free(s);
}

/* ---- run ---------------------------------------------------------------- */

static bool is_sideband(const struct dc_session *s, uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return s->wakes;
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_ITRACE_START:
		return true;
	default:
		return false;
	}
}

static int cmp_sbrec(const void *a, const void *b)
{
	const struct sbrec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->late != y->late)
		return x->late < y->late ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Read the next FINISHED_ROUND's sideband records into the buffer and
 * sort what is pending. As perf's ordered events: records of a round may
 * be older than the previous round's last ones, but not older than the
 * round before that, so only records up to the newest time of the rounds
 * before the last one read are due (all of them at the end of the file). */
static int load_round(struct dc_session *s)
{
	struct dc_perf_record rec;
	uint64_t round_max = 0, from = UINT64_MAX, to = 0;
	int ret;

	/* drop what was delivered */
	if (s->rpos) {
		memmove(s->round, s->round + s->rpos, (s->rn - s->rpos) * sizeof(*s->round));
		s->rn -= s->rpos;
		s->rdue -= s->rpos;
		s->rpos = 0;
	}
	while (!s->sb_eof) {
		ret = dc_perf_next(s->pf, &rec);
		if (ret < 0) {
			set_err(s, "%s", dc_perf_errmsg(s->pf));
			return ret;
		}
		if (ret == 0) {
			s->sb_eof = true;
			break;
		}
		if (from == UINT64_MAX)
			from = rec.offset;
		to = rec.offset + rec.total_size;
		if (to - from >= (16u << 20)) {
			dc_perf_drop(s->pf, from, rec.offset);
			from = rec.offset;
		}
		if (rec.type == PERF_RECORD_FINISHED_ROUND)
			break;
		/* (every record's time: the recording's end is the last AUX
		 * record's, written when tracing was disabled) */
		if (rec.parsed && rec.sid.valid && (rec.sid.sample_type & PERF_SAMPLE_TIME) &&
		    rec.sid.time > s->st.end_ns)
			s->st.end_ns = rec.sid.time;
		if (!is_sideband(s, rec.type) || !rec.parsed)
			continue;
		if (DC_VEC_PUSH_ROOM(s->round, s->rn, s->rcap, 256))
			return -ENOMEM;
		s->round[s->rn].time = rec.sid.valid && (rec.sid.sample_type & PERF_SAMPLE_TIME) ?
				       rec.sid.time : 0;
		s->round[s->rn].late = rec.type != PERF_RECORD_SAMPLE;
		s->round[s->rn].raw = rec.raw;
		s->round[s->rn].size = rec.total_size;
		s->round[s->rn].seq = s->rseq++;
		s->round[s->rn].early = false;
		if (s->round[s->rn].time > round_max)
			round_max = s->round[s->rn].time;
		s->rn++;
	}
	/* Reading the headers mapped their pages (and the pages around):
	 * without FINISHED_ROUND records that is the whole file at once. The
	 * records kept are read again from the file when applied. */
	if (to > from && to - from >= (1u << 20))
		dc_perf_drop(s->pf, from, to);
	if (s->rn > 1)
		qsort(s->round, s->rn, sizeof(*s->round), cmp_sbrec);
	/* (what a later round brings is newer than the rounds before it) */
	s->sb_whole = s->sb_eof ? UINT64_MAX : s->rounds_max;
	if (s->sb_eof) {
		s->rdue = s->rn;
	} else {
		for (s->rdue = 0; s->rdue < s->rn && s->round[s->rdue].time <= s->rounds_max;)
			s->rdue++;
	}
	if (round_max > s->rounds_max)
		s->rounds_max = round_max;
	return 0;
}

/* Is the next sideband record due before a queue item at time t? Switch-
 * outs and exits go after queue items of the same time (the trace's
 * TIP.PGD comes first), everything else before. */
static int sb_next(struct dc_session *s, const struct sbrec **out,
		   const struct dc_perf_record **rec)
{
	int ret;

	for (;;) {
		while (s->rpos < s->rdue && s->round[s->rpos].early)
			s->rpos++;
		if (s->rpos < s->rdue)
			break;
		if (s->sb_eof && s->rpos >= s->rn)
			return 0;
		if ((ret = load_round(s)))
			return ret;
	}
	*out = &s->round[s->rpos];
	/* asked again before every queue event until it is due: parse once */
	if ((*out)->raw != s->next_raw) {
		ret = dc_perf_parse(s->pf, (*out)->raw, (*out)->size, &s->next_rec, s->err,
				    sizeof(s->err));
		if (ret < 0)
			return ret;
		s->next_raw = (*out)->raw;
		s->next_late = s->next_rec.type == PERF_RECORD_EXIT ||
			       ((s->next_rec.type == PERF_RECORD_SWITCH ||
				 s->next_rec.type == PERF_RECORD_SWITCH_CPU_WIDE) &&
				s->next_rec.sw.out);
	}
	*rec = &s->next_rec;   /* (not copied: 784 bytes, before every event) */
	return 1;
}

/* The first event of a thread a FORK made, before its first switch-in
 * was applied: without CYC a TIP.PGE's time is raised to the switch-in
 * that the sideband has ahead (pge_thread), so that record, of the same
 * time or older, is still pending: it is the thread's first run. */
static int first_in_ahead(struct dc_session *s, const struct dc_event *ev)
{
	uint64_t v;

	if (!s->opts.on_first_in || !dc_hash_get(&s->born, ev->tid, &v) || !v)
		return 0;
	if (dc_hash_put(&s->born, ev->tid, 0))
		return -ENOMEM;
	if (v != 1)
		return 0;   /* (its switch-in was applied) */
	for (size_t i = s->rpos; i < s->rn && s->round[i].time <= ev->time_ns; i++) {
		struct dc_perf_record rec;
		char err[64];

		if (dc_perf_parse(s->pf, s->round[i].raw, s->round[i].size, &rec, err,
				  sizeof(err)) < 0 ||
		    (rec.type != PERF_RECORD_SWITCH && rec.type != PERF_RECORD_SWITCH_CPU_WIDE) ||
		    !rec.sid.valid || rec.sw.out || rec.sid.tid != ev->tid)
			continue;
		s->opts.on_first_in(s->opts.ctx, rec.sid.pid, ev->tid, s->round[i].time);
		break;
	}
	return 0;
}

/* Another thread than the last event's: the first event of a thread is
 * counted (out of line: deliver is inlined into the loop over events). */
static __attribute__((noinline)) int thread_changed(struct dc_session *s,
						     const struct dc_event *ev)
{
	uint64_t v;
	int ret;

	if (dc_hash_get(&s->seen, ev->tid, &v))
		return 0;
	if ((ret = dc_hash_put(&s->seen, ev->tid, 1)) || (ret = first_in_ahead(s, ev)))
		return ret;
	s->st.threads++;
	return 0;
}

static inline __attribute__((always_inline)) int
deliver(struct dc_session *s, const struct dc_event *ev,
	int (*cb)(const struct dc_event *, void *), void *ctx)
{
	int ret;

	if ((!s->seen_any || ev->tid != s->seen_last) && (ret = thread_changed(s, ev)))
		return ret;
	if (s->no_cyc && (ret = note_resume(s, ev)))
		return ret;
	s->seen_any = true;
	s->seen_last = ev->tid;
	if (!s->st.first_ns || ev->time_ns < s->st.first_ns)
		s->st.first_ns = ev->time_ns;
	if (ev->time_ns > s->st.last_ns)
		s->st.last_ns = ev->time_ns;
	if (ev->time_ns > s->st.end_ns)
		s->st.end_ns = ev->time_ns;
	s->st.events++;
	return cb(ev, ctx);
}

static int apply_sideband(struct dc_session *s, const struct dc_perf_record *rec, uint64_t t,
			  int (*cb)(const struct dc_event *, void *), void *ctx)
{
	struct dc_event ev;
	uint64_t v;
	int eff = dc_sb_apply(s->sb, rec, t);

	if (eff < 0)
		return eff;
	if (s->per_task) {
		int ret = 0;

		/* (switch records may come from a CPU-wide event) */
		if (rec->sid.valid && (rec->sid.sample_type & PERF_SAMPLE_TID) && rec->sid.tid &&
		    rec->sid.tid != UINT32_MAX && rec->type != PERF_RECORD_SWITCH &&
		    rec->type != PERF_RECORD_SWITCH_CPU_WIDE && rec->type != PERF_RECORD_SAMPLE)
			ret = dc_hash_put(&s->traced, rec->sid.tid, 1);
		if (!ret && eff == DC_SB_FORK && rec->task.tid)
			ret = dc_hash_put(&s->traced, rec->task.tid, 1);
		if (ret)
			return ret;
	}
	s->st.sideband_records++;
	memset(&ev, 0, sizeof(ev));
	ev.time_ns = t;
	ev.pid = rec->sid.pid;
	ev.tid = rec->sid.tid;
	ev.cpu = rec->sid.valid && (rec->sid.sample_type & PERF_SAMPLE_CPU) ?
		 (uint16_t)rec->sid.cpu : UINT16_MAX;
	switch (eff) {
	case DC_SB_COMM:
		if (rec->comm.exec && s->opts.on_exec)
			s->opts.on_exec(s->opts.ctx, rec->comm.pid, rec->comm.tid, t);
		if (s->opts.on_comm)
			s->opts.on_comm(s->opts.ctx, rec->comm.pid, rec->comm.tid, rec->comm.comm, t);
		return 0;
	case DC_SB_FORK: {
		const char *comm = dc_sb_thread_comm(s->sb, rec->task.tid);

		/* (perf's synthesized FORKs of threads that existed before the
		 * recording have no time: no life began then) */
		if (s->opts.on_fork && t && rec->task.tid && rec->task.tid != rec->task.ptid &&
		    !dc_hash_get(&s->seen, rec->task.tid, &v)) {
			if (dc_hash_put(&s->born, rec->task.tid, 1))
				return -ENOMEM;
			s->opts.on_fork(s->opts.ctx, rec->task.ppid, rec->task.ptid,
					dc_sb_thread_comm(s->sb, rec->task.ptid), rec->task.pid,
					rec->task.tid, t);
		}
		if (comm && s->opts.on_comm)
			s->opts.on_comm(s->opts.ctx, rec->task.pid, rec->task.tid, comm, t);
		return 0;
	}
	case DC_SB_SWITCH_IN:
		if (s->no_cyc && rec->sid.valid && ev.tid && dc_hash_put(&s->last_in, ev.tid, t))
			return -ENOMEM;
		/* a new thread's first run (before its first event: also when
		 * that event is the loss below) */
		if (rec->sid.valid && ev.tid && s->opts.on_first_in &&
		    dc_hash_get(&s->born, ev.tid, &v) && v == 1) {
			bool seen = dc_hash_get(&s->seen, ev.tid, &v);

			if (dc_hash_put(&s->born, ev.tid, seen ? 0 : 2))
				return -ENOMEM;
			if (!seen)
				s->opts.on_first_in(s->opts.ctx, ev.pid, ev.tid, t);
		}
		/* switched in on a CPU whose trace is lost right now (per-
		 * thread mode: its own trace): its time from here is lost too
		 * (it may never show up in the trace) */
		if (rec->sid.valid && ev.tid) {
			for (size_t i = 0; i < s->nq; i++) {
				struct sq *q = &s->qs[i];
				uint8_t why;

				if (!(q->cpu == UINT32_MAX ? q->tid == ev.tid :
				      ev.cpu != UINT16_MAX && q->cpu == ev.cpu) ||
				    !dc_ptq_in_loss(q->q, t, &why))
					continue;
				ev.kind = DC_EV_LOST;
				ev.reason = why;
				dc_ptq_loss_taken(q->q, ev.tid);
				return deliver(s, &ev, cb, ctx);
			}
		}
		/* fall through */
	case DC_SB_SWITCH_OUT:
		/* a new thread that ran and left its CPU before its first event:
		 * none of its trace came */
		if (eff == DC_SB_SWITCH_OUT && rec->sid.valid && ev.tid && s->opts.on_first_out &&
		    dc_hash_get(&s->born, ev.tid, &v) && v == 2) {
			if (dc_hash_put(&s->born, ev.tid, 0))
				return -ENOMEM;
			if (!dc_hash_get(&s->seen, ev.tid, &v))
				s->opts.on_first_out(s->opts.ctx, ev.pid, ev.tid, t);
		}
		if (!rec->sid.valid || !ev.tid || !dc_hash_get(&s->seen, ev.tid, &v))
			return 0;
		if (eff == DC_SB_SWITCH_OUT) {
			ev.kind = DC_EV_TRACE_OFF;
			ev.reason = rec->sw.preempt ? DC_OFF_PREEMPT : DC_OFF_SWITCH;
		} else {
			ev.kind = DC_EV_TRACE_ON;
			ev.reason = DC_ON_SWITCH;
		}
		return deliver(s, &ev, cb, ctx);
	case DC_SB_WAKE: {
		struct dc_wake w;

		if (dc_perf_wake(rec, &w) > 0) {
			s->st.wakes++;
			s->opts.on_wake(s->opts.ctx, &w, dc_sb_thread_comm(s->sb, w.waker_tid));
		}
		return 0;
	}
	case DC_SB_BAD_WAKE:
		if (!s->st.wakes_bad++ && s->opts.on_warning) {
			char msg[160];

			snprintf(msg, sizeof(msg), "a wake record (%s sample) at time %" PRIu64
				 " has no readable woken task (RAW payload missing or short): "
				 "such records are skipped", rec->attr && rec->attr->name ?
				 rec->attr->name : "sched", t);
			s->opts.on_warning(s->opts.ctx, msg);
		}
		return 0;
	case DC_SB_EXIT:
		ev.pid = rec->task.pid;
		ev.tid = rec->task.tid;
		if (!ev.tid || !dc_hash_get(&s->seen, ev.tid, &v))
			return 0;
		ev.kind = DC_EV_TRACE_OFF;
		ev.reason = DC_OFF_END;
		return deliver(s, &ev, cb, ctx);
	default:
		return 0;
	}
}

static uint64_t hkey(const struct dc_session *s, size_t i)
{
	return s->heap[i].key;
}

static void heap_down(struct dc_session *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct hent t;

		if (l < s->nheap && hkey(s, l) < hkey(s, m))
			m = l;
		if (r < s->nheap && hkey(s, r) < hkey(s, m))
			m = r;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static void heap_up(struct dc_session *s, size_t i)
{
	while (i && hkey(s, i) < hkey(s, (i - 1) / 2)) {
		size_t p = (i - 1) / 2;
		struct hent t = s->heap[i];

		s->heap[i] = s->heap[p];
		s->heap[p] = t;
		i = p;
	}
}

static void progress(struct dc_session *s)
{
	uint64_t done = 0;

	for (size_t i = 0; i < s->nq; i++) {
		struct dc_ptq_stats st;

		dc_ptq_stats(s->qs[i].q, &st);
		done += st.bytes;
	}
	s->st.bytes_decoded = done;
	if (s->opts.on_progress && done >= s->progress_mark + (1u << 20)) {
		s->progress_mark = done;
		s->opts.on_progress(s->opts.ctx, done, s->st.bytes_total);
	}
}

/* How far back each drop reaches again: a page fault may map the whole
 * page-cache folio around the byte touched (up to a PMD, 2 MiB, on
 * kernels with large folios for files: seen on ext4 with 6.18), so
 * touching the next chunk maps again pages of the last one that were
 * dropped already. Without this, those pages stayed (about half of each
 * MiB of a 64 MiB trace at times: 34 MB peak RSS instead of 22). */
enum { DROP_AGAIN = 2 << 20 };

/* Memory stays flat: the file's pages below everything still to be read
 * (each queue's next chunk, the sideband records not yet applied) go
 * (dc_perf_drop; queues drop their own chunks as they go, too). */
static void drop_behind(struct dc_session *s)
{
	uint64_t low = dc_perf_file_size(s->pf);

	for (size_t i = 0; i < s->nq; i++) {
		const uint8_t *p = dc_ptq_pending_data(s->qs[i].q);

		if (p && dc_perf_offset_of(s->pf, p) < low)
			low = dc_perf_offset_of(s->pf, p);
	}
	for (size_t i = s->rpos; i < s->rn; i++)
		if (dc_perf_offset_of(s->pf, s->round[i].raw) < low)
			low = dc_perf_offset_of(s->pf, s->round[i].raw);
	low &= ~(uint64_t)((1u << 20) - 1);        /* in steps of 1 MiB */
	if (low > s->dropped_off) {
		uint64_t from = s->dropped_off > DROP_AGAIN ? s->dropped_off - DROP_AGAIN : 0;

		dc_perf_drop(s->pf, from, low);
		s->dropped_off = low;
	}
}

static void collect_stats(struct dc_session *s)
{
	uint64_t w, d, pb;
	bool done;

	s->st.blocks = s->st.lost_ovf = s->st.lost_truncated = s->st.lost_decode = 0;
	s->st.syncs = s->st.ahead_windows = s->st.ahead_deviations = s->st.ahead_prebuilt = 0;
	s->st.ahead_queues = 0;
	s->st.walk_windows = s->st.walk_bails = 0;
	for (size_t i = 0; i < s->nq; i++) {
		struct dc_ptq_stats st;

		dc_ptq_stats(s->qs[i].q, &st);
		s->st.blocks += st.blocks;
		s->st.lost_ovf += st.lost_ovf;
		s->st.lost_truncated += st.lost_truncated;
		s->st.lost_decode += st.lost_decode;
		s->st.syncs += st.syncs;
		s->st.walk_windows += st.walk_windows;
		s->st.walk_bails += st.walk_bails;
		dc_ptq_ahead_stats(s->qs[i].q, &w, &d, &pb);
		s->st.ahead_windows += w;
		s->st.ahead_queues += w > 0;
		s->st.ahead_deviations += d;
		s->st.ahead_prebuilt += pb;
	}
	s->st.lost = s->st.lost_ovf + s->st.lost_truncated + s->st.lost_decode;
	s->st.missing_binaries = dc_sym_nr_missing(s->sym);
	dc_sym_dwarf_preloaded(s->sym, &s->st.dwarf_asked, &s->st.dwarf_preloaded, &done);
	progress(s);
}

/* Every so many events: the progress, and the file's pages dropped behind. */
static inline void after_event(struct dc_session *s)
{
	if ((s->st.events & 0xfff) == 0)
		progress(s);
	if ((s->st.events & 0xffff) == 0)
		drop_behind(s);
}

/* After an event of the queue on top of the heap, q: its next events, as
 * long as they are ready and the loop below would take them next anyway:
 * each at a time no later than the other queues' heads (the heap keeps q
 * on top on a tie) and before the sideband record due next, sr (or at its
 * time, when that record goes after the events of its time). Nothing here
 * changes what the loop would find: the other queues and the sideband
 * wait, and q's fill would return at once. It leaves out most of the
 * loop's work per event (the fill's call, the head's time, the sideband
 * check, the heap): 4.6 % of report's instructions on the synthetic
 * benchmark trace. */
static int deliver_run(struct dc_session *s, struct dc_ptq *q, const struct sbrec *sr,
		       int (*cb)(const struct dc_event *ev, void *ctx), void *ctx)
{
	uint64_t le = UINT64_MAX;   /* the latest time q may give now */
	const struct dc_event *ev;
	int ret;

	for (size_t i = 1; i < 3 && i < s->nheap; i++)
		if (hkey(s, i) < le)
			le = hkey(s, i);
	if (sr) {
		if (!s->next_late && !sr->time)
			return 0;
		if ((s->next_late ? sr->time : sr->time - 1) < le)
			le = s->next_late ? sr->time : sr->time - 1;
	}
	while ((ev = dc_ptq_take_upto(q, le))) {
		if ((ret = deliver(s, ev, cb, ctx)))
			return ret;
		after_event(s);
	}
	return 0;
}

int dc_session_run(struct dc_session *s, int (*cb)(const struct dc_event *ev, void *ctx),
		   void *ctx)
{
	int ret = 0;

	if (s->ran)
		return -EINVAL;
	s->ran = true;
	s->heap = calloc(s->nq ? s->nq : 1, sizeof(*s->heap));
	if (!s->heap)
		return -ENOMEM;
	/* with threads to spare, the DWARF of the binaries the trace runs is
	 * opened while this thread decodes (decoder/prescan.h); only a head
	 * start: without it (no memory for it), this thread opens each file
	 * when it needs it, as with one thread */
	if (s->prescan)
		(void)dc_sym_preload_from(s->sym, dc_prescan_next, s->prescan);
	for (size_t i = 0; i < s->nq; i++) {
		dc_ptq_set_user(s->qs[i].q, &s->qs[i]);
		ret = dc_ptq_fill(s->qs[i].q);
		if (ret < 0)
			goto out;
		if (ret) {
			s->heap[s->nheap++] = (struct hent){ i, dc_ptq_head_time(s->qs[i].q) };
			heap_up(s, s->nheap - 1);
		}
	}
	for (;;) {
		const struct dc_perf_record *rec = NULL;
		const struct sbrec *sr = NULL;
		struct dc_ptq *q;
		const struct dc_event *ev;
		int have_sb = sb_next(s, &sr, &rec);

		if (have_sb < 0) {
			ret = have_sb;
			goto out;
		}
		if (have_sb) {
			if (!s->nheap || sr->time < hkey(s, 0) ||
			    (sr->time == hkey(s, 0) && !s->next_late)) {
				s->rpos++;
				ret = apply_sideband(s, rec, sr->time, cb, ctx);
				if (ret)
					goto out;
				/* history older than every queue's next point is
				 * never asked for again: memory stays flat */
				if ((s->st.sideband_records & 1023) == 0 && s->nheap)
					dc_sb_prune(s->sb, hkey(s, 0));
				continue;
			}
		} else if (!s->nheap) {
			break;
		}
		q = s->qs[s->heap[0].q].q;
		ret = dc_ptq_take(q, &ev);
		if (ret < 0)
			goto out;
		if (ret == 1 && ((ret = deliver(s, ev, cb, ctx)) ||
				 (!s->merge_step &&
				  (ret = deliver_run(s, q, have_sb ? sr : NULL, cb, ctx)))))
			goto out;
		ret = dc_ptq_fill(q);
		if (ret < 0)
			goto out;
		if (ret) {
			s->heap[0].key = dc_ptq_head_time(q);
			heap_down(s, 0);
		} else {
			s->heap[0] = s->heap[--s->nheap];
			heap_down(s, 0);
			progress(s);
		}
		after_event(s);
		ret = 0;
	}
out:
	collect_stats(s);
	if (ret < 0 && !s->err[0])
		set_err(s, "%s: decoding failed: %s", dc_perf_path(s->pf), strerror(-ret));
	return ret;
}

void dc_session_stats(const struct dc_session *s, struct dc_session_stats *st)
{
	*st = s->st;
}
