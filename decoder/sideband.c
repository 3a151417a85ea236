/* ptflame - decoder/sideband.c: threads, processes, mappings and the thread
 * of each CPU over time, from perf.data's non-AUX records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/perfdata.h"
#include "decoder/sideband.h"

struct sb_thread {
	uint32_t pid, tid;
	char comm[32];
};

/* One "from time on, cpu runs tid" entry. */
struct sb_cpu_ent {
	uint64_t time;
	uint32_t pid, tid;
};

struct sb_cpu {
	struct sb_cpu_ent *ents;
	size_t n, cap;
};

struct dc_sideband {
	struct dc_hash tid_idx;      /* tid -> index in threads */
	struct sb_thread *threads;
	size_t nthreads, cap_threads;
	struct dc_hash pid_idx;      /* pid -> index in procs */
	struct dc_sb_proc **procs;
	size_t nprocs, cap_procs;
	struct sb_cpu *cpus;
	size_t ncpus;
	uint64_t wakes, bad_wakes;
	const struct dc_perf_file *pf;  /* its HEADER_BUILD_ID table, or NULL */
	struct dc_hash bid_idx;         /* chained file name hash -> user entry's index */
};

int dc_sb_new(struct dc_sideband **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void proc_free(struct dc_sb_proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p);
}

void dc_sb_free(struct dc_sideband *sb)
{
	if (!sb)
		return;
	for (size_t i = 0; i < sb->nprocs; i++)
		proc_free(sb->procs[i]);
	free(sb->procs);
	free(sb->threads);
	for (size_t i = 0; i < sb->ncpus; i++)
		free(sb->cpus[i].ents);
	free(sb->cpus);
	dc_hash_free(&sb->tid_idx);
	dc_hash_free(&sb->pid_idx);
	dc_hash_free(&sb->bid_idx);
	free(sb);
}

/* ---- threads and processes ---------------------------------------------- */

static struct sb_thread *thread_get(const struct dc_sideband *sb, uint32_t tid)
{
	uint64_t i;

	return dc_hash_get(&sb->tid_idx, tid, &i) ? &sb->threads[i] : NULL;
}

int dc_sb_thread(struct dc_sideband *sb, uint32_t pid, uint32_t tid)
{
	struct sb_thread *t = thread_get(sb, tid);
	int ret;

	if (t) {
		t->pid = pid;   /* tid reuse by another process */
		return 0;
	}
	ret = dc_vec_reserve((void **)&sb->threads, &sb->cap_threads, sb->nthreads + 1,
		   sizeof(*sb->threads), 16);
	if (ret)
		return ret;
	ret = dc_hash_put(&sb->tid_idx, tid, sb->nthreads);
	if (ret)
		return ret;
	t = &sb->threads[sb->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return 0;
}

struct dc_sb_proc *dc_sb_proc(const struct dc_sideband *sb, uint32_t pid)
{
	uint64_t i;

	return dc_hash_get(&sb->pid_idx, pid, &i) ? sb->procs[i] : NULL;
}

static struct dc_sb_proc *proc_get(struct dc_sideband *sb, uint32_t pid)
{
	struct dc_sb_proc *p = dc_sb_proc(sb, pid);

	if (p)
		return p;
	if (dc_vec_reserve((void **)&sb->procs, &sb->cap_procs, sb->nprocs + 1, sizeof(*sb->procs), 16))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (dc_hash_put(&sb->pid_idx, pid, sb->nprocs)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	sb->procs[sb->nprocs++] = p;
	return p;
}

int dc_sb_comm(struct dc_sideband *sb, uint32_t pid, uint32_t tid, const char *comm)
{
	struct sb_thread *t;
	int ret = dc_sb_thread(sb, pid, tid);

	if (ret)
		return ret;
	/* (dc_sb_thread made it; the test keeps -O3's flow analysis from
	 * seeing a write through NULL) */
	if (!(t = thread_get(sb, tid)))
		return -ENOENT;
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = 0;
	return 0;
}

int dc_sb_thread_pid(const struct dc_sideband *sb, uint32_t tid, uint32_t *pid)
{
	const struct sb_thread *t = thread_get(sb, tid);

	if (!t)
		return -ENOENT;
	*pid = t->pid;
	return 0;
}

const char *dc_sb_thread_comm(const struct dc_sideband *sb, uint32_t tid)
{
	const struct sb_thread *t = thread_get(sb, tid);

	return t && t->comm[0] ? t->comm : NULL;
}

size_t dc_sb_nr_threads(const struct dc_sideband *sb) { return sb->nthreads; }
size_t dc_sb_nr_procs(const struct dc_sideband *sb) { return sb->nprocs; }

uint64_t dc_sb_nr_wakes(const struct dc_sideband *sb, uint64_t *bad)
{
	if (bad)
		*bad = sb->bad_wakes;
	return sb->wakes;
}

/* ---- mappings ----------------------------------------------------------- */

static int map_push(struct dc_sb_proc *p, const struct dc_sb_map *m, const char *path)
{
	struct dc_sb_map *n;
	int ret = dc_vec_reserve((void **)&p->maps, &p->cap, p->nmaps + 1, sizeof(*p->maps), 16);

	if (ret)
		return ret;
	n = &p->maps[p->nmaps];
	*n = *m;
	n->path = strdup(path ? path : "");
	if (!n->path)
		return -ENOMEM;
	n->dso = -1;
	n->isid = 0;
	p->nmaps++;
	p->maps_gen++;
	n->gen_start = p->maps_gen;
	n->gen_end = UINT32_MAX;
	return 0;
}

/* A new mapping [start, end) at time t ends every live mapping it
 * overlaps; the parts of those outside the range live on as new maps. */
static int map_punch(struct dc_sb_proc *p, uint64_t start, uint64_t end, uint64_t t)
{
	size_t n = p->nmaps;

	for (size_t i = 0; i < n; i++) {
		struct dc_sb_map old = p->maps[i];
		int ret;

		if (old.t_end != UINT64_MAX || old.end <= start || old.start >= end)
			continue;
		p->maps[i].t_end = t;
		p->maps_gen++;
		p->maps[i].gen_end = p->maps_gen;
		old.t_start = t;
		old.t_end = UINT64_MAX;
		if (old.start < start) {
			struct dc_sb_map lo = old;

			lo.end = start;
			if ((ret = map_push(p, &lo, old.path)))
				return ret;
		}
		if (old.end > end) {
			struct dc_sb_map hi = old;

			hi.pgoff += end - old.start;
			hi.start = end;
			if ((ret = map_push(p, &hi, old.path)))
				return ret;
		}
	}
	return 0;
}

/* Only user entries: `perf kvm` recordings list the guests' files too
 * (guest cpumodes), which are not the host's files at those paths. */
static bool user_build_id(const struct dc_build_id *b)
{
	return (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER && b->size &&
	       b->filename;
}

int dc_sb_use_build_ids(struct dc_sideband *sb, const struct dc_perf_file *pf)
{
	sb->pf = pf;
	for (size_t i = 0; pf && i < dc_perf_nr_build_ids(pf); i++) {
		const struct dc_build_id *b = dc_perf_build_id_at(pf, i);
		uint64_t k, idx;

		if (!user_build_id(b))
			continue;
		/* the chain's end is the free key: a path's first entry wins */
		k = dc_hash_chain_start(dc_strhash(b->filename, strlen(b->filename)));
		while (dc_hash_chain(&sb->bid_idx, &k, &idx))
			;
		if (dc_hash_put(&sb->bid_idx, k, i))
			return -ENOMEM;
	}
	return 0;
}

/* A user mapping's build-id from the file's HEADER_BUILD_ID table (perf and
 * ptflame record write it at the end; MMAP2 records carry one only when the
 * kernel was asked to), so that a binary that changed since, or another
 * machine's file at that path, is not taken for the recorded one. */
const uint8_t *dc_sb_header_build_id(const struct dc_sideband *sb, const char *path,
				     size_t *size)
{
	uint64_t k, idx;

	if (!sb->pf || !path)
		return NULL;
	k = dc_hash_chain_start(dc_strhash(path, strlen(path)));
	while (dc_hash_chain(&sb->bid_idx, &k, &idx)) {
		const struct dc_build_id *b = dc_perf_build_id_at(sb->pf, (size_t)idx);

		if (!strcmp(b->filename, path)) {
			*size = b->size;
			return b->id;
		}
	}
	return NULL;
}

bool dc_sb_user_code_map(const struct dc_rec_mmap *m)
{
	return !m->data && (!m->is_mmap2 || (m->prot & PROT_EXEC)) &&
	       m->cpumode != PERF_RECORD_MISC_KERNEL && m->pid != UINT32_MAX;
}

int dc_sb_mmap(struct dc_sideband *sb, uint32_t pid, uint64_t time, uint64_t start,
	       uint64_t len, uint64_t pgoff, const char *path,
	       const uint8_t *build_id, size_t build_id_size)
{
	struct dc_sb_proc *p = proc_get(sb, pid);
	struct dc_sb_map m;
	int ret;

	if (!p)
		return -ENOMEM;
	if (!len || start + len < start)
		return 0;
	ret = map_punch(p, start, start + len, time);
	if (ret)
		return ret;
	memset(&m, 0, sizeof(m));
	m.start = start;
	m.end = start + len;
	m.pgoff = pgoff;
	m.t_start = time;
	m.t_end = UINT64_MAX;
	if (!build_id_size)
		build_id = dc_sb_header_build_id(sb, path, &build_id_size);
	if (build_id && build_id_size) {
		m.build_id_size = build_id_size > 20 ? 20 : (uint8_t)build_id_size;
		memcpy(m.build_id, build_id, m.build_id_size);
	}
	return map_push(p, &m, path);
}

int dc_sb_exec(struct dc_sideband *sb, uint32_t pid, uint64_t time)
{
	struct dc_sb_proc *p = proc_get(sb, pid);

	if (!p)
		return -ENOMEM;
	p->exec_gen++;
	p->maps_gen++;
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].t_end == UINT64_MAX) {
			p->maps[i].t_end = time;
			p->maps[i].gen_end = p->maps_gen;
		}
	return 0;
}

int dc_sb_fork(struct dc_sideband *sb, uint32_t ppid, uint32_t pid, uint32_t tid,
	       uint64_t time)
{
	struct dc_sb_proc *parent, *child;
	int ret = dc_sb_thread(sb, pid, tid);

	if (ret || pid == ppid)
		return ret;
	/* A new process: it starts with a copy of the parent's mappings. */
	child = proc_get(sb, pid);
	parent = dc_sb_proc(sb, ppid);
	if (!child)
		return -ENOMEM;
	if (!parent || parent == child)
		return 0;
	for (size_t i = 0; i < parent->nmaps; i++) {
		struct dc_sb_map m = parent->maps[i];

		if (m.t_end != UINT64_MAX)
			continue;
		m.t_start = time;
		if ((ret = map_push(child, &m, parent->maps[i].path)))
			return ret;
		/* parent may have moved: map_push reallocs the child only */
	}
	return 0;
}

static bool map_live_at(const struct dc_sb_map *m, uint64_t time)
{
	if (time == DC_SB_NOW)
		return m->t_end == UINT64_MAX;
	return m->t_start <= time && time < m->t_end;
}

static bool map_live_in(const struct dc_sb_map *m, uint32_t gen)
{
	return m->gen_start <= gen && gen < m->gen_end;
}

static bool map_holds(const struct dc_sb_map *m, uint64_t ip, bool by_gen, uint64_t at)
{
	return ip >= m->start && ip < m->end &&
	       (by_gen ? map_live_in(m, (uint32_t)at) : map_live_at(m, at));
}

/* The mapping of ip in p live at time `at` (by_gen: in mappings generation
 * `at`): the last one found, if it still is, else the newest. Newest
 * first: a later mapping shadows an older one at the same time stamp
 * (synthesized records all carry time 0); a generation's mappings do not
 * overlap, so there the order only makes it quick. */
static struct dc_sb_map *map_newest(struct dc_sb_proc *p, uint64_t ip, bool by_gen, uint64_t at)
{
	if (!p || !p->nmaps)
		return NULL;
	if (p->last_hit < p->nmaps && map_holds(&p->maps[p->last_hit], ip, by_gen, at))
		return &p->maps[p->last_hit];
	for (size_t i = p->nmaps; i-- > 0;) {
		if (map_holds(&p->maps[i], ip, by_gen, at)) {
			p->last_hit = i;
			return &p->maps[i];
		}
	}
	return NULL;
}

struct dc_sb_map *dc_sb_map_find(const struct dc_sideband *sb, uint32_t pid,
				 uint64_t time, uint64_t ip)
{
	struct dc_sb_proc *p = dc_sb_proc(sb, pid);
	struct dc_sb_map *m = map_newest(p, ip, false, time);

	if (m || !p)
		return m;
	/* Before the first record of a mapping (time older than the
	 * synthesized state): answer with the oldest mapping of ip. */
	for (size_t i = 0; i < p->nmaps; i++) {
		m = &p->maps[i];
		if (ip >= m->start && ip < m->end && time < m->t_start)
			return m;
	}
	return NULL;
}

struct dc_sb_map *dc_sb_map_at_gen(struct dc_sb_proc *p, uint32_t gen, uint64_t ip)
{
	return map_newest(p, ip, true, gen);
}

void dc_sb_hold_gen(struct dc_sb_proc *p, uint32_t gen)
{
	p->gen_held = gen;
	p->held = true;
}

/* ---- CPUs --------------------------------------------------------------- */

int dc_sb_set_cpu(struct dc_sideband *sb, uint32_t cpu, uint64_t time,
		  uint32_t pid, uint32_t tid)
{
	struct sb_cpu *c;
	size_t i;
	int ret;

	if (cpu >= 65536)
		return 0;
	if (cpu >= sb->ncpus) {
		struct sb_cpu *n = realloc(sb->cpus, (cpu + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + sb->ncpus, 0, (cpu + 1 - sb->ncpus) * sizeof(*n));
		sb->cpus = n;
		sb->ncpus = cpu + 1;
	}
	c = &sb->cpus[cpu];
	ret = dc_vec_reserve((void **)&c->ents, &c->cap, c->n + 1, sizeof(*c->ents), 16);
	if (ret)
		return ret;
	/* Records arrive nearly sorted: insert from the back. */
	for (i = c->n; i > 0 && c->ents[i - 1].time > time; i--)
		;
	memmove(&c->ents[i + 1], &c->ents[i], (c->n - i) * sizeof(*c->ents));
	c->ents[i].time = time;
	c->ents[i].pid = pid;
	c->ents[i].tid = tid;
	c->n++;
	return 0;
}

int dc_sb_cpu_tid(const struct dc_sideband *sb, uint32_t cpu, uint64_t time,
		  uint32_t *pid, uint32_t *tid)
{
	uint64_t since;

	return dc_sb_cpu_tid_since(sb, cpu, time, pid, tid, &since);
}

int dc_sb_cpu_tid_since(const struct dc_sideband *sb, uint32_t cpu, uint64_t time,
			uint32_t *pid, uint32_t *tid, uint64_t *since)
{
	const struct sb_cpu *c;
	size_t lo;

	if (cpu >= sb->ncpus || !sb->cpus[cpu].n)
		return -ENOENT;
	c = &sb->cpus[cpu];
	/* last entry with ents.time <= time */
	lo = DC_VEC_UPPER(c->ents, c->n, time, time);
	if (!lo)
		return -ENOENT;
	*pid = c->ents[lo - 1].pid;
	*tid = c->ents[lo - 1].tid;
	/* the stint began at the first of the equal entries before it */
	while (lo > 1 && c->ents[lo - 2].tid == *tid)
		lo--;
	*since = c->ents[lo - 1].time;
	return 0;
}

void dc_sb_prune(struct dc_sideband *sb, uint64_t time)
{
	for (size_t i = 0; i < sb->ncpus; i++) {
		struct sb_cpu *c = &sb->cpus[i];
		size_t k = 0;

		/* keep the last entry at or before time */
		while (k + 1 < c->n && c->ents[k + 1].time <= time)
			k++;
		if (k) {
			memmove(c->ents, c->ents + k, (c->n - k) * sizeof(*c->ents));
			c->n -= k;
		}
	}
	for (size_t i = 0; i < sb->nprocs; i++) {
		struct dc_sb_proc *p = sb->procs[i];
		/* (the oldest generation lookups may still ask for) */
		uint32_t held = p->held ? p->gen_held : p->maps_gen;
		size_t w = 0;

		for (size_t r = 0; r < p->nmaps; r++) {
			if (p->maps[r].t_end <= time && p->maps[r].gen_end <= held) {
				free(p->maps[r].path);
				continue;
			}
			p->maps[w++] = p->maps[r];
		}
		/* only ended mappings go, and only those no generation
		 * still held has: the current ones, and so maps_gen (images,
		 * symbol caches), stay as they were */
		if (w != p->nmaps) {
			p->nmaps = w;
			p->last_hit = 0;
		}
	}
}

/* ---- records ------------------------------------------------------------ */

static bool sid_cpu(const struct dc_perf_record *rec, uint32_t *cpu)
{
	if (!rec->sid.valid || !(rec->sid.sample_type & PERF_SAMPLE_CPU))
		return false;
	*cpu = rec->sid.cpu;
	return true;
}

static bool sid_tid(const struct dc_perf_record *rec)
{
	return rec->sid.valid && (rec->sid.sample_type & PERF_SAMPLE_TID);
}

int dc_sb_apply(struct dc_sideband *sb, const struct dc_perf_record *rec, uint64_t time)
{
	uint32_t cpu;
	int ret;

	if (!rec->parsed)
		return DC_SB_NONE;
	switch (rec->type) {
	case PERF_RECORD_COMM:
		if (rec->comm.exec && (ret = dc_sb_exec(sb, rec->comm.pid, time)))
			return ret;
		ret = dc_sb_comm(sb, rec->comm.pid, rec->comm.tid, rec->comm.comm);
		return ret ? ret : DC_SB_COMM;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		const struct dc_rec_mmap *m = &rec->mmap;

		if (!dc_sb_user_code_map(m))
			return DC_SB_NONE;
		ret = dc_sb_mmap(sb, m->pid, time, m->start, m->len, m->pgoff, m->filename,
				 m->has_build_id ? m->build_id : NULL,
				 m->has_build_id ? m->build_id_size : 0);
		if (!ret && !thread_get(sb, m->tid))
			ret = dc_sb_thread(sb, m->pid, m->tid);
		return ret ? ret : DC_SB_MMAP;
	}
	case PERF_RECORD_FORK: {
		/* the child is named like its parent until it execs or renames */
		const struct sb_thread *parent = thread_get(sb, rec->task.ptid);
		char comm[sizeof(parent->comm)];

		comm[0] = 0;
		if (parent)
			memcpy(comm, parent->comm, sizeof(comm));
		ret = dc_sb_fork(sb, rec->task.ppid, rec->task.pid, rec->task.tid, time);
		if (!ret && comm[0])
			ret = dc_sb_comm(sb, rec->task.pid, rec->task.tid, comm);
		return ret ? ret : DC_SB_FORK;
	}
	case PERF_RECORD_EXIT:
		return DC_SB_EXIT;
	case PERF_RECORD_SAMPLE: {
		struct dc_wake w;

		ret = dc_perf_wake(rec, &w);
		if (ret > 0) {
			sb->wakes++;
			return DC_SB_WAKE;
		}
		if (ret < 0) {
			sb->bad_wakes++;
			return DC_SB_BAD_WAKE;
		}
		return DC_SB_NONE;
	}
	case PERF_RECORD_ITRACE_START:
		ret = dc_sb_thread(sb, rec->itrace_start.pid, rec->itrace_start.tid);
		if (!ret && sid_cpu(rec, &cpu))
			ret = dc_sb_set_cpu(sb, cpu, time, rec->itrace_start.pid,
					    rec->itrace_start.tid);
		return ret ? ret : DC_SB_ITRACE_START;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		const struct dc_rec_switch *s = &rec->sw;
		bool have_cpu = sid_cpu(rec, &cpu);

		ret = 0;
		if (s->out) {
			if (s->cpu_wide && have_cpu)
				ret = dc_sb_set_cpu(sb, cpu, time, s->next_prev_pid,
						    s->next_prev_tid);
			return ret ? ret : DC_SB_SWITCH_OUT;
		}
		if (have_cpu && sid_tid(rec))
			ret = dc_sb_set_cpu(sb, cpu, time, rec->sid.pid, rec->sid.tid);
		if (!ret && sid_tid(rec) && !thread_get(sb, rec->sid.tid) && rec->sid.tid)
			ret = dc_sb_thread(sb, rec->sid.pid, rec->sid.tid);
		return ret ? ret : DC_SB_SWITCH_IN;
	}
	default:
		return DC_SB_NONE;
	}
}
