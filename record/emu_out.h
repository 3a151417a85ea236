/* ptflame - record/emu_out.h: what both emulators of `record --emulate`
 * (the ptrace stepper, record/emulate.c, and the qemu backend,
 * record/qemu.c) write the same way: the perf.data header of an emulated
 * intel_pt recording, AUX chunks of a virtual CPU's PT encoder (with the
 * --drop-aux loss simulation), sample ids, truth-log lines, and which
 * syscalls block. Internal header of the record room. */
#ifndef PTFLAME_RECORD_EMU_OUT_H
#define PTFLAME_RECORD_EMU_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "record/perfwriter.h"
#include "record/ptenc.h"

#define RC_EMU_PT_ID_BASE 0x1000u    /* sample id of the intel_pt event on cpu c */
#define RC_EMU_DUMMY_ID_BASE 0x2000u /* sample id of the sideband event on cpu c */

struct dc_sample_id rc_emu_sid(unsigned cpu, bool pt, pid_t pid, pid_t tid, uint64_t t);

/* attrs (intel_pt + dummy sideband, one id per CPU), AUXTRACE_INFO,
 * TIME_CONV, nr_cpus, cmdline (when CMDLINE). 0 or a negative errno code
 * (the writer's message says why). */
int rc_emu_header(struct rc_perf_writer *w, const struct rc_ptenc_config *ecfg, unsigned ncpu,
		  const char *const *cmdline, size_t argc);

/* Where AUX chunks go: shared by all CPUs of a recording. */
struct rc_emu_auxsink {
	struct rc_perf_writer *w;
	FILE *truth;           /* drop-aux lines; may be NULL */
	uint64_t chunk;        /* bytes per AUXTRACE record */
	uint64_t drop_aux;     /* drop every Nth chunk; 0: never */
	uint64_t chunks;       /* chunks handed out so far */
	uint64_t bytes;        /* PT bytes produced (incl. dropped) */
};

/* One CPU's AUX queue. */
struct rc_emu_auxq {
	struct rc_ptenc *enc;
	unsigned cpu;
	uint64_t aux_off;      /* bytes of this queue already handed out */
	bool skip_to_psb;      /* --drop-aux: losing bytes up to the next PSB */
};

/* Hand out Q's encoded bytes as an AUX chunk once there are sink->chunk of
 * them (all of them when FINAL); PID/TID/NOW stamp the AUX record. 0,
 * -ENOMEM, or a writer error (rc_perf_errmsg). */
int rc_emu_drain(struct rc_emu_auxsink *sink, struct rc_emu_auxq *q, bool final, pid_t pid,
		 pid_t tid, uint64_t now);

/* One truth line "<t> <cpu> <pid> <tid> <fmt...>" (nothing when F is NULL). */
void rc_emu_truth(FILE *f, uint64_t t, int cpu, pid_t pid, pid_t tid, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* May syscall NR (arguments A1, A2; CLONE3_FLAGS: clone3's flags) block
 * (the thread leaves its CPU while the kernel runs it)? */
bool rc_emu_may_block(long nr, uint64_t a1, uint64_t a2, uint64_t clone3_flags);
/* Is futex op OP (FUTEX_CMD_MASK applied by the callee) a wake? */
bool rc_emu_futex_wakes(int op);

#endif
