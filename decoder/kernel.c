/* ptflame - decoder/kernel.c: the kernel's code and names for a recording
 * with kernel tracing (report --vmlinux / --kcore / --kallsyms).
 *
 * Where the kernel ran comes from the recording's kernel MMAP records: the
 * text map "[kernel.kallsyms]_text" (perf's: pgoff is the run-time address
 * of the symbol named after the ']', _text or _stext, so a vmlinux linked
 * elsewhere, KASLR, is moved by pgoff - its own value of that symbol) and
 * one "[module]" map per module.
 *
 *  - vmlinux: an ELF with the kernel's code. Its build-id must be the one
 *    the recording's BUILD_ID feature gives "[kernel.kallsyms]" (when both
 *    exist), else one warning and it is not used. Its executable PT_LOAD
 *    segments go into libipt's section cache at their (moved) addresses,
 *    its names come from the symbolizer (a dso of decoder/symbols.c).
 *  - kcore: an ELF core file whose PT_LOAD segments hold the code at its
 *    run-time addresses (perf record --kcore's kcore_dir/kcore, or this
 *    machine's /proc/kcore), with the kallsyms of the same boot next to it.
 *    Only the parts in the kernel and module maps are used. It must match
 *    the recording: its kallsyms' address of the text map's symbol equals
 *    the map's pgoff, else one warning and it is not used.
 *  - kallsyms: names only ("ADDR TYPE NAME [MODULE]" lines, text symbols),
 *    for kernel code that is decoded but has no vmlinux symbol, and for the
 *    kernel entry point of code that cannot be decoded.
 * Names from kallsyms get keys of their own (DC_SYM_KEY_KERNEL set); the
 * symbolizer asks this file for kernel addresses no process maps.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "decoder/dc_vec.h"
#include "decoder/decoder.h"
#include "decoder/dc_strpool.h"

struct kmap {
	uint64_t start, end, pgoff;
	char *name;                /* "[kernel.kallsyms]_text", a module's
	                              "[mod]" or its .ko path (older perf) */
};

struct ksym {
	uint64_t addr;
	uint32_t name;             /* offset in names                        */
};

struct krange {
	uint64_t start, end;       /* code there, in the section cache       */
};

struct dc_kernel {
	struct dc_kernel_opts o;
	struct kmap *maps;
	size_t nmaps;
	struct ksym *syms;         /* kallsyms text symbols, by address      */
	size_t nsyms;
	char *names;
	size_t names_len, names_cap;
	uint64_t ks_text, ks_stext;/* kallsyms' _text and _stext (0: none)   */
	int *isids;
	size_t nisids;
	struct krange *code;
	size_t ncode;
	struct dc_symbols *sym;
	int dso;                   /* the vmlinux dso, -1 when none          */
	uint64_t reloc;            /* run-time minus vmlinux address         */
	uint64_t vm_lo, vm_hi;     /* vmlinux's code, run-time addresses     */
	char *unknown_name;
};

static void warnf(struct dc_kernel *k, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!k->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	k->o.warn(k->o.ctx, msg);
}

int dc_kernel_new(const struct dc_kernel_opts *o, struct dc_kernel **out)
{
	struct dc_kernel *k = calloc(1, sizeof(*k));

	*out = NULL;
	if (!k)
		return -ENOMEM;
	k->o = *o;
	k->dso = -1;
	k->unknown_name = strdup("[unknown] ([kernel.kallsyms])");
	if (!k->unknown_name) {
		free(k);
		return -ENOMEM;
	}
	*out = k;
	return 0;
}

void dc_kernel_free(struct dc_kernel *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nmaps; i++)
		free(k->maps[i].name);
	free(k->maps);
	free(k->syms);
	free(k->names);
	free(k->isids);
	free(k->code);
	free(k->unknown_name);
	free(k);
}

int dc_kernel_map(struct dc_kernel *k, uint64_t start, uint64_t len, uint64_t pgoff,
		  const char *name)
{
	struct kmap *n;

	if (!name)
		return 0;
	n = realloc(k->maps, (k->nmaps + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	k->maps = n;
	n += k->nmaps;
	n->start = start;
	n->end = start + len < start ? UINT64_MAX : start + len;
	n->pgoff = pgoff;
	n->name = strdup(name);
	if (!n->name)
		return -ENOMEM;
	k->nmaps++;
	return 0;
}

/* The text map ("[kernel.kallsyms]..."), or NULL. */
static const struct kmap *text_map(const struct dc_kernel *k)
{
	for (size_t i = 0; i < k->nmaps; i++)
		if (!strncmp(k->maps[i].name, "[kernel.kallsyms]", 17))
			return &k->maps[i];
	return NULL;
}

/* The symbol whose run-time address the text map's pgoff is. */
static const char *ref_name(const struct kmap *m)
{
	const char *r = m ? strchr(m->name, ']') : NULL;

	return r && r[1] ? r + 1 : "_text";
}

/* ---- kallsyms ------------------------------------------------------------ */

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add_name(struct dc_kernel *k, const char *s, uint32_t *off)
{
	return dc_strpool_add(&k->names, &k->names_len, &k->names_cap, 65536, s, off);
}

/* Read a kallsyms file: its text symbols (t, T, w, W). */
static int load_kallsyms(struct dc_kernel *k, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[1024];
	size_t cap = 0, lines = 0;
	int ret = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, *end, *name;

		/* "ffffffff81000000 T _text" (a module's: "... name\t[mod]") */
		a = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ' || !end[3] ||
		    end[3] == ' ' || end[3] == '\n')
			continue;
		type = end[1];
		name = end + 3;
		name[strcspn(name, " \t\n")] = 0;
		lines++;
		if (!strcmp(name, "_text"))
			k->ks_text = a;
		else if (!strcmp(name, "_stext"))
			k->ks_stext = a;
		if (!a || (type != 't' && type != 'T' && type != 'w' && type != 'W'))
			continue;
		if (DC_VEC_PUSH_ROOM(k->syms, k->nsyms, cap, 4096)) {
			ret = -ENOMEM;
			break;
		}
		k->syms[k->nsyms].addr = a;
		if ((ret = add_name(k, name, &k->syms[k->nsyms].name)))
			break;
		k->nsyms++;
	}
	fclose(f);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (!k->nsyms) {
		snprintf(err, errlen, "%s: %s", path, lines ?
			 "every address is 0 (hidden: kptr_restrict; read it as root)" :
			 "no symbols (not a kallsyms file: 'ADDRESS TYPE NAME' lines)");
		return -EINVAL;
	}
	qsort(k->syms, k->nsyms, sizeof(*k->syms), cmp_ksym);
	return 0;
}

/* ---- ELF images ------------------------------------------------------------ */

static int add_code(struct dc_kernel *k, struct pt_image_section_cache *isc, const char *file,
		    uint64_t off, uint64_t size, uint64_t vaddr)
{
	struct krange *r;
	int *v, isid;

	if (!size)
		return 0;
	isid = pt_iscache_add_file(isc, file, off, size, vaddr);
	if (isid < 0)
		return isid == -pte_nomem ? -ENOMEM : 0;
	v = realloc(k->isids, (k->nisids + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	k->isids = v;
	k->isids[k->nisids++] = isid;
	r = realloc(k->code, (k->ncode + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	k->code = r;
	k->code[k->ncode++] = (struct krange){ vaddr, vaddr + size };
	return 0;
}

struct elff {
	int fd;
	Elf *elf;
};

static int elf_open_path(const char *path, struct elff *e, char *err, size_t errlen)
{
	e->elf = NULL;
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	elf_version(EV_CURRENT);
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || gelf_getclass(e->elf) != ELFCLASS64) {
		snprintf(err, errlen, "%s: not a 64-bit ELF file", path);
		if (e->elf)
			elf_end(e->elf);
		close(e->fd);
		e->elf = NULL;
		e->fd = -1;
		return -EINVAL;
	}
	return 0;
}

static void elf_close_f(struct elff *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
}

/* Value of a symbol of .symtab by name. */
static bool elf_sym_value(Elf *elf, const char *want, uint64_t *val)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && !strcmp(name, want)) {
				*val = s.st_value;
				return true;
			}
		}
	}
	return false;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = 0;
}

/* The recording's build-id of the kernel, or NULL. */
static const struct dc_build_id *rec_kernel_bid(const struct dc_perf_file *pf)
{
	for (size_t i = 0; pf && i < dc_perf_nr_build_ids(pf); i++) {
		const struct dc_build_id *b = dc_perf_build_id_at(pf, i);

		if (b->filename && !strncmp(b->filename, "[kernel.kallsyms]", 17) && b->size)
			return b;
	}
	return NULL;
}

static int load_vmlinux(struct dc_kernel *k, const struct dc_perf_file *pf,
			struct pt_image_section_cache *isc, char *err, size_t errlen)
{
	const struct dc_build_id *want = rec_kernel_bid(pf);
	const struct kmap *tm = text_map(k);
	const char *ref = ref_name(tm);
	char path[PATH_MAX], h1[41], h2[41];
	const void *bid = NULL;
	struct elff e;
	size_t nph = 0, before = k->ncode;
	uint64_t v = 0;
	ssize_t n;
	int ret;

	if (!realpath(k->o.vmlinux, path)) {
		snprintf(err, errlen, "cannot open %s: %s", k->o.vmlinux, strerror(errno));
		return -errno;
	}
	if ((ret = elf_open_path(path, &e, err, errlen)))
		return ret;
	n = dwelf_elf_gnu_build_id(e.elf, &bid);
	if (want && n > 0 && !dc_build_id_eq(bid, (size_t)n, want->id, want->size)) {
		hex(bid, (size_t)n > 20 ? 20 : (size_t)n, h1);
		hex(want->id, want->size, h2);
		warnf(k, "%s has build-id %s, the recording's kernel %s: not used, kernel code "
		      "shows as [kernel]", k->o.vmlinux, h1, h2);
		elf_close_f(&e);
		return 0;
	}
	/* where it ran: the text map's symbol, else kallsyms' _text */
	if (tm && elf_sym_value(e.elf, ref, &v))
		k->reloc = tm->pgoff - v;
	else if (k->ks_text && elf_sym_value(e.elf, "_text", &v))
		k->reloc = k->ks_text - v;
	else if (tm)
		warnf(k, "%s has no symbol %s to place it where the recording's kernel ran: taken "
		      "as run where it is linked", k->o.vmlinux, ref);
	k->vm_lo = UINT64_MAX;
	if (elf_getphdrnum(e.elf, &nph))
		nph = 0;
	for (size_t i = 0; i < nph && !ret; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e.elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		ret = add_code(k, isc, path, ph.p_offset, ph.p_filesz, ph.p_vaddr + k->reloc);
		if (ph.p_vaddr + k->reloc < k->vm_lo)
			k->vm_lo = ph.p_vaddr + k->reloc;
		if (ph.p_vaddr + k->reloc + ph.p_memsz > k->vm_hi)
			k->vm_hi = ph.p_vaddr + k->reloc + ph.p_memsz;
	}
	elf_close_f(&e);
	if (ret)
		return ret;
	if (k->ncode == before) {
		snprintf(err, errlen, "%s: no executable segment (not a kernel image)", k->o.vmlinux);
		return -EINVAL;
	}
	k->dso = dc_sym_dso(k->sym, path, NULL, 0);
	return k->dso < 0 ? k->dso : 0;
}

/* Add the parts of [a, b) that the kcore segment holds. */
static int kcore_clip(struct dc_kernel *k, struct pt_image_section_cache *isc, const char *path,
		      const GElf_Phdr *ph, uint64_t a, uint64_t b)
{
	uint64_t lo = ph->p_vaddr > a ? ph->p_vaddr : a;
	uint64_t hi = ph->p_vaddr + ph->p_filesz < b ? ph->p_vaddr + ph->p_filesz : b;

	if (lo >= hi)
		return 0;
	return add_code(k, isc, path, ph->p_offset + (lo - ph->p_vaddr), hi - lo, lo);
}

static int load_kcore(struct dc_kernel *k, struct pt_image_section_cache *isc, char *err,
		      size_t errlen)
{
	const struct kmap *tm = text_map(k);
	char path[PATH_MAX];
	struct elff e;
	size_t nph = 0, before = k->ncode;
	int ret;

	/* with a vmlinux, the modules' code only */
	if (k->o.vmlinux && (!k->nmaps || (k->nmaps == 1 && tm)))
		return 0;
	snprintf(path, sizeof(path), "%s/kcore", k->o.kcore_dir);
	if ((ret = elf_open_path(path, &e, err, errlen)))
		return ret;
	if (elf_getphdrnum(e.elf, &nph))
		nph = 0;
	for (size_t i = 0; i < nph && !ret; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e.elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!k->nmaps) {
			/* no map in the recording: where kallsyms has code */
			ret = kcore_clip(k, isc, path, &ph, k->syms[0].addr,
					 k->syms[k->nsyms - 1].addr + 4096);
			continue;
		}
		for (size_t m = 0; m < k->nmaps && !ret; m++)
			if (!k->o.vmlinux || &k->maps[m] != tm)
				ret = kcore_clip(k, isc, path, &ph, k->maps[m].start,
						 k->maps[m].end);
	}
	elf_close_f(&e);
	if (!ret && k->ncode == before)
		warnf(k, "%s holds no code of the recording's kernel maps", path);
	return ret;
}

/* Is the kallsyms of the recording's boot: its address of the text map's
 * symbol the map's pgoff (when both are known)? Else one warning and its
 * symbols go (what names and kcore it came with is not used). */
static bool kallsyms_matches(struct dc_kernel *k, const char *path)
{
	const struct kmap *tm = text_map(k);
	const char *ref = ref_name(tm);
	uint64_t at = !strcmp(ref, "_stext") ? k->ks_stext : k->ks_text;

	if (!tm || !at || at == tm->pgoff)
		return true;
	warnf(k, "%s puts %s at %#" PRIx64 ", the recording's kernel ran it at %#" PRIx64
	      " (another boot or machine): not used, kernel code shows as [kernel]", path, ref, at,
	      tm->pgoff);
	k->nsyms = 0;
	return false;
}

int dc_kernel_load(struct dc_kernel *k, const struct dc_perf_file *pf, struct dc_symbols *sym,
		   struct pt_image_section_cache *isc, char *err, size_t errlen)
{
	int ret = 0;

	k->sym = sym;
	if (k->o.kcore_dir && k->o.kallsyms) {
		snprintf(err, errlen, "--kcore has its own kallsyms: give --kcore or --kallsyms, "
			 "not both");
		return -EINVAL;
	}
	if (k->o.kallsyms && !(ret = load_kallsyms(k, k->o.kallsyms, err, errlen)))
		kallsyms_matches(k, k->o.kallsyms);
	if (!ret && k->o.kcore_dir) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/kallsyms", k->o.kcore_dir);
		ret = load_kallsyms(k, path, err, errlen);
		if (!ret && kallsyms_matches(k, path))
			ret = load_kcore(k, isc, err, errlen);
	}
	if (!ret && k->o.vmlinux)
		ret = load_vmlinux(k, pf, isc, err, errlen);
	return ret;
}

int dc_kernel_add_to_image(const struct dc_kernel *k, struct pt_image *image,
			   struct pt_image_section_cache *isc)
{
	for (size_t i = 0; k && i < k->nisids; i++) {
		int ret = pt_image_add_cached(image, isc, k->isids[i], NULL);

		if (ret < 0 && ret != -pte_bad_context)
			return ret == -pte_nomem ? -ENOMEM : 0;
	}
	return 0;
}

bool dc_kernel_code_range(const struct dc_kernel *k, size_t i, uint64_t *start, uint64_t *end)
{
	if (!k || i >= k->ncode)
		return false;
	*start = k->code[i].start;
	*end = k->code[i].end;
	return true;
}

bool dc_kernel_has_code(const struct dc_kernel *k, uint64_t ip)
{
	for (size_t i = 0; k && i < k->ncode; i++)
		if (ip >= k->code[i].start && ip < k->code[i].end)
			return true;
	return false;
}

/* Index of the last kallsyms symbol at or below ip, or -1. */
static long ks_find(const struct dc_kernel *k, uint64_t ip)
{
	return (long)DC_VEC_UPPER(k->syms, k->nsyms, addr, ip) - 1;
}

/* Is ip in one of the recording's kernel maps (any when it has none)? */
static bool in_maps(const struct dc_kernel *k, uint64_t ip)
{
	for (size_t i = 0; i < k->nmaps; i++)
		if (ip >= k->maps[i].start && ip < k->maps[i].end)
			return true;
	return !k->nmaps;
}

uint64_t dc_kernel_range(void *ctx, uint64_t ip, uint64_t *lo, uint64_t *hi)
{
	struct dc_kernel *k = ctx;
	uint64_t key;
	long i;

	if (!dc_ip_is_kernel(ip))
		return 0;
	if (k->dso >= 0 && ip >= k->vm_lo && ip < k->vm_hi) {
		key = dc_sym_dso_lookup(k->sym, k->dso, ip - k->reloc, lo, hi);
		if (key & 0xffffffffu) {
			*lo += k->reloc;
			*hi += k->reloc;
			return key;
		}
	}
	i = ks_find(k, ip);
	/* kallsyms gives no sizes: a symbol ends where the next starts (the
	 * last one, and any in a map's gap, after a page at most) */
	if (i >= 0 && (ip - k->syms[i].addr < 4096 || ((size_t)i + 1 < k->nsyms &&
							in_maps(k, ip)))) {
		*lo = k->syms[i].addr;
		*hi = (size_t)i + 1 < k->nsyms ? k->syms[i + 1].addr : *lo + 4096;
		return DC_SYM_KEY_KERNEL | ((uint64_t)i + 1);
	}
	if (!k->nsyms && k->dso < 0 && !k->ncode)
		return 0;
	*lo = ip;
	*hi = ip + 1;
	return DC_SYM_KEY_KERNEL;
}

const char *dc_kernel_name(void *ctx, uint64_t key)
{
	struct dc_kernel *k = ctx;
	uint64_t i = key & ~DC_SYM_KEY_KERNEL;

	if (!(key & DC_SYM_KEY_KERNEL))
		return NULL;
	if (!i)
		return k->unknown_name;
	return i <= k->nsyms ? k->names + k->syms[i - 1].name : NULL;
}

bool dc_kernel_named(const struct dc_kernel *k, uint64_t ip)
{
	uint64_t lo, hi;

	return k && (dc_kernel_range((void *)k, ip, &lo, &hi) & 0xffffffffu);
}
