/* Unit tests for decoder/ptpkt.h: the packet iterator must give what a
 * loop over libipt's packet decoder gives (pt_pkt_sync_forward, then
 * pt_pkt_get_offset and pt_pkt_next, and pt_pkt_sync_forward after an
 * error): the same packets (type, size, offset, payload) and the same
 * errors, at the same places. The data is made with libipt's encoder
 * (every packet type it knows, random payloads) and then cut after every
 * byte, damaged at random and given every pair of first bytes; the
 * expected sequence always comes from libipt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "decoder/ptpkt.h"
#include "tests/unit/test_rnd.h"

/* One item of a sequence: a packet, or an error (type ppt_invalid). */
struct item {
	int type, size, tnt_bits;
	uint64_t off, val;
};

struct seq {
	struct item *v;
	size_t n, cap;
};

static void seq_add(struct seq *s, struct item it)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n++] = it;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return test_rnd(&rnd_state);
}

static struct pt_config config(const uint8_t *buf, size_t len)
{
	struct pt_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.begin = (uint8_t *)buf;
	c.end = (uint8_t *)buf + len;
	return c;
}

/* The payload value the iterator is to give, from libipt's packet. */
static struct item item_of(const struct pt_packet *p, uint64_t off)
{
	struct item it = { .type = p->type, .size = p->size, .off = off };

	switch (p->type) {
	case ppt_cyc: it.val = p->payload.cyc.value; break;
	case ppt_mtc: it.val = p->payload.mtc.ctc; break;
	case ppt_cbr: it.val = p->payload.cbr.ratio; break;
	case ppt_tsc: it.val = p->payload.tsc.tsc; break;
	case ppt_mode: it.val = p->payload.mode.leaf; break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		it.val = p->payload.tnt.payload;
		it.tnt_bits = p->payload.tnt.bit_size;
		break;
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
		it.val = p->payload.ip.ipc;
		break;
	default:
		break;
	}
	return it;
}

/* The loop over libipt's packet decoder. */
static void libipt_seq(const uint8_t *buf, size_t len, struct seq *s)
{
	struct pt_config c = config(buf, len);
	struct pt_packet_decoder *pd = pt_pkt_alloc_decoder(&c);
	int ret;

	assert_non_null(pd);
	s->n = 0;
	ret = pt_pkt_sync_forward(pd);
	while (ret >= 0) {
		struct pt_packet p;
		uint64_t off = 0;

		pt_pkt_get_offset(pd, &off);
		ret = pt_pkt_next(pd, &p, sizeof(p));
		if (ret < 0) {
			seq_add(s, (struct item){ .type = ppt_invalid, .off = off });
			ret = pt_pkt_sync_forward(pd);
			continue;
		}
		seq_add(s, item_of(&p, off));
	}
	pt_pkt_free_decoder(pd);
}

static void iter_seq(const uint8_t *buf, size_t len, struct seq *s, size_t *fast)
{
	struct pt_config c = config(buf, len);
	struct dc_pkt_it it;
	struct dc_pkt k;
	int ret;

	s->n = 0;
	assert_int_equal(dc_pkt_it_init(&it, &c, buf, len), 0);
	for (;;) {
		size_t off = it.off;
		struct dc_pkt f;

		if (fast && !it.done && off < len && dc_pkt_fast(buf + off, len - off, &f) > 0)
			++*fast;
		if ((ret = dc_pkt_next(&it, &k)) < 0)
			break;
		if (!ret) {
			seq_add(s, (struct item){ .type = ppt_invalid, .off = off });
			continue;
		}
		seq_add(s, (struct item){ .type = k.type, .size = k.size, .off = k.off,
					  .val = k.val, .tnt_bits = k.tnt_bits });
	}
	dc_pkt_it_fini(&it);
}

/* Both sequences over buf; returns how many items they had. */
static size_t check_same(const uint8_t *buf, size_t len, size_t *fast)
{
	struct seq a = { 0 }, b = { 0 };

	libipt_seq(buf, len, &a);
	iter_seq(buf, len, &b, fast);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		const struct item *x = &a.v[i], *y = &b.v[i];

		if (x->type != y->type || x->size != y->size || x->off != y->off ||
		    x->val != y->val || x->tnt_bits != y->tnt_bits) {
			print_error("item %zu: libipt type %d size %d off %llu val %llx bits %d; "
				    "iterator type %d size %d off %llu val %llx bits %d\n",
				    i, a.v[i].type, a.v[i].size, (unsigned long long)a.v[i].off,
				    (unsigned long long)a.v[i].val, a.v[i].tnt_bits, b.v[i].type,
				    b.v[i].size, (unsigned long long)b.v[i].off,
				    (unsigned long long)b.v[i].val, b.v[i].tnt_bits);
			fail();
		}
	}
	free(a.v);
	free(b.v);
	return a.n;
}

static uint64_t rnd_ip(void)
{
	return rnd() & (rnd() & 1 ? 0x7fffffffffffull : 0xffffffffffffffffull);
}

/* A random packet of a random type, as libipt's encoder takes it. */
static struct pt_packet rnd_packet(void)
{
	static const enum pt_ip_compression ipcs[] = {
		pt_ipc_suppressed, pt_ipc_update_16, pt_ipc_update_32,
		pt_ipc_update_48, pt_ipc_sext_48, pt_ipc_full,
	};
	struct pt_packet p;
	unsigned r = (unsigned)(rnd() % 40);

	memset(&p, 0, sizeof(p));
	switch (r) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
		p.type = ppt_tnt_8;
		p.payload.tnt.bit_size = (uint8_t)(1 + rnd() % 6);
		p.payload.tnt.payload = rnd() & ((1u << p.payload.tnt.bit_size) - 1);
		break;
	case 8: case 9: case 10: case 11: case 12: case 13:
		p.type = ppt_cyc;
		/* (at most 61 bits: libipt reads no longer CYC) */
		p.payload.cyc.value = rnd() >> (3 + rnd() % 61);
		break;
	case 14: case 15:
		p.type = ppt_tnt_64;
		p.payload.tnt.bit_size = (uint8_t)(1 + rnd() % 47);
		p.payload.tnt.payload = rnd() & ((1ull << p.payload.tnt.bit_size) - 1);
		break;
	case 16: case 17: case 18: case 19:
		p.type = (enum pt_packet_type[]){ ppt_tip, ppt_tip_pge, ppt_tip_pgd,
						  ppt_fup }[rnd() % 4];
		p.payload.ip.ipc = ipcs[rnd() % 6];
		p.payload.ip.ip = rnd_ip();
		break;
	case 20:
		p.type = ppt_mode;
		p.payload.mode.leaf = rnd() & 1 ? pt_mol_exec : pt_mol_tsx;
		p.payload.mode.bits.exec.csl = rnd() & 1;
		p.payload.mode.bits.exec.csd = rnd() & 1;
		break;
	case 21: p.type = ppt_tsc; p.payload.tsc.tsc = rnd() >> 8; break;
	case 22: case 23: p.type = ppt_mtc; p.payload.mtc.ctc = (uint8_t)rnd(); break;
	case 24: p.type = ppt_cbr; p.payload.cbr.ratio = (uint8_t)rnd(); break;
	case 25:
		p.type = ppt_tma;
		p.payload.tma.ctc = (uint16_t)rnd();
		p.payload.tma.fc = (uint16_t)(rnd() % 512);
		break;
	case 26: p.type = ppt_pad; break;
	case 27: p.type = ppt_psbend; break;
	case 28: p.type = ppt_ovf; break;
	case 29: p.type = ppt_pip; p.payload.pip.cr3 = rnd() & 0xffffffffffe0ull; break;
	case 30: p.type = ppt_vmcs; p.payload.vmcs.base = rnd() & 0xfffffffff000ull; break;
	case 31: p.type = ppt_stop; break;
	case 32: p.type = ppt_mnt; p.payload.mnt.payload = rnd(); break;
	case 33: p.type = ppt_exstop; p.payload.exstop.ip = rnd() & 1; break;
	case 34:
		p.type = ppt_mwait;
		p.payload.mwait.hints = (uint32_t)rnd();
		p.payload.mwait.ext = (uint32_t)rnd() & 1;
		break;
	case 35:
		p.type = ppt_pwre;
		p.payload.pwre.state = (uint8_t)(rnd() & 0xf);
		p.payload.pwre.sub_state = (uint8_t)(rnd() & 0xf);
		break;
	case 36:
		p.type = ppt_pwrx;
		p.payload.pwrx.last = (uint8_t)(rnd() & 0xf);
		p.payload.pwrx.deepest = (uint8_t)(rnd() & 0xf);
		break;
	case 37:
		p.type = ppt_ptw;
		p.payload.ptw.plc = (uint8_t)(rnd() & 1);
		p.payload.ptw.payload = rnd();
		break;
	default:
		p.type = ppt_psb;
		break;
	}
	return p;
}

/* A PSB, then n random packets; the bytes written. */
static size_t encode(uint8_t *buf, size_t cap, size_t n)
{
	struct pt_config c = config(buf, cap);
	struct pt_encoder *e = pt_alloc_encoder(&c);
	const struct pt_packet psb = { .type = ppt_psb };
	uint64_t off = 0;

	assert_non_null(e);
	assert_true(pt_enc_next(e, &psb) > 0);
	for (size_t i = 0; i < n; i++) {
		struct pt_packet p = rnd_packet();

		assert_true(pt_enc_next(e, &p) > 0);
	}
	assert_int_equal(pt_enc_get_offset(e, &off), 0);
	pt_free_encoder(e);
	return (size_t)off;
}

/* The packet types the iterator reads itself (ptpkt.h). */
static bool fast_type(int t)
{
	switch (t) {
	case ppt_pad: case ppt_tnt_8: case ppt_tnt_64: case ppt_cyc: case ppt_mtc:
	case ppt_tsc: case ppt_mode: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd:
	case ppt_fup: case ppt_psb: case ppt_psbend: case ppt_cbr: case ppt_tma:
	case ppt_ovf: case ppt_pip:
		return true;
	default:
		return false;
	}
}

/* Clean data: the same packets, and every one of the types above read by
 * the iterator itself (else it would be no faster). */
static void test_clean_data(void **state)
{
	enum { CAP = 1 << 20 };
	uint8_t *buf = malloc(CAP);
	struct seq a = { 0 };
	size_t len, n, fast = 0, want = 0;

	(void)state;
	assert_non_null(buf);
	len = encode(buf, CAP, 50000);
	n = check_same(buf, len, &fast);
	assert_true(n > 50000);
	libipt_seq(buf, len, &a);
	for (size_t i = 0; i < a.n; i++)
		want += fast_type(a.v[i].type);
	assert_true(want > n / 2);
	assert_int_equal(fast, want);
	free(a.v);
	free(buf);
}

/* Cut after every byte: packets cut short at the end. */
static void test_every_cut(void **state)
{
	uint8_t buf[2048];
	size_t len;

	(void)state;
	len = encode(buf, sizeof(buf), 150);
	for (size_t cut = 0; cut <= len; cut++)
		check_same(buf, cut, NULL);
}

/* Damaged data: random bytes (often opcode bytes) written over the
 * packets, so that errors, resynchronizations and packets libipt rejects
 * come in every order. */
static void test_damaged(void **state)
{
	static const uint8_t hot[] = { 0x02, 0x82, 0x19, 0x59, 0x99, 0x73, 0xa3, 0x03,
				       0x23, 0xf3, 0x00, 0xff, 0x0d, 0x1d, 0xc3, 0x07 };
	uint8_t clean[4096], buf[4096];
	size_t len;

	(void)state;
	len = encode(clean, sizeof(clean), 300);
	for (int round = 0; round < 3000; round++) {
		int hits = 1 + (int)(rnd() % 8);

		memcpy(buf, clean, len);
		for (int h = 0; h < hits; h++) {
			size_t at = (size_t)(rnd() % len);

			buf[at] = rnd() & 1 ? hot[rnd() % sizeof(hot)] : (uint8_t)rnd();
		}
		check_same(buf, len - (size_t)(rnd() % 4), NULL);
	}
}

/* Every first two bytes of a packet after a PSB+, with random bytes, zeros,
 * 0xff or a 1 and zeros behind them and another PSB further on (an error
 * resynchronizes there). */
static void test_every_opcode(void **state)
{
	uint8_t buf[96];
	size_t len;

	(void)state;
	len = encode(buf, 64, 0);
	for (unsigned b0 = 0; b0 < 256; b0++) {
		for (unsigned b1 = 0; b1 < 256; b1++) {
			for (int tail = 0; tail < 4; tail++) {
				size_t at = len;

				buf[at] = (uint8_t)b0;
				buf[at + 1] = (uint8_t)b1;
				for (size_t i = at + 2; i < at + 20; i++)
					buf[i] = tail == 0 ? (uint8_t)rnd() : tail == 2 ? 0xff : 0;
				/* (a 1 then zeros: a TNT-64 with only its stop bit) */
				if (tail == 3)
					buf[at + 2] = 1;
				memcpy(buf + at + 20, buf, len);
				check_same(buf, at + 20 + len, NULL);
			}
		}
	}
}

/* A TMA's reserved bits, each alone: byte 4, and fc's bits above 9. */
static void test_tma_reserved(void **state)
{
	static const uint8_t tmas[][7] = {
		{ 0x02, 0x73, 0x34, 0x12, 0x00, 0xff, 0x01 },   /* fc 0x1ff: good */
		{ 0x02, 0x73, 0x34, 0x12, 0x01, 0x05, 0x00 },   /* byte 4 set     */
		{ 0x02, 0x73, 0x34, 0x12, 0x00, 0x05, 0x02 },   /* fc bit 9       */
		{ 0x02, 0x73, 0x34, 0x12, 0x00, 0x05, 0x80 },   /* fc bit 15      */
	};
	uint8_t buf[64];
	size_t len;

	(void)state;
	len = encode(buf, 32, 0);
	for (size_t i = 0; i < sizeof(tmas) / sizeof(tmas[0]); i++) {
		memcpy(buf + len, tmas[i], 7);
		memcpy(buf + len + 7, buf, len);
		assert_true(check_same(buf, 2 * len + 7, NULL) >= 3);
	}
}

/* dc_pkt_fast's DC_PKT_CUT against libipt's packet decoder over the first
 * n bytes of every two-byte opcode with random or zero bytes behind: CUT
 * only where libipt says -pte_eos, and CUT wherever a packet read here
 * whole is cut (ptquery.c takes CUT as libipt's end of data). */
static void test_cut_verdict(void **state)
{
	enum { FULL = 20 };
	uint8_t buf[FULL];
	struct pt_packet_decoder *pd[FULL + 1];
	size_t cuts = 0;

	(void)state;
	for (size_t n = 1; n <= FULL; n++) {
		struct pt_config c = config(buf, n);

		assert_non_null(pd[n] = pt_pkt_alloc_decoder(&c));
	}
	for (unsigned b0 = 0; b0 < 256; b0++) {
		for (unsigned b1 = 0; b1 < 256; b1++) {
			for (int tail = 0; tail < 2; tail++) {
				struct dc_pkt k;
				struct pt_packet p;
				int whole, ipt_whole;

				buf[0] = (uint8_t)b0;
				buf[1] = (uint8_t)b1;
				for (size_t i = 2; i < FULL; i++)
					buf[i] = tail ? (uint8_t)rnd() : 0;
				assert_int_equal(pt_pkt_sync_set(pd[FULL], 0), 0);
				ipt_whole = pt_pkt_next(pd[FULL], &p, sizeof(p));
				whole = dc_pkt_fast(buf, FULL, &k);
				assert_true(whole != DC_PKT_CUT);
				for (size_t n = 1; n < FULL; n++) {
					int f = dc_pkt_fast(buf, n, &k), ipt;

					assert_int_equal(pt_pkt_sync_set(pd[n], 0), 0);
					ipt = pt_pkt_next(pd[n], &p, sizeof(p));
					if (f > 0)
						assert_int_equal(f, ipt);
					if (f == DC_PKT_CUT)
						assert_int_equal(ipt, -pte_eos);
					if (whole > 0 && ipt_whole == whole && (size_t)whole > n) {
						assert_int_equal(f, DC_PKT_CUT);
						cuts++;
					}
				}
			}
		}
	}
	assert_true(cuts > 50000);
	for (size_t n = 1; n <= FULL; n++)
		pt_pkt_free_decoder(pd[n]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_data),
		cmocka_unit_test(test_every_cut),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_every_opcode),
		cmocka_unit_test(test_tma_reserved),
		cmocka_unit_test(test_cut_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
