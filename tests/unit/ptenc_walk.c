/* ptflame tests/bench helper: walker + libipt decode loop (see ptenc_walk.h). */
#include "ptenc_walk.h"

#include "record/perfwriter.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

int pw_push(struct pw_trace *t, const struct rc_insn *insn)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct rc_insn *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *insn;
	return 0;
}

void pw_free(struct pw_trace *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int pw_walk(csh cs, uint64_t start, size_t max, pw_decide_fn decide,
	    void *ctx, struct pw_trace *out)
{
	return pw_walk_code(cs, start, max, decide, ctx, NULL, 0, out);
}

int pw_walk_code(csh cs, uint64_t start, size_t max, pw_decide_fn decide, void *ctx,
		 const struct pw_code *code, size_t ncode, struct pw_trace *out)
{
	uint64_t shadow[4096];
	size_t depth = 0, i;
	uint64_t ip = start;

	for (i = 0; i < max && ip; i++) {
		struct rc_insn insn;
		uint64_t next;
		int err;

		/* The code is this process's own text (read in place) or
		 * one of the regions given. */
		const uint8_t *bytes = (const uint8_t *)(uintptr_t)ip;
		size_t avail = 16;

		for (size_t c = 0; c < ncode; c++)
			if (ip >= code[c].vaddr && ip - code[c].vaddr < code[c].size) {
				bytes = code[c].bytes + (ip - code[c].vaddr);
				avail = code[c].size - (size_t)(ip - code[c].vaddr);
				if (avail > 16)
					avail = 16;
			}
		err = rc_insn_classify(cs, bytes, avail, ip, &insn);
		if (err)
			return err;
		next = ip + insn.len;
		switch (insn.cls) {
		case RC_INSN_OTHER:
			insn.next_ip = next;
			err = pw_push(out, &insn);
			if (err)
				return err;
			ip = next;
			continue;
		case RC_INSN_JMP:
		case RC_INSN_CALL:
			next = insn.target;
			break;
		case RC_INSN_RET:
			next = depth ? shadow[depth - 1] : 0;
			break;
		case RC_INSN_JMP_IND:
		case RC_INSN_CALL_IND:
			next = 0;
			break;
		default:
			break;
		}
		decide(ctx, &insn, &next);
		if (!next)
			break;
		/* A call to the next instruction is a PIC get-IP: the code pops
		 * the address, it is never returned to. */
		if ((insn.cls == RC_INSN_CALL && next != ip + insn.len) ||
		    insn.cls == RC_INSN_CALL_IND) {
			if (depth == sizeof(shadow) / sizeof(shadow[0]))
				return -E2BIG;
			shadow[depth++] = ip + insn.len;
		} else if (insn.cls == RC_INSN_RET && depth) {
			depth--;
		}
		insn.next_ip = next;
		err = pw_push(out, &insn);
		if (err)
			return err;
		ip = next;
	}
	return 0;
}

/* --- perf.data (per-thread mode) ------------------------------------------
 * One thread (this process), its executable mappings, one AUX queue. */

#define PT_TYPE 8
#define PT_ID 1
#define DUMMY_ID 2

static int add_self_mmaps(struct rc_perf_writer *w, const struct dc_sample_id *sid)
{
	char line[8192];
	FILE *f;
	int ret = 0;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &start, &end,
			   perms, &pgoff, &maj, &min, &ino, path) < 7)
			continue;
		/* executable file mappings: this program and what it loaded */
		if (perms[2] != 'x' || path[0] != '/')
			continue;
		struct dc_rec_mmap m = {
			.pid = sid->pid, .tid = sid->tid, .start = start,
			.len = end - start, .pgoff = pgoff, .is_mmap2 = true,
			.maj = maj, .min = min, .ino = ino, .prot = 5, .flags = 2,
			.filename = path,
		};
		ret = rc_perf_mmap2(w, &m, sid);
	}
	fclose(f);
	return ret;
}

static struct rc_perf_writer *perf_open(const char *path,
					const struct rc_ptenc_config *cfg, uint64_t t0,
					const struct pw_perf_kernel *kernel)
{
	struct rc_ptenc_perf_info pi;
	struct perf_event_attr pt, dummy;
	uint64_t pt_id = PT_ID, dummy_id = DUMMY_ID;
	struct rc_perf_writer *w;
	char err[256];
	uint32_t pid = (uint32_t)getpid();
	struct dc_sample_id sid = { .pid = pid, .tid = pid, .time = t0, .id = DUMMY_ID };
	int ret;

	if (rc_perf_create(path, &w, err, sizeof(err))) {
		fprintf(stderr, "ptenc: %s\n", err);
		return NULL;
	}
	rc_ptenc_perf_info(cfg, &pi);
	memset(&pt, 0, sizeof(pt));
	pt.type = PT_TYPE;
	pt.config = pi.attr_config;
	pt.sample_period = 1;
	pt.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU;
	pt.disabled = 1;
	pt.exclude_kernel = kernel ? 0 : 1;
	pt.exclude_hv = 1;
	pt.enable_on_exec = 1;
	pt.sample_id_all = 1;
	memset(&dummy, 0, sizeof(dummy));
	dummy.type = PERF_TYPE_SOFTWARE;
	dummy.config = PERF_COUNT_SW_DUMMY;
	dummy.sample_period = 1;
	dummy.sample_type = pt.sample_type;
	dummy.exclude_kernel = 1;
	dummy.mmap = dummy.comm = dummy.task = dummy.mmap2 = dummy.comm_exec = 1;
	dummy.sample_id_all = 1;

	struct dc_pt_info info = {
		.pmu_type = PT_TYPE, .time_shift = pi.time_shift,
		.time_mult = pi.time_mult, .time_zero = pi.time_zero,
		.cap_user_time_zero = 1, .tsc_bit = pi.tsc_bit,
		.noretcomp_bit = pi.noretcomp_bit, .have_sched_switch = 0,
		.snapshot_mode = 0, .per_cpu_mmaps = 0, .mtc_bit = pi.mtc_bit,
		.mtc_freq_bits = pi.mtc_freq_bits,
		.tsc_ctc_ratio_n = pi.tsc_ctc_ratio_n,
		.tsc_ctc_ratio_d = pi.tsc_ctc_ratio_d, .cyc_bit = pi.cyc_bit,
		.max_non_turbo_ratio = pi.max_non_turbo_ratio, .filter = "",
	};
	struct dc_rec_time_conv tc = {
		.time_shift = pi.time_shift, .time_mult = pi.time_mult,
		.time_zero = pi.time_zero, .time_mask = ~0ull,
		.cap_user_time_zero = 1,
	};

	ret = rc_perf_add_attr(w, &pt, &pt_id, 1);
	ret = ret ?: rc_perf_add_attr(w, &dummy, &dummy_id, 1);
	ret = ret ?: rc_perf_auxtrace_info_pt(w, &info);
	ret = ret ?: rc_perf_time_conv(w, &tc);
	ret = ret ?: rc_perf_comm(w, pid, pid, "ptenc_walk", true, &sid);
	sid.time++;
	ret = ret ?: add_self_mmaps(w, &sid);
	if (kernel) {
		struct dc_rec_mmap km = {
			.pid = (uint32_t)-1, .tid = 0, .start = kernel->start,
			.len = kernel->len, .pgoff = kernel->pgoff, .is_mmap2 = true,
			.prot = 5, .cpumode = PERF_RECORD_MISC_KERNEL,
			.filename = "[kernel.kallsyms]_text",
		};
		struct dc_sample_id ksid = sid;

		ksid.pid = (uint32_t)-1;
		ksid.tid = 0;
		ret = ret ?: rc_perf_mmap2(w, &km, &ksid);
		if (kernel->mod_name) {
			km.start = kernel->mod_start;
			km.len = kernel->mod_len;
			km.pgoff = 0;
			km.filename = kernel->mod_name;
			ret = ret ?: rc_perf_mmap2(w, &km, &ksid);
		}
		if (kernel->build_id_size)
			ret = ret ?: rc_perf_add_build_id(w, -1, PERF_RECORD_MISC_KERNEL,
							  kernel->build_id,
							  kernel->build_id_size,
							  "[kernel.kallsyms]");
	}
	sid.time++;
	sid.id = PT_ID;
	ret = ret ?: rc_perf_itrace_start(w, pid, pid, &sid);
	ret = ret ?: rc_perf_set_nrcpus(w, 1, 1);
	ret = ret ?: rc_perf_finished_round(w);
	if (ret) {
		fprintf(stderr, "ptenc: %s\n", rc_perf_errmsg(w));
		rc_perf_abort(w);
		return NULL;
	}
	return w;
}

struct pw_perf {
	struct rc_perf_writer *w;
	uint64_t aux_off;
};

int pw_perf_open(struct pw_perf **out, const char *path,
		 const struct rc_ptenc_config *cfg, uint64_t t0)
{
	return pw_perf_open_kernel(out, path, cfg, t0, NULL);
}

int pw_perf_open_kernel(struct pw_perf **out, const char *path,
			const struct rc_ptenc_config *cfg, uint64_t t0,
			const struct pw_perf_kernel *kernel)
{
	struct pw_perf *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->w = perf_open(path, cfg, t0, kernel);
	if (!p->w) {
		free(p);
		return -EIO;
	}
	*out = p;
	return 0;
}

int pw_perf_aux(struct pw_perf *p, const uint8_t *data, size_t n, uint64_t reference)
{
	uint32_t pid = (uint32_t)getpid();
	int ret = rc_perf_auxtrace(p->w, data, n, p->aux_off, reference, 0, pid,
				   (uint32_t)-1);

	p->aux_off += (n + 7) & ~7ull;
	return ret;
}

int pw_perf_exit(struct pw_perf *p, uint64_t time)
{
	uint32_t pid = (uint32_t)getpid();
	struct dc_sample_id sid = { .pid = pid, .tid = pid, .time = time, .id = DUMMY_ID };

	return rc_perf_exit(p->w, pid, pid, pid, pid, time, &sid);
}

int pw_perf_close(struct pw_perf *p, bool ok)
{
	char e[256];
	int ret = 0;

	if (!ok) {
		rc_perf_abort(p->w);
	} else if ((ret = rc_perf_finish(p->w, e, sizeof(e)))) {
		fprintf(stderr, "ptenc: %s\n", e);
	}
	free(p);
	return ret;
}

/* --- decoding ------------------------------------------------------------ */

static int read_self(uint8_t *buffer, size_t size,
		     const struct pt_asid *asid, uint64_t ip, void *context)
{
	(void)asid;
	(void)context;
	memcpy(buffer, (const void *)(uintptr_t)ip, size);
	return (int)size;
}

static int grow(struct pw_decoded *d)
{
	if (d->n < d->cap)
		return 0;
	size_t cap = d->cap ? d->cap * 2 : 4096;
	uint64_t *ip = realloc(d->ip, cap * sizeof(*ip));

	if (!ip)
		return -ENOMEM;
	d->ip = ip;
	uint64_t *tsc = realloc(d->tsc, cap * sizeof(*tsc));

	if (!tsc)
		return -ENOMEM;
	d->tsc = tsc;
	d->cap = cap;
	return 0;
}

static void add_event(struct pw_decoded *d, const struct pt_event *ev)
{
	int kind = 0;
	uint64_t ip = 0;

	switch (ev->type) {
	case ptev_enabled:
		kind = PW_EV_ENABLED;
		ip = ev->variant.enabled.ip;
		break;
	case ptev_disabled:
	case ptev_async_disabled:
		kind = PW_EV_DISABLED;
		break;
	case ptev_overflow:
		kind = PW_EV_OVERFLOW;
		ip = ev->variant.overflow.ip;
		break;
	default:
		return;
	}
	if (d->nev < sizeof(d->ev) / sizeof(d->ev[0])) {
		d->ev[d->nev].kind = kind;
		d->ev[d->nev].at = d->n;
		d->ev[d->nev].ip = ip;
		d->nev++;
	}
}

static void note_error(struct pw_decoded *d, struct pt_insn_decoder *dec,
		       int status)
{
	if (!d->errors++) {
		d->first_error = status;
		pt_insn_get_offset(dec, &d->first_error_offset);
	}
}

static int decode_loop(struct pt_insn_decoder *dec, struct pw_decoded *d)
{
	int status = pt_insn_sync_forward(dec);

	while (status != -pte_eos) {
		if (status < 0) {
			note_error(d, dec, status);
			status = pt_insn_sync_forward(dec);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			add_event(d, &ev);
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;

		struct pt_insn insn;
		uint64_t tsc = 0;
		uint32_t lm = 0, lc = 0;

		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			continue;
		if (grow(d))
			return -ENOMEM;
		if (pt_insn_time(dec, &tsc, &lm, &lc) < 0)
			tsc = 0;
		d->lost_mtc = lm;
		d->lost_cyc = lc;
		d->ip[d->n] = insn.ip;
		d->tsc[d->n] = tsc;
		d->n++;
	}
	return 0;
}

int pw_decode_segment(const uint8_t *buf, size_t size, uint64_t start,
		      uint64_t end, const struct rc_ptenc_config *cfg,
		      struct pw_decoded *out)
{
	struct pt_config pc;
	struct pt_insn_decoder *dec;
	int err;

	if (end > size || start >= end)
		return -EINVAL;
	pt_config_init(&pc);
	pc.begin = (uint8_t *)(uintptr_t)(buf + start);
	pc.end = (uint8_t *)(uintptr_t)(buf + end);
	rc_ptenc_ipt_config(cfg, &pc);
	dec = pt_insn_alloc_decoder(&pc);
	if (!dec)
		return -ENOMEM;
	err = pt_image_set_callback(pt_insn_get_image(dec), read_self, NULL);
	if (err >= 0)
		err = decode_loop(dec, out);
	pt_insn_free_decoder(dec);
	return err < 0 ? -EIO : 0;
}

int pw_decode(const uint8_t *buf, size_t size,
	      const struct rc_ptenc_config *cfg, struct pw_decoded *out)
{
	return pw_decode_segment(buf, size, 0, size, cfg, out);
}

void pw_decoded_free(struct pw_decoded *d)
{
	free(d->ip);
	free(d->tsc);
	d->ip = d->tsc = NULL;
	d->n = d->cap = 0;
}
