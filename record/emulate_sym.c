/* The emulator's view of a traced process's code: the function ranges of
 * its mapped ELF files (libelf; mappings: procmaps.c) used to find the
 * start symbol and to tell an inter-function jump from a jump inside a
 * function (truth log "jump"). Code no symbol names is a function of its
 * own where an FDE of the file's .eh_frame (decoder/fde.c) covers it inside the
 * symbols' gap, as the decoder's symbolizer has it (DESIGN.md section 4,
 * "Unnamed code"). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decoder/dc_vec.h"
#include "decoder/symbols.h"   /* dc_sym_demangle, dc_sym_debuginfo_path */
#include "record/emulate.h"

/* ---- ELF function ranges ------------------------------------------------- */

struct func { uint64_t start, end; };
struct seg { uint64_t off, vaddr, size; };
struct named { char *name; uint64_t vaddr; };

struct efile {
	char *path;
	bool ok;
	struct func *funcs;  /* sorted by start; PLT entries included */
	size_t nfuncs;
	struct seg *segs;
	size_t nsegs;
	struct named *names; /* function and code label symbols by name (--start) */
	size_t nnames;
	uint64_t *labels;    /* code labels' addresses, sorted: they close a gap */
	size_t nlabels;
	struct func plt[4];  /* PLT sections: no FDE function there */
	struct dc_fde *fdes; /* .eh_frame's functions, sorted */
	size_t nfdes;
};

struct rc_emu_syms {
	struct efile *files;
	size_t n, cap;
};

struct rc_emu_syms *rc_emu_syms_new(void)
{
	elf_version(EV_CURRENT);  /* idempotent */
	return calloc(1, sizeof(struct rc_emu_syms));
}

void rc_emu_syms_free(struct rc_emu_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct efile *f = &s->files[i];
		for (size_t j = 0; j < f->nnames; j++)
			free(f->names[j].name);
		free(f->names);
		free(f->labels);
		free(f->fdes);
		free(f->funcs);
		free(f->segs);
		free(f->path);
	}
	free(s->files);
	free(s);
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int push(void **arr, size_t *n, size_t *cap, size_t sz, const void *item)
{
	if (dc_vec_reserve(arr, cap, *n + 1, sz, 64))
		return -ENOMEM;
	memcpy((char *)*arr + *n * sz, item, sz);
	(*n)++;
	return 0;
}

/* Section ndx holds code. */
static bool code_section(Elf *elf, size_t ndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = ndx && ndx < SHN_LORESERVE ? elf_getscn(elf, ndx) : NULL;

	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int load_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct efile *f,
		       size_t *fcap, size_t *ncap)
{
	size_t lcap = f->nlabels;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return 0;
	size_t nsym = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < nsym; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		bool label = type == STT_NOTYPE && code_section(elf, sym.st_shndx);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && !label) || sym.st_value == 0 ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		struct func fn = { sym.st_value, sym.st_value + (sym.st_size ? sym.st_size : 1) };
		/* a label (hand-written asm's entry points, ld.so's _start) is a
		 * name to start at (--start), not a function's range */
		if (!label && push((void **)&f->funcs, &f->nfuncs, fcap, sizeof(fn), &fn))
			return -ENOMEM;
		if (label && push((void **)&f->labels, &f->nlabels, &lcap, sizeof(fn.start),
				  &fn.start))
			return -ENOMEM;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && *name) {
			struct named nm = { strdup(name), sym.st_value };
			if (!nm.name || push((void **)&f->names, &f->nnames, ncap, sizeof(nm), &nm)) {
				free(nm.name);
				return -ENOMEM;
			}
		}
	}
	return 0;
}

/* PLT sections: every entry (16 bytes) is a function of its own. */
static int load_plt(GElf_Shdr *sh, struct efile *f, size_t *fcap)
{
	uint64_t ent = sh->sh_entsize >= 8 ? sh->sh_entsize : 16;
	for (uint64_t a = sh->sh_addr; a + ent <= sh->sh_addr + sh->sh_size; a += ent) {
		struct func fn = { a, a + ent };
		if (push((void **)&f->funcs, &f->nfuncs, fcap, sizeof(fn), &fn))
			return -ENOMEM;
	}
	return 0;
}

/* Function symbols and PLT entries of one ELF file into f. */
static int load_funcs(Elf *elf, size_t shstrndx, struct efile *f, size_t *fcap,
		      size_t *ncap)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		int r = 0;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			r = load_symtab(elf, scn, &sh, f, fcap, ncap);
		else if (name && !strncmp(name, ".plt", 4) && sh.sh_type == SHT_PROGBITS)
			r = load_plt(&sh, f, fcap);
		if (!r && name && !strncmp(name, ".plt", 4))
			for (size_t i = 0; i < 4; i++)
				if (f->plt[i].start == f->plt[i].end) {
					f->plt[i] = (struct func){ sh.sh_addr, sh.sh_addr + sh.sh_size };
					break;
				}
		if (r)
			return r;
	}
	return 0;
}

/* The .symtab of the separate debug file of a stripped binary or library,
 * found as report's symbolizer finds it (dc_sym_debuginfo_path: by
 * build-id under /usr/lib/debug/.build-id/ and ~/.debug, then by
 * .gnu_debuglink): without it, static functions such as libc's
 * __nptl_free_tcb or ld.so's mempcpy have no symbol and a jump from one
 * into the next would go unseen, while every decoder (ours, perf) that
 * finds the debug file sees two functions; and a stripped program's main
 * (--start, the default start) is found as report names it. Same vaddrs
 * as the main file. */
static int load_debug_file(Elf *elf, const char *path, struct efile *f, size_t *fcap,
			   size_t *ncap)
{
	char *dpath = dc_sym_debuginfo_path(path, elf);
	int fd = dpath ? open(dpath, O_RDONLY | O_CLOEXEC) : -1;

	free(dpath);
	if (fd < 0)
		return 0;
	Elf *dbg = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	int r = 0;
	if (dbg && elf_kind(dbg) == ELF_K_ELF && !elf_getshdrstrndx(dbg, &shstrndx))
		r = load_funcs(dbg, shstrndx, f, fcap, ncap);
	if (dbg)
		elf_end(dbg);
	close(fd);
	return r;
}

static void load_elf(struct efile *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t fcap = 0, ncap = 0, scap = 0, phnum = 0, shstrndx = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum) ||
	    elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			struct seg s = { ph.p_offset, ph.p_vaddr, ph.p_filesz };
			if (push((void **)&f->segs, &f->nsegs, &scap, sizeof(s), &s))
				goto out;
		}
	}
	if (load_funcs(elf, shstrndx, f, &fcap, &ncap) ||
	    load_debug_file(elf, f->path, f, &fcap, &ncap))
		goto out;
	if (f->nfuncs)
		qsort(f->funcs, f->nfuncs, sizeof(*f->funcs), cmp_func);
	if (f->nlabels)
		qsort(f->labels, f->nlabels, sizeof(*f->labels), cmp_u64);
	if (dc_fde_ranges(elf, &f->fdes, &f->nfdes))
		goto out;
	f->ok = true;
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

static struct efile *get_file(struct rc_emu_syms *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->files[i].path, path))
			return &s->files[i];
	struct efile nf = { .path = strdup(path) };
	if (!nf.path || push((void **)&s->files, &s->n, &s->cap, sizeof(nf), &nf)) {
		free(nf.path);
		return NULL;
	}
	struct efile *f = &s->files[s->n - 1];
	if (path[0] == '/')
		load_elf(f);
	return f;
}

static bool off_to_vaddr(const struct efile *f, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nsegs; i++)
		if (off >= f->segs[i].off && off < f->segs[i].off + f->segs[i].size) {
			*vaddr = off - f->segs[i].off + f->segs[i].vaddr;
			return true;
		}
	return false;
}

static bool vaddr_to_off(const struct efile *f, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < f->nsegs; i++)
		if (vaddr >= f->segs[i].vaddr && vaddr < f->segs[i].vaddr + f->segs[i].size) {
			*off = vaddr - f->segs[i].vaddr + f->segs[i].off;
			return true;
		}
	return false;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	return (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull + (a >> 7));
}

/* The FDE's function holding vaddr, which no function symbol holds: the
 * FDE must lie in the gap between the symbols around it (and no code label
 * there: a label names the gap's code up to the next symbol), outside the
 * PLT. up: the first function starting after vaddr. */
static bool fde_func(const struct efile *f, uint64_t vaddr, size_t up, uint64_t *start)
{
	const struct dc_fde *fde = dc_fde_find(f->fdes, f->nfdes, vaddr);
	uint64_t glo = 0, lo, hi;

	if (!fde)
		return false;
	lo = fde->start;
	hi = fde->end;
	if (up < f->nfuncs && f->funcs[up].start < hi)
		return false;
	for (size_t i = up; i-- > 0 && up - i <= 64;)   /* (aliases, nesting) */
		if (f->funcs[i].end > glo)
			glo = f->funcs[i].end;
	if (lo < glo)
		return false;
	size_t a = 0, b = f->nlabels;   /* the first label at or after glo */
	while (a < b) {
		size_t m = (a + b) / 2;
		if (f->labels[m] < glo)
			a = m + 1;
		else
			b = m;
	}
	if (a < f->nlabels && f->labels[a] < hi)
		return false;
	for (size_t i = 0; i < 4; i++)
		if (lo < f->plt[i].end && hi > f->plt[i].start)
			return false;
	*start = lo;
	return true;
}

uint64_t rc_emu_func_key(struct rc_emu_syms *s, const struct rc_map *map,
			 uint64_t addr)
{
	if (!map)
		return 0xFFFFFFFFFFFFFFFFull;
	uint64_t fid = mix((uintptr_t)map->ino, map->start - map->pgoff);
	struct efile *f = get_file(s, map->path);
	uint64_t vaddr;
	if (!f || !f->ok || !off_to_vaddr(f, addr - map->start + map->pgoff, &vaddr))
		return fid;  /* unknown code: one function per mapping */
	/* the innermost (last-starting) function containing vaddr */
	size_t lo = DC_VEC_UPPER(f->funcs, f->nfuncs, start, vaddr);
	for (size_t i = lo; i-- > 0;) {
		if (vaddr < f->funcs[i].end)
			return mix(fid, f->funcs[i].start);
		if (lo - i > 64)
			break;  /* aliases and nesting never go this deep */
	}
	uint64_t start;
	if (fde_func(f, vaddr, lo, &start))
		return mix(fid, start);
	return fid;  /* unknown code: one function per mapping */
}

/* The link-time address of SYM in F, 0 if absent. */
static uint64_t sym_vaddr(const struct efile *f, const char *sym)
{
	uint64_t vaddr = 0;

	for (size_t i = 0; i < f->nnames && !vaddr; i++)
		if (!strcmp(f->names[i].name, sym))
			vaddr = f->names[i].vaddr;
	/* A C++ (or Rust) name as report prints it: the whole demangled name
	 * ("ns::f(int)") or, as --root takes it, up to its '(' ("ns::f"). */
	for (int whole = 1; whole >= 0 && !vaddr; whole--) {
		size_t len = strlen(sym);

		for (size_t i = 0; i < f->nnames && !vaddr; i++) {
			char *dm = dc_sym_demangle(f->names[i].name);

			if (dm && !strncmp(dm, sym, len) && (whole ? !dm[len] : dm[len] == '('))
				vaddr = f->names[i].vaddr;
			free(dm);
		}
	}
	return vaddr;
}

bool rc_emu_has_sym(struct rc_emu_syms *s, const char *path, const char *sym)
{
	struct efile *f = get_file(s, path);

	return f && f->ok && sym_vaddr(f, sym);
}

uint64_t rc_emu_sym_addr(struct rc_emu_syms *s, const struct rc_map *maps,
			 size_t n, const char *path, const char *sym)
{
	struct efile *f = get_file(s, path);
	if (!f || !f->ok)
		return 0;
	uint64_t vaddr = sym_vaddr(f, sym), off;
	if (!vaddr || !vaddr_to_off(f, vaddr, &off))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(maps[i].path, path) && off >= maps[i].pgoff &&
		    off < maps[i].pgoff + (maps[i].end - maps[i].start))
			return maps[i].start + off - maps[i].pgoff;
	return 0;
}

void rc_emu_note_from_exec(struct rc_emu_stats *stats, const char *path)
{
	if (!stats->from_exec++)
		snprintf(stats->from_exec_path, sizeof(stats->from_exec_path), "%s", path);
}
