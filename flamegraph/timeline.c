/* ptflame - flamegraph/timeline: report --timeline, Chrome trace-event JSON
 * of every call (see timeline.h for the format and the memory rule). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "flamegraph/flamegraph.h"

struct tl_chunk {
	uint64_t off, len;         /* in the spool                           */
};

struct tl_thread {
	uint32_t pid, tid;
	uint32_t nwakes;           /* its waits' wake arrows so far (ids)     */
	char *buf;                 /* events not spooled yet, each ",\n{...}" */
	size_t len, cap;
	struct tl_chunk *chunks;
	size_t nchunks, chunks_cap;
};

struct fg_timeline {
	FILE *spool;
	uint64_t spool_len;
	struct fg_timeline_options opt;
	pthread_mutex_t lock;
	struct dc_hash idx;        /* pid << 32 | tid -> index in th          */
	struct tl_thread *th;
	size_t n, cap;
	uint64_t events;
	int err;                   /* first failure: every later call fails   */
	bool done;
};

struct fg_timeline *fg_timeline_new(FILE *spool, const struct fg_timeline_options *opt)
{
	struct fg_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->spool = spool;
	if (opt)
		tl->opt = *opt;
	if (pthread_mutex_init(&tl->lock, NULL)) {
		free(tl);
		return NULL;
	}
	return tl;
}

void fg_timeline_free(struct fg_timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->n; i++) {
		free(tl->th[i].buf);
		free(tl->th[i].chunks);
	}
	free(tl->th);
	dc_hash_free(&tl->idx);
	pthread_mutex_destroy(&tl->lock);
	free(tl);
}

uint64_t fg_timeline_events(const struct fg_timeline *tl)
{
	return tl->events;
}

/* ---- text into a thread's buffer ---- */

static int put(struct tl_thread *t, const char *s, size_t n)
{
	if (dc_vec_reserve((void **)&t->buf, &t->cap, t->len + n, 1, 1024))
		return -ENOMEM;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return 0;
}

static int puts_(struct tl_thread *t, const char *s)
{
	return put(t, s, strlen(s));
}

/* A JSON string: quotes, backslashes and control characters escaped,
 * bytes above 0x7f as \u00XX (valid JSON whatever the symbol's bytes). */
static int put_json_str(struct tl_thread *t, const char *s)
{
	char esc[8];
	int ret = put(t, "\"", 1);

	for (; *s && !ret; s++) {
		unsigned char c = (unsigned char)*s;
		size_t run = 0;

		while (s[run] && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x80 &&
		       s[run] != '"' && s[run] != '\\')
			run++;
		if (run) {
			ret = put(t, s, run);
			s += run - 1;
			continue;
		}
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			ret = put(t, esc, 2);
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			ret = put(t, esc, 6);
		}
	}
	return ret ? ret : put(t, "\"", 1);
}

/* ns as microseconds with exactly 3 decimals: "12.345". */
static int put_us(struct tl_thread *t, uint64_t ns)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));

	return put(t, b, (size_t)n);
}

static const char *category(uint8_t kind)
{
	switch (kind) {
	case SR_NODE_KERNEL:    return "kernel";
	case SR_NODE_OFFCPU:    return "off-cpu";
	case SR_NODE_PREEMPT:   return "preempted";
	case SR_NODE_LOST:      return "lost";
	case SR_NODE_UNTRACED:  return "untraced";
	case SR_NODE_TRUNCATED: return "truncated";
	case SR_NODE_UNKNOWN:   return "unknown";
	default:                return "call";
	}
}

static struct tl_thread *thread_of(struct fg_timeline *tl, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid, i;
	struct tl_thread *t;

	if (dc_hash_get(&tl->idx, key, &i))
		return &tl->th[i];
	if (DC_VEC_PUSH_ROOM(tl->th, tl->n, tl->cap, 16))
		return NULL;
	if (dc_hash_put(&tl->idx, key, tl->n))
		return NULL;
	t = &tl->th[tl->n++];
	*t = (struct tl_thread){ .pid = pid, .tid = tid };
	return t;
}

/* The thread's buffer to the end of the spool. */
static int spill(struct fg_timeline *tl, struct tl_thread *t)
{
	if (!t->len)
		return 0;
	if (DC_VEC_PUSH_ROOM(t->chunks, t->nchunks, t->chunks_cap, 8))
		return -ENOMEM;
	if (fseeko(tl->spool, (off_t)tl->spool_len, SEEK_SET) ||
	    fwrite(t->buf, 1, t->len, tl->spool) != t->len)
		return -EIO;
	t->chunks[t->nchunks++] = (struct tl_chunk){ tl->spool_len, t->len };
	tl->spool_len += t->len;
	t->len = 0;
	return 0;
}

static bool wanted(const struct fg_timeline *tl, const struct sr_call *c)
{
	unsigned keep = tl->opt.keep_time;
	uint64_t kept = 0;

	if (!c->in_root || !c->selected || c->end_ns - c->start_ns < tl->opt.min_ns)
		return false;
	if (!keep || keep == SR_KEEP_ALL)
		return true;
	/* a span of a kept kind stays, even one of no time */
	switch (c->node->kind) {
	case SR_NODE_KERNEL:  if (keep & SR_KEEP(SR_TIME_KERNEL)) return true; break;
	case SR_NODE_OFFCPU:  if (keep & SR_KEEP(SR_TIME_OFFCPU)) return true; break;
	case SR_NODE_PREEMPT: if (keep & SR_KEEP(SR_TIME_PREEMPT)) return true; break;
	case SR_NODE_LOST:    if (keep & SR_KEEP(SR_TIME_LOST)) return true; break;
	default: break;
	}
	for (int k = 0; k < SR_TIME_NKINDS; k++)
		if (keep & SR_KEEP(k))
			kept += c->by[k];
	return kept > 0;
}

/* An [off-cpu] call that a wake ended: its args give the waker's tid (the
 * metadata names the thread) and the wake's time, and a flow arrow goes
 * from the waker's thread at the wake to the end of this span (Perfetto
 * and chrome://tracing draw it). Ids are the wakee's tid and its count of
 * arrows: the same at every -j. */
static int put_wake(struct tl_thread *t, const struct sr_call *c)
{
	uint64_t id = (uint64_t)c->tid << 30 | (t->nwakes++ & ((1u << 30) - 1));
	uint64_t at = c->end_ns > c->start_ns ? c->end_ns - 1 : c->end_ns;
	char b[160];
	int ret = puts_(t, ",\"args\":{");

	if (!ret && !c->complete)
		ret = puts_(t, "\"inferred\":1,");
	if (!ret) {
		snprintf(b, sizeof(b), "\"woken by tid\":%" PRIu32 ",\"wake ts\":", c->waker_tid);
		ret = puts_(t, b);
	}
	if (!ret)
		ret = put_us(t, c->wake_ns);
	if (!ret) {
		snprintf(b, sizeof(b), "}},\n{\"ph\":\"s\",\"name\":\"wake\",\"cat\":\"wake\","
			 "\"id\":%" PRIu64 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":",
			 id, c->waker_pid, c->waker_tid);
		ret = puts_(t, b);
	}
	if (!ret)
		ret = put_us(t, c->wake_ns);
	if (!ret) {
		snprintf(b, sizeof(b), "},\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"wake\","
			 "\"cat\":\"wake\",\"id\":%" PRIu64 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			 ",\"ts\":", id, c->pid, c->tid);
		ret = puts_(t, b);
	}
	if (!ret)
		ret = put_us(t, at);
	return ret ? ret : puts_(t, "}");
}

static int add_call(struct fg_timeline *tl, const struct sr_call *c)
{
	struct tl_thread *t = thread_of(tl, c->pid, c->tid);
	char b[96];
	int ret;

	if (!t)
		return -ENOMEM;
	ret = puts_(t, ",\n{\"ph\":\"X\",\"name\":");
	if (!ret)
		ret = put_json_str(t, c->name);
	if (!ret) {
		snprintf(b, sizeof(b), ",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":",
			 category(c->node->kind), c->pid, c->tid);
		ret = puts_(t, b);
	}
	if (!ret)
		ret = put_us(t, c->start_ns);
	if (!ret)
		ret = puts_(t, ",\"dur\":");
	if (!ret)
		ret = put_us(t, c->end_ns - c->start_ns);
	if (!ret)
		/* (a span cut by --time before its wake came has no arrow: it
		 * would point back in time, from outside the window) */
		ret = c->woken && c->wake_ns <= c->end_ns ? put_wake(t, c) :
		      puts_(t, c->complete ? "}" : ",\"args\":{\"inferred\":1}}");
	if (!ret && t->len >= FG_TIMELINE_BUF)
		ret = spill(tl, t);
	if (!ret)
		tl->events++;
	return ret;
}

int fg_timeline_call(void *ctx, const struct sr_call *c)
{
	struct fg_timeline *tl = ctx;
	int ret;

	if (!wanted(tl, c))
		return 0;
	pthread_mutex_lock(&tl->lock);
	ret = tl->err ? tl->err : tl->done ? -EINVAL : add_call(tl, c);
	if (ret && !tl->err)
		tl->err = ret;
	pthread_mutex_unlock(&tl->lock);
	return ret;
}

/* ---- the JSON ---- */

struct out_state {
	FILE *out;
	bool first;                /* the next event opens the array: no ",\n" */
};

static int emit(struct out_state *o, const char *s, size_t n)
{
	if (o->first && n >= 2) {
		s += 2;
		n -= 2;
		o->first = false;
	}
	return fwrite(s, 1, n, o->out) == n ? 0 : -EIO;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct tl_thread *x = *(struct tl_thread *const *)a, *y = *(struct tl_thread *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct sr_thread_stats *stats_of(const struct sr_cct *cct, uint32_t pid,
					      uint32_t tid)
{
	size_t n = cct ? sr_cct_nthreads(cct) : 0;
	const struct sr_thread_stats *any = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct sr_thread_stats *st = sr_cct_thread(cct, i);

		if (st->tid == tid) {
			if (st->pid == pid)
				return st;
			any = st;
		}
	}
	return any;
}

/* A metadata event into scratch t (emptied first). */
static int meta(struct out_state *o, struct tl_thread *t, const char *what, uint32_t pid,
		uint32_t tid, const char *name)
{
	char b[128];
	int ret;

	t->len = 0;
	snprintf(b, sizeof(b), ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32
		 ",\"tid\":%" PRIu32 ",\"args\":{\"name\":", what, pid, tid);
	ret = puts_(t, b);
	if (!ret)
		ret = put_json_str(t, name);
	if (!ret)
		ret = puts_(t, "}}");
	return ret ? ret : emit(o, t->buf, t->len);
}

static int copy_chunk(struct fg_timeline *tl, struct out_state *o, const struct tl_chunk *c)
{
	char buf[1 << 16];
	uint64_t done = 0;

	if (fseeko(tl->spool, (off_t)c->off, SEEK_SET))
		return -EIO;
	while (done < c->len) {
		size_t want = c->len - done < sizeof(buf) ? (size_t)(c->len - done) : sizeof(buf);
		int ret;

		if (fread(buf, 1, want, tl->spool) != want)
			return -EIO;
		/* a chunk starts with an event: only the very first skips ",\n" */
		ret = emit(o, buf, want);
		if (ret)
			return ret;
		done += want;
	}
	return 0;
}

static int write_json(struct fg_timeline *tl, FILE *out, const struct sr_cct *cct,
		      struct tl_thread **order, struct tl_thread *scratch)
{
	struct out_state o = { .out = out, .first = true };
	char name[64];
	int ret = 0;

	if (fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out) == EOF)
		return -EIO;
	for (size_t i = 0; i < tl->n; i++)
		order[i] = &tl->th[i];
	qsort(order, tl->n, sizeof(*order), cmp_thread);
	/* names: each process once (its main thread's comm, else its first
	 * thread's), each thread */
	for (size_t i = 0; i < tl->n && !ret; i++) {
		const struct tl_thread *t = order[i];
		const struct sr_thread_stats *st = stats_of(cct, t->pid, t->tid);
		const char *comm = st && st->comm && *st->comm ? st->comm : NULL;

		if (st && !st->selected)
			continue;
		if (!i || order[i - 1]->pid != t->pid) {
			const struct sr_thread_stats *ps = stats_of(cct, t->pid, t->pid);
			const char *pcomm = ps && ps->comm && *ps->comm ? ps->comm : comm;

			snprintf(name, sizeof(name), "pid %" PRIu32, t->pid);
			ret = meta(&o, scratch, "process_name", t->pid, t->pid, pcomm ? pcomm : name);
		}
		snprintf(name, sizeof(name), "tid %" PRIu32, t->tid);
		if (!ret)
			ret = meta(&o, scratch, "thread_name", t->pid, t->tid, comm ? comm : name);
	}
	for (size_t i = 0; i < tl->n && !ret; i++) {
		struct tl_thread *t = order[i];
		const struct sr_thread_stats *st = stats_of(cct, t->pid, t->tid);

		if (st && !st->selected)
			continue;
		for (size_t k = 0; k < t->nchunks && !ret; k++)
			ret = copy_chunk(tl, &o, &t->chunks[k]);
		if (!ret && t->len)
			ret = emit(&o, t->buf, t->len);
	}
	if (!ret && fputs("\n]}\n", out) == EOF)
		ret = -EIO;
	return ret;
}

int fg_timeline_write(struct fg_timeline *tl, FILE *out, const struct sr_cct *cct)
{
	struct tl_thread **order, scratch = { 0 };
	int ret;

	pthread_mutex_lock(&tl->lock);
	tl->done = true;
	ret = tl->err;
	pthread_mutex_unlock(&tl->lock);
	if (ret)
		return ret;
	order = malloc((tl->n ? tl->n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	ret = write_json(tl, out, cct, order, &scratch);
	free(order);
	free(scratch.buf);
	return ret;
}
