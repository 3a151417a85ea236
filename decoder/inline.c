/* ptflame - decoder/inline.c: where a binary's code is inlined code, from
 * its DWARF (libdw): every DW_TAG_inlined_subroutine of a compile unit,
 * read once per unit when an address inside it is first asked about, turned
 * into a flat sorted list of address segments, each naming the innermost
 * inlined instance there (instances nest: an instance knows the one it was
 * inlined into). Plus an x86-64 instruction counter (capstone) so that the
 * PT decoder can place a change of inline context inside a block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/decoder.h"

enum { MAX_NEST = 128 };

struct inl_inst {
	uint32_t parent;           /* enclosing instance index + 1, 0: none */
	const char *name;          /* in the DWARF's string data            */
};

struct inl_seg {
	uint64_t lo, hi;
	uint32_t inst;             /* index + 1                             */
};

struct raw {
	uint64_t lo, hi;
	uint32_t depth, inst;
};

struct dc_inl {
	Dwarf *dw;
	struct dc_hash cus;        /* CU offset -> 1: read                  */
	struct inl_inst *insts;
	size_t ninsts, cap_insts;
	struct inl_seg *segs;      /* sorted, disjoint                      */
	size_t nsegs, cap_segs;
	struct raw *raw;           /* scratch for one CU                    */
	size_t nraw, cap_raw;
};

struct dc_inl *dc_inl_new(struct Dwarf *dw)
{
	struct dc_inl *in = calloc(1, sizeof(*in));

	if (in)
		in->dw = dw;
	return in;
}

void dc_inl_free(struct dc_inl *in)
{
	if (!in)
		return;
	dc_hash_free(&in->cus);
	free(in->insts);
	free(in->segs);
	free(in->raw);
	free(in);
}

/* The name perf would show: the linkage name (mangled: the caller
 * demangles) else the plain name, following the abstract origin. */
static const char *inst_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n && dwarf_attr_integrate(die, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	return n ? n : "[unknown]";
}

static int add_instance(struct dc_inl *in, Dwarf_Die *die, uint32_t parent, uint32_t depth,
			uint32_t *id)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	if (dc_vec_reserve((void **)&in->insts, &in->cap_insts, in->ninsts + 1, sizeof(*in->insts),
			   64))
		return -ENOMEM;
	in->insts[in->ninsts] = (struct inl_inst){ .parent = parent, .name = inst_name(die) };
	*id = (uint32_t)++in->ninsts;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (dc_vec_reserve((void **)&in->raw, &in->cap_raw, in->nraw + 1, sizeof(*in->raw), 64))
			return -ENOMEM;
		in->raw[in->nraw++] = (struct raw){ lo, hi, depth, *id };
	}
	return 0;
}

/* Every inlined instance under die (iterative over siblings, recursive
 * over nesting, at most MAX_NEST deep). */
static int walk(struct dc_inl *in, Dwarf_Die *die, uint32_t parent, uint32_t depth)
{
	Dwarf_Die c;

	if (depth >= MAX_NEST || dwarf_child(die, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c), ret = 0;
		uint32_t id;

		switch (tag) {
		case DW_TAG_inlined_subroutine:
			ret = add_instance(in, &c, parent, depth, &id);
			if (!ret)
				ret = walk(in, &c, id, depth + 1);
			break;
		case DW_TAG_subprogram:
			ret = walk(in, &c, 0, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (dwarf_haschildren(&c))
				ret = walk(in, &c, parent, depth + 1);
			break;
		default:
			break;
		}
		if (ret)
			return ret;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct inl_seg *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int emit(struct dc_inl *in, uint64_t lo, uint64_t hi, uint32_t inst)
{
	struct inl_seg *last = in->nsegs ? &in->segs[in->nsegs - 1] : NULL;

	if (hi <= lo)
		return 0;
	if (last && last->inst == inst && last->hi == lo) {
		last->hi = hi;
		return 0;
	}
	if (dc_vec_reserve((void **)&in->segs, &in->cap_segs, in->nsegs + 1, sizeof(*in->segs), 64))
		return -ENOMEM;
	in->segs[in->nsegs++] = (struct inl_seg){ lo, hi, inst };
	return 0;
}

/* The CU's ranges (nested) become flat segments: sweep in address order
 * with a stack of open ranges; the innermost open one owns each piece. */
static int flatten(struct dc_inl *in)
{
	struct raw st[MAX_NEST + 1];
	size_t n = 0, first = in->nsegs;
	uint64_t pos = 0;
	int ret = 0;

	if (!in->nraw)
		return 0;
	qsort(in->raw, in->nraw, sizeof(*in->raw), cmp_raw);
	for (size_t i = 0; i <= in->nraw && !ret; i++) {
		uint64_t at = i < in->nraw ? in->raw[i].lo : UINT64_MAX;

		while (n && st[n - 1].hi <= at && !ret) {
			if (st[n - 1].hi > pos) {
				ret = emit(in, pos, st[n - 1].hi, st[n - 1].inst);
				pos = st[n - 1].hi;
			}
			n--;
		}
		if (i == in->nraw || ret)
			break;
		if (n && at > pos) {
			ret = emit(in, pos, at, st[n - 1].inst);
		}
		if (at > pos)
			pos = at;
		if (n <= MAX_NEST)
			st[n++] = in->raw[i];
	}
	in->nraw = 0;
	if (!ret && first)
		qsort(in->segs, in->nsegs, sizeof(*in->segs), cmp_seg);
	return ret;
}

static int read_cu(struct dc_inl *in, Dwarf_Die *cu)
{
	uint64_t off = dwarf_dieoffset(cu), v;
	int ret;

	if (dc_hash_get(&in->cus, off, &v))
		return 0;
	if ((ret = dc_hash_put(&in->cus, off, 1)))
		return ret;
	in->nraw = 0;
	ret = walk(in, cu, 0, 0);
	if (ret) {
		in->nraw = 0;
		return ret;
	}
	return flatten(in);
}

/* The range of the CU's code that holds vaddr (its ranges or low/high pc). */
static bool cu_range(Dwarf_Die *cu, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Addr base, a, b;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cu, off, &base, &a, &b)) > 0) {
		if (vaddr >= a && vaddr < b) {
			*lo = a;
			*hi = b;
			return true;
		}
	}
	return false;
}

uint32_t dc_inl_lookup(struct dc_inl *in, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	uint64_t clo = 0, chi = 0;
	Dwarf_Die cu;
	size_t a;

	*lo = *hi = 0;
	if (!in || !in->dw || !dwarf_addrdie(in->dw, vaddr, &cu))
		return 0;
	if (read_cu(in, &cu) || !cu_range(&cu, vaddr, &clo, &chi))
		return 0;
	a = DC_VEC_UPPER(in->segs, in->nsegs, lo, vaddr);   /* first segment with lo > vaddr */
	if (a && vaddr < in->segs[a - 1].hi) {
		*lo = in->segs[a - 1].lo;
		*hi = in->segs[a - 1].hi;
		return in->segs[a - 1].inst;
	}
	/* a gap, as far as this CU's code goes (other CUs may be unread) */
	*lo = a && in->segs[a - 1].hi > clo ? in->segs[a - 1].hi : clo;
	*hi = a < in->nsegs && in->segs[a].lo < chi ? in->segs[a].lo : chi;
	return 0;
}

uint32_t dc_inl_parent(const struct dc_inl *in, uint32_t inst, const char **name)
{
	if (!in || !inst || inst > in->ninsts) {
		*name = NULL;
		return 0;
	}
	*name = in->insts[inst - 1].name;
	return in->insts[inst - 1].parent;
}

/* ---- counting instructions ---------------------------------------------- */

enum { COUNT_CACHE = 1024 };

struct dc_insn_counter {
	csh cs;
	bool open;
	cs_insn *insn;
	struct { uint64_t ip, target; int id; long n; } cache[COUNT_CACHE];
};

struct dc_insn_counter *dc_insn_counter_new(void)
{
	struct dc_insn_counter *c = calloc(1, sizeof(*c));

	if (c && cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) == CS_ERR_OK) {
		c->open = true;
		c->insn = cs_malloc(c->cs);
	}
	return c;
}

void dc_insn_counter_free(struct dc_insn_counter *c)
{
	if (!c)
		return;
	if (c->insn)
		cs_free(c->insn, 1);
	if (c->open)
		cs_close(&c->cs);
	free(c);
}

static size_t count_slot(int code_id, uint64_t ip, uint64_t target)
{
	return (size_t)(dc_hash_mix(ip ^ (target << 20) ^ ((uint64_t)(uint32_t)code_id << 44)) %
			COUNT_CACHE);
}

long dc_insn_count_known(const struct dc_insn_counter *c, int code_id, uint64_t ip,
			 uint64_t target)
{
	size_t slot = count_slot(code_id, ip, target);

	if (c && c->cache[slot].n && c->cache[slot].ip == ip && c->cache[slot].target == target &&
	    c->cache[slot].id == code_id)
		return c->cache[slot].n - 1;
	return -2;
}

long dc_insn_count(struct dc_insn_counter *c, int code_id, const uint8_t *code, size_t len,
		   uint64_t ip, uint64_t target)
{
	size_t slot = count_slot(code_id, ip, target);
	const uint8_t *p = code;
	uint64_t at = ip;
	size_t left = len;
	long n = 0;

	if (!c || !c->insn || target < ip || target - ip > len)
		return -1;
	if ((n = dc_insn_count_known(c, code_id, ip, target)) != -2)
		return n;
	n = 0;
	while (at < target && cs_disasm_iter(c->cs, &p, &left, &at, c->insn))
		n++;
	if (at != target)
		return -1;
	c->cache[slot].ip = ip;
	c->cache[slot].target = target;
	c->cache[slot].id = code_id;
	c->cache[slot].n = n + 1;
	return n;
}
