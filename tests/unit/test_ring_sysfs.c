/* Unit tests for the PT recorder's sysfs parsing (record/pt_sysfs.c) and
 * --filter symbol resolution (record/pt_filter.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/perf_event.h>

#include "record/record.h"
#include "record/pt_internal.h"

static void test_cpulist(void **state)
{
	int cpus[16];

	(void)state;
	assert_int_equal(rc_pt_parse_cpulist("0-3,5,7-8\n", cpus, 16), 7);
	assert_int_equal(cpus[0], 0);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 5);
	assert_int_equal(cpus[5], 7);
	assert_int_equal(cpus[6], 8);
	assert_int_equal(rc_pt_parse_cpulist("0\n", cpus, 16), 1);
	assert_int_equal(rc_pt_parse_cpulist("2-2", cpus, 16), 1);
	assert_int_equal(cpus[0], 2);
	assert_int_equal(rc_pt_parse_cpulist("0-20", cpus, 16), -E2BIG);
	assert_int_equal(rc_pt_parse_cpulist("", cpus, 16), -EINVAL);
	assert_int_equal(rc_pt_parse_cpulist("3-1", cpus, 16), -EINVAL);
	assert_int_equal(rc_pt_parse_cpulist("0,x", cpus, 16), -EINVAL);
	assert_int_equal(rc_pt_parse_cpulist("0-", cpus, 16), -EINVAL);
}

static void test_format(void **state)
{
	uint64_t m;

	(void)state;
	assert_int_equal(rc_pt_parse_format("config:0\n", &m), 0);
	assert_int_equal(m, 1);
	assert_int_equal(rc_pt_parse_format("config:14-17\n", &m), 0);
	assert_int_equal(m, 0xfULL << 14);
	assert_int_equal(rc_pt_parse_format("config:1,3", &m), 0);
	assert_int_equal(m, 0xa);
	assert_int_equal(rc_pt_parse_format("config:63", &m), 0);
	assert_true(m == 1ULL << 63);
	assert_int_equal(rc_pt_parse_format("config1:0", &m), -EINVAL);
	assert_int_equal(rc_pt_parse_format("config:64", &m), -EINVAL);
	assert_int_equal(rc_pt_parse_format("config:5-2", &m), -EINVAL);
	assert_int_equal(rc_pt_parse_format("config:", &m), -EINVAL);
}

static void test_set_field(void **state)
{
	uint64_t c = 0x1;

	(void)state;
	/* mtc_period=3 into config:14-17 keeps the other bits */
	assert_int_equal(rc_pt_set_field(&c, 0xfULL << 14, 3), 0);
	assert_int_equal(c, 0x1 | (3ULL << 14));
	/* overwrite with a smaller value clears the old bits */
	assert_int_equal(rc_pt_set_field(&c, 0xfULL << 14, 1), 0);
	assert_int_equal(c, 0x1 | (1ULL << 14));
	/* a value too wide for the field */
	assert_int_equal(rc_pt_set_field(&c, 0xfULL << 14, 16), -ERANGE);
	/* non-contiguous mask: value bits spread over the mask's bits */
	c = 0;
	assert_int_equal(rc_pt_set_field(&c, 0xa, 3), 0);
	assert_int_equal(c, 0xa);
}

static void test_pick_period(void **state)
{
	(void)state;
	/* caps/mtc_periods 0x249 = {0,3,6,9}: perf's default target 3 */
	assert_int_equal(rc_pt_pick_period(0x249, 3), 3);
	assert_int_equal(rc_pt_pick_period(0x241, 3), 0);   /* {0,6,9} */
	assert_int_equal(rc_pt_pick_period(0x240, 3), 6);   /* {6,9}: smallest */
	assert_int_equal(rc_pt_pick_period(0x3f, 3), 3);
	assert_int_equal(rc_pt_pick_period(0, 3), -1);
}

static void test_valid_str(void **state)
{
	char buf[64];

	(void)state;
	rc_pt_valid_str(0x249, buf, sizeof(buf));
	assert_string_equal(buf, "0,3,6,9");
	rc_pt_valid_str(0x3f, buf, sizeof(buf));
	assert_string_equal(buf, "0-5");
	rc_pt_valid_str(0x1b, buf, sizeof(buf));
	assert_string_equal(buf, "0,1,3,4");
	rc_pt_valid_str(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* A function of this very test program. */
__attribute__((noinline)) int ptflame_filter_target(int x);
__attribute__((noinline)) int ptflame_filter_target(int x)
{
	return x * 3 + 1;
}

static void test_resolve_filter(void **state)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t off = 0, size = 0;
	unsigned char code[16], mem[16];
	FILE *f;

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(rc_pt_resolve_filter(exe, "ptflame_filter_target", &off, &size), 0);
	assert_true(size > 0 && size < 4096);
	/* The file bytes at the offset are the function's code in memory. */
	f = fopen(exe, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fread(code, 1, sizeof(code), f), sizeof(code));
	fclose(f);
	memcpy(mem, (const void *)(uintptr_t)&ptflame_filter_target, sizeof(mem));
	assert_memory_equal(code, mem, sizeof(code));
	assert_int_equal(ptflame_filter_target(2), 7);

	assert_int_equal(rc_pt_resolve_filter(exe, "no_such_function_here", &off, &size), -ENOENT);
	assert_int_equal(rc_pt_resolve_filter("/nonexistent/file", "main", &off, &size), -ENOENT);
	assert_int_equal(rc_pt_resolve_filter("/proc/self/status", "main", &off, &size), -ENOEXEC);
}

/* The attrs (record/pt_attr.c): what perf record sets for intel_pt. */
static void test_attrs(void **state)
{
	struct rc_pt_attr_cfg c = { .pmu_type = 8, .config = 0x2001, .aux_size = 4u << 20,
				    .workload = true, .cpu_wide = true, .text_poke = true,
				    .wake_tp_id = 317 };
	struct perf_event_attr a[RC_PT_EV_KINDS];

	(void)state;
	rc_pt_make_attrs(&c, a);
	assert_int_equal(a[RC_PT_EV_PT].type, 8);
	assert_int_equal(a[RC_PT_EV_PT].config, 0x2001);
	/* full trace mode: a quarter of the AUX buffer, as perf sets it */
	assert_int_equal(a[RC_PT_EV_PT].aux_watermark, 1u << 20);
	assert_int_equal(a[RC_PT_EV_PT].exclude_kernel, 1);
	assert_int_equal(a[RC_PT_EV_PT].enable_on_exec, 1);
	assert_int_equal(a[RC_PT_EV_PT].inherit, 1);
	assert_int_equal(a[RC_PT_EV_TRACK].mmap2, 1);
	assert_int_equal(a[RC_PT_EV_TRACK].context_switch, 0);
	assert_int_equal(a[RC_PT_EV_SWITCH].context_switch, 1);
	/* user space only: no kernel text changes to follow */
	assert_int_equal(a[RC_PT_EV_SWITCH].text_poke, 0);
	assert_int_equal(a[RC_PT_EV_SWITCH].ksymbol, 0);
	/* wakes: the sched_waking tracepoint of tracefs's id, every task's
	 * (no inherit: CPU-wide), the kernel not excluded (a tracepoint fires
	 * there: exclude_kernel would drop every sample), enabled by us */
	assert_int_equal(a[RC_PT_EV_WAKE].type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(a[RC_PT_EV_WAKE].config, 317);
	assert_int_equal(a[RC_PT_EV_WAKE].sample_period, 1);
	assert_int_equal(a[RC_PT_EV_WAKE].sample_type,
			 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW);
	assert_int_equal(a[RC_PT_EV_WAKE].exclude_kernel, 0);
	assert_int_equal(a[RC_PT_EV_WAKE].exclude_user, 0);
	assert_int_equal(a[RC_PT_EV_WAKE].inherit, 0);
	assert_int_equal(a[RC_PT_EV_WAKE].disabled, 1);
	assert_int_equal(a[RC_PT_EV_WAKE].enable_on_exec, 0);
	for (int k = 0; k < RC_PT_EV_KINDS; k++) {
		assert_int_equal(a[k].sample_id_all, 1);
		assert_true(a[k].sample_type & PERF_SAMPLE_IDENTIFIER);
		assert_int_equal(a[k].size, PF_ATTR_SIZE_MAX_PERF61);
	}
	c.aux_size = 8192;
	rc_pt_make_attrs(&c, a);
	assert_int_equal(a[RC_PT_EV_PT].aux_watermark, 2048);
	/* overwrite mode: nobody to wake */
	c.snapshot = true;
	rc_pt_make_attrs(&c, a);
	assert_int_equal(a[RC_PT_EV_PT].aux_watermark, 0);
	/* --kernel: text_poke and ksymbol on the CPU-wide dummy, when known */
	c.snapshot = false;
	c.kernel = true;
	rc_pt_make_attrs(&c, a);
	assert_int_equal(a[RC_PT_EV_PT].exclude_kernel, 0);
	assert_int_equal(a[RC_PT_EV_SWITCH].text_poke, 1);
	assert_int_equal(a[RC_PT_EV_SWITCH].ksymbol, 1);
	assert_int_equal(a[RC_PT_EV_TRACK].text_poke, 0);
	c.text_poke = false;
	rc_pt_make_attrs(&c, a);
	assert_int_equal(a[RC_PT_EV_SWITCH].text_poke, 0);
	/* -t: per-thread, no inheritance, per-task switches */
	c.per_thread = true;
	c.cpu_wide = false;
	rc_pt_make_attrs(&c, a);
	assert_int_equal(a[RC_PT_EV_PT].inherit, 0);
	assert_int_equal(a[RC_PT_EV_TRACK].context_switch, 1);
}

/* Messages (record/pt_msg.c): each cause named as what it is. */
static void test_messages(void **state)
{
	struct rc_pt_map_err m = { .err = ENOMEM, .aux = true, .bytes = 9u << 20,
				   .aux_size = 4u << 20, .topa_multi = 0, .topa_cap = "CAP",
				   .mlock_kb = 516, .memlock = 8u << 20 };
	char buf[1024];

	(void)state;
	/* EBUSY: the PMU is held by someone else, not a bad config */
	rc_pt_open_errmsg(buf, sizeof(buf), EBUSY, 8, 0x2001, 3, "/sys/x");
	assert_non_null(strstr(buf, "busy"));
	assert_non_null(strstr(buf, "another"));
	assert_non_null(strstr(buf, "--call-graph lbr"));
	assert_null(strstr(buf, "config"));
	rc_pt_open_errmsg(buf, sizeof(buf), EINVAL, 8, 0x2001, 3, "/sys/x");
	assert_non_null(strstr(buf, "config 0x2001"));
	assert_non_null(strstr(buf, "/sys/x"));
	/* ENOMEM without multi-entry ToPA: contiguous memory, not mlock */
	rc_pt_map_errmsg(buf, sizeof(buf), &m);
	assert_non_null(strstr(buf, "contiguous"));
	assert_non_null(strstr(buf, "CAP = 0"));
	assert_null(strstr(buf, "mlock"));
	m.topa_multi = 1;
	rc_pt_map_errmsg(buf, sizeof(buf), &m);
	assert_non_null(strstr(buf, "could not allocate 9216 KiB"));
	assert_null(strstr(buf, "contiguous"));
	assert_null(strstr(buf, "mlock"));
	/* EPERM: the locked-memory limits, with their values */
	m.err = EPERM;
	rc_pt_map_errmsg(buf, sizeof(buf), &m);
	assert_non_null(strstr(buf, "perf_event_mlock_kb (now 516)"));
	assert_non_null(strstr(buf, "'ulimit -l' (now 8192 KiB)"));
	m.memlock = UINT64_MAX;
	rc_pt_map_errmsg(buf, sizeof(buf), &m);
	assert_non_null(strstr(buf, "(now unlimited)"));
}

/* Why a recording has no wake records: one line each, with what to do. */
static void test_wake_notes(void **state)
{
	char b[512];

	(void)state;
	rc_pt_wake_note(b, sizeof(b), -ENOENT, NULL, 0xffff, 0, 2);
	assert_string_equal(b, "no sched:sched_waking tracepoint under /sys/kernel/tracing or "
			    "/sys/kernel/debug/tracing (mount tracefs: mount -t tracefs nodev "
			    "/sys/kernel/tracing): recording without wake records");
	rc_pt_wake_note(b, sizeof(b), -ENOENT, "/x/tr", 0xffff, 0, 2);
	assert_string_equal(b, "no sched:sched_waking tracepoint under /x/tr (mount tracefs: "
			    "mount -t tracefs nodev /x/tr): recording without wake records");
	rc_pt_wake_note(b, sizeof(b), -EACCES, NULL, 0xffff, 0, 2);
	assert_non_null(strstr(b, "cannot read /sys/kernel/tracing/events/sched/sched_waking/id"));
	assert_non_null(strstr(b, "(run as root)"));
	rc_pt_wake_note(b, sizeof(b), -EINVAL, "/x/tr", 0xffff, 0, 2);
	assert_non_null(strstr(b, "/x/tr/events/sched/sched_waking/id holds no tracepoint id"));
	rc_pt_wake_note(b, sizeof(b), 0, NULL, 317, EACCES, 2);
	assert_string_equal(b, "not allowed to open sched:sched_waking on every CPU "
			    "(kernel.perf_event_paranoid = 2, needs -1, or root/CAP_PERFMON): "
			    "recording without wake records");
	rc_pt_wake_note(b, sizeof(b), 0, NULL, 317, ENOENT, -1);
	assert_non_null(strstr(b, "cannot open sched:sched_waking (tracepoint id 317): "));
	for (int e = 0; e < 3; e++) {
		rc_pt_wake_note(b, sizeof(b), e ? -ENOENT : 0, NULL, 1, e == 2 ? EPERM : 0, 1);
		assert_non_null(strstr(b, ": recording without wake records"));
		assert_null(strchr(b, '\n'));
	}
}

static void test_module_line(void **state)
{
	char name[80];
	uint64_t a, sz;

	(void)state;
	assert_int_equal(rc_pt_parse_module("kvm_intel 380928 0 - Live 0xffffffffc0a1c000\n",
					    name, sizeof(name), &a, &sz), 0);
	assert_string_equal(name, "[kvm_intel]");
	assert_true(a == 0xffffffffc0a1c000ULL);
	assert_int_equal(sz, 380928);
	assert_int_equal(rc_pt_parse_module("nf_tables 307200 3 nft_ct,nft_chain_nat, Live "
					    "0xffffffffc0b00000 (E)\n", name, sizeof(name), &a, &sz), 0);
	assert_string_equal(name, "[nf_tables]");
	/* addresses hidden (kptr_restrict), or not loaded yet */
	assert_int_equal(rc_pt_parse_module("kvm 1142784 1 kvm_intel, Live 0x0000000000000000\n",
					    name, sizeof(name), &a, &sz), -ENOENT);
	assert_int_equal(rc_pt_parse_module("foo 4096 0 - Loading 0xffffffffc0000000\n",
					    name, sizeof(name), &a, &sz), -ENOENT);
	assert_int_equal(rc_pt_parse_module("junk\n", name, sizeof(name), &a, &sz), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attrs),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_module_line),
		cmocka_unit_test(test_wake_notes),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_set_field),
		cmocka_unit_test(test_pick_period),
		cmocka_unit_test(test_valid_str),
		cmocka_unit_test(test_resolve_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
