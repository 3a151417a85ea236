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
 * instructions code[] (the bytes at ip) holds before target; -1 when target
 * is no instruction boundary within len bytes. */
struct dc_insn_counter;
struct dc_insn_counter *dc_insn_counter_new(void);
void dc_insn_counter_free(struct dc_insn_counter *c);
long dc_insn_count(struct dc_insn_counter *c, const uint8_t *code, size_t len, uint64_t ip,
		   uint64_t target);

#endif
