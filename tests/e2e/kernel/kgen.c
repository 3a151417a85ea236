/* ptflame tests: a synthetic user+kernel Intel PT recording whose kernel
 * part runs the code of a fake kernel image (ktext.S linked at a kernel
 * address), for report --vmlinux / --kcore / --kallsyms.
 *
 * The user part is this program's own code (ku_main calls ku_sys, which
 * makes a syscall, NSYS times); each syscall enters the kernel's k_entry
 * and goes back with its iretq. CODE is the code as it ran (a kcore:
 * kernel text and the module kmod at their run-time addresses); the
 * instruction stream is walked over it with capstone
 * (tests/unit/ptenc_walk.c) and encoded by record/ptenc.c as a user+kernel
 * trace does it (the syscall and the iretq are far transfers with a TIP
 * each), one instruction every NS_PER_INSN ns, and written as a per-thread
 * perf.data with the kernel's text map where IMAGE's _text ran (its own
 * address moved by --shift, as KASLR does; CODE must be linked there), the
 * module's map "[kmod]" and, unless --no-build-id, IMAGE's build-id (or a
 * wrong one: --bad-build-id).
 *
 * What a report must show is computed here from the walk, independently
 * of the decoder: EXPECTED gets one folded line per stack with its self
 * time ("ku_main;ku_sys;[kernel];k_entry;k_do_syscall;k_work NS"), then
 * "calls NAME N" lines: the calls (and tail calls) each function got.
 *
 * usage: kgen IMAGE CODE OUT.perf EXPECTED [--shift HEX] [--bad-build-id]
 *             [--no-build-id] [--kallsyms FILE]   (FILE: CODE's names)
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "record/ptenc.h"
#include "tests/unit/ptenc_walk.h"

enum { NSYS = 3, NS_PER_INSN = 10 };

/* k_work's loop runs this many times in syscall i */
static const int loops[NSYS] = { 40, 7, 120 };

__asm__(
	".text\n"
	".p2align 4\n"
	".globl ku_main\n"
	".type ku_main, @function\n"
	"ku_main:\n"
	"	call ku_sys\n"
	"	call ku_sys\n"
	"	call ku_sys\n"
	".globl ku_main_end\n"
	"ku_main_end:\n"
	"	ret\n"
	".size ku_main, . - ku_main\n"
	".p2align 4\n"
	".globl ku_sys\n"
	".type ku_sys, @function\n"
	"ku_sys:\n"
	"	mov $1, %eax\n"
	"	syscall\n"
	"	add $1, %rsi\n"
	"	ret\n"
	".size ku_sys, . - ku_sys\n");

extern const char ku_main[], ku_main_end[], ku_sys[];
#define A(sym) ((uint64_t)(uintptr_t)(sym))

struct ksym {
	char name[64];
	uint64_t addr, size;    /* run-time address */
};

struct region {
	uint8_t *code;
	uint64_t vaddr, size;   /* run-time address of the code */
};

struct image {
	struct region r[4];
	size_t nr;
	uint8_t bid[20];
	size_t bid_size;
	struct ksym syms[64];
	size_t nsyms;
	uint64_t text;          /* run-time _text */
};

/* An ELF's build-id, _text (+ shift), executable segments and functions. */
static int load_image(const char *path, uint64_t shift, struct image *im)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t nph;
	Elf_Scn *scn = NULL;
	const void *bid;
	ssize_t n;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		struct region *r = &im->r[im->nr];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    im->nr == 4)
			continue;
		r->code = malloc(ph.p_filesz);
		if (!r->code || pread(fd, r->code, ph.p_filesz, (off_t)ph.p_offset) !=
				(ssize_t)ph.p_filesz)
			return -EIO;
		r->vaddr = ph.p_vaddr + shift;
		r->size = ph.p_filesz;
		im->nr++;
	}
	n = dwelf_elf_gnu_build_id(elf, &bid);
	if (n > 0 && n <= 20) {
		memcpy(im->bid, bid, (size_t)n);
		im->bid_size = (size_t)n;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || !(name = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			if (!strcmp(name, "_text"))
				im->text = s.st_value + shift;
			if (GELF_ST_TYPE(s.st_info) != STT_FUNC || im->nsyms == 64)
				continue;
			snprintf(im->syms[im->nsyms].name, sizeof(im->syms[0].name), "%s", name);
			im->syms[im->nsyms].addr = s.st_value + shift;
			im->syms[im->nsyms].size = s.st_size;
			im->nsyms++;
		}
	}
	elf_end(elf);
	close(fd);
	return im->nr && im->text && im->nsyms ? 0 : -EINVAL;
}

static const struct ksym *ksym_at(const struct image *im, uint64_t ip)
{
	for (size_t i = 0; i < im->nsyms; i++)
		if (ip >= im->syms[i].addr && ip < im->syms[i].addr + im->syms[i].size)
			return &im->syms[i];
	return NULL;
}

static uint64_t kaddr(const struct image *im, const char *name)
{
	for (size_t i = 0; i < im->nsyms; i++)
		if (!strcmp(im->syms[i].name, name))
			return im->syms[i].addr;
	fprintf(stderr, "kgen: no %s in the image\n", name);
	exit(1);
}

struct walk {
	const struct image *im;
	uint64_t ret_to;        /* user address the iretq goes back to */
	int sys;                /* syscalls made */
	int iter;               /* k_work iterations in this one */
	uint64_t work_jnz;
};

static void decide(void *ctx, const struct rc_insn *insn, uint64_t *next)
{
	struct walk *w = ctx;

	switch (insn->cls) {
	case RC_INSN_SYSCALL:
		w->ret_to = insn->ip + insn->len;
		w->iter = 0;
		*next = kaddr(w->im, "k_entry");
		break;
	case RC_INSN_FAR:       /* iretq */
		*next = w->ret_to;
		w->sys++;
		break;
	case RC_INSN_CALL_IND:  /* k_do_syscall's call into the module */
		*next = kaddr(w->im, "m_func");
		break;
	case RC_INSN_JCC:
		if (insn->ip == w->work_jnz)
			*next = ++w->iter < loops[w->sys] ? insn->target : insn->ip + insn->len;
		break;
	default:
		break;
	}
}

/* ---- the expected profile: a stack of names over the walk ---- */

struct stackline {
	char stack[512];
	uint64_t ns;
};

static struct stackline lines[256];
static size_t nlines;
static char stk[16][64];
static int depth;

static void charge(uint64_t ns)
{
	char s[512] = "";

	if (!ns)
		return;
	for (int i = 0; i < depth; i++) {
		if (i)
			strcat(s, ";");
		strcat(s, stk[i]);
	}
	for (size_t i = 0; i < nlines; i++)
		if (!strcmp(lines[i].stack, s)) {
			lines[i].ns += ns;
			return;
		}
	snprintf(lines[nlines].stack, sizeof(lines[0].stack), "%s", s);
	lines[nlines++].ns = ns;
}

struct calls {
	char name[64];
	int n;
};
static struct calls calls[64];
static size_t ncalls;

static void count_call(const char *name)
{
	for (size_t i = 0; i < ncalls; i++)
		if (!strcmp(calls[i].name, name)) {
			calls[i].n++;
			return;
		}
	snprintf(calls[ncalls].name, sizeof(calls[0].name), "%s", name);
	calls[ncalls++].n = 1;
}

static const char *name_of(const struct image *im, uint64_t ip)
{
	const struct ksym *k = ksym_at(im, ip);

	if (k)
		return k->name;
	if (ip >= A(ku_sys))
		return "ku_sys";
	return "ku_main";
}

static void push(const char *name)
{
	snprintf(stk[depth++], sizeof(stk[0]), "%s", name);
	if (name[0] != '[')
		count_call(name);
}

int main(int argc, char **argv)
{
	struct rc_ptenc_config cfg = { .mtc = true, .mtc_freq = 3, .cyc = true,
				       .psb_period = 256, .time_zero = 1000000000ull };
	uint64_t shift = 0, t0 = cfg.time_zero + 1000000, ns, last;
	bool bad_bid = false, no_bid = false;
	const char *kallsyms = NULL;
	struct image im = { 0 }, vm = { 0 };
	struct pw_code code[4];
	const struct region *text = NULL, *mod = NULL;
	struct pw_trace tr = { 0 };
	struct walk w = { .im = &im };
	struct pw_perf *perf;
	struct rc_ptenc *enc;
	csh cs;
	FILE *ex;
	int err;

	if (argc < 5) {
		fprintf(stderr, "usage: kgen IMAGE CODE OUT.perf EXPECTED [--shift HEX] "
			"[--bad-build-id] [--no-build-id] [--kallsyms FILE]\n");
		return 2;
	}
	for (int i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "--shift") && i + 1 < argc)
			shift = strtoull(argv[++i], NULL, 16);
		else if (!strcmp(argv[i], "--bad-build-id"))
			bad_bid = true;
		else if (!strcmp(argv[i], "--no-build-id"))
			no_bid = true;
		else if (!strcmp(argv[i], "--kallsyms") && i + 1 < argc)
			kallsyms = argv[++i];
		else
			return 2;
	}
	if ((err = load_image(argv[1], shift, &vm)) || (err = load_image(argv[2], 0, &im))) {
		fprintf(stderr, "kgen: %s: %s\n", argv[err ? 2 : 1], strerror(-err));
		return 1;
	}
	if (vm.text != im.text) {
		fprintf(stderr, "kgen: %s is not linked where %s ran\n", argv[2], argv[1]);
		return 1;
	}
	memcpy(im.bid, vm.bid, sizeof(im.bid));
	im.bid_size = vm.bid_size;
	for (size_t i = 0; i < im.nr; i++) {
		code[i] = (struct pw_code){ im.r[i].vaddr, im.r[i].code, im.r[i].size };
		if (im.text >= im.r[i].vaddr && im.text < im.r[i].vaddr + im.r[i].size)
			text = &im.r[i];
		else
			mod = &im.r[i];
	}
	if (!text || !mod) {
		fprintf(stderr, "kgen: %s has no kernel text or no module\n", argv[2]);
		return 1;
	}
	w.work_jnz = kaddr(&im, "k_work") + 6;   /* add(4) dec(2) jnz */
	if (rc_insn_cs_open(&cs) ||
	    pw_walk_code(cs, A(ku_main), 100000, decide, &w, code, im.nr, &tr)) {
		fprintf(stderr, "kgen: cannot walk the code\n");
		return 1;
	}
	cs_close(&cs);
	if (w.sys != NSYS || tr.n < 10 || tr.v[tr.n - 1].next_ip != A(ku_main_end)) {
		fprintf(stderr, "kgen: the walk went wrong (%d syscalls, %zu insns)\n", w.sys, tr.n);
		return 1;
	}

	/* encode: a user+kernel trace (the syscall is a far branch with a TIP) */
	enc = rc_ptenc_new(&cfg, 0);
	{
		struct pw_perf_kernel k = {
			.start = im.text, .len = text->vaddr + text->size - im.text, .pgoff = im.text,
			.build_id = im.bid, .build_id_size = no_bid ? 0 : im.bid_size,
			.mod_name = "[kmod]", .mod_start = mod->vaddr, .mod_len = mod->size,
		};

		if (bad_bid)
			im.bid[0] ^= 0xff, im.bid[7] ^= 0x5a;
		if (!enc || pw_perf_open_kernel(&perf, argv[3], &cfg, t0 - 1000, &k))
			return 1;
	}
	/* the first instruction retires when tracing starts (a decoder
	 * times it by the TIP.PGE), the others NS_PER_INSN apart */
	err = rc_ptenc_enable(enc, t0, A(ku_main));
	for (size_t i = 0; i < tr.n && !err; i++) {
		struct rc_insn in = tr.v[i];

		if (in.cls == RC_INSN_SYSCALL)
			in.cls = RC_INSN_FAR;
		err = rc_ptenc_insn(enc, &in, t0 + i * NS_PER_INSN);
	}
	/* the thread ends at ku_main's ret (as an exit) */
	last = t0 + tr.n * NS_PER_INSN;
	err = err ?: rc_ptenc_disable(enc, last, A(ku_main_end), RC_PTENC_OFF_ASYNC);
	err = err ?: rc_ptenc_flush(enc);
	if (!err) {
		size_t n;
		const uint8_t *d = rc_ptenc_data(enc, &n);

		err = pw_perf_aux(perf, d, n, rc_ptenc_last_tsc(enc));
	}
	err = err ?: pw_perf_exit(perf, last);
	if (pw_perf_close(perf, !err) || err) {
		fprintf(stderr, "kgen: encoding failed\n");
		return 1;
	}
	rc_ptenc_free(enc);

	/* the expected profile: instruction i retires at t0 + i * NS; a
	 * branch's frame change happens then */
	ns = t0;
	push("ku_main");
	for (size_t i = 0; i < tr.n; i++) {
		const struct rc_insn *in = &tr.v[i];
		uint64_t t = t0 + i * NS_PER_INSN;

		switch (in->cls) {
		case RC_INSN_CALL:
		case RC_INSN_CALL_IND:
			charge(t - ns);
			ns = t;
			push(name_of(&im, in->next_ip));
			break;
		case RC_INSN_RET:
			charge(t - ns);
			ns = t;
			depth--;
			break;
		case RC_INSN_JMP:
			if (!strcmp(name_of(&im, in->next_ip), name_of(&im, in->ip)))
				break;
			charge(t - ns);
			ns = t;
			depth--;
			push(name_of(&im, in->next_ip));
			break;
		case RC_INSN_SYSCALL:
			charge(t - ns);
			ns = t;
			push("[kernel]");
			push(name_of(&im, in->next_ip));
			break;
		case RC_INSN_FAR:       /* iretq: out of the kernel */
			charge(t - ns);
			ns = t;
			while (depth && strcmp(stk[depth - 1], "[kernel]"))
				depth--;
			depth--;
			break;
		default:
			break;
		}
	}
	charge(last - ns);
	if (!(ex = fopen(argv[4], "w")))
		return 1;
	for (size_t i = 0; i < nlines; i++)
		fprintf(ex, "%s %llu\n", lines[i].stack, (unsigned long long)lines[i].ns);
	for (size_t i = 0; i < ncalls; i++)
		fprintf(ex, "calls %s %d\n", calls[i].name, calls[i].n);
	fclose(ex);

	if (kallsyms) {
		FILE *f = fopen(kallsyms, "w");

		if (!f)
			return 1;
		fprintf(f, "%016llx T _text\n", (unsigned long long)im.text);
		for (size_t i = 0; i < im.nsyms; i++) {
			uint64_t a = im.syms[i].addr;
			bool in_mod = a >= mod->vaddr && a < mod->vaddr + mod->size;

			/* as /proc/kallsyms: a module's symbols name it */
			fprintf(f, "%016llx %c %s%s\n", (unsigned long long)a, in_mod ? 't' : 'T',
				im.syms[i].name, in_mod ? "\t[kmod]" : "");
		}
		fclose(f);
	}
	pw_free(&tr);
	for (size_t i = 0; i < im.nr; i++)
		free(im.r[i].code);
	for (size_t i = 0; i < vm.nr; i++)
		free(vm.r[i].code);
	return 0;
}
