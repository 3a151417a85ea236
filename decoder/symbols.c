/* ptflame - decoder/symbols.c: function symbols of ELF binaries with libelf,
 * PLT stubs named `func@plt`, separate debuginfo, demangling with
 * libiberty, a per-(process, address) cache, and a small process-wide
 * cache of loaded binaries (struct img) that later symbolizers of the same
 * files share. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include <libiberty/demangle.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "decoder/dc_hash.h"
#include "decoder/dc_vec.h"
#include "decoder/dc_strpool.h"
#include "decoder/decoder.h"

struct sym {
	uint64_t start, end;    /* ELF vaddrs, [start, end) */
	uint64_t end_cap;       /* unsized: end of its section (0: unknown) */
	uint32_t name;          /* offset in dso->names */
	uint8_t prio;           /* lower wins among symbols at one address */
	bool label;             /* STT_NOTYPE in code: names only code no
				 * function symbol covers (finish_syms) */
	bool cold;              /* a function's .cold part: img colds has it */
	uint8_t variant;        /* C++ constructor or destructor variant
				 * (cxx_variant), 0: none                  */
};

/* A .cold part (index + 1 in syms) and the function it belongs to. */
struct coldlink {
	uint32_t sym, home;
};

struct seg {
	uint64_t off, vaddr, filesz;
};

/* A file's identity: a changed or replaced file has another. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

/* What loading a binary gives: immutable once loaded, so symbolizers of
 * the same files (one process, one after another: `diff` of two
 * recordings, the fuzz target) share it instead of reading and demangling
 * the symbols and inflating the DWARF again. Keyed by the files it was
 * read from (code file, separate debuginfo: paths and identities) and the
 * demangling option. */
struct img {
	struct img *next;       /* in the process-wide cache (cached)       */
	unsigned refs;          /* dsos using it                           */
	bool cached;
	bool no_demangle;
	char *code_file, *dbg_file;
	struct file_id code_id, dbg_id;
	struct seg *segs;
	size_t nsegs;
	struct sym *syms;       /* sorted by start, no two at one start */
	size_t nsyms;
	char *names;
	size_t names_len, names_cap;
	pthread_mutex_t dw_mu;  /* for dw_tried and dwf                     */
	bool dw_tried;          /* its DWARF looked for                     */
	struct dwf *dwf;        /* the file that has it (NULL: none)        */
	uint64_t plt_lo[4], plt_hi[4]; /* PLT sections (FDEs there: no names) */
	uint64_t vbase;         /* lowest PT_LOAD vaddr: FDE keys count from it */
	pthread_mutex_t fde_mu; /* for fde_tried (fdes: fixed once tried)   */
	bool fde_tried;         /* the code file's .eh_frame read           */
	struct dc_fde *fdes;    /* its functions, sorted (decoder/fde.c)    */
	size_t nfdes;
	struct coldlink *colds; /* sorted by sym (link_cold)                 */
	size_t ncolds;
};

struct dso {
	char *path;
	uint8_t bid[20];
	uint8_t bid_size;
	bool loaded;
	bool missing;
	char *code_file;        /* file with the code, NULL when missing */
	char *unknown_name;     /* "[unknown] (path)" */
	char *dbg_file;         /* separate debuginfo, NULL when none      */
	struct img *img;        /* once loaded: never NULL                 */
	bool inl_tried;         /* inline ranges looked for (decoder/inline.c) */
	struct dc_inl *inl;     /* NULL: no DWARF (it reads img's DWARF)   */
	struct dc_hash fde_idx; /* FDE key -> index + 1 in fde_names        */
	char **fde_names;       /* "base+0xVADDR", made when first named    */
	size_t nfde, cap_fde;
};

struct cache_ent {
	uint32_t pid, gen;
	uint64_t ip;
	uint64_t key, lo, hi;   /* key: the function's (a .cold part's: its
				 * function's); [lo, hi): the code part's  */
	uint32_t inl;           /* inline context, UINT32_MAX: not asked yet */
	uint32_t part;          /* a .cold part: its own symbol's index + 1
				 * XOR its function's (key ^ part: the
				 * part's own key), else 0                 */
	uint64_t ilo, ihi;      /* the range around ip with that context     */
};

/* An inline context: an inlined instance of a function (key: its name),
 * inside the context parent (0: inside the out-of-line function). */
struct inl_ctx {
	uint32_t parent;
	uint64_t key;
};

/* The per-address cache's front: the entry an address had last, found
 * without hashing (blocks and events come back to the same few hundred
 * addresses over and over). */
#define SYM_FRONT 4096

struct vdso_copy {
	uint8_t bid[20];
	size_t bid_size, size;
	uint8_t *data;
};

struct dc_symbols {
	struct dc_symbols_opts opts;
	char *debug_dir, *buildid_dir, *symfs;
	struct dc_sideband *sb;
	struct dso **dsos;
	size_t ndsos, cap_dsos;
	struct dc_hash dso_by_name;     /* hash of path -> candidate index chain */
	struct dc_hash srcline_idx;     /* key -> index+1 in srclines (0: none) */
	char **srclines;
	size_t nsrclines;
	char **missing;
	size_t nmissing;
	struct vdso_copy *vdsos;        /* [vdso] images read from perf's cache */
	size_t nvdsos, cap_vdsos;
	struct dc_hash cache_idx;       /* mixed (pid, ip) -> index in cache */
	struct cache_ent *cache;
	size_t ncache, cap_cache;
	uint32_t front[SYM_FRONT];      /* direct-mapped (pid, ip) -> index + 1 */
	uint32_t front_pid;             /* the process last looked up ...    */
	struct dc_sb_proc *front_proc;  /* ... (never freed before the sb)   */
	uint64_t lookups, hits;
	struct dc_sym_kernel kern;      /* kernel addresses (may be unset) */
	struct dc_hash ictx_idx;        /* (dso + 1) << 32 | instance -> id */
	struct inl_ctx *ictx;           /* id - 1                            */
	size_t nictx, cap_ictx;
	struct dc_hash iname_idx;       /* chain of (name, dso)'s hash -> index */
	char **inames;                  /* "name (inlined)"                  */
	const char **iraw;              /* the DWARF name it was made from   */
	int *idso;
	size_t ninames, cap_inames;
	struct preload *pre;            /* opening DWARF ahead (NULL: never asked) */
};

static void preload_free(struct preload *p);

/* ---- small helpers ------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void warn(struct dc_symbols *s, const char *fmt, const char *a, const char *b)
{
	char msg[1024];

	if (!s->opts.warn)
		return;
	snprintf(msg, sizeof(msg), fmt, a, b);
	s->opts.warn(s->opts.warn_ctx, msg);
}

static void bid_hex(const uint8_t *bid, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", bid[i]);
	out[2 * n] = 0;
}

char *dc_sym_demangle(const char *name)
{
	if (!name || !name[0])
		return NULL;
	/* C++ (_Z), Rust legacy (_ZN..17h<hash>E) and v0 (_R). */
	if (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2) && strncmp(name, "__Z", 3))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

/* ---- ELF reading -------------------------------------------------------- */

struct elfh {
	int fd;
	Elf *elf;
};

static int elf_open_file(const char *path, struct elfh *h)
{
	h->elf = NULL;
	h->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (h->fd < 0)
		return -errno;
	h->elf = elf_begin(h->fd, ELF_C_READ_MMAP, NULL);
	if (!h->elf || elf_kind(h->elf) != ELF_K_ELF) {
		if (h->elf)
			elf_end(h->elf);
		close(h->fd);
		h->elf = NULL;
		h->fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

static void elf_close(struct elfh *h)
{
	if (h->elf)
		elf_end(h->elf);
	if (h->fd >= 0)
		close(h->fd);
	h->elf = NULL;
	h->fd = -1;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The GNU build-id note (at most 20 bytes), or 0 bytes. */
static size_t elf_build_id(Elf *elf, uint8_t *out)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0)
		return 0;
	n = n > 20 ? 20 : n;
	memcpy(out, id, (size_t)n);
	return (size_t)n;
}

static bool file_exists(const char *p)
{
	struct stat st;

	return p && !stat(p, &st) && S_ISREG(st.st_mode);
}

bool dc_build_id_eq(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	const uint8_t *rest = an > bn ? a : b;
	size_t n = an < bn ? an : bn, end = an > bn ? an : bn;

	if (!n || memcmp(a, b, n))
		return false;
	for (size_t i = n; i < end; i++)
		if (rest[i])
			return false;
	return true;
}

enum file_state { FILE_MATCH, FILE_OTHER, FILE_UNREADABLE, FILE_ABSENT };

/* What the file at path is to a binary of build-id bid (n = 0: unknown).
 * A file with no build-id note of its own is not one that names one: a
 * rebuilt binary without the note must not pass for the recorded one. */
static enum file_state file_check(const char *path, const uint8_t *bid, size_t n)
{
	struct elfh h;
	uint8_t got[20];
	size_t gn;

	if (!file_exists(path))
		return FILE_ABSENT;
	if (elf_open_file(path, &h))
		return FILE_UNREADABLE;
	gn = elf_build_id(h.elf, got);
	elf_close(&h);
	return !n || dc_build_id_eq(got, gn, bid, n) ? FILE_MATCH : FILE_OTHER;
}

/* Does the file at path carry build-id bid (or is bid unknown)? */
static bool file_matches(const char *path, const uint8_t *bid, size_t n)
{
	return file_check(path, bid, n) == FILE_MATCH;
}

/* ---- dso symbols -------------------------------------------------------- */

static int name_add(struct img *d, const char *name, uint32_t *off)
{
	return dc_strpool_add(&d->names, &d->names_len, &d->names_cap, 4096, name, off);
}

/* A name finish_syms dropped: another symbol's at the same address
 * (link_cold looks a .cold part's function up by any of its names). */
struct alias {
	uint32_t name;
	uint8_t variant;
	uint64_t start;
};

/* Which constructor or destructor a mangled name is (C1-C5, D0-D5 in the
 * Itanium ABI: the complete, base, deleting... variants are functions of
 * their own with one demangled name), as 16 * kind + digit; 0 when it is
 * none or cannot be told. A destructor's name ends "D<n>Ev" (it takes no
 * arguments); a constructor's holds "C<n>E" once. Only ".cold" and the
 * like after the name are not looked at. */
static uint8_t cxx_variant(const char *raw)
{
	size_t n = strcspn(raw, ".");
	const char *c = NULL;

	if (n < 4 || strncmp(raw, "_ZN", 3))
		return 0;
	if (raw[n - 4] == 'D' && raw[n - 3] >= '0' && raw[n - 3] <= '5' &&
	    raw[n - 2] == 'E' && raw[n - 1] == 'v')
		return (uint8_t)(32 + raw[n - 3] - '0');
	for (size_t i = 3; i + 2 < n; i++)
		if (raw[i] == 'C' && raw[i + 1] >= '1' && raw[i + 1] <= '5' && raw[i + 2] == 'E') {
			if (c)
				return 0;
			c = raw + i;
		}
	return c ? (uint8_t)(16 + c[1] - '0') : 0;
}

struct symvec {
	struct sym *v;
	size_t n, cap;
	struct alias *al;       /* (finish_syms) */
	size_t nal, alcap;
};

static int sym_add(struct img *d, struct symvec *sv, uint64_t start, uint64_t size,
		   const char *name, uint8_t prio, bool demangle)
{
	char plain[512], *dm;
	const char *at = strchr(name, '@');
	struct sym *e;
	int ret;

	/* symbol versions ("memcpy@@GLIBC_2.14") are not part of the name,
	 * and a versioned C++ name demangles only without one */
	if (at && at != name && strcmp(at, "@plt") && (size_t)(at - name) < sizeof(plain)) {
		memcpy(plain, name, (size_t)(at - name));
		plain[at - name] = 0;
		name = plain;
	}
	dm = demangle ? dc_sym_demangle(name) : NULL;

	if (DC_VEC_PUSH_ROOM(sv->v, sv->n, sv->cap, 256)) {
		free(dm);
		return -ENOMEM;
	}
	e = &sv->v[sv->n];
	ret = name_add(d, dm ? dm : name, &e->name);
	if (ret) {
		free(dm);
		return ret;
	}
	e->start = start;
	e->end = size ? start + size : 0;   /* 0: up to the next symbol */
	e->end_cap = 0;
	e->prio = prio;
	e->label = false;
	e->cold = false;
	e->variant = dm ? cxx_variant(name) : 0;
	free(dm);
	sv->n++;
	return 0;
}

/* The section holding sym's address, when it has one. */
static bool sym_section(Elf *elf, const GElf_Sym *sym, GElf_Shdr *sec)
{
	Elf_Scn *ss = sym->st_shndx < SHN_LORESERVE ? elf_getscn(elf, sym->st_shndx) : NULL;

	return ss && gelf_getshdr(ss, sec) && sec->sh_addr <= sym->st_value &&
	       sec->sh_addr + sec->sh_size > sym->st_value;
}

/* A label (STT_NOTYPE) in code: hand-written asm names its entry points so,
 * ld.so's _start and _dl_start_user (the first code of every process) among
 * them. It names the code from it to the next symbol, but only code that no
 * function symbol covers (finish_syms), so labels inside a function
 * (assembler loops, glibc's aliases) change nothing. Labels outside code
 * (_end, __bss_start, __GNU_EH_FRAME_HDR, linker set bounds) and local
 * assembler names (".L", ARM's "$x") name nothing. */
static int label_add(struct img *d, Elf *elf, const GElf_Sym *sym, const char *name,
		     struct symvec *sv, uint8_t prio_base, bool demangle)
{
	GElf_Shdr sec;
	int ret;

	if (name[0] == '.' || name[0] == '$' || !sym_section(elf, sym, &sec) ||
	    !(sec.sh_flags & SHF_EXECINSTR))
		return 0;
	/* after every function symbol at the same address */
	ret = sym_add(d, sv, sym->st_value, 0, name, prio_base + 32, demangle);
	if (ret)
		return ret;
	sv->v[sv->n - 1].label = true;
	sv->v[sv->n - 1].end_cap = sec.sh_addr + sec.sh_size;
	return 0;
}

/* Function symbols of one symbol table. prio_base orders tables: .symtab
 * names beat .dynsym names for the same address. */
static int read_symtab(struct img *d, Elf *elf, Elf_Scn *scn, struct symvec *sv,
		       uint8_t prio_base, bool demangle)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t n;

	if (!gelf_getshdr(scn, &shdr) || !shdr.sh_entsize)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	n = shdr.sh_size / shdr.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type, bind, ret;
		uint8_t prio;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		if (type == STT_NOTYPE) {
			ret = label_add(d, elf, &sym, name, sv, prio_base, demangle);
			if (ret)
				return ret;
			continue;
		}
		/* Among aliases prefer sized, then global, then weak, then local. */
		prio = prio_base + (sym.st_size ? 0 : 8) +
		       (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
		ret = sym_add(d, sv, sym.st_value, sym.st_size, name, prio, demangle);
		if (ret)
			return ret;
		if (!sym.st_size && sym.st_shndx < SHN_LORESERVE) {
			/* an unsized symbol (asm: _init, _fini) ends with its
			 * section at the latest, even when no symbol follows */
			GElf_Shdr sec;

			if (sym_section(elf, &sym, &sec))
				sv->v[sv->n - 1].end_cap = sec.sh_addr + sec.sh_size;
		}
	}
	return 0;
}

/* Section bytes a file may ask us to read: at most its own size. The
 * sections a well-formed ELF file has of one kind (symbol tables,
 * relocations, PLTs) hold distinct bytes of the file, so together they are
 * no bigger than the file; a damaged one can name the same bytes from any
 * number of section headers, and reading them all would cost the square of
 * its size (a few KB of headers: minutes, gigabytes of symbols). */
static uint64_t elf_read_budget(Elf *elf)
{
	size_t size = 0;

	return elf_rawfile(elf, &size) ? size : 0;
}

/* Take size bytes of *budget: false (skip the section) when it is spent. */
static bool budget_take(uint64_t *budget, uint64_t size)
{
	if (size > *budget)
		return false;
	*budget -= size;
	return true;
}

/* GOT slot address -> .dynsym name, from .rela.plt and .rela.dyn. */
struct gotname {
	uint64_t got;
	const char *name;          /* NULL: IRELATIVE, named by its addend */
	uint64_t addend;
};

static int cmp_got(const void *a, const void *b)
{
	const struct gotname *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

static int collect_relocs(Elf *elf, struct gotname **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	Elf_Scn *scn = NULL;
	struct gotname *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t budget = elf_read_budget(elf);

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr, symsh;
		Elf_Data *data, *symd;
		Elf_Scn *symscn;
		size_t cnt;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || !shdr.sh_entsize ||
		    !budget_take(&budget, shdr.sh_size))
			continue;
		symscn = elf_getscn(elf, shdr.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		symd = elf_getdata(symscn, NULL);
		if (!data || !symd)
			continue;
		cnt = shdr.sh_size / shdr.sh_entsize;
		for (size_t i = 0; i < cnt; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			unsigned type;

			if (!gelf_getrela(data, (int)i, &r))
				continue;
			type = (unsigned)GELF_R_TYPE(r.r_info);
			if (type == R_X86_64_IRELATIVE) {
				name = NULL;
			} else if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) {
				continue;
			} else {
				if (!gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym))
					continue;
				name = elf_strptr(elf, symsh.sh_link, sym.st_name);
				if (!name || !name[0])
					continue;
			}
			if (DC_VEC_PUSH_ROOM(v, n, cap, 64)) {
				free(v);
				return -ENOMEM;
			}
			v[n].got = r.r_offset;
			v[n].name = name;
			v[n].addend = (uint64_t)r.r_addend;
			n++;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_got);
	*out = v;
	*nout = n;
	return 0;
}

static const struct gotname *got_lookup(const struct gotname *v, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].got == got ? &v[lo] : NULL;
}

/* A PLT section's range: code there never takes an FDE's name (its stubs
 * are named foo@plt; the lazy PLT's header has rules of its own). */
static void plt_note(struct img *d, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < 4; i++)
		if (d->plt_lo[i] == d->plt_hi[i]) {
			d->plt_lo[i] = lo;
			d->plt_hi[i] = hi;
			return;
		}
}

/* Every PLT entry is a function of its own, named by the GOT slot its
 * `jmp *disp(%rip)` (ff 25, maybe after bnd/endbr64) goes through:
 * `name@plt`, `*ABS*+0xADDEND@plt` for an ifunc (IRELATIVE) slot as
 * objdump says, the section's name for entries without a slot (PLT0, the
 * lazy half of an IBT PLT). Works for lazy .plt, .plt.sec and .plt.got. */
static int synth_plt(struct img *d, Elf *elf, struct symvec *sv, bool demangle)
{
	struct gotname *gv = NULL;
	size_t ng = 0, shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t budget = elf_read_budget(elf);
	int ret = collect_relocs(elf, &gv, &ng);

	if (ret || elf_getshdrstrndx(elf, &shstrndx)) {
		free(gv);
		return ret;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		const char *sec;
		uint64_t ent;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		sec = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!sec || strncmp(sec, ".plt", 4))
			continue;
		plt_note(d, shdr.sh_addr, shdr.sh_addr + shdr.sh_size);
		if (!budget_take(&budget, shdr.sh_size))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		ent = shdr.sh_entsize >= 8 && shdr.sh_entsize <= 32 ? shdr.sh_entsize : 16;
		for (uint64_t o = 0; o + ent <= data->d_size; o += ent) {
			const uint8_t *b = (const uint8_t *)data->d_buf + o;
			const struct gotname *g = NULL;
			char buf[512];

			for (uint64_t j = 0; j + 6 <= ent && !g; j++) {
				int32_t disp;

				if (b[j] != 0xff || b[j + 1] != 0x25)
					continue;
				memcpy(&disp, b + j + 2, 4);
				g = got_lookup(gv, ng, shdr.sh_addr + o + j + 6 + (int64_t)disp);
				if (!g)
					break;
			}
			if (g && g->name) {
				char *dm = demangle ? dc_sym_demangle(g->name) : NULL;

				snprintf(buf, sizeof(buf), "%s@plt", dm ? dm : g->name);
				free(dm);
			} else if (g) {
				snprintf(buf, sizeof(buf), "*ABS*+0x%" PRIx64 "@plt", g->addend);
			} else {
				snprintf(buf, sizeof(buf), "[%s]", sec);
			}
			ret = sym_add(d, sv, shdr.sh_addr + o, ent, buf, 0, false);
			if (ret) {
				free(gv);
				return ret;
			}
		}
	}
	free(gv);
	return 0;
}

static int read_segs(struct img *d, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	free(d->segs);
	d->segs = calloc(n ? n : 1, sizeof(*d->segs));
	if (!d->segs)
		return -ENOMEM;
	d->nsegs = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->segs[d->nsegs].off = ph.p_offset;
		d->segs[d->nsegs].vaddr = ph.p_vaddr;
		d->segs[d->nsegs].filesz = ph.p_memsz > ph.p_filesz ? ph.p_memsz : ph.p_filesz;
		if (!d->nsegs || ph.p_vaddr < d->vbase)
			d->vbase = ph.p_vaddr;
		d->nsegs++;
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->prio - (int)y->prio;
}

/* An unsized symbol's room: up to the next symbol (next: 0 none), within
 * its section, at most 1 MiB (else 1 byte: a marker, not a function). */
static void unsized_end(struct sym *e, uint64_t next)
{
	e->end = next;
	if (e->end_cap && (!e->end || e->end > e->end_cap))
		e->end = e->end_cap;
	if (!e->end || e->end - e->start > (1u << 20))
		e->end = e->start + 1;
}

/* Sort, keep one symbol per address, drop symbols inside a sized function
 * (a local label or an alias typed as a function, glibc's __write_nocancel
 * inside __write: not a function of its own; execution falling into it
 * stays in the outer function), give unsized ones the room up to the next
 * symbol (bounded by their section: end_cap). */
static void finish_syms(struct img *d, struct symvec *sv)
{
	size_t w = 0, k = 0;
	uint64_t cover = 0;     /* end of the last sized symbol kept */

	if (sv->n)
		qsort(sv->v, sv->n, sizeof(*sv->v), cmp_sym);
	for (size_t r = 0; r < sv->n; r++) {
		if (w && sv->v[w - 1].start == sv->v[r].start) {
			/* an alias: keep the preferred name, the largest size */
			if (sv->v[r].end > sv->v[w - 1].end && sv->v[w - 1].end)
				sv->v[w - 1].end = sv->v[r].end;
			/* (its name still names the function: glibc's
			 * __GI__IO_puts.cold is _IO_puts's; none kept
			 * out of memory: fewer .cold parts linked) */
			if (!sv->v[r].label && !sv->v[w - 1].label &&
			    !DC_VEC_PUSH_ROOM(sv->al, sv->nal, sv->alcap, 64))
				sv->al[sv->nal++] = (struct alias){ sv->v[r].name, sv->v[r].variant,
								    sv->v[r].start };
			continue;
		}
		sv->v[w++] = sv->v[r];
	}
	for (size_t i = 0; i < w; i++) {
		if (sv->v[i].start < cover && (!sv->v[i].end || sv->v[i].end <= cover))
			continue;
		if (sv->v[i].end > cover)
			cover = sv->v[i].end;
		sv->v[k++] = sv->v[i];
	}
	w = k;
	/* functions first: their rooms do not depend on labels */
	for (size_t i = 0, next = 0; i < w; i++) {
		if (sv->v[i].end || sv->v[i].label)
			continue;
		for (next = next > i ? next : i + 1; next < w && sv->v[next].label; next++)
			;
		unsized_end(&sv->v[i], next < w ? sv->v[next].start : 0);
	}
	/* then labels, in what no function covers */
	cover = 0;
	k = 0;
	for (size_t i = 0; i < w; i++) {
		if (!sv->v[i].label) {
			if (sv->v[i].end > cover)
				cover = sv->v[i].end;
		} else if (sv->v[i].start < cover) {
			continue;
		} else {
			unsized_end(&sv->v[i], i + 1 < w ? sv->v[i + 1].start : 0);
		}
		sv->v[k++] = sv->v[i];
	}
	d->syms = sv->v;
	d->nsyms = k;
	sv->v = NULL;
}

size_t dc_sym_cold_base(const char *name, size_t len)
{
	bool clone = len && name[len - 1] == ']';
	size_t n = len - clone, e = n;

	while (n && name[n - 1] >= '0' && name[n - 1] <= '9')
		n--;
	/* (".N" after it: a dot before the digits) */
	if (n < e && (!n || name[--n] != '.'))
		return 0;
	if (n < 5 || memcmp(name + n - 5, ".cold", 5))
		return 0;
	n -= 5;
	if (clone && (n < 8 || memcmp(name + n - 8, " [clone ", 8)))
		return 0;
	return clone ? n - 8 : n;
}

/* The one function named nm[0, b) in d, by any of its names (idx: name
 * hash -> index in syms, or nsyms + index in al), of the C++ constructor
 * or destructor variant VARIANT when that is not 0: its index in syms;
 * UINT64_MAX when none or more than one. */
static uint64_t cold_home(const struct img *d, const struct alias *al, const struct dc_hash *idx,
			  const char *nm, size_t b, uint8_t variant)
{
	uint64_t k = dc_hash_chain_start(dc_strhash(nm, b)), j, home = UINT64_MAX;

	while (dc_hash_chain(idx, &k, &j)) {
		size_t a = j >= d->nsyms ? j - d->nsyms : 0;
		const char *jn = j < d->nsyms ? d->names + d->syms[j].name : d->names + al[a].name;
		uint8_t v = j < d->nsyms ? d->syms[j].variant : al[a].variant;

		if (!dc_str_eq(jn, nm, b) || (variant && v != variant))
			continue;
		/* an alias: the symbol kept at its address */
		if (j >= d->nsyms) {
			j = DC_VEC_UPPER(d->syms, d->nsyms, start, al[a].start);
			if (!j || d->syms[--j].start != al[a].start || d->syms[j].label)
				continue;
		}
		/* (one function by two of its names: once) */
		if (home != UINT64_MAX && j != home)
			return UINT64_MAX;
		home = j;
	}
	return home;
}

/* Link each .cold part (gcc's "F.cold", "F.cold.N", C++ "F(int) [clone
 * .cold]") to its function F, the symbol of that name in the same binary
 * (a cold part of a cold part's name to the function at the end): its
 * addresses get F's key (dc_sym_dso_lookup). F may be the name of an
 * alias finish_syms dropped (al[0, nal)). Where more than one function
 * has the name, a C++ constructor's or destructor's part goes to the one
 * of its own variant (D0's part to D0, D2's to D1/D2: they demangle
 * alike). A name no symbol or more than one has (two static functions
 * of one name) links nothing: the part stays a function of its own. Out of memory: none linked (the parts
 * are functions of their own; the binary's symbols stay). */
static void link_cold(struct img *d, const struct alias *al, size_t nal)
{
	struct dc_hash idx = { 0 };
	size_t nc = 0;
	int ret = 0;

	for (size_t i = 0; i < d->nsyms; i++) {
		const char *nm = d->names + d->syms[i].name;

		nc += !d->syms[i].label && dc_sym_cold_base(nm, strlen(nm)) > 0;
	}
	if (!nc)
		return;
	for (size_t i = 0; i < d->nsyms && !ret; i++) {
		const char *nm = d->names + d->syms[i].name;
		uint64_t k = dc_hash_chain_start(dc_strhash(nm, strlen(nm))), j;

		if (d->syms[i].label)
			continue;
		while (dc_hash_chain(&idx, &k, &j))
			;
		ret = dc_hash_put(&idx, k, i);
	}
	/* an alias's entry: nsyms + its index in al */
	for (size_t i = 0; i < nal && !ret; i++) {
		const char *nm = d->names + al[i].name;
		uint64_t k = dc_hash_chain_start(dc_strhash(nm, strlen(nm))), j;

		while (dc_hash_chain(&idx, &k, &j))
			;
		ret = dc_hash_put(&idx, k, d->nsyms + i);
	}
	d->colds = ret ? NULL : malloc(nc * sizeof(*d->colds));
	for (size_t i = 0; d->colds && i < d->nsyms; i++) {
		const char *nm = d->names + d->syms[i].name;
		size_t len = strlen(nm), b = 0;
		uint8_t variant = d->syms[i].variant;
		uint64_t home = UINT64_MAX;
		int step;

		if (d->syms[i].label)
			continue;
		/* (F.cold.cold: F, in a few steps at most) */
		for (step = 0; step < 4 && (b = dc_sym_cold_base(nm, len)); step++) {
			home = cold_home(d, al, &idx, nm, b, 0);
			if (home == UINT64_MAX && variant)
				home = cold_home(d, al, &idx, nm, b, variant);
			if (home == UINT64_MAX)
				break;
			nm = d->names + d->syms[home].name;
			len = strlen(nm);
			variant = d->syms[home].variant;
		}
		if (home == UINT64_MAX || b)
			continue;
		d->syms[i].cold = true;
		d->colds[d->ncolds++] = (struct coldlink){ (uint32_t)i + 1, (uint32_t)home + 1 };
	}
	dc_hash_free(&idx);
}

/* Look for separate debuginfo with a .symtab: by build-id, then by
 * .gnu_debuglink next to the binary, in .debug/ and under debug_dir. */
static char *debuginfo_in(const char *debug_dir, const char *buildid_dir, const char *file,
			  const uint8_t *bid, size_t bid_size, Elf *code)
{
	char path[4096], hex[41];
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (bid_size) {
		bid_hex(bid, bid_size, hex);
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dir, hex,
			 hex + 2);
		if (file_matches(path, bid, bid_size))
			return strdup(path);
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/debug", buildid_dir, hex,
			 hex + 2);
		if (file_matches(path, bid, bid_size))
			return strdup(path);
	}
	if (code && (scn = find_section(code, ".gnu_debuglink", &shdr))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		const char *slash = strrchr(file, '/');
		int dirlen = slash ? (int)(slash - file) : 1;
		const char *dir = slash ? file : ".";
		const char *name;

		if (!data || !data->d_buf || !data->d_size ||
		    !memchr(data->d_buf, 0, data->d_size))
			return NULL;
		name = data->d_buf;
		snprintf(path, sizeof(path), "%.*s/%s", dirlen, dir, name);
		if (strcmp(path, file) && file_matches(path, bid, bid_size))
			return strdup(path);
		snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen, dir, name);
		if (file_matches(path, bid, bid_size))
			return strdup(path);
		snprintf(path, sizeof(path), "%s%.*s/%s", debug_dir, dirlen, dir, name);
		if (file_matches(path, bid, bid_size))
			return strdup(path);
	}
	return NULL;
}

static char *find_debuginfo(const struct dc_symbols *s, const struct dso *d, Elf *code)
{
	return debuginfo_in(s->debug_dir, s->buildid_dir, d->code_file ? d->code_file : d->path,
			    d->bid, d->bid_size, code);
}

char *dc_sym_debuginfo_path(const char *file, Elf *code)
{
	const char *home = getenv("HOME");
	char bdir[4096];
	uint8_t bid[20];
	size_t n = code ? elf_build_id(code, bid) : 0;

	snprintf(bdir, sizeof(bdir), "%s/.debug", home ? home : "/root");
	return debuginfo_in("/usr/lib/debug", bdir, file, bid, n, code);
}

/* --symfs comes first: a trace decoded away from the machine that recorded
 * it often has a file of its own at the recorded path (its own libc), which,
 * when the recording names no build-id, would pass for the binary. */
static char *find_code_file(const struct dc_symbols *s, const struct dso *d)
{
	char path[4096], hex[41];

	if (s->symfs) {
		snprintf(path, sizeof(path), "%s/%s", s->symfs, d->path);
		if (file_matches(path, d->bid, d->bid_size))
			return strdup(path);
	}
	if (d->path[0] == '/' && file_matches(d->path, d->bid, d->bid_size))
		return strdup(d->path);
	if (d->bid_size) {
		bid_hex(d->bid, d->bid_size, hex);
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/elf", s->buildid_dir, hex,
			 hex + 2);
		if (file_matches(path, d->bid, d->bid_size))
			return strdup(path);
	}
	return NULL;
}

/* This process's vdso and its build-id, found once: the auxv entry does
 * not change while the process runs. */
static struct {
	const void *base;
	size_t size, bid_size;
	uint8_t bid[20];
} own_vdso;
static pthread_once_t own_vdso_once = PTHREAD_ONCE_INIT;

static void own_vdso_find(void)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	GElf_Ehdr eh;
	Elf *elf;
	size_t size;

	if (!base)
		return;
	/* the recorder may get here before any symbolizer set the version */
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)base, 65536);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		return;
	}
	size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	elf_end(elf);
	if (size <= 64 || size > 65536)
		return;
	own_vdso.base = base;
	own_vdso.size = size;
	elf = elf_memory((char *)base, size);
	if (elf) {
		own_vdso.bid_size = elf_build_id(elf, own_vdso.bid);
		elf_end(elf);
	}
}

const void *dc_sym_own_vdso(size_t *size)
{
	pthread_once(&own_vdso_once, own_vdso_find);
	*size = own_vdso.size;
	return own_vdso.base;
}

size_t dc_sym_own_vdso_build_id(uint8_t out[20])
{
	pthread_once(&own_vdso_once, own_vdso_find);
	memcpy(out, own_vdso.bid, own_vdso.bid_size);
	return own_vdso.bid_size;
}

const void *dc_sym_vdso_for(const uint8_t *build_id, size_t n, size_t *size)
{
	uint8_t own[20];
	size_t on;

	if (n && (!(on = dc_sym_own_vdso_build_id(own)) ||
		  !dc_build_id_eq(own, on, build_id, n)))
		return NULL;
	return dc_sym_own_vdso(size);
}

/* The copy of `path` (of build-id bid) read whole into c; false when it
 * is not there, not that vdso, or unreadable. */
static bool vdso_copy_read(struct vdso_copy *c, const char *path, const uint8_t *bid,
			   size_t n)
{
	struct stat st;
	FILE *f;

	if (!file_matches(path, bid, n) || stat(path, &st) || st.st_size <= 64 ||
	    st.st_size > 65536)
		return false;
	c->data = malloc((size_t)st.st_size);
	f = fopen(path, "rb");
	if (!c->data || !f || fread(c->data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(c->data);
		c->data = NULL;
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	c->size = (size_t)st.st_size;
	return true;
}

/* perf's build-id cache copy of a [vdso] (perf record saves it, perf
 * archive packs it): BUILDID_DIR/.build-id/xx/rest/vdso, read whole. A
 * miss is remembered too (data NULL), as every image rebuild asks again. */
static const void *cached_vdso(struct dc_symbols *s, const uint8_t *bid, size_t n,
			       size_t *size)
{
	char path[4096], hex[41];
	struct vdso_copy *c;

	for (size_t i = 0; i < s->nvdsos; i++)
		if (dc_build_id_eq(s->vdsos[i].bid, s->vdsos[i].bid_size, bid, n)) {
			*size = s->vdsos[i].size;
			return s->vdsos[i].data;
		}
	if (DC_VEC_PUSH_ROOM(s->vdsos, s->nvdsos, s->cap_vdsos, 2))
		return NULL;
	c = &s->vdsos[s->nvdsos++];
	memset(c, 0, sizeof(*c));
	memcpy(c->bid, bid, n);
	c->bid_size = n;
	bid_hex(bid, n, hex);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/vdso", s->buildid_dir, hex, hex + 2);
	if (!vdso_copy_read(c, path, bid, n))
		return NULL;
	*size = c->size;
	return c->data;
}

const void *dc_sym_vdso(struct dc_symbols *s, const uint8_t *bid, size_t n, size_t *size)
{
	const void *own = dc_sym_vdso_for(bid, n, size);

	return own || !n ? own : cached_vdso(s, bid, n, size);
}

static int syms_from(struct img *d, Elf *elf, struct symvec *sv, uint8_t prio_base,
		     bool dyn_too)
{
	bool dem = !d->no_demangle;
	Elf_Scn *scn = NULL;
	uint64_t budget = elf_read_budget(elf);
	int ret = 0;

	while ((scn = elf_nextscn(elf, scn)) && !ret) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) ||
		    ((shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) &&
		     !budget_take(&budget, shdr.sh_size)))
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			ret = read_symtab(d, elf, scn, sv, prio_base, dem);
		else if (shdr.sh_type == SHT_DYNSYM && dyn_too)
			ret = read_symtab(d, elf, scn, sv, prio_base + 16, dem);
	}
	return ret;
}

static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/* ---- the process-wide cache of loaded binaries ------------------------ */

/* Unused images kept for a later symbolizer; the most recently used first. */
#define IMG_CACHE_MAX 16

static pthread_mutex_t img_lock = PTHREAD_MUTEX_INITIALIZER;
static struct img *img_cache;
static uint64_t img_loads, img_reuses;

/* Failed loads (out of memory) point here: no symbols, no DWARF. */
static struct img img_none = { .dw_mu = PTHREAD_MUTEX_INITIALIZER, .dw_tried = true,
				.fde_mu = PTHREAD_MUTEX_INITIALIZER, .fde_tried = true };

static bool file_id_get(const char *path, struct file_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (!path)
		return true;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	id->ctime = st.st_ctim;
	return true;
}

static bool file_id_eq(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static struct img *img_new(const char *code_file, const char *dbg_file, bool no_demangle)
{
	struct img *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->refs = 1;
	m->no_demangle = no_demangle;
	pthread_mutex_init(&m->dw_mu, NULL);
	pthread_mutex_init(&m->fde_mu, NULL);
	m->code_file = dup_or_null(code_file);
	m->dbg_file = dup_or_null(dbg_file);
	if ((code_file && !m->code_file) || (dbg_file && !m->dbg_file)) {
		pthread_mutex_destroy(&m->dw_mu);
		pthread_mutex_destroy(&m->fde_mu);
		free(m->code_file);
		free(m);
		return NULL;
	}
	return m;
}

static void dwf_put(struct dwf *f);

static void img_free(struct img *m)
{
	dwf_put(m->dwf);
	pthread_mutex_destroy(&m->dw_mu);
	free(m->fdes);
	pthread_mutex_destroy(&m->fde_mu);
	free(m->code_file);
	free(m->dbg_file);
	free(m->segs);
	free(m->syms);
	free(m->colds);
	free(m->names);
	free(m);
}

/* Drop unused images beyond IMG_CACHE_MAX, the least recently used first.
 * Called with img_lock held. */
static void img_trim(void)
{
	struct img **pp = &img_cache, *m;
	size_t kept = 0;

	while ((m = *pp)) {
		if (!m->refs && ++kept > IMG_CACHE_MAX) {
			*pp = m->next;
			img_free(m);
			continue;
		}
		pp = &m->next;
	}
}

/* The cached image of these files as they are now, with a reference. */
static struct img *img_find(const char *code_file, const char *dbg_file, bool no_demangle,
			    struct file_id *code_id, struct file_id *dbg_id)
{
	struct img **pp, *m = NULL;

	if (!file_id_get(code_file, code_id) || !file_id_get(dbg_file, dbg_id))
		return NULL;
	pthread_mutex_lock(&img_lock);
	for (pp = &img_cache; (m = *pp); pp = &m->next) {
		if (m->no_demangle == no_demangle && str_eq(m->code_file, code_file) &&
		    str_eq(m->dbg_file, dbg_file) && file_id_eq(&m->code_id, code_id) &&
		    file_id_eq(&m->dbg_id, dbg_id)) {
			*pp = m->next;          /* to the front */
			m->next = img_cache;
			img_cache = m;
			m->refs++;
			img_reuses++;
			break;
		}
	}
	pthread_mutex_unlock(&img_lock);
	return m;
}

/* Share a freshly loaded image (its files' identities taken before it was
 * read: a file changed meanwhile makes the next lookup miss). */
static void img_share(struct img *m, const struct file_id *code_id,
		      const struct file_id *dbg_id)
{
	m->code_id = *code_id;
	m->dbg_id = *dbg_id;
	pthread_mutex_lock(&img_lock);
	m->cached = true;
	m->next = img_cache;
	img_cache = m;
	img_trim();
	pthread_mutex_unlock(&img_lock);
}

static void img_put(struct img *m)
{
	if (!m || m == &img_none)
		return;
	pthread_mutex_lock(&img_lock);
	if (--m->refs == 0) {
		if (m->cached)
			img_trim();
		else
			img_free(m);
	}
	pthread_mutex_unlock(&img_lock);
}

void dc_sym_img_counters(uint64_t *loads, uint64_t *reuses)
{
	pthread_mutex_lock(&img_lock);
	*loads = img_loads;
	*reuses = img_reuses;
	pthread_mutex_unlock(&img_lock);
}

/* d's code is not there: it is listed once for the summary. */
static int note_missing(struct dc_symbols *s, struct dso *d)
{
	char **nm = realloc(s->missing, (s->nmissing + 1) * sizeof(*nm));

	d->missing = true;
	if (!nm)
		return -ENOMEM;
	s->missing = nm;
	s->missing[s->nmissing] = strdup(d->path);
	if (!s->missing[s->nmissing])
		return -ENOMEM;
	s->nmissing++;
	return 0;
}

/* Why d's code is not there, once: the file at its path is another
 * binary, cannot be read, or is not there. */
static void warn_missing(struct dc_symbols *s, const struct dso *d, const char *hex)
{
	enum file_state st = d->path[0] == '/' ? file_check(d->path, d->bid, d->bid_size)
					       : FILE_ABSENT;

	if (!strcmp(d->path, "//anon"))
		/* (perf's name for executable memory no file backs) */
		warn(s, "code in anonymous memory (%s: JIT-compiled code, say) has no file "
		     "to decode it from: it shows as [unknown] (%s), and calls and returns "
		     "made inside it are not seen", d->path, d->path);
	else if (st == FILE_UNREADABLE)
		warn(s, "cannot read %s (%s): its code shows as [unknown]", d->path,
		     access(d->path, R_OK) ? "no permission to read it" : "not an ELF file");
	else if (st == FILE_OTHER && hex[0])
		warn(s, "%s is not the binary recorded (build-id %s): its code shows as "
		     "[unknown]; put a copy of the recording machine's file under "
		     "--symfs DIR", d->path, hex);
	else
		warn(s, "cannot find %s%s: its code shows as [unknown]", d->path,
		     hex[0] ? " (or its build-id in the debug directories)" : "");
}

/* Where a binary's code and its separate debuginfo are (d->code_file,
 * *dbg; either may be NULL), the code file open in *code (fd -1: none),
 * d's build-id completed from it: what loading the binary and opening its
 * DWARF ahead both go by. The debuginfo is looked for when the code file
 * lacks symbols or DWARF (`strip -g` keeps the symbols); *dbg_syms: its
 * symbols are the binary's (the code file has none). Reads only s's
 * directories: any thread. */
static void locate(const struct dc_symbols *s, struct dso *d, struct elfh *code, char **dbg,
		   bool *dbg_syms)
{
	GElf_Shdr shdr;

	*code = (struct elfh){ -1, NULL };
	*dbg = NULL;
	*dbg_syms = true;
	d->code_file = find_code_file(s, d);
	if (d->code_file && elf_open_file(d->code_file, code)) {
		free(d->code_file);
		d->code_file = NULL;
	}
	if (d->code_file) {
		uint8_t bid[20];
		size_t n = elf_build_id(code->elf, bid);

		if (!d->bid_size && n) {
			memcpy(d->bid, bid, n);
			d->bid_size = (uint8_t)n;
		}
		*dbg_syms = !has_symtab(code->elf);
		if (*dbg_syms || !find_section(code->elf, ".debug_info", &shdr))
			*dbg = find_debuginfo(s, d, code->elf);
	} else if (d->bid_size) {
		*dbg = find_debuginfo(s, d, NULL);
	}
}

static int dso_load(struct dc_symbols *s, struct dso *d)
{
	struct symvec sv = { 0 };
	struct elfh code = { -1, NULL };
	struct file_id code_id, dbg_id;
	bool dem = !s->opts.no_demangle, share = false, dbg_syms;
	struct img *m;
	char *dbg = NULL;
	int ret = 0;

	d->loaded = true;
	d->img = &img_none;
	if (!strcmp(d->path, "[vdso]")) {
		size_t size;
		const void *mem = dc_sym_vdso(s, d->bid, d->bid_size, &size);
		Elf *elf = mem ? elf_memory((char *)mem, size) : NULL;

		if (!mem && d->bid_size) {
			char hex[41];

			bid_hex(d->bid, d->bid_size, hex);
			warn(s, "the recording's [vdso] (build-id %s) is not this kernel's, and "
			     "perf's build-id cache (%s) has no copy: its code shows as [unknown]; "
			     "report where it was recorded, or copy that machine's ~/.debug here "
			     "(perf archive)", hex, s->buildid_dir);
			if ((ret = note_missing(s, d)))
				return ret;
		}

		m = img_new(NULL, NULL, s->opts.no_demangle);
		if (!m) {
			if (elf)
				elf_end(elf);
			return -ENOMEM;
		}
		if (elf) {
			ret = read_segs(m, elf);
			if (!ret)
				ret = syms_from(m, elf, &sv, 0, true);
			elf_end(elf);
		}
		finish_syms(m, &sv);
		if (!ret)
			link_cold(m, sv.al, sv.nal);
		free(sv.v);
		free(sv.al);
		d->img = m;
		return ret;
	}
	locate(s, d, &code, &dbg, &dbg_syms);
	if (!d->code_file) {
		char hex[41] = "";

		if (d->bid_size)
			bid_hex(d->bid, d->bid_size, hex);
		warn_missing(s, d, hex);
		if ((ret = note_missing(s, d))) {
			free(dbg);
			return ret;
		}
	}
	d->dbg_file = dbg;
	/* A binary found at a file (not only its debuginfo) can be shared. */
	if (d->code_file) {
		m = img_find(d->code_file, dbg, !dem, &code_id, &dbg_id);
		if (m) {
			d->img = m;
			elf_close(&code);
			return 0;
		}
		share = file_id_get(d->code_file, &code_id) && file_id_get(dbg, &dbg_id);
	}
	m = img_new(d->code_file, dbg, !dem);
	if (!m) {
		elf_close(&code);
		return -ENOMEM;
	}
	if (d->code_file) {
		ret = read_segs(m, code.elf);
		if (!ret)
			ret = syms_from(m, code.elf, &sv, 0, true);
		if (!ret)
			ret = synth_plt(m, code.elf, &sv, dem);
	}
	if (!ret && dbg && dbg_syms) {
		struct elfh h;

		if (!elf_open_file(dbg, &h)) {
			if (!m->nsegs)
				ret = read_segs(m, h.elf);
			if (!ret)
				ret = syms_from(m, h.elf, &sv, 0, false);
			elf_close(&h);
		}
	}
	elf_close(&code);
	if (!ret)
		finish_syms(m, &sv);
	if (!ret)
		link_cold(m, sv.al, sv.nal);
	free(sv.v);
	free(sv.al);
	pthread_mutex_lock(&img_lock);
	img_loads++;
	pthread_mutex_unlock(&img_lock);
	d->img = m;
	if (!ret && share)
		img_share(m, &code_id, &dbg_id);
	return ret;
}

/* ---- dsos --------------------------------------------------------------- */

int dc_symbols_new(const struct dc_symbols_opts *opts, struct dc_sideband *sb,
		   struct dc_symbols **out)
{
	struct dc_symbols *s = calloc(1, sizeof(*s));
	const char *home = getenv("HOME");
	char buf[4096];

	*out = NULL;
	if (!s)
		return -ENOMEM;
	elf_version(EV_CURRENT);   /* idempotent */
	if (opts)
		s->opts = *opts;
	s->sb = sb;
	snprintf(buf, sizeof(buf), "%s/.debug", home ? home : "/root");
	s->debug_dir = strdup(opts && opts->debug_dir ? opts->debug_dir : "/usr/lib/debug");
	s->buildid_dir = strdup(opts && opts->buildid_dir ? opts->buildid_dir : buf);
	s->symfs = dup_or_null(opts ? opts->symfs : NULL);
	if (!s->debug_dir || !s->buildid_dir || (opts && opts->symfs && !s->symfs)) {
		dc_symbols_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void dc_symbols_free(struct dc_symbols *s)
{
	if (!s)
		return;
	preload_free(s->pre);
	for (size_t i = 0; i < s->ndsos; i++) {
		struct dso *d = s->dsos[i];

		dc_inl_free(d->inl);
		img_put(d->img);
		free(d->dbg_file);
		free(d->path);
		free(d->code_file);
		free(d->unknown_name);
		for (size_t j = 0; j < d->nfde; j++)
			free(d->fde_names[j]);
		free(d->fde_names);
		dc_hash_free(&d->fde_idx);
		free(d);
	}
	free(s->dsos);
	for (size_t i = 0; i < s->nmissing; i++)
		free(s->missing[i]);
	free(s->missing);
	for (size_t i = 0; i < s->nsrclines; i++)
		free(s->srclines[i]);
	free(s->srclines);
	dc_hash_free(&s->srcline_idx);
	for (size_t i = 0; i < s->ninames; i++)
		free(s->inames[i]);
	free(s->inames);
	free(s->iraw);
	free(s->idso);
	dc_hash_free(&s->iname_idx);
	free(s->ictx);
	dc_hash_free(&s->ictx_idx);
	free(s->cache);
	dc_hash_free(&s->cache_idx);
	dc_hash_free(&s->dso_by_name);
	for (size_t i = 0; i < s->nvdsos; i++)
		free(s->vdsos[i].data);
	free(s->vdsos);
	free(s->debug_dir);
	free(s->buildid_dir);
	free(s->symfs);
	free(s);
}

int dc_sym_dso(struct dc_symbols *s, const char *path, const uint8_t *build_id,
	       size_t build_id_size)
{
	uint64_t k = dc_hash_chain_start(dc_strhash(path, strlen(path))), idx;
	struct dso *d;

	if (build_id_size > 20)
		build_id_size = 20;
	/* Same path, other build-id: on along the chain */
	while (dc_hash_chain(&s->dso_by_name, &k, &idx)) {
		d = s->dsos[idx];
		if (!strcmp(d->path, path) &&
		    (!build_id_size || !d->bid_size ||
		     dc_build_id_eq(d->bid, d->bid_size, build_id, build_id_size)))
			return (int)idx;
	}
	if (DC_VEC_PUSH_ROOM(s->dsos, s->ndsos, s->cap_dsos, 16))
		return -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->path = strdup(path);
	if (d->path) {
		size_t n = strlen(path) + 16;

		d->unknown_name = malloc(n);
		if (d->unknown_name)
			snprintf(d->unknown_name, n, "[unknown] (%s)", path);
	}
	if (!d->path || !d->unknown_name || dc_hash_put(&s->dso_by_name, k, s->ndsos)) {
		free(d->path);
		free(d->unknown_name);
		free(d);
		return -ENOMEM;
	}
	if (build_id && build_id_size) {
		memcpy(d->bid, build_id, build_id_size);
		d->bid_size = (uint8_t)build_id_size;
	}
	s->dsos[s->ndsos] = d;
	return (int)s->ndsos++;
}

static struct dso *dso_get(struct dc_symbols *s, int id)
{
	struct dso *d;

	if (id < 0 || (size_t)id >= s->ndsos)
		return NULL;
	d = s->dsos[id];
	if (!d->loaded && dso_load(s, d)) {
		/* out of memory while loading: behave as "no symbols" */
		img_put(d->img);
		d->img = &img_none;
	}
	return d;
}

const char *dc_sym_dso_file(struct dc_symbols *s, int dso)
{
	struct dso *d = dso_get(s, dso);

	return d ? d->code_file : NULL;
}

bool dc_sym_dso_off_to_vaddr(struct dc_symbols *s, int dso, uint64_t off, uint64_t *vaddr)
{
	struct dso *d = dso_get(s, dso);

	if (!d)
		return false;
	for (size_t i = 0; i < d->img->nsegs; i++) {
		const struct seg *g = &d->img->segs[i];

		if (off >= g->off && off < g->off + g->filesz) {
			*vaddr = off - g->off + g->vaddr;
			return true;
		}
	}
	return false;
}

static uint64_t make_key(int dso, size_t sym_plus1)
{
	return ((uint64_t)(dso + 1) << 32) | sym_plus1;
}

/* Code no symbol names is still made of functions: the compiler gives each
 * an FDE in .eh_frame (kept by strip) with its exact [start, end). Such a
 * function's key is its start, counted from the image's lowest load
 * address, with this bit set: a key that depends on the address alone, so
 * it is the same whatever the order of lookups and in every symbolizer
 * (report -j). Symbol indexes never come near it. */
#define FDE_KEY_BIT UINT64_C(0x80000000)

/* The image's .eh_frame functions, read at the first call, by whichever
 * thread asks first: the image may be shared by symbolizers of other
 * threads. Only binaries with code in a gap of their symbols read it. */
static void img_fdes(struct img *m)
{
	struct elfh h;

	/* (every lookup in a gap asks: no lock once they are read) */
	if (__atomic_load_n(&m->fde_tried, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&m->fde_mu);
	if (!m->fde_tried && m->code_file && !elf_open_file(m->code_file, &h)) {
		/* (out of memory: none, as without .eh_frame) */
		(void)dc_fde_ranges(h.elf, &m->fdes, &m->nfdes);
		elf_close(&h);
	}
	__atomic_store_n(&m->fde_tried, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->fde_mu);
}

static bool in_plt(const struct img *m, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < 4; i++)
		if (lo < m->plt_hi[i] && hi > m->plt_lo[i])
			return true;
	return false;
}

/* vaddr lies in the symbols' gap [glo, ghi): the function holding it by
 * its FDE, in [*lo, *hi), true; only when the FDE lies inside the gap (one
 * crossing a symbol is no function of its own) and outside the PLT. Else
 * false, and [*lo, *hi) is the part of the gap around vaddr that no FDE
 * names either (the rest of that FDE, or the room between two). */
static bool fde_in_gap(struct img *m, uint64_t vaddr, uint64_t glo, uint64_t ghi,
		       uint64_t *lo, uint64_t *hi)
{
	const struct dc_fde *f;
	size_t a;

	img_fdes(m);
	*lo = glo;
	*hi = ghi;
	if ((f = dc_fde_find(m->fdes, m->nfdes, vaddr))) {
		*lo = f->start > glo ? f->start : glo;
		*hi = f->end < ghi ? f->end : ghi;
		return f->start >= glo && f->end <= ghi && f->start >= m->vbase &&
		       f->start - m->vbase < FDE_KEY_BIT && !in_plt(m, f->start, f->end);
	}
	a = DC_VEC_UPPER(m->fdes, m->nfdes, start, vaddr);
	if (a && m->fdes[a - 1].end > *lo)
		*lo = m->fdes[a - 1].end;
	if (a < m->nfdes && m->fdes[a].start < *hi)
		*hi = m->fdes[a].start;
	return false;
}

/* "base+0xVADDR" of an FDE key (the name addr2line takes), made once. */
static const char *fde_name(struct dso *d, uint64_t key)
{
	const char *base = strrchr(d->path, '/');
	uint64_t v;
	char *n;

	if (dc_hash_get(&d->fde_idx, key, &v))
		return d->fde_names[v - 1];
	if (DC_VEC_PUSH_ROOM(d->fde_names, d->nfde, d->cap_fde, 16) ||
	    asprintf(&n, "%s+0x%" PRIx64, base ? base + 1 : d->path,
		     d->img->vbase + (key & (FDE_KEY_BIT - 1))) < 0)
		return NULL;
	if (dc_hash_put(&d->fde_idx, key, d->nfde + 1)) {
		free(n);
		return NULL;
	}
	d->fde_names[d->nfde++] = n;
	return n;
}

/* dc_sym_dso_lookup, and *part: for a .cold part, its own symbol's index
 * + 1 XOR its function's, else 0. */
static uint64_t dso_lookup(struct dc_symbols *s, int dso, uint64_t vaddr, uint64_t *lo,
			   uint64_t *hi, uint32_t *part)
{
	struct dso *d = dso_get(s, dso);
	uint64_t glo = 0, ghi = UINT64_MAX;
	struct img *m;
	size_t a;

	*lo = 0;
	*hi = UINT64_MAX;
	*part = 0;
	if (!d)
		return DC_SYM_KEY_UNKNOWN;
	m = d->img;
	a = DC_VEC_UPPER(m->syms, m->nsyms, start, vaddr);   /* first symbol with start > vaddr */
	if (a && vaddr < m->syms[a - 1].end) {
		*lo = m->syms[a - 1].start;
		*hi = m->syms[a - 1].end;
		if (m->syms[a - 1].cold) {
			/* a .cold part: its function's key, its own range */
			size_t c = DC_VEC_UPPER(m->colds, m->ncolds, sym, a);

			if (c && m->colds[c - 1].sym == a) {
				*part = (uint32_t)a ^ m->colds[c - 1].home;
				return make_key(dso, m->colds[c - 1].home);
			}
		}
		return make_key(dso, a);
	}
	/* In a gap: an FDE's function, else the dso's unknown function, as
	 * wide as no FDE names a part of it. */
	if (a)
		glo = m->syms[a - 1].end;
	if (a < m->nsyms)
		ghi = m->syms[a].start;
	if (fde_in_gap(m, vaddr, glo, ghi, lo, hi))
		return make_key(dso, FDE_KEY_BIT | (*lo - m->vbase));
	return make_key(dso, 0);
}

uint64_t dc_sym_dso_lookup(struct dc_symbols *s, int dso, uint64_t vaddr, uint64_t *lo,
			   uint64_t *hi)
{
	uint32_t part;

	return dso_lookup(s, dso, vaddr, lo, hi, &part);
}

const char *dc_sym_name(struct dc_symbols *s, uint64_t key)
{
	uint64_t di = key >> 32, si = key & 0xffffffffu;
	struct dso *d;

	if ((key & DC_SYM_KEY_KERNEL) && s->kern.name)
		return s->kern.name(s->kern.ctx, key);
	if (key & DC_SYM_KEY_INLINE)
		return (key & ~DC_SYM_KEY_INLINE) < s->ninames ?
		       s->inames[key & ~DC_SYM_KEY_INLINE] : NULL;
	if (!di || di > s->ndsos)
		return NULL;
	d = s->dsos[di - 1];
	if (!si)
		return d->unknown_name;
	if ((si & FDE_KEY_BIT) && d->img)
		return fde_name(d, key);
	if (!d->img || si > d->img->nsyms)
		return NULL;
	return d->img->names + d->img->syms[si - 1].name;
}

/* ---- the process-wide cache of opened DWARF -----------------------------
 *
 * Opening a file's DWARF inflates its compressed debug sections: 33 ms for
 * libc6-dbg's libc. Each file (path and identity) is opened once per
 * process, by whichever thread needs it first (its lock: the others wait),
 * and shared by the images made from it and the thread that opens DWARF
 * ahead (below). */
struct dwf {
	struct dwf *next;
	unsigned refs;                  /* (the list and refs: dwf_lock)    */
	char *path;
	struct file_id id;
	pthread_mutex_t mu;             /* for the rest                     */
	bool tried;
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static pthread_mutex_t dwf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dwf *dwf_list;
static uint64_t dwf_opens;

/* The entry of the file at path as it is now, with a reference; NULL: no
 * such file (or out of memory). */
static struct dwf *dwf_get(const char *path)
{
	struct file_id id;
	struct dwf *f;

	if (!path || !file_id_get(path, &id))
		return NULL;
	pthread_mutex_lock(&dwf_lock);
	for (f = dwf_list; f; f = f->next)
		if (!strcmp(f->path, path) && file_id_eq(&f->id, &id))
			break;
	if (f) {
		f->refs++;
	} else if ((f = calloc(1, sizeof(*f))) && !(f->path = strdup(path))) {
		free(f);
		f = NULL;
	} else if (f) {
		f->id = id;
		f->refs = 1;
		f->fd = -1;
		pthread_mutex_init(&f->mu, NULL);
		f->next = dwf_list;
		dwf_list = f;
	}
	pthread_mutex_unlock(&dwf_lock);
	return f;
}

static void dwf_put(struct dwf *f)
{
	struct dwf **pp;

	if (!f)
		return;
	pthread_mutex_lock(&dwf_lock);
	if (--f->refs) {
		pthread_mutex_unlock(&dwf_lock);
		return;
	}
	for (pp = &dwf_list; *pp != f; pp = &(*pp)->next)
		;
	*pp = f->next;
	pthread_mutex_unlock(&dwf_lock);
	if (f->dw)
		dwarf_end(f->dw);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	pthread_mutex_destroy(&f->mu);
	free(f->path);
	free(f);
}

/* Its DWARF, opened at the first call (NULL: none); *opened: by this one. */
static Dwarf *dwf_open(struct dwf *f, bool *opened)
{
	Dwarf *dw;

	pthread_mutex_lock(&f->mu);
	*opened = false;
	if (!f->tried) {
		f->tried = true;
		if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) >= 0 &&
		    (f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL)))
			f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
		if (!f->dw) {
			if (f->elf)
				elf_end(f->elf);
			if (f->fd >= 0)
				close(f->fd);
			f->elf = NULL;
			f->fd = -1;
		}
		*opened = f->dw != NULL;
		if (*opened) {
			pthread_mutex_lock(&dwf_lock);
			dwf_opens++;
			pthread_mutex_unlock(&dwf_lock);
		}
	}
	dw = f->dw;
	pthread_mutex_unlock(&f->mu);
	return dw;
}

/* A binary's DWARF: its debuginfo file's, else its code file's; with a
 * reference (NULL: neither has any). *opened: this call opened it. */
static struct dwf *dwf_of(const char *dbg_file, const char *code_file, bool *opened)
{
	const char *files[2] = { dbg_file, code_file };

	*opened = false;
	for (int i = 0; i < 2; i++) {
		struct dwf *f = dwf_get(files[i]);

		if (f && dwf_open(f, opened))
			return f;
		dwf_put(f);
	}
	return NULL;
}

uint64_t dc_sym_dwarf_opens(void)
{
	uint64_t n;

	pthread_mutex_lock(&dwf_lock);
	n = dwf_opens;
	pthread_mutex_unlock(&dwf_lock);
	return n;
}

/* The DWARF of an image, looked for once. */
static Dwarf *img_dwarf(struct img *d)
{
	Dwarf *dw;
	bool opened;

	pthread_mutex_lock(&d->dw_mu);
	if (!d->dw_tried) {
		d->dw_tried = true;
		d->dwf = dwf_of(d->dbg_file, d->code_file, &opened);
	}
	dw = d->dwf ? d->dwf->dw : NULL;
	pthread_mutex_unlock(&d->dw_mu);
	return dw;
}

/* ---- DWARF opened ahead --------------------------------------------------
 *
 * The decoding thread opens a binary's DWARF at its first inline lookup
 * there, while the threads decoding ahead wait with full rings. With more
 * threads than one (report -j), a thread of the symbolizer takes binaries
 * from a source (the session's: those the trace's IP packets go to, in the
 * order they first do, decoder/prescan.h), finds their files as loading
 * them does (locate) and opens their DWARF into the cache above. It reads
 * nothing of the symbolizer but its directories, so every answer (and
 * warning) is what one thread gives; only who inflates changes. */
struct preload {
	const struct dc_symbols *s;     /* its directories only             */
	dc_sym_ahead_fn next;           /* (run by the thread only)         */
	void *ctx;
	pthread_t th;
	bool running;
	pthread_mutex_t mu;             /* for the rest                     */
	bool stop, done;
	struct dwf **held;              /* opened, kept until the end       */
	size_t nheld, cap_held;
	uint64_t asked, opened;
};

/* Open one binary's DWARF (as its image would find it). */
static void pre_open(struct preload *p, const char *path, const uint8_t *bid, size_t n)
{
	struct dso d = { .path = (char *)path, .bid_size = (uint8_t)(n > 20 ? 20 : n) };
	bool opened = false, dbg_syms;
	struct elfh code;
	struct dwf *f;
	char *dbg;

	if (d.bid_size)
		memcpy(d.bid, bid, d.bid_size);
	locate(p->s, &d, &code, &dbg, &dbg_syms);
	elf_close(&code);
	f = dwf_of(dbg, d.code_file, &opened);
	free(d.code_file);
	free(dbg);
	pthread_mutex_lock(&p->mu);
	if (f && DC_VEC_PUSH_ROOM(p->held, p->nheld, p->cap_held, 8)) {
		dwf_put(f);       /* (out of memory: opened again when needed) */
		f = NULL;
	}
	if (f)
		p->held[p->nheld++] = f;
	p->opened += opened;
	pthread_mutex_unlock(&p->mu);
}

static void *preload_main(void *arg)
{
	struct preload *p = arg;
	const uint8_t *bid;
	const char *path;
	size_t n;

	for (;;) {
		bool stop;

		pthread_mutex_lock(&p->mu);
		stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop || p->next(p->ctx, &path, &bid, &n) <= 0)
			break;
		if (!strcmp(path, "[vdso]"))
			continue;
		pthread_mutex_lock(&p->mu);
		p->asked++;
		pthread_mutex_unlock(&p->mu);
		pre_open(p, path, bid, n);
	}
	pthread_mutex_lock(&p->mu);
	p->done = true;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* (at the end: the source's step or the file being opened is waited for) */
static void preload_free(struct preload *p)
{
	if (!p)
		return;
	if (p->running) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
	}
	for (size_t i = 0; i < p->nheld; i++)
		dwf_put(p->held[i]);
	free(p->held);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

int dc_sym_preload_from(struct dc_symbols *s, dc_sym_ahead_fn next, void *ctx)
{
	struct preload *p;

	if (s->pre)
		return -EBUSY;
	if (!(p = s->pre = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->s = s;
	p->next = next;
	p->ctx = ctx;
	pthread_mutex_init(&p->mu, NULL);
	/* (no thread to be had: the decoding thread opens everything, as
	 * with one thread) */
	p->running = !pthread_create(&p->th, NULL, preload_main, p);
	return 0;
}

void dc_sym_dwarf_preloaded(const struct dc_symbols *s, uint64_t *asked, uint64_t *opened,
			    bool *done)
{
	*asked = *opened = 0;
	*done = true;
	if (s->pre && s->pre->running) {
		pthread_mutex_lock(&s->pre->mu);
		*asked = s->pre->asked;
		*opened = s->pre->opened;
		*done = s->pre->done;
		pthread_mutex_unlock(&s->pre->mu);
	}
}

const char *dc_sym_srcline(struct dc_symbols *s, uint64_t key)
{
	uint64_t di = key >> 32, si = key & 0xffffffffu, v;
	char *str = NULL, **nv;
	Dwarf_Die cu;
	Dwarf_Line *line;
	Dwarf *dw;
	struct dso *d;
	int ln;

	if (!di || di > s->ndsos || !s->dsos[di - 1]->img || !si ||
	    si > s->dsos[di - 1]->img->nsyms)
		return NULL;
	if (dc_hash_get(&s->srcline_idx, key, &v))
		return v ? s->srclines[v - 1] : NULL;
	d = s->dsos[di - 1];
	pthread_mutex_lock(&img_lock);
	dw = img_dwarf(d->img);
	if (dw && dwarf_addrdie(dw, d->img->syms[si - 1].start, &cu) &&
	    (line = dwarf_getsrc_die(&cu, d->img->syms[si - 1].start)) &&
	    !dwarf_lineno(line, &ln)) {
		const char *src = dwarf_linesrc(line, NULL, NULL);
		const char *base = src ? strrchr(src, '/') : NULL;

		if (src && asprintf(&str, "%s:%d", base ? base + 1 : src, ln) < 0)
			str = NULL;
	}
	pthread_mutex_unlock(&img_lock);
	if (str) {
		nv = realloc(s->srclines, (s->nsrclines + 1) * sizeof(*nv));
		if (!nv) {
			free(str);
			return NULL;
		}
		s->srclines = nv;
		s->srclines[s->nsrclines++] = str;
	}
	dc_hash_put(&s->srcline_idx, key, str ? s->nsrclines : 0);  /* a cache */
	return str;
}

/* ---- process-level lookups ---------------------------------------------- */

/* The process pid (NULL: none, or no sideband). */
static inline struct dc_sb_proc *proc_of(struct dc_symbols *s, uint32_t pid)
{
	struct dc_sb_proc *p = NULL;

	if (s->sb) {
		if (s->front_proc && s->front_pid == pid) {
			p = s->front_proc;
		} else if ((p = dc_sb_proc(s->sb, pid))) {
			s->front_pid = pid;   /* (one proc per pid, kept to the end) */
			s->front_proc = p;
		}
	}
	return p;
}

/* The mapping of ip in pid's mappings generation gen (the current one
 * answers as the sideband's DC_SB_NOW). */
static struct dc_sb_map *map_of(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip)
{
	struct dc_sb_proc *p = proc_of(s, pid);

	return p ? dc_sb_map_at_gen(p, gen, ip) : NULL;
}

static uint64_t lookup_uncached(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip,
				uint64_t *lo, uint64_t *hi, uint32_t *part)
{
	struct dc_sb_map *m = map_of(s, pid, gen, ip);
	uint64_t key, vaddr, vlo, vhi, bias;

	*lo = ip;
	*hi = ip + 1;
	if (!m && s->kern.range && (key = s->kern.range(s->kern.ctx, ip, lo, hi)))
		return key;
	if (!m)
		return DC_SYM_KEY_UNKNOWN;
	if (m->dso < 0) {
		int id = dc_sym_dso(s, m->path, m->build_id, m->build_id_size);

		if (id < 0)
			return DC_SYM_KEY_UNKNOWN;
		m->dso = id;
	}
	if (!dc_sym_dso_off_to_vaddr(s, m->dso, ip - m->start + m->pgoff, &vaddr)) {
		*lo = m->start;
		*hi = m->end;
		return make_key(m->dso, 0);
	}
	bias = ip - vaddr;
	key = dso_lookup(s, m->dso, vaddr, &vlo, &vhi, part);
	*lo = vlo + bias < m->start || vlo + bias > ip ? m->start : vlo + bias;
	*hi = vhi == UINT64_MAX || vhi + bias > m->end || vhi + bias <= ip ? m->end : vhi + bias;
	return key;
}

static uint64_t cache_mix(uint32_t pid, uint64_t ip)
{
	return (ip ^ ((uint64_t)pid * UINT64_C(0x9e3779b97f4a7c15))) & (UINT64_MAX >> 1);
}

/* The cache entry of (pid, ip), filled with its function; NULL when out of
 * memory (*lo, *hi and the key are in *tmp then). An entry answers for
 * the process's mappings generation it was made with (maps_gen), whose
 * mappings never change (dc_sb_map_at_gen): while it is the current one,
 * and for lookups by that generation. The front
 * is checked first: an index it holds is the one the hash gives for
 * (pid, ip) when the entry there is (pid, ip)'s, as the hash maps a key to
 * one entry only. */
static struct cache_ent *cache_fill(struct dc_symbols *s, uint32_t pid, uint64_t ip,
				    uint32_t gen, uint32_t *front, struct cache_ent *tmp);

/* cache_get as of the process's mappings generation gen. */
static inline struct cache_ent *cache_get_gen(struct dc_symbols *s, uint32_t pid, uint32_t gen,
					      uint64_t ip, struct cache_ent *tmp)
{
	uint32_t *front = &s->front[(ip ^ (ip >> 11) ^ pid * 0x9e37u) & (SYM_FRONT - 1)];
	struct cache_ent *e;

	if (*front) {
		e = &s->cache[*front - 1];
		if (e->pid == pid && e->ip == ip && e->gen == gen) {
			s->hits++;
			return e;
		}
	}
	return cache_fill(s, pid, ip, gen, front, tmp);
}

/* ... as of the process's mappings now. */
static inline struct cache_ent *cache_get(struct dc_symbols *s, uint32_t pid, uint64_t ip,
					  struct cache_ent *tmp)
{
	struct dc_sb_proc *p = proc_of(s, pid);

	return cache_get_gen(s, pid, p ? p->maps_gen : 0, ip, tmp);
}

/* cache_get past the front: the hash, else a lookup. */
static struct cache_ent *cache_fill(struct dc_symbols *s, uint32_t pid, uint64_t ip,
				    uint32_t gen, uint32_t *front, struct cache_ent *tmp)
{
	uint64_t mix = cache_mix(pid, ip), idx;
	struct cache_ent *e;

	if (dc_hash_get(&s->cache_idx, mix, &idx)) {
		e = &s->cache[idx];
		if (e->pid == pid && e->ip == ip && e->gen == gen) {
			s->hits++;
			*front = (uint32_t)idx + 1;
			return e;
		}
	} else {
		idx = UINT64_MAX;
	}
	s->lookups++;
	*tmp = (struct cache_ent){ .pid = pid, .ip = ip, .gen = gen, .inl = UINT32_MAX };
	tmp->key = lookup_uncached(s, pid, gen, ip, &tmp->lo, &tmp->hi, &tmp->part);
	if (idx == UINT64_MAX) {
		if (DC_VEC_PUSH_ROOM(s->cache, s->ncache, s->cap_cache, 1024))
			return NULL;
		idx = s->ncache;
		if (dc_hash_put(&s->cache_idx, mix, idx))
			return NULL;
		s->ncache++;
	}
	e = &s->cache[idx];
	*e = *tmp;
	*front = (uint32_t)idx + 1;
	return e;
}

uint64_t dc_sym_func_range(struct dc_symbols *s, uint32_t pid, uint64_t ip, uint64_t *lo,
			   uint64_t *hi)
{
	struct cache_ent tmp, *e = cache_get(s, pid, ip, &tmp);

	if (!e)
		e = &tmp;
	*lo = e->lo;
	*hi = e->hi;
	return e->key;
}

uint64_t dc_sym_func_key(struct dc_symbols *s, uint32_t pid, uint64_t ip)
{
	uint64_t lo, hi;

	return dc_sym_func_range(s, pid, ip, &lo, &hi);
}

uint64_t dc_sym_func_part(struct dc_symbols *s, uint32_t pid, uint64_t ip, uint64_t *lo,
			  uint64_t *hi)
{
	struct dc_sb_proc *p = proc_of(s, pid);

	return dc_sym_func_part_gen(s, pid, p ? p->maps_gen : 0, ip, lo, hi);
}

uint64_t dc_sym_func_part_gen(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip,
			      uint64_t *lo, uint64_t *hi)
{
	struct cache_ent tmp, *e = cache_get_gen(s, pid, gen, ip, &tmp);

	if (!e)
		e = &tmp;
	*lo = e->lo;
	*hi = e->hi;
	return e->key ^ e->part;    /* (no branch: the decoder asks per block) */
}

uint64_t dc_sym_func_start(struct dc_symbols *s, uint32_t pid, uint64_t ip)
{
	struct cache_ent tmp, *e = cache_get(s, pid, ip, &tmp);
	const struct img *m;

	if (!e)
		e = &tmp;
	/* the unknown key's "range" is a gap, not a function */
	if (!(e->key >> 32) || !(e->key & 0xffffffffu))
		return 0;
	if (!e->part)
		return e->lo;
	/* a .cold part: its function's entry, as far from the part's start
	 * as in the binary */
	m = s->dsos[(e->key >> 32) - 1]->img;
	return e->lo - m->syms[((e->key & 0xffffffffu) ^ e->part) - 1].start +
	       m->syms[(e->key & 0xffffffffu) - 1].start;
}

void dc_sym_set_kernel(struct dc_symbols *s, const struct dc_sym_kernel *k)
{
	s->kern = *k;
}

size_t dc_sym_nr_missing(const struct dc_symbols *s) { return s->nmissing; }

const char *dc_sym_missing(const struct dc_symbols *s, size_t i)
{
	return i < s->nmissing ? s->missing[i] : NULL;
}

void dc_sym_counters(const struct dc_symbols *s, uint64_t *lookups, uint64_t *hits)
{
	*lookups = s->lookups;
	*hits = s->hits;
}

/* ---- inline frames (decoder/inline.c) ------------------------------------ */

/* The key of an inlined function's frames: one per name and binary. */
static uint64_t inline_key(struct dc_symbols *s, int dso, const char *raw)
{
	uint64_t h = dc_hash_chain_start(dc_strhash(raw, strlen(raw)) ^
					 ((uint64_t)dso * UINT64_C(0x9e3779b97f4a7c15))), v;
	size_t rcap, dcap;
	char *dm, *name;

	while (dc_hash_chain(&s->iname_idx, &h, &v))
		if (s->idso[v] == dso && !strcmp(s->iraw[v], raw))
			return DC_SYM_KEY_INLINE | v;
	rcap = dcap = s->cap_inames;   /* (inames owns the capacity: it grows last) */
	if (DC_VEC_PUSH_ROOM(s->iraw, s->ninames, rcap, 64) ||
	    DC_VEC_PUSH_ROOM(s->idso, s->ninames, dcap, 64) ||
	    DC_VEC_PUSH_ROOM(s->inames, s->ninames, s->cap_inames, 64))
		return 0;
	dm = s->opts.no_demangle ? NULL : dc_sym_demangle(raw);
	if (asprintf(&name, "%s (inlined)", dm ? dm : raw) < 0)
		name = NULL;
	free(dm);
	if (!name)
		return 0;
	if (dc_hash_put(&s->iname_idx, h, s->ninames)) {
		free(name);
		return 0;
	}
	s->inames[s->ninames] = name;
	s->iraw[s->ninames] = raw;
	s->idso[s->ninames] = dso;
	return DC_SYM_KEY_INLINE | s->ninames++;
}

/* The context id of an inlined instance of a dso (0 for none). */
static uint32_t inline_ctx(struct dc_symbols *s, int dso, struct dc_inl *in, uint32_t inst)
{
	uint64_t hk = ((uint64_t)(dso + 1) << 32) | inst, v, key;
	const char *name;
	uint32_t parent;

	if (!inst)
		return 0;
	if (dc_hash_get(&s->ictx_idx, hk, &v))
		return (uint32_t)v;
	parent = dc_inl_parent(in, inst, &name);
	/* (an instance's parent was read before it: a smaller number) */
	parent = parent < inst ? inline_ctx(s, dso, in, parent) : 0;
	key = name ? inline_key(s, dso, name) : 0;
	if (!key || s->nictx >= UINT32_MAX - 1)
		return 0;
	if (DC_VEC_PUSH_ROOM(s->ictx, s->nictx, s->cap_ictx, 64))
		return 0;
	if (dc_hash_put(&s->ictx_idx, hk, s->nictx + 1))
		return 0;
	s->ictx[s->nictx++] = (struct inl_ctx){ .parent = parent, .key = key };
	return (uint32_t)s->nictx;
}

static uint32_t inline_uncached(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip,
				uint64_t flo, uint64_t fhi, uint64_t *lo, uint64_t *hi)
{
	struct dc_sb_map *m = map_of(s, pid, gen, ip);
	uint64_t vaddr, vlo, vhi, bias;
	uint32_t inst;
	struct dso *d;

	*lo = flo;
	*hi = fhi;
	if (!m)
		return 0;
	if (m->dso < 0 || !(d = dso_get(s, m->dso)) ||
	    !dc_sym_dso_off_to_vaddr(s, m->dso, ip - m->start + m->pgoff, &vaddr)) {
		/* no binary (or not this part of it): no DWARF in the mapping */
		*lo = m->start;
		*hi = m->end;
		return 0;
	}
	if (!d->inl_tried) {
		Dwarf *dw = NULL;

		/* (the DWARF is the shared image's: it lives while d holds it) */
		if (d->img)
			dw = img_dwarf(d->img);
		d->inl_tried = true;
		d->inl = dw ? dc_inl_new(dw) : NULL;
	}
	if (!d->inl) {
		/* no DWARF: no inline code anywhere in the mapping */
		*lo = m->start;
		*hi = m->end;
		return 0;
	}
	bias = ip - vaddr;
	inst = dc_inl_lookup(d->inl, vaddr, &vlo, &vhi);
	/* (outside any compile unit: the function's range) */
	if (vlo < vhi && vlo + bias <= ip && vhi + bias > ip) {
		*lo = vlo + bias < m->start ? m->start : vlo + bias;
		*hi = vhi + bias > m->end ? m->end : vhi + bias;
	}
	return inline_ctx(s, m->dso, d->inl, inst);
}

uint32_t dc_sym_inline_at(struct dc_symbols *s, uint32_t pid, uint64_t ip, uint64_t *lo,
			  uint64_t *hi)
{
	struct dc_sb_proc *p = proc_of(s, pid);

	return dc_sym_inline_at_gen(s, pid, p ? p->maps_gen : 0, ip, lo, hi);
}

uint32_t dc_sym_inline_at_gen(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip,
			      uint64_t *lo, uint64_t *hi)
{
	struct cache_ent tmp, *e = cache_get_gen(s, pid, gen, ip, &tmp);
	uint64_t ilo, ihi;
	uint32_t c;

	if (e && e->inl != UINT32_MAX) {
		*lo = e->ilo;
		*hi = e->ihi;
		return e->inl;
	}
	if (!e)
		e = &tmp;
	c = inline_uncached(s, pid, gen, ip, e->lo, e->hi, &ilo, &ihi);
	e->inl = c;
	e->ilo = ilo;
	e->ihi = ihi;
	*lo = ilo;
	*hi = ihi;
	return c;
}

uint32_t dc_sym_inline_up(struct dc_symbols *s, uint32_t id, uint64_t *key)
{
	if (!id || id > s->nictx) {
		*key = 0;
		return 0;
	}
	*key = s->ictx[id - 1].key;
	return s->ictx[id - 1].parent;
}
