/* Unit tests for record/ptenc.c, the emulator's Intel PT encoder.
 *
 * Instruction streams come from a walker over REAL code (the assembly
 * functions below, in this test's own .text): capstone classifies each
 * instruction, a script decides branch outcomes. The encoder turns the
 * stream into PT packets; libipt's instruction decoder, reading this
 * process's memory, must give back exactly the same instruction addresses
 * with no error, and times within one MTC period. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <intel-pt.h>

#include "record/ptenc.h"
#include "ptenc_walk.h"

/* Never executed, only walked and decoded. */
__asm__(
	".text\n"
	".p2align 4\n"
	".globl pte_main\n"
	"pte_main:\n"
	"	push %rbp\n"
	"	call pte_leaf\n"            /* direct call, returns compressed */
	"	test %eax, %eax\n"
	".globl pte_main_jz\n"
	"pte_main_jz:\n"
	"	jz 1f\n"
	"	nop\n"
	"1:	call *%rax\n"               /* indirect calls: script targets */
	"	call *%rax\n"
	"	call *%rax\n"
	"	jmp *%rbx\n"                /* indirect jump: script target */
	"	ud2\n"
	".globl pte_after_jmp\n"
	"pte_after_jmp:\n"
	"	mov $5, %edi\n"
	"	call pte_rec\n"
	"	call pte_pic\n"            /* its RET must still compress */
	".globl pte_syscall\n"
	"pte_syscall:\n"
	"	syscall\n"
	"	call 2f\n"                  /* zero-displacement call: not pushed */
	"2:	pop %rcx\n"
	"	call pte_loop\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl pte_leaf\n"
	"pte_leaf:\n"
	"	ret\n"
	"pte_pic:\n"
	"	call 5f\n"                 /* PIC get-IP */
	"5:	pop %rax\n"
	"	ret\n"
	".globl pte_rec\n"
	"pte_rec:\n"
	"	test %edi, %edi\n"
	".globl pte_rec_jz\n"
	"pte_rec_jz:\n"
	"	jz 3f\n"
	"	dec %edi\n"
	"	call pte_rec\n"
	"	add $1, %eax\n"
	"3:	ret\n"
	".globl pte_loop\n"
	"pte_loop:\n"
	"	dec %ecx\n"
	".globl pte_loop_jnz\n"
	"pte_loop_jnz:\n"
	"	jnz pte_loop\n"
	"	ret\n"
	"	.skip 0x30000, 0xcc\n"      /* far enough for a 32-bit update */
	".globl pte_int\n"
	"pte_int:\n"
	"	nop\n"
	"	int3\n"
	"	nop\n"
	"	ret\n"
	".globl pte_far\n"
	"pte_far:\n"
	"	nop\n"
	"	ret\n");

extern const char pte_main[], pte_main_jz[], pte_after_jmp[], pte_syscall[],
	pte_leaf[], pte_rec[], pte_rec_jz[], pte_loop[], pte_loop_jnz[],
	pte_far[], pte_int[];

#define A(sym) ((uint64_t)(uintptr_t)(sym))

struct script {
	uint64_t ind[8];   /* targets of the indirect call/jmp, in order */
	int nind, iind;
	int rec_depth, rec_seen;
	int loop_n, loop_seen;
};

static void decide(void *ctx, const struct rc_insn *insn, uint64_t *next)
{
	struct script *s = ctx;

	if (insn->cls == RC_INSN_JCC) {
		bool taken = false;

		if (insn->ip == A(pte_main_jz))
			taken = true;
		else if (insn->ip == A(pte_rec_jz))
			taken = s->rec_seen++ == s->rec_depth;
		else if (insn->ip == A(pte_loop_jnz))
			taken = ++s->loop_seen < s->loop_n;
		if (taken)
			*next = insn->target;
	} else if (insn->cls == RC_INSN_CALL_IND || insn->cls == RC_INSN_JMP_IND) {
		*next = s->iind < s->nind ? s->ind[s->iind++] : 0;
	}
}

static uint8_t *far_page; /* an mmapped "ret" far from .text */

static void walk_main(struct script *s, struct pw_trace *t)
{
	csh cs;

	assert_int_equal(rc_insn_cs_open(&cs), 0);
	assert_int_equal(pw_walk(cs, A(pte_main), 1000000, decide, s, t), 0);
	cs_close(&cs);
}

static void default_script(struct script *s, int rec_depth, int loop_n)
{
	memset(s, 0, sizeof(*s));
	s->ind[0] = A(pte_leaf);
	s->ind[1] = A(far_page);
	s->ind[2] = A(pte_far);
	s->ind[3] = A(pte_after_jmp);
	s->nind = 4;
	s->rec_depth = rec_depth;
	s->loop_n = loop_n;
}

struct enc_opts {
	uint64_t ns0, ns_per_insn;
	uint64_t syscall_ns;      /* time spent in each syscall */
	size_t ovf_at;            /* OVF before this insn index (0: none) */
	size_t async_at;          /* FUP+PGD before this insn, PGE later (0: none) */
	size_t chunk;             /* consume output in chunks of this size (0: at end) */
	size_t async_every;       /* FUP+PGD / PGE before every Nth insn (0: never) */
};

/* Run trace T through an encoder; return the bytes and each insn's time. */
static uint8_t *encode(const struct rc_ptenc_config *cfg, const struct pw_trace *t,
		       const struct enc_opts *o, uint64_t *ns_of, size_t *size)
{
	struct rc_ptenc *enc = rc_ptenc_new(cfg, 0);
	uint8_t *out = NULL;
	size_t n = 0;
	uint64_t ns = o->ns0;

	assert_non_null(enc);
	assert_int_equal(rc_ptenc_enable(enc, ns, t->v[0].ip), 0);
	for (size_t i = 0; i < t->n; i++) {
		if (o->ovf_at && i == o->ovf_at)
			assert_int_equal(rc_ptenc_ovf(enc, ns, t->v[i].ip), 0);
		if ((o->async_at && i == o->async_at) ||
		    (o->async_every && i && i % o->async_every == 0)) {
			assert_int_equal(rc_ptenc_disable(enc, ns, t->v[i].ip,
							  RC_PTENC_OFF_ASYNC), 0);
			ns += 5000;
			assert_int_equal(rc_ptenc_enable(enc, ns, t->v[i].ip), 0);
		}
		ns += o->ns_per_insn;
		ns_of[i] = ns;
		assert_int_equal(rc_ptenc_insn(enc, &t->v[i], ns), 0);
		if (t->v[i].cls == RC_INSN_SYSCALL || t->v[i].cls == RC_INSN_INT) {
			ns += o->syscall_ns;
			assert_int_equal(rc_ptenc_enable(enc, ns, t->v[i].next_ip), 0);
		}
		if (o->chunk) {
			size_t avail;
			const uint8_t *d = rc_ptenc_data(enc, &avail);

			if (avail >= o->chunk) {
				out = realloc(out, n + avail);
				memcpy(out + n, d, avail);
				n += avail;
				rc_ptenc_consume(enc, avail);
			}
		}
	}
	assert_int_equal(rc_ptenc_disable(enc, ns + 1, t->v[t->n - 1].next_ip,
					  RC_PTENC_OFF_ASYNC), 0);
	assert_int_equal(rc_ptenc_flush(enc), 0);
	size_t avail;
	const uint8_t *d = rc_ptenc_data(enc, &avail);

	out = realloc(out, n + avail + 1);
	memcpy(out + n, d, avail);
	n += avail;
	rc_ptenc_consume(enc, avail);
	assert_int_equal(rc_ptenc_offset(enc), n);
	rc_ptenc_free(enc);
	*size = n;
	return out;
}

static struct rc_ptenc_config default_cfg(void)
{
	struct rc_ptenc_config c = {
		.psb_period = 0, .mtc = true, .mtc_freq = 3, .cyc = false,
		.noretcomp = false, .time_zero = 1000000,
	};
	return c;
}

static void assert_same_ips(const struct pw_decoded *d, const struct pw_trace *t)
{
	if (d->errors)
		fail_msg("libipt decode error %d (%s) at offset %#llx", d->first_error,
			 pt_errstr(pt_errcode(d->first_error)),
			 (unsigned long long)d->first_error_offset);
	for (size_t i = 0; i < d->n && i < t->n; i++)
		if (d->ip[i] != t->v[i].ip)
			fail_msg("insn %zu: decoded %#llx, stepped %#llx", i,
				 (unsigned long long)d->ip[i],
				 (unsigned long long)t->v[i].ip);
	assert_int_equal(d->n, t->n);
}

/* Packets of BUF as libipt's packet decoder sees them. */
struct pkts {
	struct pt_packet p[200000];
	uint64_t off[200000];
	size_t n;
};

static struct pkts *enc_packets(const uint8_t *buf, size_t size)
{
	struct pkts *k = calloc(1, sizeof(*k));
	struct pt_config pc;
	struct pt_packet_decoder *pd;

	assert_non_null(k);
	pt_config_init(&pc);
	pc.begin = (uint8_t *)buf;
	pc.end = (uint8_t *)buf + size;
	pd = pt_pkt_alloc_decoder(&pc);
	assert_non_null(pd);
	assert_true(pt_pkt_sync_set(pd, 0) >= 0);
	while (k->n < 200000) {
		pt_pkt_get_offset(pd, &k->off[k->n]);
		int st = pt_pkt_next(pd, &k->p[k->n], sizeof(k->p[0]));

		if (st == -pte_eos)
			break;
		assert_true(st >= 0);
		k->n++;
	}
	pt_pkt_free_decoder(pd);
	return k;
}

static size_t count_type(const struct pkts *k, enum pt_packet_type t)
{
	size_t c = 0;

	for (size_t i = 0; i < k->n; i++)
		c += k->p[i].type == t;
	return c;
}

static void dump_packets(const struct pkts *k)
{
	if (!getenv("PTENC_DUMP"))
		return;
	for (size_t i = 0; i < k->n; i++)
		fprintf(stderr, "%#8llx type %#x size %u ip %#llx ipc %d\n",
			(unsigned long long)k->off[i], k->p[i].type, k->p[i].size,
			(unsigned long long)k->p[i].payload.ip.ip,
			k->p[i].payload.ip.ipc);
}

static size_t count_cls(const struct pw_trace *t, int cls)
{
	size_t c = 0;

	for (size_t i = 0; i < t->n; i++)
		c += t->v[i].cls == cls;
	return c;
}

struct run {
	struct pw_trace t;
	uint64_t *ns;
	uint8_t *buf;
	size_t size;
	struct pw_decoded *d;
	struct pkts *k;
};

/* With PTENC_PERF_DIR set, each named run also leaves NAME.data (a
 * perf.data of the trace over this test binary) and NAME.truth (the calls
 * and returns that were walked, "call|return FROM TO NS TIMED"), which
 * tests/e2e/ptenc compares with `perf script --itrace=cr`. */
static void write_perf(const char *name, const struct rc_ptenc_config *cfg,
		       const struct run *r, uint64_t t0)
{
	const char *dir = getenv("PTENC_PERF_DIR");
	char path[4096];
	struct pw_perf *p;
	FILE *f;

	if (!dir || !name)
		return;
	snprintf(path, sizeof(path), "%s/%s.data", dir, name);
	assert_int_equal(pw_perf_open(&p, path, cfg, t0), 0);
	for (size_t off = 0; off < r->size; off += 65536) {
		size_t n = r->size - off < 65536 ? r->size - off : 65536;

		assert_int_equal(pw_perf_aux(p, r->buf + off, n,
					     rc_ptenc_ns_to_tsc(cfg, t0) | 1), 0);
	}
	assert_int_equal(pw_perf_close(p, true), 0);
	snprintf(path, sizeof(path), "%s/%s.truth", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < r->t.n; i++) {
		const struct rc_insn *in = &r->t.v[i];
		const char *kind = NULL;

		/* perf reports a call to the next insn (PIC) as a call too */
		if (in->cls == RC_INSN_CALL_IND || in->cls == RC_INSN_CALL)
			kind = "call";
		else if (in->cls == RC_INSN_RET)
			kind = "return";
		/* last column: 1 if the branch has a packet of its own (a
		 * direct call's time is only known from its neighbours) */
		if (kind)
			fprintf(f, "%s %llx %llx %llu %d\n", kind, (unsigned long long)in->ip,
				(unsigned long long)in->next_ip,
				(unsigned long long)r->ns[i], in->cls != RC_INSN_CALL);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s.period", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%llu\n", (unsigned long long)(cfg->mtc ?
		((uint64_t)RC_PTENC_TSC_PER_CTC << cfg->mtc_freq) / RC_PTENC_TSC_PER_NS : 0));
	fclose(f);
}

static void run(struct run *r, const char *name, const struct rc_ptenc_config *cfg,
		const struct enc_opts *o, int rec_depth, int loop_n)
{
	struct script s;

	memset(r, 0, sizeof(*r));
	default_script(&s, rec_depth, loop_n);
	walk_main(&s, &r->t);
	assert_true(r->t.n > 10);
	r->ns = calloc(r->t.n, sizeof(*r->ns));
	r->buf = encode(cfg, &r->t, o, r->ns, &r->size);
	r->d = calloc(1, sizeof(*r->d));
	assert_int_equal(pw_decode(r->buf, r->size, cfg, r->d), 0);
	r->k = enc_packets(r->buf, r->size);
	dump_packets(r->k);
	write_perf(name, cfg, r, o->ns0 - 1000);
}

static void run_free(struct run *r)
{
	pw_free(&r->t);
	free(r->ns);
	free(r->buf);
	pw_decoded_free(r->d);
	free(r->d);
	free(r->k);
}

static const struct enc_opts plain = { .ns0 = 2000000, .ns_per_insn = 1,
				       .syscall_ns = 100000 };

/* Calls, compressed returns, indirect calls/jumps, syscall, PIC call. */
static void test_roundtrip_retcomp(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;

	(void)state;
	run(&r, "retcomp", &cfg, &plain, 5, 10);
	assert_same_ips(r.d, &r.t);
	/* Every RET returned to its caller: all compressed, so the only TIPs
	 * are the indirect calls and the jump. */
	assert_int_equal(count_type(r.k, ppt_tip),
			 count_cls(&r.t, RC_INSN_CALL_IND) + count_cls(&r.t, RC_INSN_JMP_IND));
	assert_true(count_cls(&r.t, RC_INSN_RET) >= 9);
	run_free(&r);
}

/* noretcomp: every RET is a TIP. */
static void test_roundtrip_noretcomp(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;

	(void)state;
	cfg.noretcomp = true;
	run(&r, "noretcomp", &cfg, &plain, 5, 10);
	assert_same_ips(r.d, &r.t);
	assert_int_equal(count_type(r.k, ppt_tip),
			 count_cls(&r.t, RC_INSN_CALL_IND) + count_cls(&r.t, RC_INSN_JMP_IND) +
			 count_cls(&r.t, RC_INSN_RET));
	run_free(&r);
}

/* Recursion deeper than the 64-entry compression stack. */
static void test_deep_recursion(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;
	size_t rets, tips;

	(void)state;
	run(&r, "deep_recursion", &cfg, &plain, 100, 10);
	assert_same_ips(r.d, &r.t);
	rets = count_cls(&r.t, RC_INSN_RET);
	tips = count_type(r.k, ppt_tip) - count_cls(&r.t, RC_INSN_CALL_IND) -
	       count_cls(&r.t, RC_INSN_JMP_IND);
	/* The returns of the oldest calls fell off the stack: TIPs. */
	assert_true(tips > 0);
	assert_true(rets - tips >= 64);
	run_free(&r);
}

/* Small PSB period: PSB+ falls between calls and their returns; each PSB
 * segment must also decode on its own (return compression restarted). */
static void test_psb_segments(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;
	uint64_t psb[4096];
	size_t npsb = 0, in_kernel = 0, empty = 0;

	(void)state;
	cfg.psb_period = 256;
	run(&r, "psb256", &cfg, &plain, 40, 20000);
	assert_same_ips(r.d, &r.t);
	for (size_t i = 0; i < r.k->n; i++) {
		if (r.k->p[i].type != ppt_psb)
			continue;
		psb[npsb++] = r.k->off[i];
		/* PSB TSC TMA CBR MODE.Exec FUP PSBEND */
		assert_int_equal(r.k->p[i + 1].type, ppt_tsc);
		assert_int_equal(r.k->p[i + 2].type, ppt_tma);
		assert_int_equal(r.k->p[i + 3].type, ppt_cbr);
		assert_int_equal(r.k->p[i + 4].type, ppt_mode);
		/* a FUP of where the code is, or none in a syscall (tracing
		 * off there: its MTCs go on, and so does the byte count) */
		if (i && r.k->p[i + 5].type == ppt_psbend) {
			in_kernel++;
		} else if (i) {
			assert_int_equal(r.k->p[i + 5].type, ppt_fup);
			assert_int_equal(r.k->p[i + 5].payload.ip.ipc, pt_ipc_sext_48);
			assert_int_equal(r.k->p[i + 6].type, ppt_psbend);
		}
	}
	assert_true(npsb >= 8);
	assert_true(in_kernel > 0 && in_kernel < npsb / 2);
	for (size_t j = 1; j < npsb; j++) {
		/* one PSB+ per 256-byte block, soon after the boundary (as the
		 * hardware's byte counter wraps) */
		assert_int_equal(psb[j] / 256, psb[j - 1] / 256 + 1);
		assert_true(psb[j] % 256 < 64);
	}
	/* Decode each segment separately. */
	for (size_t j = 1; j < npsb; j++) {
		uint64_t end = j + 1 < npsb ? psb[j + 1] : r.size;
		struct pw_decoded *d = calloc(1, sizeof(*d));
		size_t k = 0;

		assert_int_equal(pw_decode_segment(r.buf, r.size, psb[j], end, &cfg, d), 0);
		if (d->errors)
			fail_msg("segment %zu: error %d", j, d->first_error);
		if (d->n == 0) {
			/* all of it in a syscall: MTCs to the next PSB+ */
			assert_true(empty++ < in_kernel);
			pw_decoded_free(d);
			free(d);
			continue;
		}
		/* The segment is a contiguous run of the stepped stream. */
		while (k < r.t.n && r.t.v[k].ip != d->ip[0])
			k++;
		while (k + d->n <= r.t.n) {
			size_t m = 0;

			while (m < d->n && r.t.v[k + m].ip == d->ip[m])
				m++;
			if (m == d->n)
				break;
			k++;
			while (k < r.t.n && r.t.v[k].ip != d->ip[0])
				k++;
		}
		assert_true(k + d->n <= r.t.n);
		pw_decoded_free(d);
		free(d);
	}
	run_free(&r);
}

/* IP compression: 16- and 32-bit updates and sext-48 all occur and decode. */
static void test_ip_compression(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;
	int seen[8] = { 0 };

	(void)state;
	run(&r, "ipc", &cfg, &plain, 2, 3);
	assert_same_ips(r.d, &r.t);
	for (size_t i = 0; i < r.k->n; i++) {
		enum pt_packet_type ty = r.k->p[i].type;

		if (ty == ppt_tip || ty == ppt_fup || ty == ppt_tip_pge ||
		    ty == ppt_tip_pgd)
			seen[r.k->p[i].payload.ip.ipc & 7]++;
	}
	assert_true(seen[pt_ipc_update_16] > 0);
	assert_true(seen[pt_ipc_sext_48] > 0);
	/* pte_far is > 64 KiB from pte_main; 32-bit update unless a 4 GiB
	 * boundary lies between them. */
	if ((A(pte_far) >> 32) == (A(pte_main) >> 32))
		assert_true(seen[pt_ipc_update_32] > 0);
	assert_true(seen[pt_ipc_suppressed] > 0); /* the PGDs */
	run_free(&r);
}

/* syscall: TIP.PGD with no IP and no FUP; return: TIP.PGE at the next insn. */
static void test_syscall_pgd_pge(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;
	size_t sc = 0, e;
	bool saw_dis = false, saw_en = false;

	(void)state;
	run(&r, "syscall", &cfg, &plain, 1, 2);
	assert_same_ips(r.d, &r.t);
	while (r.t.v[sc].cls != RC_INSN_SYSCALL)
		sc++;
	assert_int_equal(r.t.v[sc].ip, A(pte_syscall));
	for (e = 0; e < r.d->nev; e++) {
		if (r.d->ev[e].kind == PW_EV_DISABLED && r.d->ev[e].at == sc + 1)
			saw_dis = true;
		if (r.d->ev[e].kind == PW_EV_ENABLED && r.d->ev[e].at == sc + 1 &&
		    r.d->ev[e].ip == r.t.v[sc].next_ip)
			saw_en = true;
	}
	assert_true(saw_dis);
	assert_true(saw_en);
	/* The first PGD (the syscall's) is not preceded by a FUP. */
	for (size_t i = 1; i < r.k->n; i++) {
		if (r.k->p[i].type != ppt_tip_pgd)
			continue;
		assert_int_equal(r.k->p[i].payload.ip.ipc, pt_ipc_suppressed);
		assert_int_not_equal(r.k->p[i - 1].type, ppt_fup);
		assert_int_equal(r.k->p[i + 1].type == ppt_mode ||
				 r.k->p[i + 1].type == ppt_mtc ||
				 r.k->p[i + 1].type == ppt_tsc ||
				 r.k->p[i + 1].type == ppt_psb, 1);
		break;
	}
	run_free(&r);
}

/* Asynchronous exit mid-function (signal, preemption): FUP + TIP.PGD, then
 * TIP.PGE at the same IP: the decoded stream is unchanged. */
static void test_async_disable(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct enc_opts o = plain;
	struct run r;
	size_t fups = 0;

	(void)state;
	o.async_at = 7;
	run(&r, "async", &cfg, &o, 3, 5);
	assert_same_ips(r.d, &r.t);
	for (size_t i = 1; i < r.k->n; i++)
		if (r.k->p[i].type == ppt_tip_pgd && r.k->p[i - 1].type == ppt_fup)
			fups++;
	assert_int_equal(fups, 2); /* the async one and the end of trace */
	run_free(&r);
}

/* int3: FUP(its IP) + TIP.PGD like an interrupt, so decoders show the
 * instructions around it but not the int3 itself (libipt's
 * int-iret-cpl_3.ptt explains why they cannot). */
static void test_int_is_async(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct script s;
	struct pw_trace t = { 0 };
	struct pw_decoded *d = calloc(1, sizeof(*d));
	uint64_t ns[16];
	size_t size, j = 0;
	uint8_t *buf;
	csh cs;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(rc_insn_cs_open(&cs), 0);
	assert_int_equal(pw_walk(cs, A(pte_int), 16, decide, &s, &t), 0);
	cs_close(&cs);
	assert_int_equal(t.n, 3); /* nop int3 nop (the ret ends the walk) */
	assert_int_equal(t.v[1].cls, RC_INSN_INT);
	buf = encode(&cfg, &t, &plain, ns, &size);
	struct pkts *k = enc_packets(buf, size);
	size_t i;

	for (i = 0; i < k->n && k->p[i].type != ppt_tip_pgd; i++)
		;
	assert_true(i < k->n && i > 0);
	assert_int_equal(k->p[i - 1].type, ppt_fup);
	assert_int_equal(k->p[i - 1].payload.ip.ip & 0xffff, t.v[1].ip & 0xffff);
	assert_int_equal(pw_decode(buf, size, &cfg, d), 0);
	assert_int_equal(d->errors, 0);
	assert_int_equal(d->n, 2);
	for (i = 0; i < t.n; i++)
		if (t.v[i].cls != RC_INSN_INT)
			assert_int_equal(d->ip[j++], t.v[i].ip);
	free(k);
	free(buf);
	pw_decoded_free(d);
	free(d);
	pw_free(&t);
}

/* Many interruptions (preemption, signals) with PSB+ every 256 bytes,
 * CYC on: PSB+ lands next to PGE, PGD, FUP; still decodes exactly. */
static void test_stress_async_psb(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct enc_opts o = plain;
	struct run r;
	size_t pgd = 0, psb = 0;

	(void)state;
	cfg.psb_period = 256;
	cfg.cyc = true;
	o.async_every = 7;
	run(&r, "stress", &cfg, &o, 70, 300);
	assert_same_ips(r.d, &r.t);
	pgd = count_type(r.k, ppt_tip_pgd);
	psb = count_type(r.k, ppt_psb);
	assert_true(pgd > r.t.n / 7);
	assert_true(psb > 50);
	/* some PSB+ fell while tracing was off (no FUP in them) */
	size_t psb_off = 0;

	for (size_t i = 0; i < r.k->n; i++) {
		bool fup = false;
		size_t j;

		if (r.k->p[i].type != ppt_psb)
			continue;
		for (j = i + 1; j < r.k->n && r.k->p[j].type != ppt_psbend; j++)
			fup |= r.k->p[j].type == ppt_fup;
		psb_off += !fup;
	}
	assert_true(psb_off > 0);
	run_free(&r);
}

/* A loop of 300 conditional branches: TNT-64 packets, decoded exactly. */
static void test_long_tnt(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct run r;

	(void)state;
	cfg.mtc = false; /* no MTC: nothing interrupts the TNT run */
	run(&r, "long_tnt", &cfg, &plain, 1, 300);
	assert_same_ips(r.d, &r.t);
	assert_true(count_type(r.k, ppt_tnt_64) >= 6);
	for (size_t i = 0; i < r.k->n; i++)
		if (r.k->p[i].type == ppt_tnt_64)
			assert_true(r.k->p[i].payload.tnt.bit_size <= 47);
	run_free(&r);
}

/* OVF: the decoder reports the overflow and resumes exactly at the IP. */
static void test_ovf(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct enc_opts o = plain;
	struct run r;
	size_t at = 0, e;

	(void)state;
	o.ovf_at = 60;
	run(&r, "ovf", &cfg, &o, 20, 30);
	assert_int_equal(r.d->errors, 0);
	for (e = 0; e < r.d->nev; e++)
		if (r.d->ev[e].kind == PW_EV_OVERFLOW)
			break;
	assert_true(e < r.d->nev);
	assert_int_equal(r.d->ev[e].ip, r.t.v[o.ovf_at].ip);
	at = r.d->ev[e].at;
	/* before: a prefix of the stream (up to the last branch) */
	assert_true(at <= o.ovf_at);
	for (size_t i = 0; i < at; i++)
		assert_int_equal(r.d->ip[i], r.t.v[i].ip);
	/* after: exactly the rest */
	assert_int_equal(r.d->n - at, r.t.n - o.ovf_at);
	for (size_t i = at; i < r.d->n; i++)
		assert_int_equal(r.d->ip[i], r.t.v[o.ovf_at + i - at].ip);
	run_free(&r);
}

/* Output taken in small chunks is the same byte stream. */
static void test_chunked_output(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct enc_opts o = plain;
	struct run a, b;

	(void)state;
	run(&a, NULL, &cfg, &plain, 10, 50);
	o.chunk = 7;
	run(&b, NULL, &cfg, &o, 10, 50);
	assert_int_equal(a.size, b.size);
	assert_memory_equal(a.buf, b.buf, a.size);
	run_free(&a);
	run_free(&b);
}

static const char *time_name(bool cyc, unsigned mtc_freq, uint64_t ns_per_insn)
{
	static char name[64];

	snprintf(name, sizeof(name), "time_%s_mtc%u_ns%llu", cyc ? "cyc" : "nocyc",
		 mtc_freq, (unsigned long long)ns_per_insn);
	return name;
}

static void check_times(bool cyc, unsigned mtc_freq, uint64_t ns_per_insn)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct enc_opts o = plain;
	struct rc_ptenc_perf_info pi;
	struct run r;
	uint64_t period_ns = ((uint64_t)RC_PTENC_TSC_PER_CTC << mtc_freq) /
			     RC_PTENC_TSC_PER_NS;
	size_t checked = 0;

	cfg.cyc = cyc;
	cfg.mtc_freq = mtc_freq;
	o.ns_per_insn = ns_per_insn;
	run(&r, time_name(cyc, mtc_freq, ns_per_insn), &cfg, &o, 30, 200);
	assert_same_ips(r.d, &r.t);
	assert_int_equal(r.d->lost_mtc, 0);
	assert_int_equal(r.d->lost_cyc, 0);
	rc_ptenc_perf_info(&cfg, &pi);
	for (size_t i = 0; i < r.t.n; i++) {
		int c = r.t.v[i].cls;
		uint64_t tsc = r.d->tsc[i], ns;

		if (c != RC_INSN_JCC && c != RC_INSN_RET && c != RC_INSN_CALL_IND &&
		    c != RC_INSN_JMP_IND)
			continue;
		assert_true(tsc != 0);
		/* perf's conversion (DESIGN §3) */
		ns = pi.time_zero + (tsc >> pi.time_shift) * pi.time_mult +
		     (((tsc & ((1ull << pi.time_shift) - 1)) * pi.time_mult) >>
		      pi.time_shift);
		if (ns > r.ns[i] + period_ns || ns + period_ns < r.ns[i])
			fail_msg("insn %zu (cls %d): decoded %llu ns, stepped %llu ns",
				 i, c, (unsigned long long)ns,
				 (unsigned long long)r.ns[i]);
		checked++;
	}
	assert_true(checked > 100);
	run_free(&r);
}

static void test_time_mtc(void **state)
{
	(void)state;
	check_times(false, 3, 1);
	check_times(false, 0, 3);
	check_times(false, 6, 2);
}

static void test_time_cyc(void **state)
{
	(void)state;
	check_times(true, 3, 1);
	check_times(true, 5, 7);
}

/* MTC goes on while TraceEn is set, whatever PacketEn is (SDM: MTC needs
 * TriggerEn and MTCEn): through a stretch of many periods (at MTC period 0
 * and 1100 ns per instruction, 34 periods an instruction) and through a
 * syscall (100 us, 3125 periods), an MTC for every period, each CTC one
 * more than the last (mod 256), and no TSC but a PSB+'s. Before, the
 * emulator sent a TSC, TMA and CBR for more than 32 periods, as on a wake
 * from a C-state, where the hardware does not halt. (The times: libipt's
 * read-ahead after a branch's packet runs over the MTCs that follow it, so
 * check_times' bound of one period does not hold over a run; report's own
 * time placement is checked against the truth by the e2e tests.) */
static void test_mtc_runs(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct enc_opts o = plain;
	struct run r;
	size_t mtcs = 0;
	int last = -1;

	(void)state;
	cfg.cyc = true;
	cfg.mtc_freq = 0;
	o.ns_per_insn = 1100;
	run(&r, "mtc_runs", &cfg, &o, 5, 20);
	assert_same_ips(r.d, &r.t);
	assert_int_equal(r.d->lost_cyc, 0);
	assert_int_equal(r.d->lost_mtc, 0);
	for (size_t i = 0; i < r.k->n; i++) {
		const struct pt_packet *p = &r.k->p[i];

		if (p->type == ppt_tsc) {
			assert_int_equal(r.k->p[i - 1].type, ppt_psb);
			last = -1;      /* the next MTC follows the TMA's CTC */
		} else if (p->type == ppt_mtc) {
			if (last >= 0)
				assert_int_equal(p->payload.mtc.ctc, (uint8_t)(last + 1));
			last = p->payload.mtc.ctc;
			mtcs++;
		}
	}
	/* one for each period from the first instruction to the last */
	uint64_t first = rc_ptenc_ns_to_tsc(&cfg, r.ns[0]) / RC_PTENC_TSC_PER_CTC;
	uint64_t end = rc_ptenc_ns_to_tsc(&cfg, r.ns[r.t.n - 1]) / RC_PTENC_TSC_PER_CTC;
	size_t nsys = 0;
	for (size_t i = 0; i < r.t.n; i++)
		nsys += r.t.v[i].cls == RC_INSN_SYSCALL;
	assert_true(nsys > 0 && end - first > nsys * 3125);   /* 100 us each */
	/* (and up to the end of the last one, 1100 ns on) */
	uint64_t insn = rc_ptenc_ns_to_tsc(&cfg, cfg.time_zero + o.ns_per_insn) /
			RC_PTENC_TSC_PER_CTC + 1;
	assert_true(mtcs >= end - first && mtcs <= end - first + insn);
	run_free(&r);
}

/* A thread that blocks in a syscall: perf schedules its per-task event
 * out (TraceEn clear) at the switch-out and in again at the switch-in,
 * where the hardware sends TSC, TMA and CBR (as skylake-echo's real trace
 * shows: TIP.PGD TSC TMA CBR MODE.Exec TIP.PGE). MTCs go out up to the
 * switch-out, none while TraceEn is clear. Before, the emulator sent an
 * MTC for every period of the wait and no TSC, and a decoder without CYC
 * could not tell which of several syscalls in a period had blocked. */
static void test_switch_traceen(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct rc_insn sys = { .ip = 0x1000, .next_ip = 0x1002, .len = 2,
			       .cls = RC_INSN_SYSCALL };
	uint64_t t0 = 2000000, per = rc_ptenc_tsc_to_ns(&cfg, rc_ptenc_ns_to_tsc(&cfg, t0) +
			((uint64_t)RC_PTENC_TSC_PER_CTC << cfg.mtc_freq)) - t0;   /* MTC period, ns */
	uint64_t out = t0 + 3 * per + 7, in = t0 + 40 * per + 3;
	struct rc_ptenc *e = rc_ptenc_new(&cfg, 0);
	const uint8_t *buf;
	struct pkts *k;
	struct pt_packet *pk;
	size_t size, n, i, pgd = 0, tsc = 0, mtcs = 0;

	(void)state;
	assert_non_null(e);
	/* (no time yet: nothing to send; the first PSB+ carries it) */
	assert_int_equal(rc_ptenc_trace_off(e, t0 - 10), 0);
	assert_int_equal(rc_ptenc_trace_on(e, t0 - 5), 0);
	assert_int_equal(rc_ptenc_enable(e, t0, 0x1000), 0);
	/* (PacketEn on: a thread in user mode is never switched out) */
	assert_int_equal(rc_ptenc_trace_off(e, t0), -EINVAL);
	assert_int_equal(rc_ptenc_insn(e, &sys, t0 + 1), 0);
	assert_int_equal(rc_ptenc_trace_off(e, out), 0);
	assert_int_equal(rc_ptenc_trace_on(e, in), 0);
	assert_int_equal(rc_ptenc_trace_on(e, in + 100), 0);   /* set already: no-op */
	assert_int_equal(rc_ptenc_enable(e, in + 1, 0x1002), 0);
	buf = rc_ptenc_data(e, &size);
	k = enc_packets(buf, size);
	pk = k->p;
	n = k->n;
	for (i = 0; i < n && pk[i].type != ppt_tip_pgd; i++)
		;
	pgd = i;
	assert_true(pgd < n);
	for (i = pgd + 1; i < n && pk[i].type != ppt_tsc; i++) {
		assert_int_equal(pk[i].type, ppt_mtc);
		mtcs++;
	}
	tsc = i;
	/* the periods up to the switch-out, each with its MTC (3), none of
	 * the 37 of the wait */
	assert_int_equal(mtcs, 3);
	assert_true(tsc + 4 < n);
	/* (an MTC after the CBR, if the PGE's nanosecond crossed a period) */
	if (pk[tsc + 3].type == ppt_mtc)
		memmove(&pk[tsc + 3], &pk[tsc + 4], (n - tsc - 4) * sizeof(*pk));
	assert_int_equal(pk[tsc].payload.tsc.tsc, rc_ptenc_ns_to_tsc(&cfg, in) & 0xffffffffffffffull);
	assert_int_equal(pk[tsc + 1].type, ppt_tma);
	assert_int_equal(pk[tsc + 2].type, ppt_cbr);
	assert_int_equal(pk[tsc + 3].type, ppt_mode);
	assert_int_equal(pk[tsc + 4].type, ppt_tip_pge);
	free(k);
	rc_ptenc_free(e);
}

/* The conversion perf uses inverts rc_ptenc_ns_to_tsc exactly. */
static void test_time_conv(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct rc_ptenc_perf_info pi;

	(void)state;
	rc_ptenc_perf_info(&cfg, &pi);
	assert_int_equal(pi.tsc_ctc_ratio_n / pi.tsc_ctc_ratio_d, RC_PTENC_TSC_PER_CTC);
	for (uint64_t ns = cfg.time_zero; ns < cfg.time_zero + 5000000000ull;
	     ns += 123456789) {
		uint64_t tsc = rc_ptenc_ns_to_tsc(&cfg, ns);
		uint64_t back = pi.time_zero + (tsc >> pi.time_shift) * pi.time_mult +
				(((tsc & ((1ull << pi.time_shift) - 1)) * pi.time_mult) >>
				 pi.time_shift);

		assert_int_equal(back, ns);
		assert_int_equal(rc_ptenc_tsc_to_ns(&cfg, tsc), ns);
	}
	assert_true(pi.attr_config & pi.tsc_bit);
	assert_true(pi.attr_config & pi.mtc_bit);
	assert_false(pi.attr_config & pi.noretcomp_bit);
}

static void test_classify(void **state)
{
	static const struct { uint8_t b[16]; int cls; uint8_t len; } c[] = {
		{ { 0x90 }, RC_INSN_OTHER, 1 },
		{ { 0x74, 0x05 }, RC_INSN_JCC, 2 },
		{ { 0xe2, 0xfe }, RC_INSN_JCC, 2 },          /* loop */
		{ { 0xe9, 0, 0, 0, 0 }, RC_INSN_JMP, 5 },
		{ { 0xff, 0xe0 }, RC_INSN_JMP_IND, 2 },      /* jmp *%rax */
		{ { 0xe8, 0, 0, 0, 0 }, RC_INSN_CALL, 5 },
		{ { 0xff, 0x15, 0, 0, 0, 0 }, RC_INSN_CALL_IND, 6 },
		{ { 0xc3 }, RC_INSN_RET, 1 },
		{ { 0xc2, 8, 0 }, RC_INSN_RET, 3 },
		{ { 0x0f, 0x05 }, RC_INSN_SYSCALL, 2 },
		{ { 0xcd, 0x80 }, RC_INSN_INT, 2 },
		{ { 0xcc }, RC_INSN_INT, 1 },
		{ { 0xf3, 0xa4 }, RC_INSN_OTHER, 2 },        /* rep movsb */
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, RC_INSN_OTHER, 4 }, /* endbr64 */
		{ { 0xf2, 0xff, 0xe0 }, RC_INSN_JMP_IND, 3 }, /* bnd jmp */
	};
	struct rc_insn in;
	csh cs;

	(void)state;
	assert_int_equal(rc_insn_cs_open(&cs), 0);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(rc_insn_classify(cs, c[i].b, 16, 0x1000, &in), 0);
		assert_int_equal(in.cls, c[i].cls);
		assert_int_equal(in.len, c[i].len);
	}
	/* direct targets */
	assert_int_equal(rc_insn_classify(cs, c[1].b, 16, 0x1000, &in), 0);
	assert_int_equal(in.target, 0x1007);
	static const uint8_t bad[] = { 0x0f, 0xff, 0xff };
	assert_true(rc_insn_classify(cs, bad, 1, 0x1000, &in) < 0);
	cs_close(&cs);
}

/* Misuse is refused, not crashed on. */
static void test_errors(void **state)
{
	struct rc_ptenc_config cfg = default_cfg();
	struct rc_ptenc *e;
	struct rc_insn in = { .ip = 0x1000, .next_ip = 0x1001, .len = 1,
			      .cls = RC_INSN_OTHER };

	(void)state;
	cfg.psb_period = 1000; /* not a power of 2 */
	assert_null(rc_ptenc_new(&cfg, 0));
	cfg.psb_period = 0;
	e = rc_ptenc_new(&cfg, 0);
	assert_non_null(e);
	assert_int_equal(rc_ptenc_insn(e, &in, 2000000), -EINVAL); /* not enabled */
	assert_int_equal(rc_ptenc_enable(e, 2000000, 0x1000), 0);
	assert_int_equal(rc_ptenc_enable(e, 2000000, 0x1000), -EINVAL);
	assert_int_equal(rc_ptenc_insn(e, &in, 1999999), -EINVAL); /* time backwards */
	rc_ptenc_free(e);
}

/* A "ret" far from .text (other upper 32 address bits). File-backed when
 * perf.data files are written, so that perf can read its code. */
static int setup(void **state)
{
	const char *dir = getenv("PTENC_PERF_DIR");
	uint8_t page[4096] = { 0xc3 }; /* ret */
	char path[4096];
	int fd;

	(void)state;
	if (!dir) {
		far_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (far_page == MAP_FAILED)
			return -1;
		far_page[0] = 0xc3;
		return mprotect(far_page, 4096, PROT_READ | PROT_EXEC);
	}
	snprintf(path, sizeof(path), "%s/farpage.bin", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
		return -1;
	far_page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return far_page == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(far_page, 4096);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_time_conv),
		cmocka_unit_test(test_roundtrip_retcomp),
		cmocka_unit_test(test_roundtrip_noretcomp),
		cmocka_unit_test(test_deep_recursion),
		cmocka_unit_test(test_psb_segments),
		cmocka_unit_test(test_ip_compression),
		cmocka_unit_test(test_syscall_pgd_pge),
		cmocka_unit_test(test_async_disable),
		cmocka_unit_test(test_long_tnt),
		cmocka_unit_test(test_stress_async_psb),
		cmocka_unit_test(test_int_is_async),
		cmocka_unit_test(test_ovf),
		cmocka_unit_test(test_chunked_output),
		cmocka_unit_test(test_time_mtc),
		cmocka_unit_test(test_mtc_runs),
		cmocka_unit_test(test_switch_traceen),
		cmocka_unit_test(test_time_cyc),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
