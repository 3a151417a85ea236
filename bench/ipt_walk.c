/* ptflame bench: a walker of our own over libipt's packet decoder (ipt_bare
 * -w), a prototype of issue 12's moonshot, to measure how fast decoding
 * can go when libipt's per-instruction walk is skipped.
 *
 * A per-address cache holds, for each address decoding has reached, where
 * the next branch instruction is, what it is (record/ptenc.c's classes,
 * the ones our encoder emits packets by) and its direct target; Zydis
 * decodes the instructions once per distinct address, and each entry links
 * to the entries that came after it, so a steady loop does not hash.
 * The packets come from libipt's packet decoder: a conditional branch and
 * a compressed return take the next TNT bit, an indirect branch or an
 * uncompressed return the next TIP (with libipt's return stack: pushed by
 * calls, popped by compressed returns); TIP.PGE/TIP.PGD switch tracing on
 * and off, FUP + TIP.PGD stops the walk at the FUP's ip (an interrupt),
 * PSB+ is a status update. Timing packets are skipped: no time is kept,
 * which report would need. What user-mode traces of 64-bit code hold is
 * handled; anything else is an error, after which the walk goes on at the
 * next PSB, as a libipt decoder's user resyncs.
 *
 * It reports what libipt's block decoder reports, branch for branch, also
 * where the data ends (libipt stops there in several ways: see `last`,
 * `partial` and `stop_ip` below): ipt_bare hashes the calls and returns of
 * both the same way (walk_hash), and tests/e2e/decode/walk.sh compares them
 * on every recording, in pieces of any size and cut after any byte
 * (ipt_bare -x), and on three damaged copies. On damaged data in general
 * it does not yet recover exactly as libipt does (each inconsistency has
 * its own libipt error and recovery; bench/README.md has the figures). */
#include <Zydis/Zydis.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/ipt_walk.h"
#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/pt_lastip.h"
#include "record/ptenc.h"

struct bend {                      /* from ip, the next branch               */
	uint64_t ip, end, target;  /* end: the branch instruction's address  */
	uint32_t link[2];          /* entries (index + 1) that came next:
	                              both ways of a conditional branch, the
	                              last targets of an indirect one        */
	uint8_t len, cls;          /* its length, enum rc_insn_class          */
};

enum { MAX_MAPS = 512, RETS = 64, SCAN_MAX = 1 << 16 };

struct map {
	uint64_t start, len;
	const uint8_t *code;       /* the file's bytes for start            */
	size_t code_len;
	void *file;                /* the file's mapping, file_len bytes    */
	size_t file_len;
};

/* The entries, in the order decoding first reached them (so the code of
 * a hot loop sits together: the links go there, the hash only on a miss),
 * and their ips' index. */
static struct bend *ents;
static size_t nents, cap_ents;
static struct dc_hash bc;          /* ip -> index into ents                  */
static struct map maps[MAX_MAPS];
static size_t nmaps;
static ZydisDecoder zy;
static bool zy_ok;

/* What the instruction at ip is, as our encoder (record/ptenc.c) classes
 * it. Zydis, not capstone: it knows every instruction (Debian's capstone 4
 * does not know AVX-512's, which glibc's string functions use), and fast. */
static int classify(const uint8_t *p, size_t n, uint64_t ip, struct rc_insn *in)
{
	ZydisDecodedInstruction d;
	bool far, rel;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&zy, NULL, p, n, &d)))
		return -1;
	far = d.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	rel = d.raw.imm[0].is_relative;
	in->ip = ip;
	in->len = d.length;
	in->target = rel ? ip + d.length + (uint64_t)d.raw.imm[0].value.s : 0;
	switch (d.mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		in->cls = far ? RC_INSN_FAR : rel ? RC_INSN_JMP : RC_INSN_JMP_IND;
		break;
	case ZYDIS_MNEMONIC_CALL:
		in->cls = far ? RC_INSN_FAR : rel ? RC_INSN_CALL : RC_INSN_CALL_IND;
		break;
	case ZYDIS_MNEMONIC_RET:
		in->cls = far ? RC_INSN_FAR : RC_INSN_RET;
		break;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
		in->cls = RC_INSN_SYSCALL;
		break;
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
		in->cls = RC_INSN_INT;
		break;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_SYSRET:
		in->cls = RC_INSN_FAR;
		break;
	default:
		in->cls = d.meta.category == ZYDIS_CATEGORY_COND_BR &&
			  d.mnemonic != ZYDIS_MNEMONIC_XBEGIN ? RC_INSN_JCC : RC_INSN_OTHER;
		break;
	}
	return 0;
}

static void bc_flush(void);

/* A mapping over others (an exec, a dlopen where something was): they go,
 * as in a libipt image, and so does every entry decoded (from them or
 * not: a prototype need not tell). */
static void drop_overlaps(uint64_t start, uint64_t len)
{
	size_t k = 0;
	bool any = false;

	for (size_t i = 0; i < nmaps; i++) {
		if (maps[i].start < start + len && start < maps[i].start + maps[i].len) {
			munmap(maps[i].file, maps[i].file_len);
			any = true;
			continue;
		}
		maps[k++] = maps[i];
	}
	nmaps = k;
	if (any)
		bc_flush();
}

int walk_add_map(const char *path, uint64_t start, uint64_t len, uint64_t pgoff)
{
	struct stat st;
	void *p;
	int fd;

	if (nmaps == MAX_MAPS || (fd = open(path, O_RDONLY)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size <= pgoff) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	drop_overlaps(start, len);
	maps[nmaps++] = (struct map){ .start = start, .len = len,
				      .code = (const uint8_t *)p + pgoff,
				      .code_len = (size_t)((uint64_t)st.st_size - pgoff),
				      .file = p, .file_len = (size_t)st.st_size };
	return 0;
}

/* (Only when an address is decoded the first time: no hurry.) */
static const uint8_t *code_at(uint64_t ip, size_t *n)
{
	for (size_t k = 0; k < nmaps; k++) {
		const struct map *m = &maps[k];
		uint64_t off = ip - m->start;

		if (ip >= m->start && off < m->len && off < m->code_len) {
			size_t end = m->len < m->code_len ? m->len : m->code_len;

			*n = end - off < 16 ? end - off : 16;   /* (not past the section) */
			return m->code + off;
		}
	}
	return NULL;
}

static void bc_flush(void)
{
	nents = 0;
	dc_hash_free(&bc);
}

/* Where the next branch from ip is (an index into ents): decoded once per
 * distinct ip. -1: no code there, or none that decodes. */
static long bend_at(uint64_t ip)
{
	uint64_t at = ip, idx;

	if (ip == DC_HASH_EMPTY)   /* (no code there; the hash's empty key) */
		return -1;
	if (dc_hash_get(&bc, ip, &idx))
		return (long)idx;
	if (DC_VEC_PUSH_ROOM(ents, nents, cap_ents, 4096))
		abort();
	for (int i = 0; i < SCAN_MAX; i++) {
		struct rc_insn in;
		const uint8_t *p;
		size_t n;

		if (!(p = code_at(at, &n)) || classify(p, n, at, &in))
			return -1;
		if (in.cls != RC_INSN_OTHER) {
			ents[nents] = (struct bend){ .ip = ip, .end = at, .target = in.target,
						     .len = in.len, .cls = in.cls };
			if (dc_hash_put(&bc, ip, nents))
				abort();
			return (long)nents++;
		}
		at += in.len;
	}
	return -1;
}

/* The entry at ip, through from's links when one of them is it (the hot
 * path: no hashing), else looked up and linked. from: index + 1, or 0. */
static struct bend *bend_next(uint32_t from, uint64_t ip)
{
	struct bend *f = from ? &ents[from - 1] : NULL;
	long i;

	if (f) {
		for (int k = 0; k < 2; k++)
			if (f->link[k] && ents[f->link[k] - 1].ip == ip)
				return &ents[f->link[k] - 1];
	}
	if ((i = bend_at(ip)) < 0)
		return NULL;
	if (from) {
		f = &ents[from - 1];   /* (ents may have moved) */
		int k = f->link[0] ? 1 : 0;

		if (f->link[0] && f->link[1])
			k = (int)(ip & 1);   /* (both taken: one of them goes) */
		f->link[k] = (uint32_t)i + 1;
	}
	return &ents[i];
}

uint64_t walk_hash(uint64_t h, uint64_t end_ip, int ret)
{
	static int trace = -1;   /* IPT_WALK_TRACE=1: each branch to stderr */

	if (trace < 0)
		trace = getenv("IPT_WALK_TRACE") != NULL;
	if (trace)
		fprintf(stderr, "%s %llx\n", ret ? "ret" : "call", (unsigned long long)end_ip);
	return (h ^ (end_ip + (uint64_t)ret)) * UINT64_C(0x100000001b3);
}

struct walker;
static void err(struct walker *w);

/* ---- the packets ---- */

/* Half a packet at the end of the data (n bytes of it at p), as libipt
 * takes it: a timing packet it drops at once (TSC, MTC, CYC, CBR, TMA, MNT,
 * PAD: pts_eos comes with the TNT bits used up), a branch's packet it asks
 * for when a branch wants it (TNT-64, TIP: it fails there), or an event's
 * (FUP, TIP.PGE, TIP.PGD, MODE, PSB, OVF, PIP, ...: pending as soon as the
 * bits are used up, it fails before any further instruction). */
enum partial { PART_NONE, PART_TIMING, PART_BRANCH, PART_EVENT };

struct walker {
	struct pt_packet_decoder *pd;
	uint64_t last_ip;
	uint64_t tnt;              /* pending TNT bits, oldest highest       */
	int ntnt;
	uint64_t rets[RETS];       /* libipt's way: popped by compressed rets */
	int rtop, nrets;
	bool on, eos;
	uint64_t ip;
	struct walk_counts *c;
	uint32_t from;             /* the last step's entry + 1 (its links) */
	bool lost;                 /* an error: nothing until the next PSB  */
	bool ovf;                  /* an OVF, tracing not back yet          */
	/* no flow packet is left (libipt reads the timing packets after the
	 * last one at once): once its TNT bits are used up too, libipt says
	 * pts_eos with that block, and a decoder stops there (libipt's blocks
	 * end at each branch, with end_on_call and end_on_jump) */
	bool last;
	uint64_t stop_ip;          /* the walk ends at this ip (0: none)    */
	enum partial partial;      /* what half a packet at the end is      */
	const uint8_t *data;       /* the data, size bytes                  */
	uint64_t size;
	struct pt_packet pk[2];    /* the next flow packets, read ahead     */
	int npk;
};

static enum partial partial_kind(const uint8_t *p, size_t n)
{
	uint8_t low = p[0] & 0x1f;

	if (p[0] == 0x02) {
		if (n < 2 || p[1] == 0x03 || p[1] == 0x73 || p[1] == 0xc3 || p[1] == 0x23)
			return PART_TIMING;
		return p[1] == 0xa3 ? PART_BRANCH : PART_EVENT;
	}
	if (low == 0x0d)
		return PART_BRANCH;
	if (low == 0x01 || low == 0x11 || low == 0x1d || p[0] == 0x99)
		return PART_EVENT;
	return PART_TIMING;
}

/* The next packet that says something about the flow (timing, mode and
 * padding packets skipped). false at the end. */
static bool read_flow(struct walker *w, struct pt_packet *p)
{
	w->partial = PART_NONE;
	for (;;) {
		int st = pt_pkt_next(w->pd, p, sizeof(*p));

		if (st < 0) {
			uint64_t off = 0;

			if (st != -pte_eos) {
				/* a packet libipt cannot read either: on at
				 * the next PSB */
				err(w);
				if (pt_pkt_sync_forward(w->pd) >= 0)
					continue;
			} else if (pt_pkt_get_offset(w->pd, &off) >= 0 && off < w->size) {
				w->partial = partial_kind(w->data + off, w->size - off);
			}
			return false;
		}
		switch (p->type) {
		case ppt_tnt_8:
		case ppt_tnt_64:
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
		case ppt_psb:
		case ppt_ovf:
			return true;
		default:
			break;
		}
	}
}

/* The flow packets read ahead: one, two after a FUP. A FUP with no whole
 * packet after it is dropped: libipt, which reads it with the next one
 * (TIP.PGD: an interrupt; TIP: an async branch), fails on it at once and
 * takes the data as ended there. */
static void ahead(struct walker *w)
{
	bool fup_dropped = false;

	if (!w->npk && read_flow(w, &w->pk[0]))
		w->npk = 1;
	if (w->npk == 1 && w->pk[0].type == ppt_fup) {
		if (read_flow(w, &w->pk[1])) {
			w->npk = 2;
		} else {
			w->npk = 0;
			fup_dropped = true;
		}
	}
	w->last = !w->npk && (fup_dropped || w->partial <= PART_TIMING);
}

static bool next_flow(struct walker *w, struct pt_packet *p)
{
	if (!w->npk)
		ahead(w);
	if (!w->npk) {
		w->eos = true;
		return false;
	}
	*p = w->pk[0];
	w->pk[0] = w->pk[1];
	w->npk--;
	if (p->type != ppt_psb) {  /* (psb_plus reads PSB+ itself) */
		uint64_t errors = w->c->errors;

		ahead(w);
		/* libipt reads ahead when it takes a packet, and a bad one
		 * behind it fails the query that took it */
		if (w->c->errors != errors)
			return false;
	}
	return true;
}

/* The next flow packet, left to be read (NULL at the end). */
static const struct pt_packet *peek_flow(struct walker *w)
{
	if (!w->npk)
		ahead(w);
	return w->npk ? &w->pk[0] : NULL;
}

/* Can a packet of this type be part of a PSB+ (libipt's query decoder reads
 * it there; any other, a TIP or a TNT, is an error there)? */
static bool in_psb_plus(enum pt_packet_type t)
{
	switch (t) {
	case ppt_pad: case ppt_fup: case ppt_pip: case ppt_mode: case ppt_tsc: case ppt_cbr:
	case ppt_tma: case ppt_mtc: case ppt_cyc: case ppt_vmcs: case ppt_mnt: case ppt_unknown:
		return true;
	default:
		return false;
	}
}

/* PSB+: up to PSBEND; its FUP, if any, is where the code is (tracing on). */
static void psb_plus(struct walker *w)
{
	struct pt_packet p;
	int st;

	w->last_ip = 0;
	w->on = false;
	while ((st = pt_pkt_next(w->pd, &p, sizeof(p))) >= 0 && p.type != ppt_psbend) {
		if (p.type == ppt_fup) {
			dc_pt_last_ip(&w->last_ip, &p);
			w->ip = w->last_ip;
			w->on = true;
		} else if (!in_psb_plus(p.type)) {
			st = -pte_bad_context;   /* (libipt's, reading PSB+) */
			break;
		}
	}
	if (st < 0 && st != -pte_eos) {
		/* a packet libipt cannot read either, in the PSB+: an
		 * error, and on at the next PSB (it ended the walk, and with
		 * it the piece, without one) */
		err(w);
		if (pt_pkt_sync_forward(w->pd) < 0)
			w->eos = true;
	} else if (st < 0) {       /* (no PSBEND: libipt cannot sync there) */
		w->on = false;
		w->eos = true;
	} else if (w->on && !peek_flow(w) && w->partial <= PART_TIMING) {
		/* nothing after it: libipt says pts_eos with its status
		 * update, which binds at its FUP's ip: the walk ends there */
		w->stop_ip = w->ip;
	}
}

/* Tracing stops (TIP.PGD) or an interrupt's FUP + TIP.PGD: off. */
static void handle_off(struct walker *w, struct pt_packet *p)
{
	if (p->type == ppt_fup) {
		dc_pt_last_ip(&w->last_ip, p);
		if (next_flow(w, p) && p->type != ppt_tip_pgd)
			err(w);   /* (FUP + TIP: kernel tracing, not handled) */
	}
	if (p->type == ppt_tip_pgd)
		dc_pt_last_ip(&w->last_ip, p);
	w->on = false;
}

/* A PSB+ where a branch wants its packet: the same flow goes on (its FUP
 * is where the code is), unless it says tracing is off. */
static bool mid_psb(struct walker *w)
{
	psb_plus(w);
	return w->on;
}

/* A packet that does not fit the flow: go on at the next place known. */
static void resync(struct walker *w, struct pt_packet *p)
{
	if (p->type == ppt_psb) {
		psb_plus(w);
		return;
	}
	if (p->type == ppt_ovf) {
		w->ntnt = 0;
		w->on = false;
		w->ovf = true;
		return;
	}
	if (p->type == ppt_fup || p->type == ppt_tip_pgd) {
		handle_off(w, p);
		return;
	}
	err(w);
	w->on = false;
	w->ntnt = 0;
}

/* The next TNT bit: 1 taken, 0 not, -1 the flow stopped (w->on false). */
static int need_tnt(struct walker *w)
{
	struct pt_packet p;

	while (!w->ntnt) {
		if (!next_flow(w, &p))
			return -1;
		if (p.type == ppt_tnt_8 || p.type == ppt_tnt_64) {
			w->tnt = p.payload.tnt.payload;
			w->ntnt = p.payload.tnt.bit_size;
			continue;
		}
		if (p.type == ppt_psb) {
			if (mid_psb(w))
				continue;
			return -1;
		}
		resync(w, &p);
		return -1;
	}
	w->ntnt--;
	return (int)((w->tnt >> w->ntnt) & 1);
}

/* Is the next flow packet a TNT (a compressed return)? */
static int ret_compressed(struct walker *w, struct pt_packet *p)
{
	while (!w->ntnt) {
		if (!next_flow(w, p))
			return -1;
		if (p->type == ppt_tnt_8 || p->type == ppt_tnt_64) {
			w->tnt = p->payload.tnt.payload;
			w->ntnt = p->payload.tnt.bit_size;
		} else if (p->type == ppt_psb) {
			if (!mid_psb(w))
				return -1;
		} else {
			return 0;
		}
	}
	return 1;
}

/* The next TIP's target (p already read, or read here); false: stopped. */
static bool need_tip(struct walker *w, struct pt_packet *p, bool have)
{
	if (!have) {
		do {
			if (!next_flow(w, p))
				return false;
			if (p->type == ppt_psb && !mid_psb(w))
				return false;
		} while (p->type == ppt_psb);
	}
	if (p->type != ppt_tip) {
		resync(w, p);
		return false;
	}
	dc_pt_last_ip(&w->last_ip, p);
	if (p->payload.ip.ipc == pt_ipc_suppressed) {
		w->on = false;
		return false;
	}
	w->ip = w->last_ip;
	return true;
}

static void count(struct walker *w, uint64_t end, int ret)
{
	w->c->branches++;
	w->c->hash = walk_hash(w->c->hash, end, ret);
}

/* The walk cannot go on: as a libipt decoder's user does after an error,
 * it goes on at the next PSB. */
static void err(struct walker *w)
{
	w->c->errors++;
	w->lost = true;
	w->on = false;
	w->ntnt = 0;
	w->nrets = 0;              /* (libipt's resync starts a new stack) */
}

static void block_end(struct walker *w)
{
	if (w->last && !w->ntnt && !w->stop_ip)   /* (else it ends at stop_ip) */
		w->eos = true;
}

static void push_ret(struct walker *w, uint64_t to)
{
	w->rtop = (w->rtop + 1) % RETS;
	w->rets[w->rtop] = to;
	if (w->nrets < RETS)
		w->nrets++;
}

/* Is the next packet a FUP (an interrupt: its ip is where the code
 * stopped) within the block b? Its TNT bits used up, the FUP binds to the
 * first time the code gets there. */
static bool fup_in(struct walker *w, const struct bend *b)
{
	const struct pt_packet *q = peek_flow(w);
	uint64_t ip = w->last_ip;

	if (!q || q->type != ppt_fup)
		return false;
	dc_pt_last_ip(&ip, q);
	return ip >= w->ip && ip <= b->end;
}

/* Before the block at w->ip: a PSB+ between branches, the bits before it
 * used up, is a status update taken now (as libipt takes pending events),
 * so that an interrupt's FUP after it binds in this block if it is there;
 * the walk goes on from here (the PSB+'s FUP is where the code is when it
 * is written: here or after branches that need no packet). false: the walk
 * ends or tracing is off. */
static bool before_block(struct walker *w)
{
	struct pt_packet p;

	while (!w->ntnt && peek_flow(w) && peek_flow(w)->type == ppt_psb) {
		uint64_t here = w->ip;

		next_flow(w, &p);
		if (!mid_psb(w))
			return false;
		w->ip = here;
	}
	if ((!w->ntnt && !peek_flow(w) && w->partial == PART_EVENT) ||
	    (w->stop_ip && w->stop_ip == w->ip)) {
		w->eos = true;     /* (libipt fails on that event first) */
		return false;
	}
	return true;
}

/* The branch at the end of block b, its packet taken. */
static void take_branch(struct walker *w, const struct bend *b)
{
	uint64_t next = b->end + b->len;
	struct pt_packet p;
	int bit;

	switch (b->cls) {
	case RC_INSN_JCC:
		if ((bit = need_tnt(w)) >= 0)
			w->ip = bit ? b->target : next;
		break;
	case RC_INSN_JMP:
		w->ip = b->target;
		break;
	case RC_INSN_CALL:
		if (b->target != next)
			push_ret(w, next);
		count(w, b->end, 0);
		w->ip = b->target;
		break;
	case RC_INSN_CALL_IND:
		/* (a branch reached is one libipt reports, with the error if
		 * the data ends before its packet) */
		push_ret(w, next);
		count(w, b->end, 0);
		need_tip(w, &p, false);
		break;
	case RC_INSN_JMP_IND:
	case RC_INSN_FAR:
		need_tip(w, &p, false);
		break;
	case RC_INSN_RET:
		count(w, b->end, 1);
		bit = ret_compressed(w, &p);
		if (bit < 0)
			break;
		if (!bit) {
			need_tip(w, &p, true);
		} else if (!w->nrets || need_tnt(w) != 1) {
			err(w);
		} else {
			w->ip = w->rets[w->rtop];
			w->rtop = (w->rtop + RETS - 1) % RETS;
			w->nrets--;
		}
		break;
	default:                   /* syscall, int: tracing goes off */
		if (next_flow(w, &p))
			resync(w, &p);
		w->on = false;
		break;
	}
}

/* One block of the code from w->ip, and its branch. */
static void step(struct walker *w)
{
	struct bend *b;
	struct pt_packet p;

	if (!before_block(w))
		return;
	b = bend_next(w->from, w->ip);
	w->from = b ? (uint32_t)(b - ents) + 1 : 0;
	if (!b) {
		err(w);
		return;
	}
	if (w->stop_ip && w->stop_ip >= w->ip && w->stop_ip <= b->end) {
		w->eos = true;
		return;
	}
	w->c->blocks++;
	if (!w->ntnt && fup_in(w, b)) {
		/* an interrupt before the branch: off at the FUP's ip */
		next_flow(w, &p);
		handle_off(w, &p);
		return;
	}
	take_branch(w, b);
	block_end(w);
}

/* Tracing off: wait for TIP.PGE (or a PSB+ with a FUP). */
static void wait_on(struct walker *w)
{
	struct pt_packet p;

	while (!w->on && next_flow(w, &p)) {
		if (w->lost && p.type != ppt_psb)
			continue;
		if (p.type == ppt_tip_pge || p.type == ppt_fup) {
			dc_pt_last_ip(&w->last_ip, &p);
			if (p.payload.ip.ipc != pt_ipc_suppressed) {
				/* (a FUP after an OVF: the overflow resolved
				 * with tracing on, there) */
				w->ip = w->last_ip;
				w->on = p.type == ppt_tip_pge || w->ovf;
			}
			w->ovf = false;
			/* (the trace's last packet: libipt says pts_eos with
			 * the enable event, before any block) */
			if (w->on && w->last)
				w->eos = true;
		} else if (p.type == ppt_psb) {
			w->lost = w->ovf = false;
			psb_plus(w);
		} else if (p.type == ppt_ovf) {
			w->ovf = true;
			w->ntnt = 0;
		} else if (p.type == ppt_tip || p.type == ppt_tip_pgd) {
			dc_pt_last_ip(&w->last_ip, &p);
		} else if (p.type == ppt_tnt_8 || p.type == ppt_tnt_64) {
			err(w);
		}
	}
}

void walk_chunk(const struct pt_config *base, const uint8_t *data, uint64_t size,
		struct walk_counts *c)
{
	struct pt_config cfg = *base;
	struct walker w = { .c = c, .data = data, .size = size };

	if (!zy_ok) {
		if (!ZYAN_SUCCESS(ZydisDecoderInit(&zy, ZYDIS_MACHINE_MODE_LONG_64,
						   ZYDIS_STACK_WIDTH_64)))
			abort();
		zy_ok = true;
	}
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + size;
	w.pd = pt_pkt_alloc_decoder(&cfg);
	if (!w.pd || pt_pkt_sync_forward(w.pd) < 0) {
		pt_pkt_free_decoder(w.pd);
		return;
	}
	while (!w.eos) {
		if (!w.on)
			wait_on(&w);
		else
			step(&w);
	}
	pt_pkt_free_decoder(w.pd);
}

void walk_free(void)
{
	dc_hash_free(&bc);
	free(ents);
	for (size_t i = 0; i < nmaps; i++)
		munmap(maps[i].file, maps[i].file_len);
	nmaps = 0;
}
