/* ptflame - decoder/symbols.h: the ELF symbolizer (libelf + libiberty).
 *
 * Binaries ("dsos") are named by the path a mapping recorded (and its
 * build-id when known). The code file is searched at the path (when its
 * build-id matches), in perf's build-id cache (BUILDID_DIR/.build-id/xx/
 * rest/elf), then under --symfs. Symbols come from .symtab (the binary's or
 * a separate debuginfo file's, found by build-id in DEBUG_DIR/.build-id/
 * xx/rest.debug and BUILDID_DIR/.build-id/xx/rest/debug, or by
 * .gnu_debuglink), .dynsym, and synthesized `name@plt` entries for PLT
 * stubs (.plt, .plt.sec, .plt.got). Names are demangled (C++, Rust).
 *
 * Function keys: equal for every address of one function, the same in
 * every process mapping the same binary. An address outside any symbol is
 * the function of the .eh_frame FDE holding it when the FDE lies in that
 * gap of the symbols (and not in a PLT section): a key of its own, named
 * "file+0xSTART" (decoder/fde.c). A function's .cold part (gcc's "F.cold",
 * "F.cold.N", C++ "F(int) [clone .cold]") is code of F: its addresses have
 * F's key and name when the binary has one symbol named F (link_cold;
 * DESIGN.md section 4, "Cold parts"). Each dso has an "[unknown] (path)" key
 * for the rest (and for a binary that cannot be found). Per distinct
 * (process, address) the answer is cached.
 * Part of decoder/decoder.h's public interface.
 */
#ifndef PTFLAME_SYMBOLS_H
#define PTFLAME_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dc_sideband;
struct dc_symbols;

struct dc_symbols_opts {
	const char *symfs;        /* --symfs DIR, or NULL                     */
	const char *debug_dir;    /* NULL: /usr/lib/debug                     */
	const char *buildid_dir;  /* NULL: $HOME/.debug                       */
	bool no_demangle;         /* keep mangled names                       */
	/* Called once per binary that cannot be found (NULL: silent; the
	 * names stay available through dc_sym_missing()). */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

/* The key of an address no mapping covers. */
#define DC_SYM_KEY_UNKNOWN UINT64_C(1)

/* sb: the process mappings to resolve (pid, ip) with; may be NULL when only
 * the dso-level functions are used. opts may be NULL. */
int dc_symbols_new(const struct dc_symbols_opts *opts, struct dc_sideband *sb,
		   struct dc_symbols **out);
void dc_symbols_free(struct dc_symbols *s);

/* The dso id (>= 0) for a binary path (+ build-id, may be NULL), created on
 * first use; or -ENOMEM. Loading happens lazily. */
int dc_sym_dso(struct dc_symbols *s, const char *path, const uint8_t *build_id,
	       size_t build_id_size);
/* The file holding the dso's code (to decode it), NULL when missing (the
 * warning is given then, once). */
const char *dc_sym_dso_file(struct dc_symbols *s, int dso);

/* Binaries whose DWARF to open ahead, each named once: 1 and the next
 * one's path and build-id (NULL when none; valid until the next call), 0
 * when no more. */
typedef int (*dc_sym_ahead_fn)(void *ctx, const char **path, const uint8_t **build_id,
			       size_t *build_id_size);
/* Open the DWARF (for inline frames, srclines) of each binary next names,
 * once, in a thread of the symbolizer's that runs next until it says no
 * more or the symbolizer is freed (next and what it reads must stay
 * valid until then, and it must not use the symbolizer): the decoding
 * thread then finds it open instead of waiting while its debug sections
 * inflate. Answers and warnings are the same as without. Once per
 * symbolizer; with no thread to be had, nothing is done ahead. 0, -EBUSY
 * or -ENOMEM. dc_sym_dwarf_preloaded: the binaries named (the [vdso] is
 * passed over), the files that thread opened (the others were opened
 * first, or have no DWARF) and whether next said no more. */
int dc_sym_preload_from(struct dc_symbols *s, dc_sym_ahead_fn next, void *ctx);
void dc_sym_dwarf_preloaded(const struct dc_symbols *s, uint64_t *asked, uint64_t *opened,
			    bool *done);
/* Files whose DWARF this process opened (each once, whoever asks). */
uint64_t dc_sym_dwarf_opens(void);

/* Symbol of an ELF virtual address (the binary's own link-time addresses)
 * in a dso: its key, and [*lo, *hi) the function's range in the same
 * address space (the gap between symbols for the unknown key; a .cold
 * part's own range, with its function's key). */
uint64_t dc_sym_dso_lookup(struct dc_symbols *s, int dso, uint64_t vaddr,
			   uint64_t *lo, uint64_t *hi);
/* ELF virtual address of a file offset of the dso (its PT_LOAD segments);
 * returns false when no segment holds it. */
bool dc_sym_dso_off_to_vaddr(struct dc_symbols *s, int dso, uint64_t off,
			     uint64_t *vaddr);

/* Process-level lookups through the sideband's current mappings. */
uint64_t dc_sym_func_key(struct dc_symbols *s, uint32_t pid, uint64_t ip);
/* Entry address of the function containing ip, 0 when unknown (in a .cold
 * part: its function's entry). */
uint64_t dc_sym_func_start(struct dc_symbols *s, uint32_t pid, uint64_t ip);
/* Key plus the function's [*lo, *hi) in the process (for "still inside the
 * same function" checks without a lookup). */
uint64_t dc_sym_func_range(struct dc_symbols *s, uint32_t pid, uint64_t ip,
			   uint64_t *lo, uint64_t *hi);
/* dc_sym_func_range, with a .cold part a function of its own: its own key
 * (a key func_key never gives; named "F.cold"). For the PT decoder, whose
 * jump events go between symbols, as the emulator's truth log has them. */
uint64_t dc_sym_func_part(struct dc_symbols *s, uint32_t pid, uint64_t ip, uint64_t *lo,
			  uint64_t *hi);
/* Lookups as of the process's mappings generation gen (dc_sb_proc.maps_gen
 * as it was when an image was built with them; dc_sb_hold_gen keeps it),
 * instead of its mappings now: the same answer whenever asked, with
 * whatever mapping records were applied since (the PT decoder's, which
 * decodes with that image). */
uint64_t dc_sym_func_part_gen(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip,
			      uint64_t *lo, uint64_t *hi);
/* When name[0, len) names a function's .cold part ("F.cold", "F.cold.N",
 * "F(int) [clone .cold]", "F(int) [clone .cold.N]"), the length of F's
 * name (its prefix); else 0. */
size_t dc_sym_cold_base(const char *name, size_t len);
/* Display name of a key; NULL for an unknown key. Valid while s lives. */
const char *dc_sym_name(struct dc_symbols *s, uint64_t key);
/* "file.c:LINE" of the function key's first instruction from the DWARF line
 * table of its debuginfo (else its code file), libdw; NULL when unknown.
 * Valid while s lives. */
const char *dc_sym_srcline(struct dc_symbols *s, uint64_t key);

/* Kernel addresses no process mapping covers (decoder/kernel.c): range
 * gives a key (0: not known, then DC_SYM_KEY_UNKNOWN) and the function's
 * [*lo, *hi); name names the keys it makes, which have DC_SYM_KEY_KERNEL
 * set (keys of the symbolizer's dsos never do). */
#define DC_SYM_KEY_KERNEL (UINT64_C(1) << 63)
struct dc_sym_kernel {
	uint64_t (*range)(void *ctx, uint64_t ip, uint64_t *lo, uint64_t *hi);
	const char *(*name)(void *ctx, uint64_t key);
	void *ctx;
};
void dc_sym_set_kernel(struct dc_symbols *s, const struct dc_sym_kernel *k);
/* Inline frames (decoder/inline.c): the inline context of ip, 0 when ip
 * is no inlined code (or its binary has no DWARF), else an id naming the
 * innermost inlined instance of a function there (two places the same
 * function was inlined at are two ids); [*lo, *hi) is the range around ip
 * (inside its function) with the same context. Cached per (process, ip)
 * with the function key. */
uint32_t dc_sym_inline_at(struct dc_symbols *s, uint32_t pid, uint64_t ip, uint64_t *lo,
			  uint64_t *hi);
uint32_t dc_sym_inline_at_gen(struct dc_symbols *s, uint32_t pid, uint32_t gen, uint64_t ip,
			      uint64_t *lo, uint64_t *hi);
/* The function key of context id's inlined function (*key; its name is
 * "name (inlined)"), and the context it was inlined into (0: the
 * out-of-line function). */
uint32_t dc_sym_inline_up(struct dc_symbols *s, uint32_t id, uint64_t *key);
/* Keys of inlined functions have this bit set. */
#define DC_SYM_KEY_INLINE (UINT64_C(1) << 62)

/* Binaries that could not be found, in the order first met. */
size_t dc_sym_nr_missing(const struct dc_symbols *s);
const char *dc_sym_missing(const struct dc_symbols *s, size_t i);

/* Demangle a C++ / Rust symbol; returns a malloc'ed string or NULL when
 * name is not mangled. */
char *dc_sym_demangle(const char *name);

/* The separate debug file of the ELF file `file` (open as code), as the
 * symbolizer finds it with the default directories: by build-id under
 * /usr/lib/debug/.build-id/ and $HOME/.debug/.build-id/, then by its
 * .gnu_debuglink next to it, in its .debug/ and under /usr/lib/debug; the
 * file must carry code's build-id when code has one. malloc'ed path, or
 * NULL. (record --emulate's symbol lookup, record/emulate_sym.c, uses it:
 * --start and the check for main find what report finds.) */
typedef struct Elf Elf;
char *dc_sym_debuginfo_path(const char *file, Elf *code);

/* The functions of an ELF file's .eh_frame (decoder/fde.c): each FDE's
 * [start, end) as ELF vaddrs, sorted by start (*out: free()). 0, or
 * -ENOMEM. A file without .eh_frame gives none. */
struct Elf;
struct dc_fde { uint64_t start, end; };
int dc_fde_ranges(struct Elf *elf, struct dc_fde **out, size_t *nout);
/* The FDE holding vaddr (the last starting at or before it), or NULL. */
const struct dc_fde *dc_fde_find(const struct dc_fde *v, size_t n, uint64_t vaddr);

/* Whether build-ids a and b are the same binary's: equal, or the shorter
 * a prefix of the longer whose rest is zero bytes (perf before 5.11 wrote
 * every id as 20 bytes, an 8- or 16-byte one zero-padded). Empty ids
 * equal nothing. */
bool dc_build_id_eq(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* This process's own vdso, an ELF image of *size bytes: the same
 * kernel's vdso is what a process recorded on this machine had mapped.
 * NULL when there is none. */
const void *dc_sym_own_vdso(size_t *size);
/* Its build-id (0 bytes: none). */
size_t dc_sym_own_vdso_build_id(uint8_t out[20]);
/* The vdso to decode a recording's [vdso] with: ours, unless the recording
 * gave it a build-id (n > 0) that is not ours (another kernel's). */
const void *dc_sym_vdso_for(const uint8_t *build_id, size_t n, size_t *size);
/* The same, else perf's build-id cache's copy of that vdso (kept until
 * the symbolizer is freed); NULL when there is neither. */
const void *dc_sym_vdso(struct dc_symbols *s, const uint8_t *build_id, size_t n,
			size_t *size);

/* Counters: symbol lookups done (cache misses) and cache hits. */
void dc_sym_counters(const struct dc_symbols *s, uint64_t *lookups, uint64_t *hits);

/* A binary's symbols and DWARF, once loaded from its files, are kept for
 * the process (the 16 most recently used that no symbolizer holds) and
 * shared by later symbolizers that find the same files unchanged (path,
 * device, inode, size, mtime, ctime; the debuginfo file too). Counters,
 * process-wide: binaries read, and loads served from the cache. */
void dc_sym_img_counters(uint64_t *loads, uint64_t *reuses);

#endif
