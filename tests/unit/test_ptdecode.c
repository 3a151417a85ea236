/* Unit tests for decoder/ptdecode.c: PT streams made with libipt's encoder
 * over a small x86-64 code region (hand-assembled below, written to a
 * file for libipt's image) decode into the branch events the code must
 * produce; OVF and a corrupted byte give LOST and a resync; chunking a
 * stream anywhere changes nothing; TSC -> ns follows DESIGN.md section 3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "decoder/ptdecode.h"

#define BASE 0x400000ull

/* main: call f; call g; jmp h.   f: call g; ret.   g: nop; ret.
 * h: syscall; nop; call g; nop (interrupted here).
 * At 0x70 (in h's range): nop; nop; call f; nop. */
static const uint8_t code[0x80] = {
	[0x00] = 0xe8, 0x1b, 0x00, 0x00, 0x00,       /* call f (0x20)   */
	[0x05] = 0xe8, 0x36, 0x00, 0x00, 0x00,       /* call g (0x40)   */
	[0x0a] = 0xe9, 0x51, 0x00, 0x00, 0x00,       /* jmp h (0x60)    */
	[0x10] = 0xe8, 0x1b, 0x00, 0x00, 0x00,       /* call 0x30 (test_ovf_stale_ret) */
	[0x15] = 0xc3,                               /* ret             */
	[0x18] = 0xe8, 0x33, 0x00, 0x00, 0x00,       /* call 0x50 (test_ovf_after_longjmp) */
	[0x1d] = 0xc3,                               /* ret             */
	[0x30] = 0xe8, 0xeb, 0xff, 0xff, 0xff,       /* call f          */
	[0x35] = 0xc3,                               /* ret             */
	[0x3a] = 0xff, 0xe0,                         /* jmp *%rax       */
	[0x20] = 0xe8, 0x1b, 0x00, 0x00, 0x00,       /* call g          */
	[0x25] = 0xc3,                               /* ret             */
	[0x40] = 0x90, 0xc3,                         /* nop; ret        */
	[0x50] = 0xe8, 0xe5, 0xff, 0xff, 0xff,       /* call 0x3a       */
	[0x55] = 0xc3,                               /* ret             */
	[0x60] = 0x0f, 0x05,                         /* syscall         */
	[0x62] = 0x90,                               /* nop             */
	[0x63] = 0xe8, 0xd8, 0xff, 0xff, 0xff,       /* call g          */
	[0x68] = 0x90, 0x90, 0x90, 0x90, 0xeb, 0xfe, /* nops; jmp $     */
	[0x70] = 0x90, 0x90,                         /* nop; nop        */
	[0x72] = 0xe8, 0xa9, 0xff, 0xff, 0xff,       /* call f          */
	[0x77] = 0x90,                               /* nop             */
};
static const char *const fnames[] = { "main", "f", "g", "h" };

static char code_path[64];

struct tctx {
	struct pt_image *image;
	int delivered;
	uint64_t remap_ns;           /* the mappings change at the first
	                                context from this time on (0: never) */
	int gen;                     /* how often they did (t_inline_at)    */
	struct pt_image *snaps[64];  /* t_snapshot's copies                 */
	int nsnaps;
	struct pt_image_section_cache *isc; /* with test_iscache        */
};

static int t_context(void *ctx, struct dc_ptq *q, uint64_t t, uint32_t *pid, uint32_t *tid,
		     struct pt_image **image, bool *first, uint64_t *since)
{
	struct tctx *c = ctx;

	*since = 0;
	if (c->remap_ns && t >= c->remap_ns && !c->gen) {
		/* another binary now at the same addresses (an exec in the
		 * same process, or a library mapped where one was), as the
		 * session tells a queue at the context it sees it */
		c->gen++;
		dc_ptq_image_changed(q, c->image);
	}
	*pid = 7;
	*tid = 8;
	*image = c->image;
	*first = c->delivered == 0;
	return 0;
}

static uint64_t t_func_range(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip, uint64_t *lo,
			     uint64_t *hi)
{
	(void)ctx;
	(void)pid;
	(void)gen;
	if (ip < BASE || ip >= BASE + sizeof(code)) {
		*lo = ip;
		*hi = ip + 1;
		return 0;
	}
	*lo = BASE + ((ip - BASE) & ~0x1full);
	*hi = *lo + 0x20;
	return 1 + ((ip - BASE) >> 5);
}

/* ---- a tiny packet writer over libipt's encoder ------------------------- */

struct enc {
	uint8_t buf[4096];
	struct pt_encoder *e;
};

static void enc_init(struct enc *w)
{
	struct pt_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.begin = w->buf;
	cfg.end = w->buf + sizeof(w->buf);
	w->e = pt_alloc_encoder(&cfg);
	assert_non_null(w->e);
}

static void pkt(struct enc *w, const struct pt_packet *p)
{
	assert_true(pt_enc_next(w->e, p) > 0);
}

static void simple(struct enc *w, enum pt_packet_type type)
{
	struct pt_packet p = { .type = type };

	pkt(w, &p);
}

static void ip_pkt(struct enc *w, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p = { .type = type };

	p.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	p.payload.ip.ip = ip;
	pkt(w, &p);
}

static void tsc(struct enc *w, uint64_t v)
{
	struct pt_packet p = { .type = ppt_tsc };

	p.payload.tsc.tsc = v;
	pkt(w, &p);
}

static void tnt(struct enc *w, int nbits)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	p.payload.tnt.bit_size = (uint8_t)nbits;
	p.payload.tnt.payload = (1u << nbits) - 1;   /* all taken */
	pkt(w, &p);
}

/* PSB+; fup_ip 0 when tracing is off at that point. */
static void psb(struct enc *w, uint64_t t, uint64_t fup_ip)
{
	struct pt_packet p = { .type = ppt_mode };

	simple(w, ppt_psb);
	tsc(w, t);
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	pkt(w, &p);
	if (fup_ip)
		ip_pkt(w, ppt_fup, fup_ip);
	simple(w, ppt_psbend);
}

static size_t enc_done(struct enc *w)
{
	uint64_t off;

	assert_int_equal(pt_enc_get_offset(w->e, &off), 0);
	pt_free_encoder(w->e);
	return (size_t)off;
}

/* ---- decoding a buffer -------------------------------------------------- */

static struct dc_pt_info conv = { .time_shift = 10, .time_mult = 1000, .time_zero = 5000 };

static uint64_t ns_of(uint64_t t)
{
	return conv.time_zero + (uint64_t)(((unsigned __int128)t * conv.time_mult) >> conv.time_shift);
}

struct evlist {
	struct dc_event ev[64];
	size_t n;
	uint64_t windows;
	uint64_t replayed, deviations, prebuilt; /* dc_ptq_ahead_stats   */
};

/* MTC/CYC decoding parameters for the timing tests (NULL: none). */
static const struct pt_config *timing_cfg;

/* The decode-ahead worker's copy of the image (decode's second run). */
static struct pt_image *t_snapshot(void *ctx, struct pt_image *image)
{
	struct tctx *c = ctx;
	struct pt_image *snap;

	if (c->nsnaps == 64 || !(snap = pt_image_alloc("snapshot")))
		return NULL;
	if (pt_image_copy(snap, image) < 0) {
		pt_image_free(snap);
		return NULL;
	}
	return c->snaps[c->nsnaps++] = snap;
}

static const struct dc_ptq_ops ops = { .context = t_context, .func_range = t_func_range,
				       .image_snapshot = t_snapshot };

/* Inline contexts: h's code [0x60, 0x70) is inlined code, context 1 in
 * the binary mapped first, 2 in the one mapped after (the generation the
 * queue asks by: tctx.gen when its image was last given or changed); none
 * elsewhere, in ranges of 0x10. */
static uint32_t t_inline_at(void *ctx, uint32_t pid, uint32_t gen, uint64_t ip, uint64_t *lo,
			    uint64_t *hi)
{
	(void)ctx;
	(void)pid;
	*lo = ip & ~0xfull;
	*hi = *lo + 0x10;
	return ip >= BASE + 0x60 && ip < BASE + 0x70 ? 1 + gen : 0;
}

static uint32_t t_image_gen(void *ctx, struct pt_image *image)
{
	const struct tctx *c = ctx;

	(void)image;
	return (uint32_t)c->gen;
}

static const struct dc_ptq_ops iops = { .context = t_context, .func_range = t_func_range,
					.inline_at = t_inline_at, .image_gen = t_image_gen,
					.image_snapshot = t_snapshot };

/* decode_once's ops (NULL: ops, or kops in the kernel tests) and, with
 * them, when the mappings change (tctx.remap_ns). */
static const struct dc_ptq_ops *test_ops;
static uint64_t test_remap_ns;

/* Kernel code (the kernel tests): 0 none, 1 kcode[] is in the image at
 * KBASE (report --vmlinux), 2 only its names are known (--kallsyms). */
static int kmode;
static char kcode_path[64];
#define KBASE 0xffffffff81000000ull

static bool t_kernel_code(void *ctx, uint64_t ip, bool *named)
{
	(void)ctx;
	*named = ip >= KBASE && ip < KBASE + 0x30;
	return *named && kmode == 1;
}

static const struct dc_ptq_ops kops = { .context = t_context, .func_range = t_func_range,
					.kernel_code = t_kernel_code, .image_snapshot = t_snapshot };

/* The queue reads code[] through an image section cache, as report's do
 * (the return addresses of calls, pend_target, need it). */
static bool test_iscache;

/* A queue's config (CPU 3, timing_cfg if set) and c's image of code[]. */
static void queue_setup(struct dc_ptq_config *cfg, struct tctx *c)
{
	memset(cfg, 0, sizeof(*cfg));
	if (timing_cfg)
		cfg->pt = *timing_cfg;
	cfg->pt.size = sizeof(cfg->pt);
	cfg->conv = conv;
	cfg->cpu = 3;
	c->image = pt_image_alloc("test");
	assert_non_null(c->image);
	if (test_iscache) {
		int isid;

		c->isc = pt_iscache_alloc(NULL);
		assert_non_null(c->isc);
		isid = pt_iscache_add_file(c->isc, code_path, 0, sizeof(code), BASE);
		assert_true(isid > 0);
		assert_true(pt_image_add_cached(c->image, c->isc, isid, NULL) >= 0);
		cfg->iscache = c->isc;
	} else {
		assert_true(pt_image_add_file(c->image, code_path, 0, sizeof(code), NULL, BASE) >= 0);
	}
	if (kmode == 1)
		assert_true(pt_image_add_file(c->image, kcode_path, 0, 0x30, NULL, KBASE) >= 0);
}

/* A break (dc_ptq_mark_breaks) decode_once marks, or UINT64_MAX. */
static uint64_t test_break = UINT64_MAX;

/* Decode buf cut into chunks of `chunk` bytes (0: one chunk), in this
 * thread or (ahead) replaying a decode-ahead worker's results from the
 * first window on. */
static void decode_once(const uint8_t *buf, size_t len, size_t chunk, struct evlist *out,
			bool ahead)
{
	struct tctx c = { 0 };
	struct dc_ptq_config cfg;
	struct dc_ptq *q;
	int ret;

	queue_setup(&cfg, &c);
	cfg.ahead = cfg.ahead_eager = ahead;
	c.remap_ns = test_remap_ns;
	q = dc_ptq_new(&cfg, test_ops ? test_ops : kmode ? &kops : &ops, &c);
	assert_non_null(q);
	if (!chunk)
		chunk = len;
	for (size_t off = 0; off < len; off += chunk) {
		struct dc_ptq_chunk ch = { buf + off, len - off < chunk ? len - off : chunk, off,
					   false, false };

		assert_int_equal(dc_ptq_add_chunk(q, &ch), 0);
	}
	if (test_break != UINT64_MAX)
		dc_ptq_mark_breaks(q, &test_break, 1);
	out->n = 0;
	while ((ret = dc_ptq_fill(q)) > 0) {
		struct dc_event ev;
		uint64_t head = dc_ptq_head_time(q);

		ret = dc_ptq_pop(q, &ev);
		assert_true(ret >= 0);
		if (ret == 1) {
			assert_int_equal(ev.time_ns, head);
			assert_true(out->n < 64);
			out->ev[out->n++] = ev;
			c.delivered++;
		}
	}
	assert_int_equal(ret, 0);
	{
		struct dc_ptq_stats st;

		dc_ptq_stats(q, &st);
		out->windows = st.windows;
		assert_int_equal(st.bytes, len);
		dc_ptq_ahead_stats(q, &out->replayed, &out->deviations, &out->prebuilt);
	}
	dc_ptq_free(q);
	pt_image_free(c.image);
	while (c.nsnaps)
		pt_image_free(c.snaps[--c.nsnaps]);
	pt_iscache_free(c.isc);
}

/* decode_once both ways: the worker's replay must give the same events
 * (with small chunks, many windows, so the windows the queue builds ahead
 * of its worker, ah_prebuild, and those it takes back, are used too). */
static void decode(const uint8_t *buf, size_t len, size_t chunk, struct evlist *out)
{
	struct evlist ah;

	decode_once(buf, len, chunk, out, false);
	decode_once(buf, len, chunk, &ah, true);
	assert_true(ah.replayed >= 1);
	assert_int_equal(ah.n, out->n);
	assert_int_equal(ah.windows, out->windows);
	for (size_t i = 0; i < out->n; i++) {
		const struct dc_event *x = &out->ev[i], *y = &ah.ev[i];

		if (x->kind != y->kind || x->reason != y->reason || x->from_ip != y->from_ip ||
		    x->to_ip != y->to_ip || x->time_ns != y->time_ns || x->pid != y->pid ||
		    x->tid != y->tid || x->cpu != y->cpu)
			fail_msg("event %zu: decoded ahead, kind %u %#lx -> %#lx @%lu; here, kind %u "
				 "%#lx -> %#lx @%lu", i, y->kind, (unsigned long)y->from_ip,
				 (unsigned long)y->to_ip, (unsigned long)y->time_ns, x->kind,
				 (unsigned long)x->from_ip, (unsigned long)x->to_ip,
				 (unsigned long)x->time_ns);
	}
}

struct want {
	uint8_t kind, reason;
	uint64_t from, to;     /* offsets from BASE; X: don't care, N: no ip */
};
#define X UINT64_MAX
#define N (UINT64_MAX - 1)

static void expect(const struct evlist *got, const struct want *w, size_t n)
{
	if (getenv("PTF_DEBUG"))
		for (size_t i = 0; i < got->n; i++)
			print_message("  %u/%u %#lx -> %#lx @%lu\n", got->ev[i].kind, got->ev[i].reason,
				      (unsigned long)got->ev[i].from_ip, (unsigned long)got->ev[i].to_ip,
				      (unsigned long)got->ev[i].time_ns);
	for (size_t i = 0; i < got->n && i < n; i++) {
		const struct dc_event *e = &got->ev[i];

		if (e->kind != w[i].kind || e->reason != w[i].reason ||
		    (w[i].from != X && e->from_ip != (w[i].from == N ? 0 : BASE + w[i].from)) ||
		    (w[i].to != X && e->to_ip != (w[i].to == N ? 0 : BASE + w[i].to)))
			fail_msg("event %zu: got kind %u reason %u %#lx -> %#lx, want kind %u reason %u "
				 "%#lx -> %#lx", i, e->kind, e->reason, (unsigned long)e->from_ip,
				 (unsigned long)e->to_ip, w[i].kind, w[i].reason,
				 (unsigned long)w[i].from, (unsigned long)w[i].to);
		assert_int_equal(e->pid, 7);
		assert_int_equal(e->tid, 8);
		assert_int_equal(e->cpu, 3);
		if (i)
			assert_true(e->time_ns >= got->ev[i - 1].time_ns);
	}
	assert_int_equal(got->n, n);
}

/* The full program, with a PSB+ in the middle (at g's entry) so that the
 * decoder crosses PSBs; returns are compressed only for calls made after
 * the last PSB, as the hardware does. */
static size_t stream_basic(uint8_t *out)
{
	struct enc w;
	size_t n;

	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x00);        /* enabled at main */
	psb(&w, 2000, BASE + 0x40);                  /* after call f, call g */
	for (int i = 0; i < 200; i++)                /* room for chunk borders */
		simple(&w, ppt_pad);
	ip_pkt(&w, ppt_tip, BASE + 0x25);            /* g's ret (stack reset) */
	ip_pkt(&w, ppt_tip, BASE + 0x05);            /* f's ret */
	tnt(&w, 1);                                  /* call g; ret: compressed */
	ip_pkt(&w, ppt_tip_pgd, 0);                  /* jmp h; syscall */
	tsc(&w, 3000);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x62);        /* back from the kernel */
	tnt(&w, 1);                                  /* call g; ret */
	ip_pkt(&w, ppt_fup, BASE + 0x69);            /* interrupted at 0x69 */
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	memcpy(out, w.buf, n);
	return n;
}

static const struct want want_basic[] = {
	{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
	{ DC_EV_CALL, 0, 0x00, 0x20 },
	{ DC_EV_CALL, 0, 0x20, 0x40 },
	{ DC_EV_RETURN, 0, 0x41, 0x25 },
	{ DC_EV_RETURN, 0, 0x25, 0x05 },
	{ DC_EV_CALL, 0, 0x05, 0x40 },
	{ DC_EV_RETURN, 0, 0x41, 0x0a },
	{ DC_EV_JUMP, 0, 0x0a, 0x60 },
	{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
	{ DC_EV_TRACE_ON, DC_ON_RESUME, N, 0x62 },
	{ DC_EV_CALL, 0, 0x63, 0x40 },
	{ DC_EV_RETURN, 0, 0x41, 0x68 },
	{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x69, N },
};

static void test_basic(void **state)
{
	uint8_t buf[4096];
	size_t n = stream_basic(buf);
	struct evlist got;

	(void)state;
	decode(buf, n, 0, &got);
	expect(&got, want_basic, sizeof(want_basic) / sizeof(want_basic[0]));
	/* times: TSC through the conversion, at the packets' places */
	assert_int_equal(got.ev[0].time_ns, ns_of(1000));
	assert_int_equal(got.ev[9].time_ns, ns_of(3000));
	assert_true(got.ev[8].time_ns < ns_of(3000));
	/* The PSB+ at TSC 2000 is the time of its FUP's instruction, g's nop:
	 * the 3rd since tracing began at TSC 1000, the time of the PGE's own
	 * instruction, the 1st (as the emulator's truth stamps it); the direct
	 * calls (instructions 1 and 2) get times in proportion. g's ret takes
	 * the first packet after it, with no newer time: 2000 too. */
	assert_int_equal(got.ev[3].time_ns, ns_of(2000));
	assert_int_equal(got.ev[1].time_ns, ns_of(1000));
	assert_int_equal(got.ev[2].time_ns, ns_of(1000) + (ns_of(2000) - ns_of(1000)) * 1 / 2);
}

/* DC_EV_INLINE events at ip (an offset from BASE) in got. */
static int inline_events_at(const struct evlist *got, uint64_t ip)
{
	int n = 0;

	for (size_t i = 0; i < got->n; i++)
		n += got->ev[i].kind == DC_EV_INLINE && got->ev[i].to_ip == BASE + ip;
	return n;
}

/* The mappings change while the thread is in the kernel (an exec, or
 * another library mapped where one was): the code at the same addresses
 * is another binary's, with other inline contexts, so the decoder's range
 * around its last inline lookup goes (dc_ptq_image_changed). In
 * stream_basic, h's syscall at 0x60 and the nop after it are inlined
 * context 1 before the change and context 2 after, made at the resume at
 * 0x62 (TSC 3000): a DC_EV_INLINE there, which the kept range hid; with
 * no change, none. Decoded ahead too (the worker's copy of the image is
 * then stale: the queue decodes on by itself). */
static void test_inline_remap(void **state)
{
	uint8_t buf[4096];
	size_t n = stream_basic(buf);
	struct evlist got;

	(void)state;
	test_ops = &iops;
	decode(buf, n, 0, &got);
	assert_int_equal(inline_events_at(&got, 0x62), 0);
	test_remap_ns = ns_of(3000);
	decode(buf, n, 0, &got);
	assert_int_equal(inline_events_at(&got, 0x62), 1);
	/* the rest as before: the events of test_basic, and that one */
	assert_int_equal(got.n, sizeof(want_basic) / sizeof(want_basic[0]) + 1);
}

/* (after test_inline_remap even when it fails, so that no later test
 * decodes with its ops) */
static int inline_remap_done(void **state)
{
	(void)state;
	test_ops = NULL;
	test_remap_ns = 0;
	return 0;
}

/* Chunk borders anywhere (even inside packets and PSBs) change nothing. */
/* One AUX chunk longer than the queue's CHUNK_MAX (256 KiB) is decoded in
 * windows of about that size, each from a PSB, with the same events as
 * test_basic's stream (it is that stream, with 300 KiB of PADs before its
 * middle PSB). */
static void test_long_chunk(void **state)
{
	const size_t mid = 300 << 10, len = 600 << 10;
	uint8_t *big = calloc(1, len);   /* zeros: PAD packets */
	struct evlist got;
	struct enc w;
	size_t n;

	(void)state;
	assert_non_null(big);
	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x00);
	n = enc_done(&w);
	memcpy(big, w.buf, n);
	enc_init(&w);
	psb(&w, 2000, BASE + 0x40);
	ip_pkt(&w, ppt_tip, BASE + 0x25);
	ip_pkt(&w, ppt_tip, BASE + 0x05);
	tnt(&w, 1);
	ip_pkt(&w, ppt_tip_pgd, 0);
	tsc(&w, 3000);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x62);
	tnt(&w, 1);
	ip_pkt(&w, ppt_fup, BASE + 0x69);
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	memcpy(big + mid, w.buf, n);
	decode(big, len, 0, &got);
	expect(&got, want_basic, sizeof(want_basic) / sizeof(want_basic[0]));
	assert_true(got.windows >= 2);
	/* a break is where a chunk starts, never where the queue cut one */
	test_break = 256 << 10;
	decode(big, len, 0, &got);
	test_break = UINT64_MAX;
	expect(&got, want_basic, sizeof(want_basic) / sizeof(want_basic[0]));
	free(big);
}

static void test_chunked(void **state)
{
	uint8_t buf[4096];
	size_t n = stream_basic(buf);
	const size_t sizes[] = { 1, 3, 7, 16, 17, 40, 64, 100, 150, 200, 256 };
	uint64_t windows = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct evlist got;

		decode(buf, n, sizes[i], &got);
		expect(&got, want_basic, sizeof(want_basic) / sizeof(want_basic[0]));
		if (got.windows > windows)
			windows = got.windows;
	}
	/* some cut made the decoder stop at the middle PSB and go on */
	assert_true(windows >= 2);
}

/* main calls f, f calls g, an OVF, main's second call (test_overflow,
 * test_ovf_cyc) */
static const struct want want_ovf[] = {
	{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
	{ DC_EV_CALL, 0, 0x00, 0x20 },
	{ DC_EV_CALL, 0, 0x20, 0x40 },
	/* g's ret went to 0x25, but libipt tells its target only with
	 * the next block, and the overflow comes first */
	{ DC_EV_LOST, DC_LOST_OVF, X, X },
	{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x05 },
	{ DC_EV_CALL, 0, 0x05, 0x40 },
	{ DC_EV_RETURN, 0, 0x41, 0x0a },
	{ DC_EV_JUMP, 0, 0x0a, 0x60 },
	{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
};

static void test_overflow(void **state)
{
	struct evlist got;
	struct enc w;
	size_t n;

	(void)state;
	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE);
	tnt(&w, 1);                          /* g's ret */
	simple(&w, ppt_ovf);
	tsc(&w, 5000);
	ip_pkt(&w, ppt_fup, BASE + 0x05);    /* resumes at main's 2nd call */
	tnt(&w, 1);
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	decode(w.buf, n, 0, &got);
	expect(&got, want_ovf, sizeof(want_ovf) / sizeof(want_ovf[0]));
	/* the loss starts before the OVF, the resync is at its time */
	assert_true(got.ev[3].time_ns < ns_of(5000));
	assert_int_equal(got.ev[4].time_ns, ns_of(5000));
}

/* The end of test_ovf_stale_ret's and test_ovf_after_longjmp's streams:
 * an OVF at time tsc_v resuming at main, interrupted at its call of f;
 * then the stream is decoded (code read through an iscache, as report's
 * queues read it: the return addresses of calls need it) and checked. */
static void ovf_then_end(struct enc *w, uint64_t tsc_v, const struct want *want, size_t nwant)
{
	struct evlist got;
	size_t n;

	simple(w, ppt_ovf);
	tsc(w, tsc_v);
	ip_pkt(w, ppt_fup, BASE + 0x00);
	ip_pkt(w, ppt_fup, BASE + 0x20);     /* interrupted at f's call */
	ip_pkt(w, ppt_tip_pgd, 0);
	n = enc_done(w);
	test_iscache = true;
	decode(w->buf, n, 0, &got);
	test_iscache = false;
	expect(&got, want, nwant);
}

/* A return libipt decoded right before an OVF goes after the call on top
 * of the calls seen (pend_target). g's return to 0x35 skips f's frame (a
 * longjmp, as far as the calls tell): f's call's return address goes with
 * it, and the return at 0x35 at the OVF goes to 0x15, after the call that
 * made 0x30's frame. Before, f's call's address stayed on top and that
 * return went to it, back into 0x35's own function (emu_longjmp: main
 * returning into deepest). After the OVF a return to the top address (f's
 * to 0x77) goes there, and a retpoline's return to an address not on the
 * stack (g's to 0x15) pops only the top: the return at 0x15 at the third
 * OVF goes to 0x77, after the call that made f's frame (forgetting every
 * address there, it got no event). */
static void test_ovf_stale_ret(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x10 },
		{ DC_EV_CALL, 0, 0x10, 0x30 },
		{ DC_EV_CALL, 0, 0x30, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x35 },     /* past f's frame          */
		{ DC_EV_RETURN, 0, 0x35, 0x15 },     /* at the OVF: told by the call */
		{ DC_EV_LOST, DC_LOST_OVF, X, X },
		{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x70 },
		{ DC_EV_CALL, 0, 0x72, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x25 },
		{ DC_EV_RETURN, 0, 0x25, 0x77 },     /* at the OVF: f's call's  */
		{ DC_EV_LOST, DC_LOST_OVF, X, X },
		{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x70 },
		{ DC_EV_CALL, 0, 0x72, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x15 },     /* to no call's address    */
		{ DC_EV_RETURN, 0, 0x15, 0x77 },     /* at the OVF: below the top */
		{ DC_EV_LOST, DC_LOST_OVF, X, X },
		{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x00 },
		{ DC_EV_CALL, 0, 0x00, 0x20 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x20, N },
	};
	struct enc w;

	(void)state;
	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x10);
	ip_pkt(&w, ppt_tip, BASE + 0x35);    /* g's ret, past f */
	ip_pkt(&w, ppt_tip, BASE + 0x15);    /* 0x35's ret */
	simple(&w, ppt_ovf);
	tsc(&w, 5000);
	ip_pkt(&w, ppt_fup, BASE + 0x70);
	tnt(&w, 1);                          /* g's ret: compressed */
	tnt(&w, 1);                          /* f's ret: compressed */
	simple(&w, ppt_ovf);
	tsc(&w, 6000);
	ip_pkt(&w, ppt_fup, BASE + 0x70);
	ip_pkt(&w, ppt_tip, BASE + 0x15);    /* g's ret, as a retpoline's */
	ip_pkt(&w, ppt_tip, BASE + 0x77);    /* 0x15's ret */
	ovf_then_end(&w, 7000, want, sizeof(want) / sizeof(want[0]));
}

/* An indirect jump into the middle of another function (a longjmp back
 * into the function at 0x50, from 0x3a it called) leaves the frames above
 * that function's: the return address of its own call goes too, and its
 * return at the OVF goes after the call that made its frame (0x1d). Before,
 * that return went to 0x55, into its own function (emu_longjmp: try_it
 * returning into siglongjmp, after __longjmp's jump back into try_it). */
static void test_ovf_after_longjmp(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x18 },
		{ DC_EV_CALL, 0, 0x18, 0x50 },
		{ DC_EV_CALL, 0, 0x50, 0x3a },
		{ DC_EV_JUMP, 0, 0x3a, 0x55 },
		{ DC_EV_RETURN, 0, 0x55, 0x1d },     /* at the OVF: told by the call */
		{ DC_EV_LOST, DC_LOST_OVF, X, X },
		{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x00 },
		{ DC_EV_CALL, 0, 0x00, 0x20 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x20, N },
	};
	struct enc w;

	(void)state;
	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x18);
	ip_pkt(&w, ppt_tip, BASE + 0x55);    /* the longjmp */
	ip_pkt(&w, ppt_tip, BASE + 0x1d);    /* 0x55's ret */
	ovf_then_end(&w, 5000, want, sizeof(want) / sizeof(want[0]));
}

static void test_corrupt(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
		{ DC_EV_CALL, 0, 0x00, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		/* g's ret: its block comes back with the error (read ahead) */
		{ DC_EV_LOST, DC_LOST_DECODE, X, X },
		{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x05 },
		{ DC_EV_CALL, 0, 0x05, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x0a },
		{ DC_EV_JUMP, 0, 0x0a, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
	};
	struct evlist got;
	struct enc w;
	uint8_t buf[4096];
	size_t n, bad;

	(void)state;
	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE);
	tnt(&w, 1);
	tnt(&w, 1);                  /* f's ret: this packet gets corrupted */
	assert_int_equal(pt_enc_get_offset(w.e, &(uint64_t){ 0 }), 0);
	{
		uint64_t off;

		pt_enc_get_offset(w.e, &off);
		bad = (size_t)off - 1;
	}
	simple(&w, ppt_pad);
	simple(&w, ppt_pad);
	psb(&w, 7000, BASE + 0x05);
	tnt(&w, 1);
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	memcpy(buf, w.buf, n);
	/* an extended-opcode byte followed by an opcode that does not exist */
	buf[bad] = 0x02;
	buf[bad + 1] = 0x01;
	decode(buf, n, 0, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(got.ev[4].time_ns, ns_of(7000));
	/* the same with the loss right at a chunk border */
	decode(buf, n, bad + 1, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
}

/* A chunk after lost AUX data: LOST(TRUNCATED), resync at its PSB. */
static void test_truncated(void **state)
{
	struct tctx c = { 0 };
	struct dc_ptq_config cfg;
	struct dc_ptq *q;
	struct enc w1, w2;
	size_t n1, n2;
	int kinds[32], nk = 0, ret;

	(void)state;
	enc_init(&w1);
	psb(&w1, 1000, 0);
	ip_pkt(&w1, ppt_tip_pge, BASE);
	tnt(&w1, 1);
	n1 = enc_done(&w1);
	enc_init(&w2);
	psb(&w2, 9000, BASE + 0x05);
	tnt(&w2, 1);
	ip_pkt(&w2, ppt_tip_pgd, 0);
	n2 = enc_done(&w2);

	queue_setup(&cfg, &c);
	q = dc_ptq_new(&cfg, &ops, &c);
	assert_int_equal(dc_ptq_add_chunk(q, &(struct dc_ptq_chunk){ w1.buf, n1, 0, false, false }), 0);
	/* offsets leave a hole: the chunk in between was dropped */
	assert_int_equal(dc_ptq_add_chunk(q, &(struct dc_ptq_chunk){ w2.buf, n2, 4096, true, false }), 0);
	while ((ret = dc_ptq_fill(q)) > 0) {
		struct dc_event ev;

		if (dc_ptq_pop(q, &ev) == 1) {
			c.delivered++;
			assert_true(nk < 32);
			kinds[nk++] = ev.kind * 16 + ev.reason;
		}
	}
	assert_int_equal(ret, 0);
	/* ON, CALL, CALL, RETURN, LOST(TRUNCATED), ON(SYNC), CALL, RETURN, JUMP, OFF */
	assert_int_equal(nk, 10);
	assert_int_equal(kinds[4], DC_EV_LOST * 16 + DC_LOST_TRUNCATED);
	assert_int_equal(kinds[5], DC_EV_TRACE_ON * 16 + DC_ON_SYNC);
	assert_int_equal(kinds[6], DC_EV_CALL * 16);
	assert_int_equal(kinds[9], DC_EV_TRACE_OFF * 16 + DC_OFF_SYSCALL);
	{
		struct dc_ptq_stats st;

		dc_ptq_stats(q, &st);
		assert_int_equal(st.lost_truncated, 1);
		assert_int_equal(st.bytes, n1 + n2);
	}
	dc_ptq_free(q);
	pt_image_free(c.image);
}

/* Data lost from a queue's start (a TRUNCATED AUX record at or before its
 * first chunk): in loss from time 0 until the decoder syncs at the chunk's
 * PSB, where the thread on the CPU gets its LOST (at the sync point: no
 * switch-in known here) before TRACE_ON(SYNC), unless the owner gave it
 * one already (dc_ptq_loss_taken). A queue with no chunk at
 * all (every byte of its CPU lost) stays in loss and emits nothing. */
static void test_lost_start(void **state)
{
	struct tctx c = { 0 };
	struct dc_ptq_config cfg;
	struct dc_ptq *q;
	struct dc_ptq_stats st;
	struct enc w;
	struct dc_event ev[16];
	uint64_t brk = 4096;
	size_t n, nev = 0;
	uint8_t why = 0;
	int ret;

	(void)state;
	enc_init(&w);
	psb(&w, 9000, BASE + 0x05);
	tnt(&w, 1);
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	queue_setup(&cfg, &c);
	q = dc_ptq_new(&cfg, &ops, &c);
	assert_int_equal(dc_ptq_add_chunk(q, &(struct dc_ptq_chunk){ w.buf, n, brk, false, false }), 0);
	assert_false(dc_ptq_in_loss(q, 1, &why));
	dc_ptq_mark_breaks(q, &brk, 1);
	assert_true(dc_ptq_in_loss(q, 0, &why));
	assert_int_equal(why, DC_LOST_TRUNCATED);
	while ((ret = dc_ptq_fill(q)) > 0) {
		if (dc_ptq_pop(q, &ev[nev]) == 1) {
			c.delivered++;
			assert_true(++nev < 16);
		}
	}
	assert_int_equal(ret, 0);
	/* LOST(TRUNCATED), ON(SYNC), CALL, RETURN, JUMP, OFF */
	assert_int_equal(nev, 6);
	assert_int_equal(ev[0].kind, DC_EV_LOST);
	assert_int_equal(ev[0].reason, DC_LOST_TRUNCATED);
	assert_int_equal(ev[0].tid, 8);
	assert_int_equal(ev[0].time_ns, ns_of(9000));
	assert_int_equal(ev[1].kind, DC_EV_TRACE_ON);
	assert_int_equal(ev[1].reason, DC_ON_SYNC);
	assert_int_equal(ev[2].kind, DC_EV_CALL);
	assert_false(dc_ptq_in_loss(q, ns_of(9000), &why));
	dc_ptq_stats(q, &st);
	assert_int_equal(st.lost_truncated, 1);
	dc_ptq_free(q);

	/* the owner gave thread 8 its LOST at its switch-in: no second one */
	q = dc_ptq_new(&cfg, &ops, &c);
	assert_int_equal(dc_ptq_add_chunk(q, &(struct dc_ptq_chunk){ w.buf, n, brk, false, false }), 0);
	dc_ptq_mark_breaks(q, &brk, 1);
	dc_ptq_loss_taken(q, 8);
	nev = 0;
	while (dc_ptq_fill(q) > 0)
		if (dc_ptq_pop(q, &ev[nev]) == 1)
			assert_true(++nev < 16);
	assert_int_equal(nev, 5);
	assert_int_equal(ev[0].kind, DC_EV_TRACE_ON);
	assert_int_equal(ev[0].reason, DC_ON_SYNC);
	dc_ptq_free(q);

	q = dc_ptq_new(&cfg, &ops, &c);
	dc_ptq_mark_breaks(q, &brk, 1);
	assert_int_equal(dc_ptq_fill(q), 0);
	assert_true(dc_ptq_in_loss(q, 0, &why));
	assert_true(dc_ptq_in_loss(q, UINT64_MAX, &why));
	dc_ptq_stats(q, &st);
	assert_int_equal(st.lost_truncated, 1);
	assert_int_equal(st.events, 0);
	dc_ptq_free(q);
	pt_image_free(c.image);
}

/* DESIGN.md section 3's formula, against 128-bit arithmetic. */
static void test_time_conv(void **state)
{
	const struct dc_pt_info cs[] = {
		{ .time_shift = 31, .time_mult = 1073741824, .time_zero = 12345 },
		{ .time_shift = 10, .time_mult = 1000, .time_zero = 0 },
		{ .time_shift = 21, .time_mult = 699050, .time_zero = UINT64_C(1) << 40 },
	};
	const uint64_t tscs[] = { 0, 1, 1023, 1024, UINT64_C(123456789012345),
				  UINT64_C(1) << 50 };

	(void)state;
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		for (size_t k = 0; k < sizeof(tscs) / sizeof(tscs[0]); k++) {
			unsigned __int128 p = (unsigned __int128)tscs[k] * cs[i].time_mult;

			assert_int_equal(dc_pt_tsc_to_ns(&cs[i], tscs[k]),
					 cs[i].time_zero + (uint64_t)(p >> cs[i].time_shift));
		}
}

static int setup(void **state)
{
	FILE *f;

	(void)state;
	snprintf(code_path, sizeof(code_path), "/tmp/ptf-ptdecode-%d.bin", (int)getpid());
	f = fopen(code_path, "wb");
	if (!f || fwrite(code, 1, sizeof(code), f) != sizeof(code))
		return -1;
	fclose(f);
	(void)fnames;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(code_path);
	return 0;
}

/* ---- CYC calibration across a trace gap -------------------------------- */

static void cyc(struct enc *w, uint64_t v)
{
	struct pt_packet p = { .type = ppt_cyc };

	p.payload.cyc.value = v;
	pkt(w, &p);
}

static void mtc_at(struct enc *w, uint64_t ctc)
{
	struct pt_packet p = { .type = ppt_mtc };

	p.payload.mtc.ctc = (uint8_t)(ctc >> 3);   /* mtc_freq 3 */
	pkt(w, &p);
}

/* TSC + TMA at t (TSC ticks; 64 per CTC tick) */
static void tsc_tma(struct enc *w, uint64_t t)
{
	struct pt_packet p = { .type = ppt_tma };

	tsc(w, t);
	p.payload.tma.ctc = (uint16_t)(t / 64);
	p.payload.tma.fc = (uint16_t)(t % 64);
	pkt(w, &p);
}

static void mode_exec(struct enc *w)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	pkt(w, &p);
}

static void cbr(struct enc *w, uint8_t ratio)
{
	struct pt_packet p = { .type = ppt_cbr };

	p.payload.cbr.ratio = ratio;
	pkt(w, &p);
}

/* The timing of these streams: an MTC every 8 CTC ticks, 64 TSC ticks per
 * CTC tick, and CBR 20, the nominal ratio: one cycle per TSC tick. */
static void timing_on(struct pt_config *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->mtc_freq = 3;
	pc->nom_freq = 20;
	pc->cpuid_0x15_eax = 1;
	pc->cpuid_0x15_ebx = 64;
	timing_cfg = pc;
}

/* PSB+ at TSC t with TMA and CBR; fup_ip 0 when tracing is off there. */
static void psb_timed(struct enc *w, uint64_t t, uint64_t fup_ip)
{
	simple(w, ppt_psb);
	tsc_tma(w, t);
	cbr(w, 20);
	mode_exec(w);
	if (fup_ip)
		ip_pkt(w, ppt_fup, fup_ip);
	simple(w, ppt_psbend);
}

/* h's syscall, then tracing stops until `resume` (TSC ticks, CBR equal to
 * the nominal ratio: one cycle per tick). A first MTC at CTC 1008 starts
 * libipt's calibration; the next, at CTC `mtc2`, calibrates across the
 * gap. After it the thread runs 116 more cycles and is interrupted. */
static size_t stream_gap(uint8_t *out, uint64_t resume, uint64_t mtc2)
{
	struct enc w;
	size_t n;

	enc_init(&w);
	psb_timed(&w, 64000, 0);
	cyc(&w, 512);
	mtc_at(&w, 1008);                            /* TSC 64512 */
	cyc(&w, 88);
	mode_exec(&w);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x60);        /* 64600 */
	cyc(&w, 10);
	ip_pkt(&w, ppt_tip_pgd, 0);                  /* syscall at 64610 */
	cyc(&w, resume - 64610);                     /* the gap */
	tsc_tma(&w, resume);
	mode_exec(&w);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x62);
	cyc(&w, 20);
	tnt(&w, 1);                                  /* g's ret at resume+20 */
	cyc(&w, mtc2 * 64 - resume - 20);
	mtc_at(&w, mtc2);
	cyc(&w, 116);
	ip_pkt(&w, ppt_fup, BASE + 0x6c);            /* at mtc2 * 64 + 116 */
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	memcpy(out, w.buf, n);
	return n;
}

/* libipt calibrates the cycles-to-TSC ratio at each MTC from the cycles
 * and the CTC distance (8-bit payload: modulo 2048 CTC ticks here) since
 * the last one. A gap's cycles go into that sum, so without the decoder's
 * fix (ptdecode.c, cyc_fix) every gap skews it; a gap of whole MTC wraps
 * (distance 0) made time stand still after the MTC. Times stay exact. */
static void test_cyc_gap(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
		{ DC_EV_TRACE_ON, DC_ON_RESUME, N, 0x62 },
		{ DC_EV_CALL, 0, 0x63, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x68 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x6c, N },
	};
	/* resume, next MTC's CTC: one wrap (distance 0) or three, and one
	 * MTC period past a wrap: no gap value can help; a gap within a wrap,
	 * where one can */
	static const uint64_t cases[][2] = {
		{ 195500, 1008 + 2048 }, { 195500 + 2048 * 64 * 2, 1008 + 2048 * 3 },
		{ 195500, 1008 + 2048 + 8 }, { 100000, 1600 },
	};
	struct pt_config pc;

	(void)state;
	timing_on(&pc);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[4096];
		uint64_t resume = cases[i][0], mtc2 = cases[i][1];
		size_t n;
		struct evlist got;

		assert_true(resume + 20 < mtc2 * 64);
		n = stream_gap(buf, resume, mtc2);
		decode(buf, n, 0, &got);
		expect(&got, want, sizeof(want) / sizeof(want[0]));
		assert_int_equal(got.ev[1].time_ns, ns_of(64610));
		assert_int_equal(got.ev[2].time_ns, ns_of(resume));
		assert_int_equal(got.ev[4].time_ns, ns_of(resume + 20));
		assert_int_equal(got.ev[5].time_ns, ns_of(mtc2 * 64 + 116));
	}
	timing_cfg = NULL;
}

/* A timed stream that starts tracing at BASE + off, TSC 64000 ("insn 0") */
static void timed_start(struct enc *w, struct pt_config *pc, uint64_t off)
{
	timing_on(pc);
	enc_init(w);
	psb_timed(w, 64000, 0);
	mode_exec(w);
	ip_pkt(w, ppt_tip_pge, BASE + off);
}

/* ... ended: decoded in chunks of `chunk` bytes (0: one) */
static void timed_decode(struct enc *w, size_t chunk, struct evlist *got)
{
	uint8_t buf[4096];
	size_t n = enc_done(w);

	memcpy(buf, w->buf, n);
	decode(buf, n, chunk, got);
	timing_cfg = NULL;
}

/* main calls f, f calls g, both return, main calls g again and is
 * interrupted at g's ret. */
static const struct want want_interrupted[] = {
	{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
	{ DC_EV_CALL, 0, 0x00, 0x20 },
	{ DC_EV_CALL, 0, 0x20, 0x40 },
	{ DC_EV_RETURN, 0, 0x41, 0x25 },
	{ DC_EV_RETURN, 0, 0x25, 0x05 },
	{ DC_EV_CALL, 0, 0x05, 0x40 },
	{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x41, N },
};

/* An OVF: libipt forgets the cycles-to-TSC calibration there (keeping
 * the time) and has none again before the second MTC after it, so every
 * CYC up to then added nothing: g's ret and the syscall after the
 * overflow took the time of its TSC. The decoder puts a CBR before the
 * OVF's FUP in its copy of the window (ptdecode.c, cyc_fix_copy): the
 * nominal ratio from there, as before the overflow. Times stay exact, in
 * one window or in chunks. */
static void test_ovf_cyc(void **state)
{
	const size_t chunks[] = { 0, 7, 16 };

	(void)state;
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct pt_config pc;
		struct enc w;
		struct evlist got;

		timed_start(&w, &pc, 0x00);
		cyc(&w, 300);
		mtc_at(&w, 1008);                  /* TSC 64512 */
		cyc(&w, 100);
		tnt(&w, 1);                        /* g's ret, lost with the OVF */
		simple(&w, ppt_ovf);
		cyc(&w, 7);
		tsc_tma(&w, 70000);
		ip_pkt(&w, ppt_fup, BASE + 0x05);  /* main's 2nd call at 70000 */
		cyc(&w, 30);
		tnt(&w, 1);                        /* g's ret at 70030 */
		cyc(&w, 40);
		ip_pkt(&w, ppt_tip_pgd, 0);        /* h's syscall at 70070 */
		timed_decode(&w, chunks[i], &got);
		expect(&got, want_ovf, sizeof(want_ovf) / sizeof(want_ovf[0]));
		assert_int_equal(got.ev[4].time_ns, ns_of(70000));
		assert_int_equal(got.ev[6].time_ns, ns_of(70030));
		assert_int_equal(got.ev[8].time_ns, ns_of(70070));
	}
}

/* A CBR outside PSB+ (a frequency change; the emulator's wake after a
 * stretch without MTCs: TSC TMA CBR) is an event, and libipt's read-ahead
 * stops at it: the time read for the next branch is the CBR's, though
 * that branch's TNT comes after more CYCs and an MTC. Anchored at the
 * CBR's time, g's ret and the calls before it came out early; the tick
 * at the TNT has its time. A TNT right after the CBR (no tick: no time
 * since) keeps the CBR's. In one window or in chunks. */
static void test_cbr_in_flow(void **state)
{
	const size_t chunks[] = { 0, 7, 16 };

	(void)state;
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct pt_config pc;
		struct enc w;
		struct evlist got;
		uint64_t t0 = ns_of(64000), t1 = ns_of(64552);

		timed_start(&w, &pc, 0x00);        /* insn 0 at 64000 */
		cyc(&w, 100);
		tsc_tma(&w, 64100);
		cbr(&w, 20);
		cyc(&w, 412);
		mtc_at(&w, 1008);                  /* TSC 64512 */
		cyc(&w, 40);
		tnt(&w, 1);                        /* g's ret (insn 4) at 64552 */
		cyc(&w, 48);
		tsc_tma(&w, 64600);
		cbr(&w, 20);
		tnt(&w, 1);                        /* f's ret at 64600 */
		cyc(&w, 100);
		ip_pkt(&w, ppt_fup, BASE + 0x41);  /* insn 8 (g's ret) at 64700 */
		ip_pkt(&w, ppt_tip_pgd, 0);
		timed_decode(&w, chunks[i], &got);
		expect(&got, want_interrupted,
		       sizeof(want_interrupted) / sizeof(want_interrupted[0]));
		assert_int_equal(got.ev[1].time_ns, t0);
		assert_int_equal(got.ev[2].time_ns, t0 + (t1 - t0) / 3);
		assert_int_equal(got.ev[3].time_ns, t1);
		assert_int_equal(got.ev[4].time_ns, ns_of(64600));
		assert_int_equal(got.ev[6].time_ns, ns_of(64700));
	}
}

/* Two returns in one TNT (its CYC times the first), then an interrupt
 * (FUP+PGD) with a time of its own, at the instruction after the last one
 * decoded: the second return and the call after it are placed between
 * those two anchors by instruction count. */
static void test_async_after_tnt(void **state)
{
	struct pt_config pc;
	struct enc w;
	struct evlist got;
	uint64_t t1, t2;

	(void)state;
	timed_start(&w, &pc, 0x00);
	cyc(&w, 3);
	tnt(&w, 2);                             /* g's ret (insn 4) at 64003, f's */
	cyc(&w, 100);
	ip_pkt(&w, ppt_fup, BASE + 0x41);       /* insn 8 (g's ret) at 64103 */
	ip_pkt(&w, ppt_tip_pgd, 0);
	timed_decode(&w, 0, &got);
	expect(&got, want_interrupted, sizeof(want_interrupted) / sizeof(want_interrupted[0]));
	t1 = ns_of(64003);
	t2 = ns_of(64103);
	assert_int_equal(got.ev[3].time_ns, t1);
	assert_int_equal(got.ev[4].time_ns, t1 + (t2 - t1) * 1 / 4);   /* insn 5 */
	assert_int_equal(got.ev[5].time_ns, t1 + (t2 - t1) * 2 / 4);   /* insn 6 */
	assert_int_equal(got.ev[6].time_ns, t2);
}

/* A PSB+ in the middle of the flow, between two instructions without
 * packets: its TSC is the time of the instruction at its FUP. libipt tells
 * the PSB+'s CBR before it decodes the code up to the FUP, and the MODE.Exec
 * after: that code is no later than the PSB, and the PSB's time is no read
 * ahead for the next branch that takes a packet (g's ret, which has its own
 * CYC): the direct calls between get times in proportion. */
static void test_psb_in_flow(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x70 },
		{ DC_EV_CALL, 0, 0x72, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x25 },
		{ DC_EV_RETURN, 0, 0x25, 0x77 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x77, N },
	};
	struct pt_config pc;
	struct enc w;
	struct evlist got;
	uint64_t t2 = ns_of(64300), t6 = ns_of(64303), t8 = ns_of(64403);

	(void)state;
	timed_start(&w, &pc, 0x70);
	psb_timed(&w, 64300, BASE + 0x71);      /* insn 2 (0x71) at 64300 */
	cyc(&w, 3);
	tnt(&w, 2);                             /* g's ret (insn 6) at 64303, f's */
	cyc(&w, 100);
	ip_pkt(&w, ppt_fup, BASE + 0x77);       /* insn 8 at 64403 */
	ip_pkt(&w, ppt_tip_pgd, 0);
	timed_decode(&w, 0, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(got.ev[1].time_ns, t2 + (t6 - t2) * 1 / 4);   /* insn 3 */
	assert_int_equal(got.ev[2].time_ns, t2 + (t6 - t2) * 2 / 4);   /* insn 4 */
	assert_int_equal(got.ev[3].time_ns, t6);
	assert_int_equal(got.ev[4].time_ns, t6 + (t8 - t6) / 2);        /* insn 7 */
	assert_int_equal(got.ev[5].time_ns, t8);
}

/* A PSB right after a branch with its own time (g's ret, CYC) where the
 * decoder stops a window and goes on in the next one (chunks of 128 bytes,
 * the PSB at 128): the ret's event waits for the next block, and gets its
 * own time, not the PSB's. */
static void test_psb_at_window_stop(void **state)
{
	struct pt_config pc;
	struct enc w;
	struct evlist got;
	uint64_t off = 0;
	uint64_t t4 = ns_of(64003), t5 = ns_of(64010), t8 = ns_of(64110);

	(void)state;
	timed_start(&w, &pc, 0x00);
	cyc(&w, 3);
	tnt(&w, 1);                             /* g's ret (insn 4) at 64003 */
	while (pt_enc_get_offset(w.e, &off) >= 0 && off < 128)
		simple(&w, ppt_pad);
	assert_int_equal(off, 128);
	psb_timed(&w, 64010, BASE + 0x25);      /* f's ret (insn 5) at 64010 */
	ip_pkt(&w, ppt_tip, BASE + 0x05);       /* its call was before the PSB */
	cyc(&w, 100);
	ip_pkt(&w, ppt_fup, BASE + 0x41);       /* insn 8 at 64110 */
	ip_pkt(&w, ppt_tip_pgd, 0);
	for (int i = 0; i < 128; i++)           /* a third chunk */
		simple(&w, ppt_pad);
	timed_decode(&w, 128, &got);
	expect(&got, want_interrupted, sizeof(want_interrupted) / sizeof(want_interrupted[0]));
	assert_true(got.windows >= 2);
	assert_int_equal(got.ev[3].time_ns, t4);
	assert_int_equal(got.ev[4].time_ns, t5);
	assert_int_equal(got.ev[5].time_ns, t5 + (t8 - t5) / 3);        /* insn 6 */
	assert_int_equal(got.ev[6].time_ns, t8);
}

/* A window that does not end at its stop PSB: the PSB+ there is damaged,
 * so the decoder cannot sync at it and the data up to the next chunk is
 * dropped. The queue had built the next windows for its worker on the
 * guess that they go on from that PSB (ah_prebuild): the worker must take
 * none of them (decode compares the events with the worker and without). */
static void pad_to(struct enc *w, uint64_t to)
{
	uint64_t off = 0;

	while (pt_enc_get_offset(w->e, &off) >= 0 && off < to)
		simple(w, ppt_pad);
	assert_int_equal(off, to);
}

static void test_window_not_at_stop(void **state)
{
	/* after the loss: resynced at chunk 2's PSB (after a loss, not in
	 * flow), the PSB at 7000 has the same ip, so the call comes after it */
	static const struct want tail[] = {
		{ DC_EV_LOST, DC_LOST_TRUNCATED, X, X },
		{ DC_EV_TRACE_ON, DC_ON_SYNC, N, 0x05 },
		{ DC_EV_CALL, 0, 0x05, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x0a },
		{ DC_EV_JUMP, 0, 0x0a, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
	};
	const size_t nt = sizeof(tail) / sizeof(tail[0]);
	struct evlist got, end;
	struct enc w;
	uint8_t buf[4096];
	size_t n;

	(void)state;
	enc_init(&w);
	psb(&w, 1000, 0);                    /* chunk 0 */
	ip_pkt(&w, ppt_tip_pge, BASE);
	pad_to(&w, 300);
	psb(&w, 1500, BASE + 0x40);          /* window 0's stop PSB (in flow) */
	pad_to(&w, 512 + 200);
	psb(&w, 2000, BASE + 0x40);          /* chunk 1: window 1's, damaged */
	pad_to(&w, 1024 + 40);
	psb(&w, 3000, BASE + 0x05);          /* chunk 2: window 2's stop PSB */
	pad_to(&w, 1536 + 16);
	psb(&w, 7000, BASE + 0x05);          /* chunk 3: where decoding goes on */
	tnt(&w, 1);
	ip_pkt(&w, ppt_tip_pgd, 0);
	pad_to(&w, 2048 + 64);               /* chunk 4 */
	n = enc_done(&w);
	memcpy(buf, w.buf, n);
	/* the TSC after the PSB at 712: an opcode that does not exist */
	buf[728] = 0x02;
	buf[729] = 0x01;
	decode(buf, n, 512, &got);
	assert_true(got.windows >= 4);
	assert_true(got.n > nt);
	assert_int_equal(got.ev[0].kind, DC_EV_TRACE_ON);
	end.n = nt;
	memcpy(end.ev, got.ev + got.n - nt, sizeof(end.ev[0]) * nt);
	expect(&end, tail, nt);
	assert_int_equal(end.ev[2].time_ns, ns_of(7000));
}

/* Coarse clock: MTC without CYC. An MTC binds to no instruction: the
 * branches whose packets come before it retired before its time, those
 * after it at or after (SDM: "MTC Packet", Application). The thread runs
 * at a constant 256 TSC ticks (250 ns) per instruction between two PSB+
 * whose FUPs give exact times (insn 1 at 64000, insn 10 at 66304); an MTC
 * (every 512 ticks) comes before g's ret (insn 4; the edge 64512 is insn
 * 3's time), between it and f's (insn 5, at the edge 65024), between f's
 * and g's second ret (insn 8; the edge 65536 is insn 7's time) and between
 * that and the jmp to h (edge 66048, insn 9).
 * Anchored at the next branch's instruction, as with CYC, an MTC put g's
 * second ret at 65536, a whole instruction early, and the jmp half of one;
 * as bounds, every branch keeps its own time. */
static void test_mtc_bounds(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
		{ DC_EV_CALL, 0, 0x00, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x25 },
		{ DC_EV_RETURN, 0, 0x25, 0x05 },
		{ DC_EV_CALL, 0, 0x05, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x0a },
		{ DC_EV_JUMP, 0, 0x0a, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
	};
	/* the instruction of each event */
	static const unsigned insn[] = { 1, 1, 2, 4, 5, 6, 8, 9, 10 };
	struct pt_config pc;
	struct enc w;
	struct evlist got;

	(void)state;
	timing_on(&pc);
	enc_init(&w);
	psb_timed(&w, 64000, BASE + 0x00);      /* insn 1 (call f) at 64000 */
	mtc_at(&w, 1008);                       /* 64512 */
	ip_pkt(&w, ppt_tip, BASE + 0x25);       /* g's ret, insn 4 */
	mtc_at(&w, 1016);                       /* 65024 */
	ip_pkt(&w, ppt_tip, BASE + 0x05);       /* f's ret, insn 5 */
	mtc_at(&w, 1024);                       /* 65536 */
	ip_pkt(&w, ppt_tip, BASE + 0x0a);       /* g's ret, insn 8 */
	mtc_at(&w, 1032);                       /* 66048 */
	psb_timed(&w, 66304, BASE + 0x60);      /* insn 10 (syscall) at 66304 */
	ip_pkt(&w, ppt_tip_pgd, 0);
	timed_decode(&w, 0, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	for (size_t i = 1; i < got.n; i++)
		if (got.ev[i].time_ns != ns_of(64000 + 256 * (insn[i] - 1)))
			fail_msg("event %zu (insn %u): time %lu, want %lu", i, insn[i],
				 (unsigned long)got.ev[i].time_ns,
				 (unsigned long)ns_of(64000 + 256 * (insn[i] - 1)));
}

/* The same code without CYC at a rate that changes, as real code's does:
 * 64 ticks per instruction up to f's ret (insn 5), then 1024. No line
 * goes through all the bounds, so the decoder makes one per stretch, and
 * every branch stays within its own: g's and f's rets (TIPs before the
 * first MTC, at 64512) before 64512, g's second ret (after the MTC at
 * 67072) in [67072, 67584), the syscall's PGD (after the MTC at 69120, at
 * 69376 in truth) no later than it was. Interpolating by instruction count
 * from the PSB to g's second ret, as the decoder did, put f's ret at 65755,
 * after an MTC that came after it. */
static void test_mtc_rate_change(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
		{ DC_EV_CALL, 0, 0x00, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x25 },
		{ DC_EV_RETURN, 0, 0x25, 0x05 },
		{ DC_EV_CALL, 0, 0x05, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x0a },
		{ DC_EV_JUMP, 0, 0x0a, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, N },
	};
	struct pt_config pc;
	struct enc w;
	struct evlist got;

	(void)state;
	timing_on(&pc);
	enc_init(&w);
	psb_timed(&w, 64000, BASE + 0x00);      /* insn 1 at 64000 */
	ip_pkt(&w, ppt_tip, BASE + 0x25);       /* g's ret, insn 4 at 64192 */
	ip_pkt(&w, ppt_tip, BASE + 0x05);       /* f's ret, insn 5 at 64256 */
	for (uint64_t ctc = 1008; ctc <= 1048; ctc += 8)
		mtc_at(&w, ctc);                /* 64512 .. 67072 */
	ip_pkt(&w, ppt_tip, BASE + 0x0a);       /* g's ret, insn 8 at 67328 */
	for (uint64_t ctc = 1056; ctc <= 1080; ctc += 8)
		mtc_at(&w, ctc);                /* 67584 .. 69120 */
	ip_pkt(&w, ppt_tip_pgd, 0);             /* syscall, insn 10 at 69376 */
	timed_decode(&w, 0, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	for (size_t i = 1; i <= 4; i++)
		assert_in_range(got.ev[i].time_ns, ns_of(64000), ns_of(64512) - 1);
	assert_in_range(got.ev[6].time_ns, ns_of(67072), ns_of(67584) - 1);
	assert_in_range(got.ev[8].time_ns, ns_of(69120), ns_of(69376));
}

/* An emulated thread's last moments (record/ptenc.c rc_ptenc_stamp): a
 * PSB+ at its last instruction's time, its FUP the next instruction (main's
 * jmp h, insn 8, at 64448), halted (no MTC) until a wake (TSC, TMA, CBR) at
 * 80000, then FUP + TIP.PGD at that same instruction. libipt decodes no
 * block between the PSB+'s MODE.Exec and the PGD, and the decoder kept the
 * PSB's exact time only for the next block: the calls and returns before,
 * bounded by nothing else (no MTC), were spread over the halt up to the PGD
 * (report gave their functions the time the thread sat in main). */
static void test_psb_then_interrupt(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x00 },
		{ DC_EV_CALL, 0, 0x00, 0x20 },
		{ DC_EV_CALL, 0, 0x20, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x25 },
		{ DC_EV_RETURN, 0, 0x25, 0x05 },
		{ DC_EV_CALL, 0, 0x05, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x0a },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x0a, N },
	};
	struct pt_config pc;
	struct enc w;
	struct evlist got;

	(void)state;
	timing_on(&pc);
	enc_init(&w);
	psb_timed(&w, 64000, BASE + 0x00);      /* insn 1 at 64000 */
	ip_pkt(&w, ppt_tip, BASE + 0x25);       /* g's ret, insn 4 */
	ip_pkt(&w, ppt_tip, BASE + 0x05);       /* f's ret, insn 5 */
	ip_pkt(&w, ppt_tip, BASE + 0x0a);       /* g's ret, insn 7 */
	psb_timed(&w, 64448, BASE + 0x0a);      /* insn 8 at 64448 */
	tsc_tma(&w, 80000);                     /* the wake */
	cbr(&w, 20);
	ip_pkt(&w, ppt_fup, BASE + 0x0a);
	ip_pkt(&w, ppt_tip_pgd, 0);
	timed_decode(&w, 0, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	for (size_t i = 1; i <= 6; i++)
		assert_in_range(got.ev[i].time_ns, ns_of(64000), ns_of(64448));
	assert_in_range(got.ev[7].time_ns, ns_of(80000), ns_of(80000) + 1000);
}

/* A damaged trace can send the decoder into code that loops by direct
 * jumps alone (here "jmp $"): no packet is ever needed again, so libipt
 * would decode it for ever. The decoder gives up on it as lost data. */
static void test_packetless_loop(void **state)
{
	struct enc w;
	struct evlist got;
	uint8_t buf[4096];
	size_t n;

	(void)state;
	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x6c);   /* jmp $ */
	n = enc_done(&w);
	memcpy(buf, w.buf, n);
	decode(buf, n, 0, &got);
	assert_true(got.n >= 2);
	assert_int_equal(got.ev[0].kind, DC_EV_TRACE_ON);
	assert_int_equal(got.ev[got.n - 1].kind, DC_EV_LOST);
	assert_int_equal(got.ev[got.n - 1].reason, DC_LOST_DECODE);
}

/* ---- kernel code: decoded from an image, or only named ------------------ */

/* ke (0x00, the syscall entry): call kf; iretq.  kf (0x10): nop; ret.
 * kh (0x20, an interrupt handler): call kf; iretq. */
static const uint8_t kcode[0x30] = {
	[0x00] = 0xe8, 0x0b, 0x00, 0x00, 0x00,       /* call kf         */
	[0x05] = 0x48, 0xcf,                         /* iretq           */
	[0x10] = 0x90, 0xc3,                         /* nop; ret        */
	[0x20] = 0xe8, 0xeb, 0xff, 0xff, 0xff,       /* call kf         */
	[0x25] = 0x48, 0xcf,                         /* iretq           */
};
#define K(off) (KBASE - BASE + (off))   /* a kernel ip for struct want */

/* A user+kernel trace: h's syscall enters ke (TIP), ke's iretq goes back
 * (TIP); after call g, an interrupt at 0x69 enters kh (FUP + TIP), and
 * another one kh again while it is in kf; each iretq goes back where its
 * interrupt came; tracing ends at 0x6a. With PSBs in user code
 * after each kernel visit (the decoder goes on there when it cannot
 * decode the kernel). */
static size_t stream_kernel(uint8_t *out)
{
	struct enc w;
	size_t n;

	enc_init(&w);
	psb(&w, 1000, 0);
	ip_pkt(&w, ppt_tip_pge, BASE + 0x60);        /* at h's syscall */
	tsc(&w, 1100);
	ip_pkt(&w, ppt_tip, KBASE + 0x00);           /* syscall -> ke */
	tnt(&w, 1);                                  /* kf's ret */
	tsc(&w, 1200);
	ip_pkt(&w, ppt_tip, BASE + 0x62);            /* iretq */
	psb(&w, 1300, BASE + 0x63);
	tnt(&w, 1);                                  /* call g; ret */
	tsc(&w, 1400);
	ip_pkt(&w, ppt_fup, BASE + 0x69);            /* interrupted at 0x69 */
	ip_pkt(&w, ppt_tip, KBASE + 0x20);
	ip_pkt(&w, ppt_fup, KBASE + 0x11);           /* again, in kf */
	ip_pkt(&w, ppt_tip, KBASE + 0x20);
	tnt(&w, 1);                                  /* kf's ret */
	ip_pkt(&w, ppt_tip, KBASE + 0x11);           /* iretq to kf */
	tnt(&w, 1);                                  /* kf's ret */
	tsc(&w, 1500);
	ip_pkt(&w, ppt_tip, BASE + 0x69);            /* iretq */
	psb(&w, 1600, BASE + 0x69);
	ip_pkt(&w, ppt_fup, BASE + 0x6a);
	ip_pkt(&w, ppt_tip_pgd, 0);
	n = enc_done(&w);
	memcpy(out, w.buf, n);
	return n;
}

static void kernel_decode(int mode, struct evlist *got)
{
	uint8_t buf[4096];
	size_t n = stream_kernel(buf);
	FILE *f;

	snprintf(kcode_path, sizeof(kcode_path), "/tmp/ptf-ptdecode-k-%d.bin", (int)getpid());
	f = fopen(kcode_path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(kcode, 1, sizeof(kcode), f), sizeof(kcode));
	fclose(f);
	kmode = mode;
	decode(buf, n, 0, got);
	kmode = 0;
	unlink(kcode_path);
}

/* With the image: far transfers between user and kernel code are
 * TRACE_OFF (with the kernel entry) and TRACE_ON, the kernel's calls and
 * returns branch events of their own. */
static void test_kernel_image(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, K(0x00) },
		{ DC_EV_CALL, 0, K(0x00), K(0x10) },
		{ DC_EV_RETURN, 0, K(0x11), K(0x05) },
		{ DC_EV_TRACE_ON, DC_ON_RESUME, N, 0x62 },
		{ DC_EV_CALL, 0, 0x63, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x68 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x69, K(0x20) },
		{ DC_EV_CALL, 0, K(0x20), K(0x10) },
		{ DC_EV_CALL, 0, K(0x11), K(0x20) },   /* nested: a call */
		{ DC_EV_CALL, 0, K(0x20), K(0x10) },
		{ DC_EV_RETURN, 0, K(0x11), K(0x25) },
		{ DC_EV_RETURN, 0, K(0x25), K(0x11) }, /* its iretq */
		{ DC_EV_RETURN, 0, K(0x11), K(0x25) },
		{ DC_EV_TRACE_ON, DC_ON_RESUME, N, 0x69 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x6a, N },
	};
	struct evlist got;

	(void)state;
	kernel_decode(1, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	/* the syscall took the TIP read after TSC 1100, the iretq after 1200 */
	assert_int_equal(got.ev[1].time_ns, ns_of(1100));
	assert_int_equal(got.ev[4].time_ns, ns_of(1200));
	assert_int_equal(got.ev[7].time_ns, ns_of(1400));
}

/* Names only: the kernel entry is told with the TRACE_OFF, the rest is
 * the kernel's until the next PSB; without names no entry (as before). */
static void test_kernel_names(void **state)
{
	static const struct want want[] = {
		{ DC_EV_TRACE_ON, DC_ON_START, N, 0x60 },
		{ DC_EV_TRACE_OFF, DC_OFF_SYSCALL, 0x60, K(0x00) },
		{ DC_EV_TRACE_ON, DC_ON_RESUME, N, 0x63 },
		{ DC_EV_CALL, 0, 0x63, 0x40 },
		{ DC_EV_RETURN, 0, 0x41, 0x68 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x69, K(0x20) },
		{ DC_EV_TRACE_ON, DC_ON_RESUME, N, 0x69 },
		{ DC_EV_TRACE_OFF, DC_OFF_FAULT, 0x6a, N },
	};
	struct evlist got;

	(void)state;
	kernel_decode(2, &got);
	expect(&got, want, sizeof(want) / sizeof(want[0]));
	kernel_decode(0, &got);
	assert_int_equal(got.ev[1].kind, DC_EV_TRACE_OFF);
	assert_int_equal(got.ev[1].to_ip, 0);
}

/* ---- libipt's block-cache splits: the syscall number ---------------------
 *
 * syscall_nr() reads `mov $NR,%eax` before a syscall only inside the
 * block that ends at the syscall (p->start_ip). libipt's block decoder
 * ends a block early at a plain instruction when its block cache (kept
 * per section, shared by every decoder of that section in every thread)
 * already knows the next address: so whether the mov is in the syscall's
 * block depends on what libipt decoded before. Our walker never splits.
 * Here the first window starts at the syscall (its PSB's FUP), which fills
 * libipt's cache entry there (the walker hands the window over at the
 * kernel code, so libipt decodes it in both modes); in the second window
 * `mov $39,%eax; syscall` is reached by a jump. The same trace must give
 * the same events (and the syscall number, which the code tells) with
 * either block decoder. */
static const uint8_t scode[0x10] = {
	[0x00] = 0xb8, 0x27, 0x00, 0x00, 0x00,       /* mov $39,%eax    */
	[0x05] = 0x0f, 0x05,                         /* syscall         */
	[0x07] = 0x90,                               /* nop             */
	[0x08] = 0xeb, 0xf6,                         /* jmp 0x00        */
};

struct sctx {
	struct tctx t;             /* (first: t_context's)                 */
	struct dc_wcode *code;
};

static struct dc_wcode *s_image_code(void *ctx, struct pt_image *image)
{
	struct sctx *c = ctx;

	return image == c->t.image ? c->code : NULL;
}

static bool s_kernel_code(void *ctx, uint64_t ip, bool *named)
{
	(void)ctx;
	*named = ip >= KBASE && ip < KBASE + 0x30;
	return false;              /* names only: into_kernel */
}

static size_t stream_split(uint8_t *out)
{
	struct enc w;
	size_t n;

	enc_init(&w);
	psb(&w, 1000, BASE + 0x05);                  /* at the syscall */
	ip_pkt(&w, ppt_tip, KBASE);                  /* syscall -> kernel */
	tnt(&w, 1);                                  /* (the kernel's) */
	tsc(&w, 1050);
	ip_pkt(&w, ppt_tip, BASE + 0x07);            /* sysret */
	pad_to(&w, 128);
	psb(&w, 1100, BASE + 0x07);                  /* back: nop; jmp; mov */
	ip_pkt(&w, ppt_tip, KBASE);                  /* syscall -> kernel */
	tnt(&w, 1);
	tsc(&w, 1150);
	ip_pkt(&w, ppt_tip, BASE + 0x07);
	pad_to(&w, 256);
	psb(&w, 1200, BASE + 0x07);
	ip_pkt(&w, ppt_fup, BASE + 0x07);
	ip_pkt(&w, ppt_tip_pgd, 0);
	pad_to(&w, 384);
	n = enc_done(&w);
	memcpy(out, w.buf, n);
	return n;
}

static void split_decode(const char *path, enum dc_wdec_mode mode, struct evlist *out)
{
	static const struct dc_ptq_ops sops = { .context = t_context, .func_range = t_func_range,
						.kernel_code = s_kernel_code,
						.image_code = s_image_code };
	struct sctx c = { 0 };
	struct dc_ptq_config cfg;
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct dc_ptq *q;
	uint8_t buf[4096];
	size_t len = stream_split(buf);
	int isid, ret;

	assert_non_null(isc);
	isid = pt_iscache_add_file(isc, path, 0, sizeof(scode), BASE);
	assert_true(isid > 0);
	c.t.image = pt_image_alloc("split");
	assert_non_null(c.t.image);
	assert_true(pt_image_add_cached(c.t.image, isc, isid, NULL) >= 0);
	c.code = dc_wcode_new(isc);
	assert_non_null(c.code);
	assert_int_equal(dc_wcode_set(c.code, &(struct dc_wsec){ BASE, BASE + sizeof(scode), isid,
								NULL, false }, 1), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.pt.size = sizeof(cfg.pt);
	cfg.conv = conv;
	cfg.cpu = 3;
	cfg.iscache = isc;
	cfg.syscall_numbers = true;
	cfg.decoder = mode;
	q = dc_ptq_new(&cfg, &sops, &c);
	assert_non_null(q);
	for (size_t off = 0; off < len; off += 128) {
		struct dc_ptq_chunk ch = { buf + off, len - off < 128 ? len - off : 128, off, false,
					   false };

		assert_int_equal(dc_ptq_add_chunk(q, &ch), 0);
	}
	out->n = 0;
	while ((ret = dc_ptq_fill(q)) > 0) {
		struct dc_event ev;

		ret = dc_ptq_pop(q, &ev);
		assert_true(ret >= 0);
		if (ret == 1) {
			assert_true(out->n < 64);
			out->ev[out->n++] = ev;
			c.t.delivered++;
		}
	}
	assert_int_equal(ret, 0);
	{
		struct dc_ptq_stats st;

		dc_ptq_stats(q, &st);
		out->windows = st.windows;
	}
	dc_ptq_free(q);
	dc_wcode_free(c.code);
	pt_image_free(c.t.image);
	pt_iscache_free(isc);
}

static void test_syscall_nr_split(void **state)
{
	char path[64];
	struct evlist walk, lib;
	FILE *f;
	size_t nsys = 0;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/ptf-ptdecode-s-%d.bin", (int)getpid());
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(scode, 1, sizeof(scode), f), sizeof(scode));
	fclose(f);
	split_decode(path, DC_WDEC_WALK, &walk);
	split_decode(path, DC_WDEC_LIBIPT, &lib);
	unlink(path);
	assert_true(walk.windows >= 2);
	for (size_t i = 0; i < lib.n || i < walk.n; i++) {
		const struct dc_event *x = i < walk.n ? &walk.ev[i] : NULL;
		const struct dc_event *y = i < lib.n ? &lib.ev[i] : NULL;

		if (getenv("PTF_DEBUG"))
			print_message("  walk %u/%u %#lx -> %#lx sysno %u | libipt %u/%u %#lx -> %#lx "
				      "sysno %u\n", x ? x->kind : 0, x ? x->reason : 0,
				      x ? (unsigned long)x->from_ip : 0, x ? (unsigned long)x->to_ip : 0,
				      x ? x->sysno : 0, y ? y->kind : 0, y ? y->reason : 0,
				      y ? (unsigned long)y->from_ip : 0, y ? (unsigned long)y->to_ip : 0,
				      y ? y->sysno : 0);
		if (x && x->kind == DC_EV_TRACE_OFF && x->reason == DC_OFF_SYSCALL)
			nsys++;
	}
	assert_int_equal(nsys, 2);
	assert_int_equal(walk.n, lib.n);
	for (size_t i = 0; i < walk.n; i++) {
		const struct dc_event *x = &walk.ev[i], *y = &lib.ev[i];

		if (x->kind != y->kind || x->reason != y->reason || x->from_ip != y->from_ip ||
		    x->to_ip != y->to_ip || x->sysno != y->sysno || x->time_ns != y->time_ns)
			fail_msg("event %zu: walker kind %u reason %u %#lx -> %#lx sysno %u; libipt "
				 "kind %u reason %u %#lx -> %#lx sysno %u", i, x->kind, x->reason,
				 (unsigned long)x->from_ip, (unsigned long)x->to_ip, x->sysno, y->kind,
				 y->reason, (unsigned long)y->from_ip, (unsigned long)y->to_ip,
				 y->sysno);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test_teardown(test_inline_remap, inline_remap_done),
		cmocka_unit_test(test_chunked),
		cmocka_unit_test(test_long_chunk),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_ovf_stale_ret),
		cmocka_unit_test(test_ovf_after_longjmp),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_lost_start),
		cmocka_unit_test(test_time_conv),
		cmocka_unit_test(test_cyc_gap),
		cmocka_unit_test(test_ovf_cyc),
		cmocka_unit_test(test_async_after_tnt),
		cmocka_unit_test(test_cbr_in_flow),
		cmocka_unit_test(test_packetless_loop),
		cmocka_unit_test(test_psb_in_flow),
		cmocka_unit_test(test_psb_at_window_stop),
		cmocka_unit_test(test_kernel_image),
		cmocka_unit_test(test_kernel_names),
		cmocka_unit_test(test_mtc_bounds),
		cmocka_unit_test(test_mtc_rate_change),
		cmocka_unit_test(test_psb_then_interrupt),
		cmocka_unit_test(test_window_not_at_stop),
		cmocka_unit_test(test_syscall_nr_split),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
