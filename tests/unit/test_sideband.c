/* Unit tests for decoder/sideband.c.
 *
 * A real `perf record -e dummy --switch-events -a -- sh -c 'sleep ..;
 * sleep ..'` file (testdata/sideband-switch.data) is applied in time
 * order; then every context switch, mapping, fork and exec that
 * `perf script` prints for it (run at test time) is checked against the
 * model's time-indexed queries. Plus the mapping rules on made-up input:
 * overlap, exec, fork copying, pruning. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "decoder/perfdata.h"
#include "decoder/sideband.h"

static char fixture[PATH_MAX / 2];

/* testdata/meson.build copies the fixture next to the test programs. */
static void find_fixture(void)
{
	const char *env = getenv("PTF_TESTDATA");
	char exe[PATH_MAX / 4];
	ssize_t n;

	if (env) {
		snprintf(fixture, sizeof(fixture), "%s/sideband-switch.data", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;            /* build/tests */
	snprintf(fixture, sizeof(fixture), "%s/../testdata/sideband-switch.data", exe);
}

struct rec {
	uint64_t time;
	size_t seq;
	struct dc_perf_record r;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Apply the whole fixture in time order (as the session does per round). */
static struct dc_sideband *load_fixture(struct dc_perf_file **pf)
{
	struct dc_sideband *sb;
	struct rec *v = NULL;
	size_t n = 0, cap = 0;
	char err[256];
	int ret;

	ret = dc_perf_open(fixture, pf, err, sizeof(err));
	if (ret)
		fail_msg("%s", err);
	for (;;) {
		struct dc_perf_record r;

		ret = dc_perf_next(*pf, &r);
		assert_true(ret >= 0);
		if (!ret)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[n].r = r;
		v[n].seq = n;
		v[n].time = r.sid.valid && (r.sid.sample_type & PERF_SAMPLE_TIME) ? r.sid.time : 0;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_rec);
	assert_int_equal(dc_sb_new(&sb), 0);
	for (size_t i = 0; i < n; i++)
		assert_true(dc_sb_apply(sb, &v[i].r, v[i].time) >= 0);
	free(v);
	return sb;
}

static bool have_perf(void)
{
	return system("perf --version >/dev/null 2>&1") == 0;
}

/* "2762.227442164:" -> ns */
static uint64_t parse_time(const char *s)
{
	unsigned long long sec, nsec;

	if (sscanf(s, "%llu.%llu", &sec, &nsec) != 2)
		return UINT64_MAX;
	return sec * 1000000000ull + nsec;
}

static void test_perf_file(void **state)
{
	struct dc_perf_file *pf;
	struct dc_sideband *sb;
	char cmd[PATH_MAX], line[1024];
	size_t nswitch = 0, nmap = 0, nfork = 0, nexec = 0, nexec_checked = 0;
	FILE *p;

	(void)state;
	if (!have_perf())
		skip();
	sb = load_fixture(&pf);
	snprintf(cmd, sizeof(cmd),
		 "perf script -i '%s' --show-switch-events --show-mmap-events "
		 "--show-task-events --ns -F pid,tid,cpu,time 2>/dev/null", fixture);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned spid, stid, cpu, a, b, c, d;
		char tbuf[64];
		uint64_t t;
		uint32_t pid, tid;
		const char *ev;
		int off = 0;

		if (sscanf(line, " %u/%u [%u] %63s %n", &spid, &stid, &cpu, tbuf, &off) != 4 || !off)
			continue;
		t = parse_time(tbuf);
		ev = line + off;
		if (!strncmp(ev, "PERF_RECORD_SWITCH_CPU_WIDE", 27)) {
			const char *np = strstr(ev, "pid/tid:");
			unsigned want;

			assert_non_null(np);
			assert_int_equal(sscanf(np + 8, " %u/%u", &a, &b), 2);
			/* OUT: the next task runs; IN: the sample's task runs */
			want = strstr(ev, " OUT ") ? b : stid;
			assert_int_equal(dc_sb_cpu_tid(sb, cpu, t, &pid, &tid), 0);
			if (tid != want)
				fail_msg("cpu %u at %lu: tid %u, perf says %u (%s)", cpu,
					 (unsigned long)t, tid, want, ev);
			nswitch++;
		} else if (!strncmp(ev, "PERF_RECORD_MMAP2 ", 18)) {
			unsigned long long start, len, pgoff;
			char prot[8], path[512];
			const struct dc_sb_map *m;

			if (sscanf(ev + 18, "%u/%u: [%llx(%llx) @ %llx %*x:%*x %*u %*u]: %7s %511[^\n]",
				   &a, &b, &start, &len, &pgoff, prot, path) != 7 || prot[2] != 'x')
				continue;
			if (start >> 63)
				continue;       /* [vsyscall] */
			m = dc_sb_map_find(sb, a, t, start + len / 2);
			if (!m)
				fail_msg("no mapping of pid %u at %#llx at %lu (%s)", a, start,
					 (unsigned long)t, ev);
			assert_string_equal(m->path, path);
			assert_int_equal(m->start, start);
			assert_int_equal(m->pgoff, pgoff);
			nmap++;
		} else if (!strncmp(ev, "PERF_RECORD_FORK(", 17)) {
			assert_int_equal(sscanf(ev + 17, "%u:%u):(%u:%u)", &a, &b, &c, &d), 4);
			assert_int_equal(dc_sb_thread_pid(sb, b, &pid), 0);
			/* the tid's last process: a reused tid may have moved on */
			if (pid != a)
				continue;
			/* a new thread is named like its parent (or by its exec) */
			if (!dc_sb_thread_comm(sb, b))
				fail_msg("thread %u (forked by %u) has no comm", b, d);
			nfork++;
		} else if (!strncmp(ev, "PERF_RECORD_COMM exec: ", 23)) {
			/* a process exec'd at t: mappings from before (the
			 * parent's, copied by fork) end there */
			struct dc_sb_proc *pr = dc_sb_proc(sb, spid);

			assert_non_null(pr);
			nexec++;
			for (size_t i = 0; i < pr->nmaps; i++) {
				const struct dc_sb_map *m = &pr->maps[i];
				const struct dc_sb_map *after;

				if (m->t_start >= t)
					continue;
				assert_true(m->t_end <= t);
				/* just before the exec the old mapping answers */
				if (t && dc_sb_map_find(sb, spid, t - 1, m->start) == m)
					nexec_checked++;
				after = dc_sb_map_find(sb, spid, t, m->start);
				assert_true(after != m);
			}
		}
	}
	pclose(p);
	print_message("checked %zu switches, %zu mappings, %zu forks, %zu execs (%zu old maps)\n",
		      nswitch, nmap, nfork, nexec, nexec_checked);
	assert_true(nswitch >= 50);
	assert_true(nmap >= 50);
	assert_true(nfork >= 10);
	assert_true(nexec >= 1);
	assert_true(nexec_checked >= 1);
	dc_sb_free(sb);
	dc_perf_close(pf);
}

static void test_map_rules(void **state)
{
	struct dc_sideband *sb;
	const struct dc_sb_map *m;
	uint32_t pid, tid;

	(void)state;
	assert_int_equal(dc_sb_new(&sb), 0);
	assert_int_equal(dc_sb_mmap(sb, 10, 100, 0x1000, 0x3000, 0, "/a", NULL, 0), 0);
	/* a later mapping over the middle page splits the old one */
	assert_int_equal(dc_sb_mmap(sb, 10, 200, 0x2000, 0x1000, 0x5000, "/b", NULL, 0), 0);
	assert_string_equal(dc_sb_map_find(sb, 10, 150, 0x2800)->path, "/a");
	assert_string_equal(dc_sb_map_find(sb, 10, 250, 0x2800)->path, "/b");
	m = dc_sb_map_find(sb, 10, 250, 0x3800);
	assert_string_equal(m->path, "/a");
	assert_int_equal(m->pgoff, 0x2000);     /* the high part keeps its offset */
	assert_string_equal(dc_sb_map_find(sb, 10, DC_SB_NOW, 0x1800)->path, "/a");
	/* fork copies the parent's live maps; a thread shares */
	assert_int_equal(dc_sb_fork(sb, 10, 11, 11, 300), 0);
	assert_string_equal(dc_sb_map_find(sb, 11, 310, 0x2800)->path, "/b");
	assert_int_equal(dc_sb_fork(sb, 10, 10, 12, 300), 0);
	assert_int_equal(dc_sb_thread_pid(sb, 12, &pid), 0);
	assert_int_equal(pid, 10);
	/* exec ends all of a process's maps (not the parent's) */
	assert_int_equal(dc_sb_exec(sb, 11, 400), 0);
	assert_null(dc_sb_map_find(sb, 11, 410, 0x2800));
	assert_non_null(dc_sb_map_find(sb, 11, 390, 0x2800));
	assert_non_null(dc_sb_map_find(sb, 10, 410, 0x2800));
	/* cpu timeline */
	assert_int_equal(dc_sb_cpu_tid(sb, 0, 50, &pid, &tid), -ENOENT);
	assert_int_equal(dc_sb_set_cpu(sb, 0, 100, 10, 10), 0);
	assert_int_equal(dc_sb_set_cpu(sb, 0, 300, 11, 11), 0);
	assert_int_equal(dc_sb_set_cpu(sb, 0, 200, 0, 0), 0);   /* out of order */
	assert_int_equal(dc_sb_cpu_tid(sb, 0, 150, &pid, &tid), 0);
	assert_int_equal(tid, 10);
	assert_int_equal(dc_sb_cpu_tid(sb, 0, 250, &pid, &tid), 0);
	assert_int_equal(tid, 0);
	assert_int_equal(dc_sb_cpu_tid(sb, 0, 300, &pid, &tid), 0);
	assert_int_equal(tid, 11);
	/* pruning keeps what later times need */
	dc_sb_prune(sb, 260);
	assert_int_equal(dc_sb_cpu_tid(sb, 0, 270, &pid, &tid), 0);
	assert_int_equal(tid, 0);
	assert_int_equal(dc_sb_cpu_tid(sb, 0, 310, &pid, &tid), 0);
	assert_int_equal(tid, 11);
	assert_string_equal(dc_sb_map_find(sb, 10, 270, 0x2800)->path, "/b");
	{
		/* ended maps go, current ones stay: no image rebuild */
		uint32_t gen = dc_sb_proc(sb, 11)->maps_gen;

		dc_sb_prune(sb, 500);
		assert_int_equal(dc_sb_proc(sb, 11)->maps_gen, gen);
		assert_int_equal(dc_sb_proc(sb, 11)->nmaps, 0);
	}
	assert_null(dc_sb_map_find(sb, 11, 510, 0x2800));   /* exec'd maps are gone */
	{
		/* lookups by generation: a generation's mappings stay those
		 * it was made with; pruning keeps what a held one has */
		struct dc_sb_proc *p;
		uint32_t g0, g1;

		assert_int_equal(dc_sb_mmap(sb, 20, 100, 0x1000, 0x3000, 0, "/a", NULL, 0), 0);
		p = dc_sb_proc(sb, 20);
		g0 = p->maps_gen;
		dc_sb_hold_gen(p, g0);
		assert_int_equal(dc_sb_mmap(sb, 20, 200, 0x2000, 0x1000, 0x5000, "/b", NULL, 0), 0);
		g1 = p->maps_gen;
		assert_true(g1 > g0);
		assert_string_equal(dc_sb_map_at_gen(p, g0, 0x2800)->path, "/a");
		assert_string_equal(dc_sb_map_at_gen(p, g1, 0x2800)->path, "/b");
		assert_ptr_equal(dc_sb_map_at_gen(p, g1, 0x2800),
				 dc_sb_map_find(sb, 20, DC_SB_NOW, 0x2800));
		assert_int_equal(dc_sb_map_at_gen(p, g0, 0x3800)->pgoff, 0);
		assert_int_equal(dc_sb_map_at_gen(p, g1, 0x3800)->pgoff, 0x2000);
		assert_null(dc_sb_map_at_gen(p, g0 - 1, 0x2800));   /* before it */
		dc_sb_prune(sb, 300);          /* g0 is held: its /a stays */
		assert_string_equal(dc_sb_map_at_gen(p, g0, 0x2800)->path, "/a");
		dc_sb_hold_gen(p, g1);
		dc_sb_prune(sb, 300);
		assert_null(dc_sb_map_at_gen(p, g0, 0x2800));
		assert_string_equal(dc_sb_map_at_gen(p, g1, 0x2800)->path, "/b");
		assert_int_equal(dc_sb_exec(sb, 20, 400), 0);
		assert_null(dc_sb_map_at_gen(p, p->maps_gen, 0x2800));
		assert_string_equal(dc_sb_map_at_gen(p, g1, 0x2800)->path, "/b");
	}
	assert_string_equal(dc_sb_map_find(sb, 10, 510, 0x3800)->path, "/a");
	assert_int_equal(dc_sb_comm(sb, 10, 12, "worker"), 0);
	assert_string_equal(dc_sb_thread_comm(sb, 12), "worker");
	{
		/* FORK: a new process and a new thread are named like the
		 * forking thread until they exec or rename */
		struct dc_perf_record r;

		memset(&r, 0, sizeof(r));
		r.type = PERF_RECORD_FORK;
		r.parsed = true;
		r.task.pid = 20;
		r.task.ppid = 10;
		r.task.tid = 20;
		r.task.ptid = 12;
		assert_int_equal(dc_sb_apply(sb, &r, 600), DC_SB_FORK);
		assert_string_equal(dc_sb_thread_comm(sb, 20), "worker");
		assert_int_equal(dc_sb_thread_pid(sb, 20, &pid), 0);
		assert_int_equal(pid, 20);
		r.task.pid = 20;
		r.task.ppid = 20;
		r.task.tid = 22;
		r.task.ptid = 20;
		assert_int_equal(dc_sb_apply(sb, &r, 610), DC_SB_FORK);
		assert_string_equal(dc_sb_thread_comm(sb, 22), "worker");
	}
	dc_sb_free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_file),
		cmocka_unit_test(test_map_rules),
	};

	find_fixture();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
