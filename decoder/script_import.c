/* ptflame - decoder/script_import: `perf script` text -> branch events.
 *
 * Each sample line becomes at most one branch event (plus a held-back trace
 * end, see below). The kind comes from perf's flags column when it was
 * printed. Without it (the default `perf script --itrace=cr`), perf's
 * samples are calls, returns, trace starts (ip 0) and trace ends (addr 0),
 * and we tell them apart the way the hardware trace would let us:
 *  - a return goes just after a call site this thread made (at most 15
 *    bytes, the longest x86 instruction, after its ip);
 *  - else a branch to a function entry (symbol offset 0, or no symbol) is a
 *    call, and anything else a return to a caller the trace never saw call.
 * Jumps are not printed then either; a branch taken from a function other
 * than the one the thread last called shows one happened (see reveal_jump).
 * A trace end without flags does not say why tracing stopped; it is held
 * back until the thread's next event: resuming 2 bytes after it (the length
 * of `syscall`/`sysenter`/`int 0x80`) means a syscall, anything else a fault
 * or interrupt; the end of the input means the thread's trace ended.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/script_import.h"
#include "decoder/symbols.h"

enum { NSITES = 256, QCAP = 8, MAX_CPU = 65536 };
#define SIGNAL_MARK UINT64_MAX   /* a site entry: async entry (signal handler) */

/* -------------------------------------------------------------- tables */

struct func {
	char *id;              /* sym '\0' dso '\0' (dso may be empty)        */
	size_t idlen;          /* bytes of id including both NULs             */
	char *display;
};

struct addr_ent {
	uint64_t ip;           /* never 0                                     */
	uint64_t start;
	uint32_t pid;
	uint32_t key;
};

enum last_kind { LAST_NONE = 0, LAST_EVENT, LAST_LOST };

struct thr {
	uint32_t tid, pid;
	uint64_t last_ns;
	uint64_t last_ev_ns;   /* time of its last event returned            */
	enum last_kind last;
	bool pending;          /* a flag-less trace end awaiting its reason   */
	bool pend_sigreturn;   /* ... in __restore_rt: rt_sigreturn          */
	bool pend_flags;       /* ... a "tr end" with no reason in its flags */
	struct dc_event pend;
	char *comm;
	bool comm_new;         /* comm changed, not yet given with an event   */
	uint64_t sites[NSITES];/* call sites, ring; top at (depth - 1) % NSITES */
	uint32_t callee[NSITES];/* function each of those calls went to (the
	                          one running there, once a jump was seen) */
	uint64_t depth;        /* calls not yet returned, as far as we know   */
	bool in_sigreturn;     /* a signal handler returned: the trampoline
	                          runs until the trace resumes              */
	uint64_t span_ns;      /* time of its last sample line, event or not:
	                          its span ends there                       */
};

struct qent {
	struct dc_event ev;
	const char *comm;
};

struct dc_script {
	FILE *in;
	char *buf;
	size_t bufcap;
	uint64_t lineno, bad_line;
	char msg[512];
	bool started, eof, flushed;
	bool targets;          /* a branch sample with "=> addr" was seen     */
	bool pid_seen;         /* lines carry pid/tid                         */
	char other_event[64];  /* event of the first sample that is no branch */
	bool jumps_shown;      /* flags of a jmp/jcc seen: jumps are printed */
	struct dc_script_stats st;

	struct func *funcs;    /* key k is funcs[k - 1]                       */
	size_t nfuncs, capfuncs;
	struct dc_hash ftab;   /* chain of (sym, dso)'s hash -> index in funcs */

	struct addr_ent *atab; /* what perf called an address, in pid          */
	size_t natab, atabcap;
	struct dc_hash atab_idx;/* chain of (pid, ip)'s hash -> index in atab  */

	struct thr *thr;
	size_t nthr, capthr;
	struct dc_hash tids;   /* tid -> index into thr                       */
	size_t flush_i;        /* next thread to flush at the end             */

	int64_t *cpu_tid;      /* last tid seen on each cpu, -1 none          */
	size_t ncpu;

	struct qent q[QCAP];
	unsigned qhead, qlen;
};

static bool text_eq(struct dc_script_text t, const char *s)
{
	return t.len == strlen(s) && !memcmp(t.s, s, t.len);
}

/* perf names no code by its FDE: an unnamed address stays "[unknown]
 * (dso)" here, where a perf.data report says "file+0xADDR"
 * (decoder/fde.c). */
static char *make_display(struct dc_script_text sym, struct dc_script_text dso)
{
	bool unknown = sym.len == 0 || text_eq(sym, "[unknown]");
	size_t n;
	char *d;

	if (!unknown) {
		d = malloc(sym.len + 1);
		if (d) {
			memcpy(d, sym.s, sym.len);
			d[sym.len] = '\0';
		}
		return d;
	}
	if (dso.len == 0 || text_eq(dso, "[unknown]"))
		return strdup("[unknown]");
	n = strlen("[unknown] ()") + dso.len + 1;
	d = malloc(n);
	if (d)
		snprintf(d, n, "[unknown] (%.*s)", (int)dso.len, dso.s);
	return d;
}

/* Key of (sym, dso); the dso only tells [unknown] apart and same-named
 * functions of different objects. A function's .cold part ("F.cold",
 * "F(int) [clone .cold]") is F's code: F's key (as the ELF symbolizer's).
 * 0 on ENOMEM. */
static uint32_t intern(struct dc_script *s, const struct dc_script_loc *loc)
{
	struct dc_script_text sym = loc->sym, dso = loc->has_dso ? loc->dso : (struct dc_script_text){ "", 0 };
	uint64_t k, i;
	struct func *f;
	size_t base;

	if (sym.len == 0)
		sym = (struct dc_script_text){ "[unknown]", 9 };
	if ((base = dc_sym_cold_base(sym.s, sym.len)))
		sym.len = base;
	/* the hash of the id, sym '\0' dso */
	k = dc_hash_chain_start(dc_fnv_end(dc_fnv(dc_fnv(dc_fnv(DC_FNV_BASIS, sym.s, sym.len), "", 1),
						      dso.s, dso.len)));
	while (dc_hash_chain(&s->ftab, &k, &i)) {
		f = &s->funcs[i];
		if (f->idlen == sym.len + dso.len + 2 && !memcmp(f->id, sym.s, sym.len) &&
		    !f->id[sym.len] && !memcmp(f->id + sym.len + 1, dso.s, dso.len))
			return (uint32_t)i + 1;
	}
	if (s->nfuncs == UINT32_MAX - 1)
		return 0;
	if (DC_VEC_PUSH_ROOM(s->funcs, s->nfuncs, s->capfuncs, 64))
		return 0;
	f = &s->funcs[s->nfuncs];
	f->idlen = sym.len + dso.len + 2;
	f->id = malloc(f->idlen);
	f->display = make_display(sym, dso);
	if (!f->id || !f->display) {
		free(f->id);
		free(f->display);
		return 0;
	}
	memcpy(f->id, sym.s, sym.len);
	f->id[sym.len] = '\0';
	memcpy(f->id + sym.len + 1, dso.s, dso.len);
	f->id[f->idlen - 1] = '\0';
	if (dc_hash_put(&s->ftab, k, s->nfuncs)) {
		free(f->id);
		free(f->display);
		return 0;
	}
	return (uint32_t)++s->nfuncs;
}

/* (dc_hash mixes it) */
static uint64_t addr_hash(uint32_t pid, uint64_t ip)
{
	return ip ^ (pid * UINT64_C(0x9e3779b97f4a7c15));
}

static struct addr_ent *addr_find(const struct dc_script *s, uint32_t pid, uint64_t ip)
{
	uint64_t k, i;

	if (!ip)
		return NULL;
	/* Without a pid column every thread would be its own process: one
	 * table for all keeps memory to the distinct addresses (a name is
	 * learnt from the very line whose event is symbolized next). */
	if (!s->pid_seen)
		pid = 0;
	k = dc_hash_chain_start(addr_hash(pid, ip));
	while (dc_hash_chain(&s->atab_idx, &k, &i))
		if (s->atab[i].ip == ip && s->atab[i].pid == pid)
			return &s->atab[i];
	return NULL;
}

/* Remember what perf called this address (the latest name wins: mappings
 * change with exec and dlopen). Returns the key, 0 on ENOMEM. */
static uint32_t learn(struct dc_script *s, uint32_t pid, const struct dc_script_loc *loc)
{
	uint32_t key = intern(s, loc);
	struct addr_ent *a;

	if (!key || !loc->ip)
		return key;
	if (!s->pid_seen)
		pid = 0;
	a = addr_find(s, pid, loc->ip);
	if (!a) {
		uint64_t k = dc_hash_chain_start(addr_hash(pid, loc->ip)), i;

		while (dc_hash_chain(&s->atab_idx, &k, &i))
			;
		if (DC_VEC_PUSH_ROOM(s->atab, s->natab, s->atabcap, 1024) ||
		    dc_hash_put(&s->atab_idx, k, s->natab))
			return 0;
		a = &s->atab[s->natab++];
		a->ip = loc->ip;
		a->pid = pid;
	}
	a->key = key;
	a->start = loc->has_off && loc->off <= loc->ip ? loc->ip - loc->off : 0;
	/* (in a .cold part: where F starts is not printed) */
	if (dc_sym_cold_base(loc->sym.s, loc->sym.len))
		a->start = 0;
	return key;
}

static struct thr *thr_get(struct dc_script *s, uint32_t tid, uint32_t pid)
{
	uint64_t i;

	if (dc_hash_get(&s->tids, tid, &i))
		return &s->thr[i];
	if (DC_VEC_PUSH_ROOM(s->thr, s->nthr, s->capthr, 16))
		return NULL;
	if (dc_hash_put(&s->tids, tid, s->nthr))
		return NULL;
	memset(&s->thr[s->nthr], 0, sizeof(s->thr[0]));
	s->thr[s->nthr].tid = tid;
	s->thr[s->nthr].pid = pid;
	return &s->thr[s->nthr++];
}

/* ------------------------------------------------------------ lifetime */

int dc_script_new(struct dc_script **out, FILE *in)
{
	struct dc_script *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->in = in;
	*out = s;
	return 0;
}

void dc_script_free(struct dc_script *s)
{
	if (!s)
		return;
	for (size_t k = 0; k < s->nfuncs; k++) {
		free(s->funcs[k].id);
		free(s->funcs[k].display);
	}
	for (size_t k = 0; k < s->nthr; k++)
		free(s->thr[k].comm);
	free(s->funcs);
	dc_hash_free(&s->ftab);
	free(s->atab);
	dc_hash_free(&s->atab_idx);
	free(s->thr);
	dc_hash_free(&s->tids);
	free(s->cpu_tid);
	free(s->buf);
	free(s);
}

uint64_t dc_script_bad_line(const struct dc_script *s)
{
	return s->bad_line;
}

const char *dc_script_errmsg(struct dc_script *s, int err)
{
	switch (err) {
	case -EBADMSG:
		snprintf(s->msg, sizeof(s->msg), "line %llu is not 'perf script' output",
			 (unsigned long long)s->bad_line);
		break;
	case -ENOMSG:
		if (s->st.no_target)
			snprintf(s->msg, sizeof(s->msg),
				 "'perf script' text without branch targets (%llu of %llu samples "
				 "lack '=> addr'): use 'perf script --itrace=cr' with its default "
				 "fields, or keep ip and add -F+addr",
				 (unsigned long long)s->st.no_target,
				 (unsigned long long)(s->st.samples + s->st.other));
		else if (s->st.other)
			snprintf(s->msg, sizeof(s->msg),
				 "'perf script' text of %llu samples%s%s%s, none of them a branch "
				 "('=> addr'): ptflame needs an Intel PT trace's branches, "
				 "'perf script --itrace=cr' of a 'perf record -e intel_pt//u' recording",
				 (unsigned long long)s->st.other, s->other_event[0] ? " of '" : "",
				 s->other_event, s->other_event[0] ? "'" : "");
		else
			snprintf(s->msg, sizeof(s->msg),
				 "no 'perf script' samples in %llu lines: ptflame needs the text of "
				 "'perf script --itrace=cr' of an Intel PT recording",
				 (unsigned long long)s->lineno);
		break;
	case -EIO:
		snprintf(s->msg, sizeof(s->msg), "read error after line %llu",
			 (unsigned long long)s->lineno);
		break;
	default:
		snprintf(s->msg, sizeof(s->msg), "%s", strerror(-err));
	}
	return s->msg;
}

void dc_script_get_stats(const struct dc_script *s, struct dc_script_stats *st)
{
	*st = s->st;
	st->names = s->nfuncs;
}

/* ---------------------------------------------------------- symbolizer */

uint64_t dc_script_func_key(void *ctx, uint32_t pid, uint64_t ip)
{
	struct dc_script *s = ctx;
	const struct addr_ent *a = addr_find(s, pid, ip);
	struct dc_script_loc unk = { .ip = 0, .sym = { "[unknown]", 9 } };

	if (a)
		return a->key;
	/* An address no line named (cannot happen for our own events). */
	return intern(s, &unk);
}

const char *dc_script_name(void *ctx, uint64_t key)
{
	const struct dc_script *s = ctx;

	if (key == 0 || key > s->nfuncs)
		return NULL;
	return s->funcs[key - 1].display;
}

uint64_t dc_script_func_start(void *ctx, uint32_t pid, uint64_t ip)
{
	const struct addr_ent *a = addr_find(ctx, pid, ip);

	return a ? a->start : 0;
}

/* -------------------------------------------------------------- events */

static void qpush(struct dc_script *s, const struct dc_event *ev, const char *comm)
{
	struct qent *e = &s->q[(s->qhead + s->qlen++) % QCAP];

	e->ev = *ev;
	e->comm = comm;
}

/* Queue an event; a new name of its thread goes with it. */
static void emit(struct dc_script *s, struct thr *t, const struct dc_event *ev)
{
	qpush(s, ev, t->comm_new ? t->comm : NULL);
	t->comm_new = false;
	t->last_ev_ns = ev->time_ns;
	t->last = ev->kind == DC_EV_LOST ? LAST_LOST : LAST_EVENT;
}

/* Without flags: is the branch to `to` a return to a call site we saw?
 * Pops down to that site (a longjmp may have dropped frames above it). */
static bool pop_site(struct thr *t, uint64_t to)
{
	uint64_t n = t->depth < NSITES ? t->depth : NSITES;

	for (uint64_t k = 1; k <= n; k++) {
		uint64_t site = t->sites[(t->depth - k) % NSITES];

		if (site != SIGNAL_MARK && to > site && to - site <= 15) {
			t->depth -= k;
			return true;
		}
	}
	return false;
}

static void push_site(struct thr *t, uint64_t from, uint32_t callee)
{
	t->sites[t->depth % NSITES] = from;
	t->callee[t->depth % NSITES] = callee;
	t->depth++;
}

static bool top_is_mark(const struct thr *t)
{
	return t->depth && t->sites[(t->depth - 1) % NSITES] == SIGNAL_MARK;
}

static bool sym_is(const struct dc_script_loc *loc, const char *name)
{
	return loc->sym.len == strlen(name) && !memcmp(loc->sym.s, name, loc->sym.len);
}

/* A user-to-user branch without flags: call or return? */
static bool is_return(struct thr *t, const struct dc_script_line *l)
{
	bool entry = (l->to.has_off && l->to.off == 0) || l->to.sym.len == 0 ||
		     sym_is(&l->to, "[unknown]");

	if (pop_site(t, l->to.ip))
		return true;
	if (top_is_mark(t)) {
		/* In a signal handler: it returns to the sigreturn trampoline
		 * (glibc's and musl's __restore_rt), or somewhere that is no
		 * function entry; anything else is a call it makes. */
		if (!entry || sym_is(&l->to, "__restore_rt")) {
			t->depth--;
			t->in_sigreturn = true;
			return true;
		}
		return false;
	}
	/* perf 6.1 names the PLT slots of .plt.got / .plt.sec after the
	 * function before them, "_init+0x30": calls, not returns into _init. */
	if (sym_is(&l->to, "_init") && l->to.off >= 0x10)
		return false;
	/* No outstanding call we know of: a return to a caller from before
	 * the trace, unless it goes to a function entry. With calls
	 * outstanding, a return would have matched one of them, so this is a
	 * call to a place that is no entry by its name; past NSITES we cannot
	 * tell and go by the name. */
	if (t->depth == 0 || t->depth > NSITES)
		return !entry;
	return false;
}

/* Settle a held-back trace end now that the thread's next event is known
 * (next NULL: the input ended). */
static void settle(struct dc_script *s, struct thr *t, const struct dc_event *next)
{
	struct dc_event ev;

	if (!t->pending)
		return;
	t->pending = false;
	ev = t->pend;
	if (!next) {
		ev.reason = DC_OFF_END;
	} else if (t->pend_sigreturn) {
		ev.reason = DC_OFF_SYSCALL;     /* back to where the signal hit */
		ev.sysno = 15;                  /* rt_sigreturn */
	} else if (next->kind == DC_EV_TRACE_ON && next->to_ip == ev.from_ip + 2) {
		ev.reason = DC_OFF_SYSCALL;
		ev.sysno = UINT32_MAX;
	} else if (next->kind == DC_EV_TRACE_ON && next->to_ip == ev.from_ip) {
		ev.reason = DC_OFF_FAULT;       /* resumed where it struck */
	} else if (t->pend_flags) {
		/* The flags said "tr end" alone and the thread resumed
		 * elsewhere: nothing says what ran meanwhile. */
		ev.reason = DC_OFF_UNTRACED;
		if (next->kind == DC_EV_TRACE_ON)
			push_site(t, SIGNAL_MARK, 0);
	} else {
		ev.reason = DC_OFF_FAULT;
		/* Resuming elsewhere: the kernel entered a signal handler,
		 * whose return will match no call site. */
		if (next->kind == DC_EV_TRACE_ON && next->to_ip != ev.from_ip)
			push_site(t, SIGNAL_MARK, 0);
	}
	emit(s, t, &ev);
}

static uint8_t on_reason(const struct thr *t)
{
	if (t->last == LAST_NONE)
		return DC_ON_START;
	return t->last == LAST_LOST ? DC_ON_SYNC : DC_ON_RESUME;
}

/* Without flags, jumps are not printed, but a branch taken from a
 * function other than the one the thread last called shows one happened:
 * a PLT stub went on to its target, a tail call, or a longjmp down to a
 * frame further down. Returns true with *jump set when so. */
static bool reveal_jump(struct thr *t, const struct dc_script_line *l, uint32_t kfrom,
			struct dc_event *jump)
{
	uint64_t n = t->depth < NSITES ? t->depth : NSITES;

	if (!t->depth || top_is_mark(t) || t->in_sigreturn ||
	    t->callee[(t->depth - 1) % NSITES] == kfrom)
		return false;
	jump->kind = DC_EV_JUMP;
	jump->from_ip = 0;
	/* it happened after the thread's last event, when is not known */
	jump->time_ns = t->last_ev_ns;
	for (uint64_t k = 2; k <= n; k++) {
		uint64_t i = (t->depth - k) % NSITES;

		if (t->sites[i] == SIGNAL_MARK)
			break;
		if (t->callee[i] == kfrom) {   /* down to a caller: longjmp */
			t->depth -= k - 1;
			jump->to_ip = l->from.ip;
			return true;
		}
	}
	/* to a new function: its entry, as a tail call or PLT jump goes */
	t->callee[(t->depth - 1) % NSITES] = kfrom;
	jump->to_ip = l->from.has_off && l->from.off <= l->from.ip ? l->from.ip - l->from.off
								: l->from.ip;
	return true;
}

/* Decide the event for a flag-less sample. Returns false to ignore it; a
 * trace end is returned with reason 0 (held back by the caller). *pre gets
 * a jump that must come before it (pre->kind 0: none). */
static bool classify_noflags(struct thr *t, const struct dc_script_line *l,
			     uint32_t kfrom, uint32_t kto, struct dc_event *ev,
			     struct dc_event *pre)
{
	uint64_t from = l->from.ip, to = l->to.ip;

	if (!from && !to)
		return false;
	if (!from || (dc_ip_is_kernel(from) && !dc_ip_is_kernel(to))) {
		if (dc_ip_is_kernel(to))
			return false;
		ev->kind = DC_EV_TRACE_ON;
		ev->from_ip = 0;
		ev->reason = from ? DC_ON_RESUME : on_reason(t);
		t->in_sigreturn = false;
		return true;
	}
	if (dc_ip_is_kernel(from))
		return false;           /* kernel to kernel */
	if (reveal_jump(t, l, kfrom, pre)) {
		pre->pid = ev->pid;
		pre->tid = ev->tid;
		pre->cpu = ev->cpu;
	}
	if (!to || dc_ip_is_kernel(to)) {
		ev->kind = DC_EV_TRACE_OFF;
		ev->to_ip = 0;
		ev->reason = 0;
		return true;
	}
	if (kfrom == kto && !(l->to.has_off && l->to.off == 0)) {
		/* Within one function: a recursive call's return, or (with
		 * --itrace=b but no flags column) a jump that is no event. */
		if (!pop_site(t, to)) {
			if (!pre->kind)
				return false;
			*ev = *pre;     /* only the jump it revealed */
			pre->kind = 0;
			return true;
		}
		ev->kind = DC_EV_RETURN;
	} else if (is_return(t, l)) {
		ev->kind = DC_EV_RETURN;
	} else {
		ev->kind = DC_EV_CALL;
		push_site(t, from, kto);
	}
	return true;
}

static bool classify_flags(struct thr *t, const struct dc_script_line *l,
			   uint32_t kfrom, uint32_t kto, struct dc_event *ev)
{
	uint32_t f = l->flags;
	uint64_t from = l->from.ip, to = l->to.ip;
	bool kf = dc_ip_is_kernel(from), kt = dc_ip_is_kernel(to);

	if (f & DC_SF_TRACE_END) {
		if (kf || !from)
			return false;
		ev->kind = DC_EV_TRACE_OFF;
		ev->to_ip = 0;
		if (f & DC_SF_SYSCALLRET) {
			ev->reason = DC_OFF_SYSCALL;
			ev->sysno = UINT32_MAX;
		} else if (f & (DC_SF_ASYNC | DC_SF_INTERRUPT)) {
			ev->reason = DC_OFF_FAULT;
		} else {
			ev->reason = 0;     /* why shows where it resumes */
		}
		return true;
	}
	if (f & DC_SF_TRACE_BEGIN) {
		if (!to)
			return false;
		ev->kind = DC_EV_TRACE_ON;  /* in the kernel too: its frames */
		ev->from_ip = 0;
		ev->reason = on_reason(t);
		return true;
	}
	if (f & (DC_SF_SYSCALLRET | DC_SF_INTERRUPT | DC_SF_ASYNC)) {
		/* With kernel tracing: user -> kernel ends the user trace,
		 * kernel -> user resumes it; kernel-only branches do nothing. */
		if (!kf && from && (kt || !to)) {
			ev->kind = DC_EV_TRACE_OFF;     /* to_ip: kernel entry */
			if (f & DC_SF_SYSCALLRET) {
				ev->reason = DC_OFF_SYSCALL;
				ev->sysno = UINT32_MAX;
			} else {
				ev->reason = DC_OFF_FAULT;
			}
			return true;
		}
		if (kf && to && !kt) {
			ev->kind = DC_EV_TRACE_ON;
			ev->from_ip = 0;
			ev->reason = DC_ON_RESUME;
			return true;
		}
		/* inside the kernel: an interrupt nests like a call, its iret
		 * returns */
		if (kf && kt) {
			ev->kind = (f & (DC_SF_CALL | DC_SF_ASYNC | DC_SF_INTERRUPT)) &&
				   !(f & DC_SF_RETURN) ? DC_EV_CALL : DC_EV_RETURN;
			return true;
		}
		return false;
	}
	/* kernel to kernel: the kernel's own calls, returns and jumps (frames
	 * under [kernel]); user to kernel or back without such flags: none */
	if ((f & (DC_SF_TX_ABORT | DC_SF_VMENTRY | DC_SF_VMEXIT | DC_SF_BRANCH_MISS)) ||
	    kf != kt || !from || !to)
		return false;
	if (f & DC_SF_CALL) {
		ev->kind = DC_EV_CALL;
		return true;
	}
	if (f & DC_SF_RETURN) {
		ev->kind = DC_EV_RETURN;
		return true;
	}
	if ((f & DC_SF_BRANCH) && kfrom != kto) {
		ev->kind = DC_EV_JUMP;  /* leaves the function: tail call, PLT */
		return true;
	}
	return false;
}

/* A flags column naming a plain jump (jmp, jcc): the text shows jumps
 * (--itrace=b), so a function left without one was fallen out of. */
static bool plain_jump(uint32_t f)
{
	return (f & DC_SF_BRANCH) &&
	       !(f & (DC_SF_CALL | DC_SF_RETURN | DC_SF_SYSCALLRET | DC_SF_ASYNC |
		      DC_SF_INTERRUPT | DC_SF_TRACE_BEGIN | DC_SF_TRACE_END | DC_SF_TX_ABORT));
}

static int set_comm(struct thr *t, const struct dc_script_text *c)
{
	const char *s = c->s;
	size_t n = c->len;
	char *d;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	if (!n)
		return 0;
	if (t->comm && strlen(t->comm) == n && !memcmp(t->comm, s, n))
		return 0;
	d = malloc(n + 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, s, n);
	d[n] = '\0';
	free(t->comm);
	t->comm = d;
	t->comm_new = true;
	return 0;
}

static int do_sample(struct dc_script *s, const struct dc_script_line *l)
{
	uint32_t tid = (uint32_t)l->tid, pid = l->pid >= 0 ? (uint32_t)l->pid : tid;
	struct dc_event ev = { 0 }, pre = { 0 };
	uint32_t kfrom, kto = 0;
	struct thr *t;
	bool keep;

	if (l->tid < 0 || !l->has_addr) {
		s->st.ignored++;
		s->st.no_target += !l->has_addr;
		return 0;
	}
	s->targets = true;
	if (l->pid >= 0)
		s->pid_seen = true;
	t = thr_get(s, tid, pid);
	if (!t)
		return -ENOMEM;
	if (l->cpu >= 0 && l->cpu < MAX_CPU) {
		if ((size_t)l->cpu >= s->ncpu) {
			size_t n = (size_t)l->cpu + 1;
			int64_t *c = realloc(s->cpu_tid, n * sizeof(*c));

			if (!c)
				return -ENOMEM;
			for (size_t k = s->ncpu; k < n; k++)
				c[k] = -1;
			s->cpu_tid = c;
			s->ncpu = n;
		}
		s->cpu_tid[l->cpu] = l->tid;
	}
	if (l->comm.len && set_comm(t, &l->comm))
		return -ENOMEM;
	if (l->has_time)
		t->last_ns = l->time_ns;
	kfrom = learn(s, pid, &l->from);
	if (kfrom && l->to.ip)
		kto = learn(s, pid, &l->to);
	if (!kfrom || (l->to.ip && !kto))
		return -ENOMEM;

	ev.time_ns = t->last_ns;
	ev.from_ip = l->from.ip;
	ev.to_ip = l->to.ip;
	ev.pid = pid;
	ev.tid = tid;
	ev.cpu = l->cpu >= 0 ? (uint16_t)l->cpu : 0;
	if (t->last_ns > t->span_ns)
		t->span_ns = t->last_ns;
	if (l->has_flags && plain_jump(l->flags))
		s->jumps_shown = true;
	keep = l->has_flags ? classify_flags(t, l, kfrom, kto, &ev)
			    : classify_noflags(t, l, kfrom, kto, &ev, &pre);
	if (keep && l->has_flags && s->jumps_shown && ev.kind <= DC_EV_JUMP)
		ev.reason = DC_BR_JUMPS_SEEN;
	if (!keep) {
		s->st.ignored++;
		/* A thread's span starts at its first line: one that is no
		 * event (a branch inside a function) starts its trace there. */
		if (t->last == LAST_NONE && !t->pending && l->from.ip) {
			ev.kind = DC_EV_TRACE_ON;
			ev.reason = DC_ON_START;
			ev.to_ip = l->from.ip;
			ev.from_ip = 0;
			ev.sysno = 0;
			emit(s, t, &ev);
		}
		return 0;
	}
	settle(s, t, &ev);
	if (pre.kind) {
		/* name the entry a revealed jump goes to, no line showed it */
		struct dc_script_loc entry = l->from;

		entry.ip = pre.to_ip;
		entry.off = 0;
		if (pre.to_ip != l->from.ip && !learn(s, pid, &entry))
			return -ENOMEM;
		emit(s, t, &pre);
	}
	if (ev.kind == DC_EV_TRACE_OFF && ev.reason == 0) {
		t->pending = true;      /* its reason shows with the next event */
		t->pend = ev;
		t->pend_sigreturn = sym_is(&l->from, "__restore_rt");
		t->pend_flags = l->has_flags;
		return 0;
	}
	emit(s, t, &ev);
	return 0;
}

static int do_error(struct dc_script *s, const struct dc_script_line *l)
{
	int64_t tid = l->tid;
	struct dc_event ev = { 0 };
	struct thr *t;

	if (tid < 0 && l->cpu >= 0 && (size_t)l->cpu < s->ncpu)
		tid = s->cpu_tid[l->cpu];
	if (tid < 0) {
		s->st.ignored++;        /* a loss we cannot give to a thread */
		return 0;
	}
	t = thr_get(s, (uint32_t)tid, l->pid >= 0 ? (uint32_t)l->pid : (uint32_t)tid);
	if (!t)
		return -ENOMEM;
	if (l->has_time && l->time_ns > t->last_ns)
		t->last_ns = l->time_ns;
	ev.kind = DC_EV_LOST;
	t->depth = 0;                   /* call sites before a loss are moot */
	ev.time_ns = t->last_ns;
	ev.from_ip = l->err_ip;
	ev.pid = t->pid;
	ev.tid = t->tid;
	ev.cpu = l->cpu >= 0 ? (uint16_t)l->cpu : 0;
	if (l->err_msg.len && memmem(l->err_msg.s, l->err_msg.len, "Overflow", 8))
		ev.reason = DC_LOST_OVF;
	else if (l->err_msg.len && memmem(l->err_msg.s, l->err_msg.len, "Lost trace data", 15))
		ev.reason = DC_LOST_TRUNCATED;
	else
		ev.reason = DC_LOST_DECODE;
	settle(s, t, &ev);
	emit(s, t, &ev);
	return 0;
}

/* Read lines until at least one event is queued or the input ends. */
static int fill(struct dc_script *s)
{
	while (s->qlen == 0 && !s->eof) {
		struct dc_script_line l;
		ssize_t n;
		int err = 0;

		errno = 0;
		n = getline(&s->buf, &s->bufcap, s->in);
		if (n < 0) {
			if (ferror(s->in))
				return -EIO;
			s->eof = true;
			break;
		}
		s->lineno++;
		s->st.lines++;
		if (memchr(s->buf, '\0', (size_t)n)) {
			l.kind = DC_SL_BAD;
		} else {
			dc_script_parse_line(s->buf, &l);
		}
		switch (l.kind) {
		case DC_SL_SKIP:
			break;
		case DC_SL_BAD:
			if (!s->started) {
				s->bad_line = s->lineno;
				return -EBADMSG;
			}
			s->st.skipped++;
			break;
		case DC_SL_OTHER:
			s->started = true;
			s->st.other++;
			if (!s->other_event[0] && l.event.len) {
				size_t n = l.event.len;

				if (n > 1 && l.event.s[n - 1] == ':')
					n--;        /* "cycles:u:" -> "cycles:u" */
				if (n >= sizeof(s->other_event))
					n = sizeof(s->other_event) - 1;
				memcpy(s->other_event, l.event.s, n);
			}
			break;
		case DC_SL_SAMPLE:
			s->started = true;
			s->st.samples++;
			if (l.has_flags)
				s->st.flags = true;
			err = do_sample(s, &l);
			break;
		case DC_SL_ERROR:
			s->started = true;
			s->st.errors++;
			err = do_error(s, &l);
			break;
		}
		if (err)
			return err;
	}
	/* End of input: settle held-back trace ends, one thread at a time;
	 * a thread whose last lines made no event (branches inside a
	 * function) is traced up to its last line. */
	while (s->qlen == 0 && s->eof && s->flush_i < s->nthr) {
		struct thr *t = &s->thr[s->flush_i++];

		settle(s, t, NULL);
		if (t->last == LAST_EVENT && t->span_ns > t->last_ev_ns) {
			struct dc_event ev = {
				.kind = DC_EV_TRACE_OFF, .reason = DC_OFF_END,
				.time_ns = t->span_ns, .pid = t->pid, .tid = t->tid,
			};

			emit(s, t, &ev);
		}
	}
	return 0;
}

int dc_script_next(struct dc_script *s, struct dc_event *ev, const char **comm)
{
	struct qent *e;
	int err;

	if (comm)
		*comm = NULL;
	err = fill(s);
	if (err)
		return err;
	if (s->qlen == 0) {
		if (!s->targets && !s->st.errors && !s->flushed) {
			s->flushed = true;      /* say it once */
			return -ENOMSG;
		}
		return 0;
	}
	e = &s->q[s->qhead];
	s->qhead = (s->qhead + 1) % QCAP;
	s->qlen--;
	*ev = e->ev;
	if (comm)
		*comm = e->comm;
	s->st.events++;
	return 1;
}
