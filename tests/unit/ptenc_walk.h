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
int pw_perf_aux(struct pw_perf *p, const uint8_t *data, size_t n,
		uint64_t reference);
/* Finish the file (OK) or remove it (!OK); frees P. */
int pw_perf_close(struct pw_perf *p, bool ok);

#endif
