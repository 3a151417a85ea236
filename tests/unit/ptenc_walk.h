/* ptflame tests/bench helper: a control-flow walker over this process's own
 * code (instruction streams for the PT encoder without ptrace) and a libipt
 * instruction-decoder loop over this process's own memory. */
#ifndef PTFLAME_PTENC_WALK_H
#define PTFLAME_PTENC_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/ptenc.h"

struct pw_trace {
	struct rc_insn *v;
	size_t n, cap;
};

/* Called for every branch-class instruction (not RC_INSN_OTHER) with
 * *next preset to the default outcome: JCC not taken, direct JMP/CALL their
 * target, RET the walker's shadow return stack (0 when empty), indirect 0,
 * SYSCALL/INT/FAR the next instruction. The callback may change *next;
 * a *next of 0 ends the walk after this instruction (it is not recorded). */
typedef void (*pw_decide_fn)(void *ctx, const struct rc_insn *insn,
			     uint64_t *next);

/* Walk from START for at most MAX instructions, appending to OUT.
 * Returns 0 or a negative errno. */
int pw_walk(csh cs, uint64_t start, size_t max, pw_decide_fn decide,
	    void *ctx, struct pw_trace *out);
/* Code that is not this process's own (a kernel image linked at a kernel
 * address): pw_walk_code reads [vaddr, vaddr + size) from bytes, all
 * other addresses from this process. */
struct pw_code {
	uint64_t vaddr;
	const uint8_t *bytes;
	size_t size;
};
int pw_walk_code(csh cs, uint64_t start, size_t max, pw_decide_fn decide, void *ctx,
		 const struct pw_code *code, size_t ncode, struct pw_trace *out);
int pw_push(struct pw_trace *t, const struct rc_insn *insn);
void pw_free(struct pw_trace *t);

/* What libipt's instruction decoder saw. */
enum pw_ev { PW_EV_ENABLED = 1, PW_EV_DISABLED, PW_EV_OVERFLOW };

struct pw_decoded {
	uint64_t *ip;       /* instruction addresses, in order */
	uint64_t *tsc;      /* pt_insn_time after each instruction (0: none) */
	size_t n, cap;
	struct { int kind; size_t at; uint64_t ip; } ev[4096]; /* at: index into ip[] */
	size_t nev;
	int errors;         /* decode errors other than end of trace */
	int first_error;    /* the first libipt error code */
	uint64_t first_error_offset;
	uint32_t lost_mtc, lost_cyc;
};

/* Decode BUF with libipt's instruction decoder (memory read from this
 * process), configured for the encoder config CFG. If START is nonzero,
 * decoding starts at that buffer offset (must be a PSB) and stops at the
 * next PSB after it (one PSB segment). */
int pw_decode(const uint8_t *buf, size_t size,
	      const struct rc_ptenc_config *cfg, struct pw_decoded *out);
int pw_decode_segment(const uint8_t *buf, size_t size, uint64_t start,
		      uint64_t end, const struct rc_ptenc_config *cfg,
		      struct pw_decoded *out);
void pw_decoded_free(struct pw_decoded *d);

/* A per-thread perf.data for this process (COMM, MMAP2 of its executable,
 * ITRACE_START, AUXTRACE_INFO from rc_ptenc_perf_info, then the PT bytes as
 * AUXTRACE records), as `perf record -e intel_pt//u --per-thread` writes.
 * T0: time (ns) of the sideband, not later than the first TSC. */
struct pw_perf;
int pw_perf_open(struct pw_perf **out, const char *path,
		 const struct rc_ptenc_config *cfg, uint64_t t0);
/* The same for a user+kernel trace (the PT attr without exclude_kernel):
 * the kernel's text map as perf writes it (MMAP2 of pid -1,
 * "[kernel.kallsyms]_text", pgoff the run-time _text), a module's map
 * and, with build_id_size, its BUILD_ID feature entry "[kernel.kallsyms]". */
struct pw_perf_kernel {
	uint64_t start, len, pgoff;
	const uint8_t *build_id;
	size_t build_id_size;
	const char *mod_name;      /* a module's map ("[name]"), or NULL */
	uint64_t mod_start, mod_len;
};
int pw_perf_open_kernel(struct pw_perf **out, const char *path,
			const struct rc_ptenc_config *cfg, uint64_t t0,
			const struct pw_perf_kernel *kernel);
int pw_perf_aux(struct pw_perf *p, const uint8_t *data, size_t n,
		uint64_t reference);
/* The thread exits at time (an EXIT record): its trace ends there. */
int pw_perf_exit(struct pw_perf *p, uint64_t time);
/* Finish the file (OK) or remove it (!OK); frees P. */
int pw_perf_close(struct pw_perf *p, bool ok);

#endif
