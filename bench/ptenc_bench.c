/* ptflame bench: throughput of the emulator's PT encoder (record/ptenc.c).
 *
 * Gets the real instruction sequence of one iteration of a steady loop (the
 * assembly below, walked with capstone by tests/unit/ptenc_walk.c, the same
 * walker the unit tests use), then encodes it over and over with advancing
 * virtual time until SIZE bytes of PT data exist. Writes the raw PT stream
 * (-o FILE.bin) and, with -p FILE, a per-thread perf.data that `perf script
 * --itrace=cr` can decode (the loop's code is this program's own text,
 * announced with MMAP2). Then decodes the raw stream with libipt's block
 * decoder and checks it gives back exactly the instructions encoded, with no
 * error. Prints sizes, times and ratios. Run by hand: bench/ptenc_bench.sh.
 * -i N interrupts the loop before every Nth instruction (tests use it: the
 * decoders must stop at the interrupt's FUP, wherever in a block it is).
 * -r encodes another loop: a call to the next instruction and a recursion
 * 100 deep (returns beyond the 64 kept for compression are TIPs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "record/ptenc.h"
#include "tests/unit/ptenc_walk.h"

/* The steady loop: an indirect call, a direct call with a data-dependent
 * branch inside, a compressed return each, the loop branch. */
__asm__(
	".text\n"
	".p2align 4\n"
	".globl bl_loop\n"
	"bl_loop:\n"
	"	mov %rdi, %rax\n"
	"	call *%rax\n"
	"	call bl_f2\n"
	"	add $1, %rdx\n"
	"	dec %ecx\n"
	".globl bl_loop_jnz\n"
	"bl_loop_jnz:\n"
	"	jnz bl_loop\n"
	"	ret\n"
	".globl bl_f1\n"
	"bl_f1:\n"
	"	lea 1(%rsi), %rsi\n"
	"	ret\n"
	".globl bl_f2\n"
	"bl_f2:\n"
	"	test $1, %edx\n"
	".globl bl_f2_jz\n"
	"bl_f2_jz:\n"
	"	jz 1f\n"
	"	add $3, %rsi\n"
	"1:	xor %r8, %rsi\n"
	"	ret\n"
	/* -r: a function with a call to the next instruction (PIC get-IP:
	 * no return, so decoders must not push it, or its own compressed
	 * return goes there), then a recursion deeper than the 64 returns
	 * hardware and decoders keep (the outermost fall off: their returns
	 * are TIPs) */
	".globl bl_rloop\n"
	"bl_rloop:\n"
	"	call bl_pic\n"
	"	call bl_deep\n"
	"	dec %ecx\n"
	".globl bl_rloop_jnz\n"
	"bl_rloop_jnz:\n"
	"	jnz bl_rloop\n"
	"	ret\n"
	"bl_pic:\n"
	"	call 2f\n"
	"2:	pop %rax\n"
	"	ret\n"
	".globl bl_deep\n"
	"bl_deep:\n"
	"	dec %edi\n"
	".globl bl_deep_jz\n"
	"bl_deep_jz:\n"
	"	jz 3f\n"
	"	call bl_deep\n"
	"3:	ret\n");

static int bench_read_self(uint8_t *buffer, size_t size, const struct pt_asid *asid,
			   uint64_t ip, void *context);

extern const char bl_loop[], bl_loop_jnz[], bl_f1[], bl_f2[], bl_f2_jz[];
extern const char bl_rloop[], bl_rloop_jnz[], bl_deep_jz[];
#define A(sym) ((uint64_t)(uintptr_t)(sym))

struct loop_ctx {
	int jz_count;
	int deep;                  /* bl_deep's levels so far              */
	bool stop;
};

enum { DEEP = 100 };               /* -r: levels of bl_deep per iteration  */

static void decide(void *ctx, const struct rc_insn *insn, uint64_t *next)
{
	struct loop_ctx *c = ctx;

	if (insn->cls == RC_INSN_CALL_IND)
		*next = A(bl_f1);
	else if (insn->ip == A(bl_f2_jz) && (c->jz_count++ & 1))
		*next = insn->target;
	else if (insn->ip == A(bl_loop_jnz) || insn->ip == A(bl_rloop_jnz))
		*next = insn->target;
	else if (insn->ip == A(bl_deep_jz) && ++c->deep % DEEP == 0)
		*next = insn->target;
	/* the walk is cut after one iteration by its length */
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One iteration (two, so the alternating branch is covered both ways). */
static int get_iteration(struct pw_trace *t, bool deep)
{
	struct loop_ctx c = { 0 };
	struct pw_trace all = { 0 };
	uint64_t loop = deep ? A(bl_rloop) : A(bl_loop), jnz = deep ? A(bl_rloop_jnz) : A(bl_loop_jnz);
	csh cs;
	int err;

	err = rc_insn_cs_open(&cs);
	if (err)
		return err;
	err = pw_walk(cs, loop, deep ? 4 * DEEP * 4 : 200, decide, &c, &all);
	cs_close(&cs);
	if (err)
		return err;
	/* keep whole iterations: up to the 2nd taken loop branch */
	int iters = 0;

	for (size_t i = 0; i < all.n && iters < 2; i++) {
		pw_push(t, &all.v[i]);
		if (all.v[i].ip == jnz)
			iters++;
	}
	pw_free(&all);
	return iters == 2 ? 0 : -EINVAL;
}

/* --- encode ------------------------------------------------------------- */

struct sink {
	FILE *raw;
	struct pw_perf *perf;
	uint64_t bytes;
};

static int drain(struct rc_ptenc *enc, struct sink *s, size_t min)
{
	size_t n;
	const uint8_t *d = rc_ptenc_data(enc, &n);

	if (n < min || !n)
		return 0;
	if (s->raw && fwrite(d, 1, n, s->raw) != n)
		return -EIO;
	if (s->perf) {
		int ret = pw_perf_aux(s->perf, d, n, rc_ptenc_last_tsc(enc));

		if (ret)
			return ret;
	}
	s->bytes += n;
	rc_ptenc_consume(enc, n);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t target_mb = 1024, ns_per_insn = 1, irq_every = 0, since_irq = 0, calls = 0;
	bool deep = false;
	const char *raw_path = "/tmp/ptenc_bench.bin", *perf_path = NULL;
	struct rc_ptenc_config cfg = { .mtc = true, .mtc_freq = 3,
				       .time_zero = 1000000000ull };
	struct pw_trace it = { 0 };
	int opt;

	while ((opt = getopt(argc, argv, "s:o:p:n:ci:r")) != -1) {
		switch (opt) {
		case 's': target_mb = strtoull(optarg, NULL, 0); break;
		case 'o': raw_path = optarg; break;
		case 'p': perf_path = optarg; break;
		case 'n': ns_per_insn = strtoull(optarg, NULL, 0); break;
		case 'c': cfg.cyc = true; break;
		case 'i': irq_every = strtoull(optarg, NULL, 0); break;
		case 'r': deep = true; break;
		default:
			fprintf(stderr, "usage: ptenc_bench [-s MB] [-o RAW] [-p PERF.DATA] [-n NS_PER_INSN] [-c] "
				"[-i N] [-r]\n");
			return 2;
		}
	}
	if (get_iteration(&it, deep)) {
		fprintf(stderr, "ptenc_bench: cannot walk the loop\n");
		return 1;
	}

	struct sink s = { 0 };
	uint64_t t0 = cfg.time_zero + 1000000, ns = t0, insns = 0;
	uint64_t target = target_mb << 20;
	struct rc_ptenc *enc = rc_ptenc_new(&cfg, 0);

	s.raw = fopen(raw_path, "w");
	if (!s.raw || !enc) {
		fprintf(stderr, "ptenc_bench: cannot open %s\n", raw_path);
		return 1;
	}
	if (perf_path && pw_perf_open(&s.perf, perf_path, &cfg, t0 - 1000))
		return 1;

	double a = now();
	int err = rc_ptenc_enable(enc, ns, it.v[0].ip);

	while (!err && s.bytes < target) {
		for (size_t i = 0; i < it.n && !err; i++) {
			/* -i N: an interrupt before every Nth instruction (FUP
			 * at it + TIP.PGD, TIP.PGE there 100 ns later): with N
			 * prime to the loop's length, at every place in it */
			if (irq_every && ++since_irq == irq_every) {
				since_irq = 0;
				err = rc_ptenc_disable(enc, ns, it.v[i].ip, RC_PTENC_OFF_ASYNC);
				err = err ?: rc_ptenc_enable(enc, ns += 100, it.v[i].ip);
			}
			err = err ?: rc_ptenc_insn(enc, &it.v[i], ns += ns_per_insn);
		}
		insns += it.n;
		if (!err)
			err = drain(enc, &s, 1 << 20);
	}
	/* end: the thread leaves at the loop head (async, as an exit) */
	err = err ?: rc_ptenc_disable(enc, ns + 1, it.v[0].ip, RC_PTENC_OFF_ASYNC);
	err = err ?: rc_ptenc_flush(enc);
	err = err ?: drain(enc, &s, 0);
	fclose(s.raw);
	if (s.perf && pw_perf_close(s.perf, err == 0))
		return 1;
	double enc_s = now() - a;

	if (err) {
		fprintf(stderr, "ptenc_bench: encoding failed: %s\n", strerror(-err));
		return 1;
	}
	/* it holds two iterations: their calls, each returning (but a call
	 * to the next instruction) */
	for (size_t i = 0; i < it.n; i++)
		calls += (it.v[i].cls == RC_INSN_CALL && it.v[i].target != it.v[i].ip + it.v[i].len) ||
			 it.v[i].cls == RC_INSN_CALL_IND;
	printf("expected_calls=%llu\n", (unsigned long long)(insns / it.n * calls));
	printf("loop: %zu insns per 2 iterations; encoded %llu insns -> %llu bytes (%.3f B/insn) "
	       "in %.2f s: %.1f MB/s, %.1f Minsn/s; %llu packets\n",
	       it.n, (unsigned long long)insns, (unsigned long long)s.bytes,
	       (double)s.bytes / (double)insns, enc_s, s.bytes / enc_s / 1e6,
	       insns / enc_s / 1e6, (unsigned long long)rc_ptenc_packets(enc));
	rc_ptenc_free(enc);

	/* --- decode the raw stream with libipt's block decoder ------------- */
	int fd = open(raw_path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st)) {
		perror(raw_path);
		return 1;
	}
	uint8_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

	close(fd);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);

	struct pt_config pc;
	struct pt_block_decoder *dec;
	uint64_t dinsns = 0, blocks = 0, errors = 0;

	pt_config_init(&pc);
	pc.begin = map;
	pc.end = map + st.st_size;
	rc_ptenc_ipt_config(&cfg, &pc);
	dec = pt_blk_alloc_decoder(&pc);
	if (!dec)
		return 1;
	pt_image_set_callback(pt_blk_get_image(dec), bench_read_self, NULL);
	a = now();
	int status = pt_blk_sync_forward(dec);

	while (status != -pte_eos) {
		if (status < 0) {
			if (!errors++)
				fprintf(stderr, "libipt: %s\n", pt_errstr(pt_errcode(status)));
			status = pt_blk_sync_forward(dec);
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;

			status = pt_blk_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
		}
		if (status < 0)
			continue;
		if (status & pts_eos)
			break;
		struct pt_block b;

		status = pt_blk_next(dec, &b, sizeof(b));
		if (status < 0 && status != -pte_eos)
			continue;
		dinsns += b.ninsn;
		blocks++;
	}
	double dec_s = now() - a;

	pt_blk_free_decoder(dec);
	munmap(map, (size_t)st.st_size);
	printf("libipt block decoder: %llu insns in %llu blocks, %llu errors, in %.2f s "
	       "(%.1f MB/s, %.1f Minsn/s); encode/decode time ratio %.2f\n",
	       (unsigned long long)dinsns, (unsigned long long)blocks,
	       (unsigned long long)errors, dec_s, st.st_size / dec_s / 1e6,
	       dinsns / dec_s / 1e6, enc_s / dec_s);
	if (errors || dinsns != insns) {
		fprintf(stderr, "ptenc_bench: FAIL: decoded %llu insns, encoded %llu\n",
			(unsigned long long)dinsns, (unsigned long long)insns);
		return 1;
	}
	pw_free(&it);
	printf("OK\n");
	return 0;
}

static int bench_read_self(uint8_t *buffer, size_t size, const struct pt_asid *asid,
		    uint64_t ip, void *context)
{
	(void)asid;
	(void)context;
	memcpy(buffer, (const void *)(uintptr_t)ip, size);
	return (int)size;
}
