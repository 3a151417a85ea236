/* ptflame decoder: a packet iterator for scans of a whole window.
 *
 * Before a window is decoded, ptdecode.c reads all its packets once more
 * (the CYC fix, cyc_fix_scan; whether it has an MTC). Through libipt's
 * packet decoder that was 9-15 % of report's time on a trace with CYC:
 * two calls per packet (its offset, then the packet, read through a table
 * of decoder functions). dc_pkt_next reads the packets such a scan
 * meets nearly always (PAD, TNT, CYC, MTC, TSC, MODE, the IP packets,
 * PSB, PSBEND, CBR, TMA, OVF, TNT-64, PIP) itself, and only those whose bytes
 * libipt would take as the same packet; anything else (another packet, a
 * packet that would not fit, a reserved field, an error) goes to libipt's
 * packet decoder, which reads it and resynchronizes after an error exactly
 * as a loop over pt_pkt_next and pt_pkt_sync_forward does: the same
 * packets at the same offsets, the same errors. tests/unit/test_ptpkt.c
 * checks that against such a loop on encoded, cut and damaged data. */
#ifndef PTFLAME_DECODER_PTPKT_H
#define PTFLAME_DECODER_PTPKT_H

#include <endian.h>
#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every buffer of PT that libipt reads is followed by DC_PT_SLACK bytes
 * that can be read, zeros where the buffer is ours: libipt 2.0.5's search
 * for a PSB (pt_sync_forward, through pt_find_psb) reads the byte after
 * the buffer's end when an 8-byte word of PSB pattern ends there. Where
 * that byte is past the last mapped page, it faults (the fuzz target found
 * it); where it is 0x02, libipt takes a PSB that ends at the end, which
 * ptquery.c's find_psb does not. perf.data's mapping has a page of zeros
 * after the file (perfdata.c) for the windows that are a chunk of it. */
#define DC_PT_SLACK 16

/* 2, 4, 6 or 8 bytes at p, the first the lowest (a packet's payload): one
 * or two loads */
static inline uint64_t dc_pkt_le(const uint8_t *p, int n)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (n) {
	case 2:
		memcpy(&v16, p, 2);
		return le16toh(v16);
	case 4:
		memcpy(&v32, p, 4);
		return le32toh(v32);
	case 6:
		memcpy(&v32, p, 4);
		memcpy(&v16, p + 4, 2);
		return le32toh(v32) | (uint64_t)le16toh(v16) << 32;
	default:
		memcpy(&v64, p, 8);
		return le64toh(v64);
	}
}

/* A TNT-64's bits (p: its 8 bytes): how many there are before the stop
 * bit, *bits those, the first the highest; 0: none (libipt rejects it). */
static inline unsigned dc_pkt_tnt64(const uint8_t *p, uint64_t *bits)
{
	uint64_t v = dc_pkt_le(p + 2, 6);
	unsigned n;

	if (v < 2)
		return 0;
	n = 63 - (unsigned)__builtin_clzll(v);
	*bits = v & ~(UINT64_C(1) << n);
	return n;
}

/* n bytes for PT, and the zeros after them; NULL: out of memory. */
static inline uint8_t *dc_pt_alloc(size_t n)
{
	uint8_t *b = malloc(n + DC_PT_SLACK);

	if (b)
		memset(b + n, 0, DC_PT_SLACK);
	return b;
}

/* One packet: its type, size, offset in the buffer and the one payload
 * value a scan uses: a CYC's cycles, an MTC's CTC, a CBR's ratio, a TSC's
 * value, a MODE's leaf (pt_mol_*), a TNT's bits (with libipt's bit count
 * in tnt_bits), an IP packet's compression (pt_ipc_*); 0 otherwise. */
struct dc_pkt {
	enum pt_packet_type type;
	uint8_t size, tnt_bits;
	uint64_t off, val;
};

struct dc_pkt_it {
	const uint8_t *buf;
	size_t len;
	size_t off;                /* the next packet's offset            */
	size_t prev;               /* the last packet's offset            */
	size_t sync;               /* the last PSB synchronized at        */
	bool done;                 /* no (more) PSB: the end              */
	struct pt_packet_decoder *pd;
};

/* Over buf[0, len) with base's settings (its begin and end are not used),
 * synchronized at the first PSB (done if there is none). 0, or -ENOMEM. */
int dc_pkt_it_init(struct dc_pkt_it *it, const struct pt_config *base, const uint8_t *buf,
		   size_t len);
void dc_pkt_it_fini(struct dc_pkt_it *it);

/* libipt's reading of the packet at it->off (the slow path). */
int dc_pkt_slow(struct dc_pkt_it *it, struct dc_pkt *k);

/* dc_pkt_fast: the packet at p does not fit in the n bytes there (libipt:
 * -pte_eos). Said only where libipt would say so; a packet whose size is
 * not known here is left to libipt (0). */
#define DC_PKT_CUT (-1)

/* The CYC at p (n bytes there, (p[0] & 3) == 3): its size, *v its
 * cycles; DC_PKT_CUT; 0: libipt reads it (or fails). */
static inline int dc_pkt_cyc(const uint8_t *p, size_t n, uint64_t *v)
{
	uint64_t c = p[0] >> 3;
	unsigned shl = 5;
	size_t i = 1;

	if (p[0] & 4) {
		for (;; i++) {
			/* (libipt: at most 64 bits, so 8 more bytes) */
			if (i >= n)
				return DC_PKT_CUT;
			if (i > 8)
				return 0;
			c |= (uint64_t)(p[i] >> 1) << shl;
			shl += 7;
			if (!(p[i] & 1))
				break;
		}
		i++;
	}
	*v = c;
	return (int)i;
}

/* The packet at p (n bytes there), when it is one of those read here:
 * its size; DC_PKT_CUT; 0: libipt reads it (or fails). */
static inline int dc_pkt_fast(const uint8_t *p, size_t n, struct dc_pkt *k)
{
	static const uint8_t ip_size[8] = { 1, 3, 5, 7, 7, 0, 9, 0 };
	uint8_t b = p[0];

	k->val = 0;
	k->tnt_bits = 0;
	if (!(b & 1)) {
		if (b > 0x02) {        /* TNT-8: its stop bit is set */
			k->type = ppt_tnt_8;
			k->tnt_bits = (uint8_t)(31 - __builtin_clz(b >> 1));
			k->val = (b >> 1) & ~(1u << k->tnt_bits);
			return k->size = 1;
		}
		if (!b) {
			k->type = ppt_pad;
			return k->size = 1;
		}
		if (n < 2)
			return DC_PKT_CUT;
		switch (p[1]) {
		case 0x23:
			k->type = ppt_psbend;
			return k->size = 2;
		case 0xf3:
			k->type = ppt_ovf;
			return k->size = 2;
		case 0x03:
			if (n < 4)
				return DC_PKT_CUT;
			k->type = ppt_cbr;
			k->val = p[2];
			return k->size = 4;
		case 0x73:
			/* (libipt rejects an fc above 9 bits and a set byte 4) */
			if (n < 7)
				return DC_PKT_CUT;
			if (p[4] || (p[6] & 0xfe))
				return 0;
			k->type = ppt_tma;
			return k->size = 7;
		case 0xa3: {
			uint64_t bits;
			unsigned nb;

			if (n < 8)
				return DC_PKT_CUT;
			if (!(nb = dc_pkt_tnt64(p, &bits)))
				return 0;  /* (no bit before the stop bit) */
			k->type = ppt_tnt_64;
			k->tnt_bits = (uint8_t)nb;
			k->val = bits;
			return k->size = 8;
		}
		case 0x82:
			if (n < 16)
				return DC_PKT_CUT;
			for (int i = 2; i < 16; i += 2)
				if (p[i] != 0x02 || p[i + 1] != 0x82)
					return 0;
			k->type = ppt_psb;
			return k->size = 16;
		case 0x43:
			if (n < 8)
				return DC_PKT_CUT;
			k->type = ppt_pip;
			return k->size = 8;
		default:
			return 0;
		}
	}
	if ((b & 3) == 3) {            /* CYC */
		int s = dc_pkt_cyc(p, n, &k->val);

		if (s > 0) {
			k->type = ppt_cyc;
			k->size = (uint8_t)s;
		}
		return s;
	}
	switch (b) {
	case 0x19:
		if (n < 8)
			return DC_PKT_CUT;
		k->type = ppt_tsc;
		for (int i = 7; i >= 1; i--)
			k->val = k->val << 8 | p[i];
		return k->size = 8;
	case 0x59:
		if (n < 2)
			return DC_PKT_CUT;
		k->type = ppt_mtc;
		k->val = p[1];
		return k->size = 2;
	case 0x99:
		if (n < 2)
			return DC_PKT_CUT;
		if (p[1] & 0xc0)       /* leaf 0x00 or 0x20 */
			return 0;
		k->type = ppt_mode;
		k->val = p[1] & 0xe0;
		return k->size = 2;
	default:
		break;
	}
	switch (b & 0x1f) {
	case 0x0d:
		k->type = ppt_tip;
		break;
	case 0x11:
		k->type = ppt_tip_pge;
		break;
	case 0x01:
		k->type = ppt_tip_pgd;
		break;
	case 0x1d:
		k->type = ppt_fup;
		break;
	default:
		return 0;
	}
	if (!ip_size[b >> 5])
		return 0;
	if (n < ip_size[b >> 5])
		return DC_PKT_CUT;
	k->val = b >> 5;
	return k->size = ip_size[b >> 5];
}

/* The next packet into *k: 1; 0: the data there was bad and the iterator
 * went on at the next PSB (or found none: the next call ends), as a loop
 * over libipt's packet decoder does; -1: the end. */
static inline int dc_pkt_next(struct dc_pkt_it *it, struct dc_pkt *k)
{
	if (it->done)
		return -1;
	if (it->off < it->len && dc_pkt_fast(it->buf + it->off, it->len - it->off, k) > 0) {
		k->off = it->off;
		it->prev = it->off;
		it->off += k->size;
		return 1;
	}
	return dc_pkt_slow(it, k);
}

#endif
