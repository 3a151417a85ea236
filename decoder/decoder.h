/* ptflame - decoder/: the room's one public header.
 * perf.data reader, sideband model, libipt decoding and symbols, all turning
 * a recording into branch events (branch.h). Names are prefixed dc_.
 * Sub-headers included here are part of this public interface.
 */
#ifndef PTFLAME_DECODER_H
#define PTFLAME_DECODER_H

#include "decoder/branch.h"
#include "decoder/perfdata.h"
#include "decoder/sideband.h"
#include "decoder/symbols.h"
#include "decoder/ptdecode.h"
#include "decoder/outfile.h"

const char *dc_room_name(void);

/* ---- the kernel's code and names (decoder/kernel.c) ----------------------
 * report --vmlinux FILE / --kcore DIR / --kallsyms FILE: kernel code of a
 * user+kernel trace decoded into frames under [kernel]. The recording's
 * kernel MMAP records say where the kernel ran (dc_kernel_map, before
 * dc_kernel_load); a vmlinux whose build-id is not the recording's, or a
 * kcore of another boot, is one warning and not used. */
struct dc_kernel;
struct dc_kernel_opts {
	const char *vmlinux;       /* ELF with the kernel's code and symtab  */
	const char *kcore_dir;     /* DIR/kcore + DIR/kallsyms (perf's
	                              kcore_dir; /proc on this machine)     */
	const char *kallsyms;      /* names only                             */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};
int dc_kernel_new(const struct dc_kernel_opts *o, struct dc_kernel **out);
void dc_kernel_free(struct dc_kernel *k);
/* A kernel MMAP of the recording: "[kernel.kallsyms]_text" (pgoff: the
 * run-time address of _text) or a module's "[name]". 0 or -ENOMEM. */
int dc_kernel_map(struct dc_kernel *k, uint64_t start, uint64_t len, uint64_t pgoff,
		  const char *name);
/* Read the files, check them against the recording (pf: its build-ids),
 * put the code into isc. 0, or a negative errno with one line in err (a
 * file that cannot be read or is no image/kallsyms). */
int dc_kernel_load(struct dc_kernel *k, const struct dc_perf_file *pf, struct dc_symbols *sym,
		   struct pt_image_section_cache *isc, char *err, size_t errlen);
/* Add the kernel's sections to a process's image. 0 or -ENOMEM. */
int dc_kernel_add_to_image(const struct dc_kernel *k, struct pt_image *image,
			   struct pt_image_section_cache *isc);
/* The i-th range of kernel code in the images: false past the last. */
bool dc_kernel_code_range(const struct dc_kernel *k, size_t i, uint64_t *start, uint64_t *end);
/* Is there code of ip (it can be decoded)? Has it a name? */
bool dc_kernel_has_code(const struct dc_kernel *k, uint64_t ip);
bool dc_kernel_named(const struct dc_kernel *k, uint64_t ip);
/* The symbolizer's kernel hooks (struct dc_sym_kernel), ctx the dc_kernel. */
uint64_t dc_kernel_range(void *ctx, uint64_t ip, uint64_t *lo, uint64_t *hi);
const char *dc_kernel_name(void *ctx, uint64_t key);

/* decoder/inline.c: inlined code of one binary, from its DWARF (libdw),
 * read per compile unit when first asked. Used by the symbolizer
 * (dc_sym_inline_at); declared here for it and for tests. */
struct Dwarf;
struct dc_inl;
struct dc_inl *dc_inl_new(struct Dwarf *dw);   /* dw may be NULL; NULL: ENOMEM */
void dc_inl_free(struct dc_inl *in);
/* The innermost inlined instance at ELF vaddr (0: none, else an instance
 * number) and [*lo, *hi) around vaddr with that same answer, within its
 * compile unit; both 0 when no compile unit holds vaddr. */
uint32_t dc_inl_lookup(struct dc_inl *in, uint64_t vaddr, uint64_t *lo, uint64_t *hi);
/* Instance inst's function name (*name: a linkage name, mangled, or the
 * plain name; valid while the DWARF is open) and the instance it was
 * inlined into (0: the out-of-line function itself). */
uint32_t dc_inl_parent(const struct dc_inl *in, uint32_t inst, const char **name);

/* Counting x86-64 instructions (capstone), with a small cache: how many
 * instructions code[] (the bytes at ip of the code numbered code_id, say an
 * image section) holds before target; -1 when target is no instruction
 * boundary within len bytes. dc_insn_count_known: the count if the cache
 * has it (so the code need not be read), else -2. */
struct dc_insn_counter;
struct dc_insn_counter *dc_insn_counter_new(void);
void dc_insn_counter_free(struct dc_insn_counter *c);
long dc_insn_count_known(const struct dc_insn_counter *c, int code_id, uint64_t ip,
			 uint64_t target);
long dc_insn_count(struct dc_insn_counter *c, int code_id, const uint8_t *code, size_t len,
		   uint64_t ip, uint64_t target);

#endif
