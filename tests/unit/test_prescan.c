/* Unit tests: the prescan (decoder/prescan.c) names the binaries a trace's
 * IP packets go to, each once, in the order first met, and no other. The
 * packets are made with libipt's encoder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/prescan.h"

enum { BUF = 4096 };

struct enc {
	uint8_t buf[BUF];
	struct pt_encoder *e;
	struct pt_config cfg;
};

static void enc_open(struct enc *x)
{
	memset(x, 0, sizeof(*x));
	x->cfg.size = sizeof(x->cfg);
	x->cfg.begin = x->buf;
	x->cfg.end = x->buf + BUF;
	x->e = pt_alloc_encoder(&x->cfg);
	assert_non_null(x->e);
}

static void put(struct enc *x, enum pt_packet_type type, enum pt_ip_compression ipc,
		uint64_t ip)
{
	struct pt_packet p = { .type = type };

	if (type == ppt_fup || type == ppt_tip || type == ppt_tip_pge || type == ppt_tip_pgd) {
		p.payload.ip.ipc = ipc;
		p.payload.ip.ip = ip;
	}
	assert_true(pt_enc_next(x->e, &p) > 0);
}

/* A TIP with the full ip; n PADs; the stream's length so far. */
static void tip(struct enc *x, uint64_t ip)
{
	put(x, ppt_tip, pt_ipc_sext_48, ip);
}

static void pads(struct enc *x, int n)
{
	while (n-- > 0)
		put(x, ppt_pad, 0, 0);
}

static size_t enc_at(struct enc *x)
{
	uint64_t off;

	assert_int_equal(pt_enc_get_offset(x->e, &off), 0);
	return (size_t)off;
}

/* A stream that starts with an empty PSB+. */
static void enc_psb(struct enc *x)
{
	enc_open(x);
	put(x, ppt_psb, 0, 0);
	put(x, ppt_psbend, 0, 0);
}

static size_t enc_close(struct enc *x)
{
	size_t len = enc_at(x);

	pt_free_encoder(x->e);
	return len;
}

/* Scanning with cfg names want (the names dc_prescan_next gives, joined
 * with spaces), and nothing more; p is freed. */
static void expect_names(struct dc_prescan *p, const struct pt_config *cfg, const char *want)
{
	const uint8_t *bid;
	const char *path;
	char got[256] = "";
	size_t n;

	dc_prescan_config(p, cfg);
	while (dc_prescan_next(p, &path, &bid, &n) > 0) {
		if (got[0])
			strncat(got, " ", sizeof(got) - strlen(got) - 1);
		strncat(got, path, sizeof(got) - strlen(got) - 1);
	}
	assert_string_equal(got, want);
	dc_prescan_free(p);
}

static struct dc_prescan *with_maps(uint64_t per_queue, uint64_t total)
{
	static const uint8_t bid[3] = { 1, 2, 3 };
	struct dc_prescan *p = dc_prescan_new(per_queue, total, false);

	assert_non_null(p);
	assert_int_equal(dc_prescan_add_map(p, 0x400000, 0x410000, "/bin/prog", NULL, 0), 0);
	assert_int_equal(dc_prescan_add_map(p, 0x7f0000000000, 0x7f0000100000, "/lib/libc.so",
					    bid, 3), 0);
	assert_int_equal(dc_prescan_add_map(p, 0x7f0000200000, 0x7f0000210000, "/lib/libm.so",
					    NULL, 0), 0);
	/* the same library in a second process, elsewhere: one binary */
	assert_int_equal(dc_prescan_add_map(p, 0x7e0000000000, 0x7e0000100000, "/lib/libc.so",
					    bid, 3), 0);
	assert_int_equal(dc_prescan_add_map(p, 0x500000, 0x510000, "/bin/unused", NULL, 0), 0);
	assert_int_equal(dc_prescan_add_map(p, 0x600000, 0x610000, "[vdso]", NULL, 0), 0);
	return p;
}

/* A program that calls into libc, whose packets name libm after a kernel
 * address and an update against the last IP: prog, libc, libm, in that
 * order, each once; a mapped binary never gone to, the [vdso] and kernel
 * addresses are not named. */
static void test_order_and_compression(void **state)
{
	struct dc_prescan *p = with_maps(1 << 20, 1 << 20);
	struct enc x;
	size_t len;

	(void)state;
	enc_open(&x);
	put(&x, ppt_psb, 0, 0);
	put(&x, ppt_fup, pt_ipc_sext_48, 0x401000);             /* prog */
	put(&x, ppt_psbend, 0, 0);
	put(&x, ppt_tip, pt_ipc_full, 0x7f0000001234);          /* libc */
	put(&x, ppt_tip, pt_ipc_update_16, 0x5678);             /* libc again */
	tip(&x, 0xffff800000001000);                            /* kernel */
	put(&x, ppt_tip_pgd, pt_ipc_suppressed, 0);
	put(&x, ppt_tip_pge, pt_ipc_sext_48, 0x608000);         /* [vdso] */
	put(&x, ppt_tip, pt_ipc_update_32, 0x402000);           /* prog again */
	put(&x, ppt_tip, pt_ipc_update_48, 0x7f0000200100);     /* libm */
	put(&x, ppt_tip, pt_ipc_update_16, 0x0200);             /* libm again */
	len = enc_close(&x);
	assert_int_equal(dc_prescan_add_chunk(p, 0, x.buf, len, false), 0);
	expect_names(p, &x.cfg, "/bin/prog /lib/libc.so /lib/libm.so");
}

/* The stream goes on across chunks (a packet cut in two by a chunk's end
 * is read whole), queue after queue in turn; nothing past a queue's share
 * is read. */
static void test_chunks_and_budget(void **state)
{
	struct dc_prescan *p;
	struct enc a, b;
	size_t la, lb, cut;

	(void)state;
	enc_psb(&a);
	tip(&a, 0x7f0000200100);                                /* libm */
	cut = enc_at(&a) + 3;                                   /* inside the next TIP */
	tip(&a, 0x401000);                                      /* prog */
	pads(&a, 200);
	tip(&a, 0x500100);                                      /* past the share */
	la = enc_close(&a);
	enc_psb(&b);
	tip(&b, 0x7f0000000100);                                /* libc */
	lb = enc_close(&b);

	p = with_maps(cut + 32, 1 << 20);
	assert_int_equal(dc_prescan_add_chunk(p, 0, a.buf, cut, false), 0);
	assert_int_equal(dc_prescan_add_chunk(p, 0, a.buf + cut, la - cut, false), 0);
	assert_int_equal(dc_prescan_add_chunk(p, 1, b.buf, lb, false), 0);
	/* queue 0's first buffer, then queue 1's */
	expect_names(p, &a.cfg, "/lib/libm.so /bin/prog /lib/libc.so");
}

/* A buffer's worth of data with no PSB in it (here PADs) does not end the
 * scan: it goes on with the queue's next buffer. */
static void test_no_psb_in_a_buffer(void **state)
{
	size_t pad = 300 << 10, len;
	struct dc_prescan *p = with_maps(1 << 20, 1 << 20);
	uint8_t *data = calloc(1, pad + BUF);        /* zero bytes are PADs */
	struct enc x;

	(void)state;
	assert_non_null(data);
	enc_psb(&x);
	tip(&x, 0x401000);                                      /* prog */
	len = enc_close(&x);
	memcpy(data + pad, x.buf, len);
	assert_int_equal(dc_prescan_add_chunk(p, 0, data, pad + len, false), 0);
	expect_names(p, &x.cfg, "/bin/prog");
	free(data);
}

/* After lost data the packets do not go on from the last ones: the scan
 * starts again at the chunk's first PSB, and the last IP with it (joined,
 * the update before that PSB would name prog). */
static void test_lost_data(void **state)
{
	struct dc_prescan *p = with_maps(1 << 20, 1 << 20);
	size_t la, lb;
	struct enc a, b;

	(void)state;
	enc_psb(&a);
	tip(&a, 0x7f0000001234);                                /* libc */
	la = enc_close(&a);
	enc_open(&b);
	put(&b, ppt_tip, pt_ipc_update_48, 0x401000);           /* lost context */
	put(&b, ppt_psb, 0, 0);
	put(&b, ppt_psbend, 0, 0);
	tip(&b, 0x7f0000200100);                                /* libm */
	lb = enc_close(&b);
	assert_int_equal(dc_prescan_add_chunk(p, 0, a.buf, la, false), 0);
	assert_int_equal(dc_prescan_add_chunk(p, 0, b.buf, lb, true), 0);
	expect_names(p, &a.cfg, "/lib/libc.so /lib/libm.so");
}

/* The total share is for all queues together: what is scanned of one
 * queue counts against the others' (the second queue's libm, past it, is
 * not named; with room for both, it is). */
static void test_total_share(void **state)
{
	struct dc_prescan *p;
	struct enc a, b;
	size_t la, lb, cut;

	(void)state;
	enc_psb(&a);
	tip(&a, 0x401000);                                      /* prog */
	cut = enc_at(&a);
	pads(&a, 100);
	tip(&a, 0x7f0000001234);                                /* libc */
	la = enc_close(&a);
	enc_psb(&b);
	tip(&b, 0x7f0000200100);                                /* libm */
	lb = enc_close(&b);

	for (int room = 0; room < 2; room++) {
		p = with_maps(1 << 20, room ? la + lb : cut + 16);
		assert_int_equal(dc_prescan_add_chunk(p, 0, a.buf, la, false), 0);
		assert_int_equal(dc_prescan_add_chunk(p, 1, b.buf, lb, false), 0);
		expect_names(p, &a.cfg, room ? "/bin/prog /lib/libc.so /lib/libm.so" : "/bin/prog");
	}
}

/* A recording with no user code mapping (the fuzzer made one): nothing
 * to name, and no map array to sort. */
static void test_no_maps(void **state)
{
	struct dc_prescan *p = dc_prescan_new(1 << 20, 1 << 20, false);
	struct enc x;
	size_t len;

	(void)state;
	assert_non_null(p);
	enc_psb(&x);
	tip(&x, 0x401000);
	len = enc_close(&x);
	assert_int_equal(dc_prescan_add_chunk(p, 0, x.buf, len, false), 0);
	expect_names(p, &x.cfg, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_compression),
		cmocka_unit_test(test_chunks_and_budget),
		cmocka_unit_test(test_no_psb_in_a_buffer),
		cmocka_unit_test(test_lost_data),
		cmocka_unit_test(test_total_share),
		cmocka_unit_test(test_no_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
