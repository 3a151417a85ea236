/* Unit tests for decoder/symbols.c: the ELF symbolizer, checked against
 * nm/objdump run at test time on testdata/symtest* (no hard-coded
 * addresses). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "decoder/sideband.h"
#include "decoder/decoder.h"
#include "decoder/symbols.h"

static char tdir[PATH_MAX / 2];

static void find_testdata(void)
{
	const char *env = getenv("PTF_TESTDATA");
	char exe[PATH_MAX / 4];
	ssize_t n;

	if (env) {
		snprintf(tdir, sizeof(tdir), "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	*strrchr(exe, '/') = 0;            /* build/tests */
	snprintf(tdir, sizeof(tdir), "%s/../testdata", exe);
}

static char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;

	k = (k + 1) & 3;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tdir, name);
	return buf[k];
}

struct nmsym {
	uint64_t addr, size;
	char name[512];
	int dups;
};

/* Function symbols with sizes, demangled (nm -C); duplicates marked. */
static size_t nm_funcs(const char *bin, struct nmsym **out)
{
	char cmd[PATH_MAX + 64], line[1024];
	struct nmsym *v = NULL;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S -C --defined-only '%s'", bin);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, s;
		char type;
		int off;

		if (sscanf(line, "%llx %llx %c %n", &a, &s, &type, &off) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'W' && type != 'w' && type != 'i')
			continue;
		if (!s)
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n].addr = a;
		v[n].size = s;
		v[n].dups = 0;
		snprintf(v[n].name, sizeof(v[n].name), "%s", line + off);
		v[n].name[strcspn(v[n].name, "\n")] = 0;
		n++;
	}
	pclose(p);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != j && v[i].addr == v[j].addr)
				v[i].dups++;
	*out = v;
	return n;
}

static const struct nmsym *nm_find(const struct nmsym *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static void check_all_funcs(const char *bin, const char *nm_bin)
{
	struct dc_symbols *s;
	struct nmsym *v;
	size_t n = nm_funcs(nm_bin, &v), checked = 0;
	int dso;
	const char *must[] = { "st_leaf", "st_middle", "st_global", "main",
			       "outer::inner::Counter::bump(int)",
			       "double outer::inner::twice<double>(double)",
			       "int outer::inner::twice<int>(int)" };

	assert_true(n > 10);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, bin, NULL, 0);
	assert_true(dso >= 0);
	assert_non_null(dc_sym_dso_file(s, dso));
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, hi, k1, k2;
		const char *name;
		bool nested = false;

		for (size_t j = 0; j < n; j++)
			nested |= v[j].addr < v[i].addr && v[i].addr < v[j].addr + v[j].size;
		if (v[i].dups || nested)
			continue;           /* a label inside a function: below */
		k1 = dc_sym_dso_lookup(s, dso, v[i].addr, &lo, &hi);
		name = dc_sym_name(s, k1);
		assert_non_null(name);
		assert_string_equal(name, v[i].name);
		assert_int_equal(lo, v[i].addr);
		assert_int_equal(hi, v[i].addr + v[i].size);
		/* every address inside has the same key */
		k2 = dc_sym_dso_lookup(s, dso, v[i].addr + v[i].size - 1, &lo, &hi);
		assert_int_equal(k1, k2);
		checked++;
	}
	assert_true(checked > 10);
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
		const struct nmsym *e = nm_find(v, n, must[i]);
		uint64_t lo, hi;

		if (!e)
			fail_msg("nm has no %s in %s", must[i], nm_bin);
		assert_string_equal(dc_sym_name(s, dc_sym_dso_lookup(s, dso, e->addr + 1, &lo, &hi)),
				    must[i]);
	}
	/* a function symbol inside another is a label of it, not a function */
	{
		const struct nmsym *o = nm_find(v, n, "st_outer_asm"), *in = nm_find(v, n, "st_inner_label");
		uint64_t lo, hi;

		if (!o || !in)
			fail_msg("nm lacks st_outer_asm / st_inner_label in %s", nm_bin);
		assert_true(o->addr < in->addr && in->addr + in->size < o->addr + o->size);
		assert_string_equal(dc_sym_name(s, dc_sym_dso_lookup(s, dso, in->addr, &lo, &hi)),
				    "st_outer_asm");
		assert_int_equal(lo, o->addr);
		assert_int_equal(hi, o->addr + o->size);
		assert_int_equal(dc_sym_dso_lookup(s, dso, in->addr, &lo, &hi),
				 dc_sym_dso_lookup(s, dso, o->addr + o->size - 1, &lo, &hi));
	}
	dc_symbols_free(s);
	free(v);
}

static void test_symtab(void **state)
{
	(void)state;
	check_all_funcs(tpath("symtest"), tpath("symtest"));
	check_all_funcs(tpath("symtest_ibt"), tpath("symtest_ibt"));
}

/* The stripped copy has no .symtab: static functions come from the
 * separate debuginfo found through .gnu_debuglink. */
static void test_debuglink(void **state)
{
	(void)state;
	check_all_funcs(tpath("symtest-stripped"), tpath("symtest"));
}

/* Any symbol's address (nm), or fail. */
static uint64_t nm_addr(const char *bin, const char *name)
{
	char cmd[PATH_MAX + 64], line[1024];
	unsigned long long a = 0;
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", bin);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char type, sym[512];

		if (sscanf(line, "%llx %c %511s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			found = true;
			break;
		}
	}
	pclose(p);
	if (!found)
		fail_msg("nm has no %s in %s", name, bin);
	return a;
}

static void expect_range(struct dc_symbols *s, int dso, uint64_t addr, const char *name,
			 uint64_t lo, uint64_t hi)
{
	uint64_t l, h;

	assert_string_equal(dc_sym_name(s, dc_sym_dso_lookup(s, dso, addr, &l, &h)), name);
	assert_int_equal(l, lo);
	assert_int_equal(h, hi);
}

/* Labels (STT_NOTYPE in code) name code no function symbol covers, from
 * the label to the next symbol; inside a function's room they name
 * nothing; labels outside code are no names. */
static void check_labels(const char *bin, const char *nm_bin)
{
	uint64_t entry = nm_addr(nm_bin, "st_lbl_entry"), next = nm_addr(nm_bin, "st_lbl_next");
	uint64_t func = nm_addr(nm_bin, "st_lbl_func"), inside = nm_addr(nm_bin, "st_lbl_inside");
	uint64_t unsized = nm_addr(nm_bin, "st_lbl_unsized");
	uint64_t in_unsized = nm_addr(nm_bin, "st_lbl_in_unsized");
	uint64_t after = nm_addr(nm_bin, "st_lbl_after"), data = nm_addr(nm_bin, "__data_start");
	struct dc_symbols *s;
	const char *name;
	uint64_t lo, hi;
	int dso;

	assert_true(entry < next && next < func && func < inside && inside < unsized &&
		    unsized < in_unsized && in_unsized < after);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, bin, NULL, 0);
	assert_true(dso >= 0);
	expect_range(s, dso, entry, "st_lbl_entry", entry, next);
	expect_range(s, dso, next - 1, "st_lbl_entry", entry, next);
	expect_range(s, dso, next, "st_lbl_next", next, func);
	expect_range(s, dso, func - 1, "st_lbl_next", next, func);
	expect_range(s, dso, inside, "st_lbl_func", func, func + 4);
	expect_range(s, dso, in_unsized, "st_lbl_unsized", unsized, after);
	name = dc_sym_name(s, dc_sym_dso_lookup(s, dso, data, &lo, &hi));
	assert_true(!name || (strcmp(name, "__data_start") && strcmp(name, "data_start")));
	dc_symbols_free(s);
}

static void test_labels(void **state)
{
	(void)state;
	check_labels(tpath("symtest"), tpath("symtest"));
	check_labels(tpath("symtest-stripped"), tpath("symtest"));
}

/* PLT stubs named like objdump names them, for the lazy .plt / .plt.got
 * layout and the IBT .plt.sec layout. */
static void check_plt(const char *bin)
{
	char cmd[PATH_MAX + 64], line[1024];
	struct dc_symbols *s;
	size_t n = 0;
	bool saw_puts = false;
	FILE *p;
	int dso;

	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, bin, NULL, 0);
	snprintf(cmd, sizeof(cmd), "objdump -d -C '%s'", bin);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char name[600];
		uint64_t lo, hi;
		int off = 0;
		char *end;

		if (sscanf(line, "%llx <%n", &a, &off) != 1 || !off)
			continue;
		end = strstr(line, "@plt>:");
		if (!end)
			continue;
		snprintf(name, sizeof(name), "%.*s@plt", (int)(end - (line + off)), line + off);
		assert_string_equal(dc_sym_name(s, dc_sym_dso_lookup(s, dso, a, &lo, &hi)), name);
		/* the stub's last byte too */
		assert_string_equal(dc_sym_name(s, dc_sym_dso_lookup(s, dso, hi - 1, &lo, &hi)),
				    name);
		saw_puts |= !strcmp(name, "puts@plt");
		n++;
	}
	pclose(p);
	assert_true(n >= 3);
	assert_true(saw_puts);
	dc_symbols_free(s);
}

static void test_plt(void **state)
{
	(void)state;
	check_plt(tpath("symtest"));
	check_plt(tpath("symtest_ibt"));
}

static void test_demangle(void **state)
{
	char *d;

	(void)state;
	d = dc_sym_demangle("_ZN5outer5inner7Counter4bumpEi");
	assert_string_equal(d, "outer::inner::Counter::bump(int)");
	free(d);
	/* Rust legacy: the hash suffix is dropped */
	d = dc_sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	assert_string_equal(d, "core::fmt::write");
	free(d);
	/* Rust v0 */
	d = dc_sym_demangle("_RNvCs15kBYyAo9fc_7mycrate3foo");
	assert_non_null(d);
	assert_non_null(strstr(d, "mycrate::foo"));
	free(d);
	assert_null(dc_sym_demangle("main"));
}

struct warned {
	int n;
	char last[512];
};

static void on_warn(void *ctx, const char *msg)
{
	struct warned *w = ctx;

	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

/* (pid, ip) lookups through sideband mappings: PIE bias, keys shared by
 * processes mapping the same binary, unknown addresses, a missing binary
 * reported once. */
static void test_process_lookup(void **state)
{
	const uint64_t base1 = 0x555555554000ull, base2 = 0x560000000000ull;
	struct warned w = { 0 };
	struct dc_symbols_opts o = { .warn = on_warn, .warn_ctx = &w };
	struct dc_sideband *sb;
	struct dc_symbols *s;
	struct nmsym *v;
	size_t n = nm_funcs(tpath("symtest"), &v);
	const struct nmsym *leaf = nm_find(v, n, "st_leaf");
	const struct nmsym *mid = nm_find(v, n, "st_middle");
	uint64_t k1, k2, k3, lo, hi;

	(void)state;
	assert_non_null(leaf);
	assert_non_null(mid);
	assert_int_equal(dc_sb_new(&sb), 0);
	assert_int_equal(dc_symbols_new(&o, sb, &s), 0);
	/* whole file mapped at pgoff 0: ip = base + vaddr for this PIE */
	assert_int_equal(dc_sb_mmap(sb, 100, 0, base1, 0x20000, 0, tpath("symtest"), NULL, 0), 0);
	assert_int_equal(dc_sb_mmap(sb, 200, 0, base2, 0x20000, 0, tpath("symtest"), NULL, 0), 0);
	assert_int_equal(dc_sb_mmap(sb, 100, 0, 0x7f0000000000ull, 0x1000, 0, "/nonexistent/libx.so",
				    NULL, 0), 0);
	k1 = dc_sym_func_range(s, 100, base1 + leaf->addr + 2, &lo, &hi);
	assert_string_equal(dc_sym_name(s, k1), "st_leaf");
	assert_int_equal(lo, base1 + leaf->addr);
	assert_int_equal(hi, base1 + leaf->addr + leaf->size);
	assert_int_equal(dc_sym_func_start(s, 100, base1 + leaf->addr + 2), base1 + leaf->addr);
	k2 = dc_sym_func_key(s, 200, base2 + leaf->addr);
	assert_int_equal(k1, k2);
	k3 = dc_sym_func_key(s, 100, base1 + mid->addr);
	assert_true(k3 != k1);
	assert_string_equal(dc_sym_name(s, k3), "st_middle");
	/* cached answer equals the first */
	assert_int_equal(dc_sym_func_key(s, 100, base1 + leaf->addr + 2), k1);
	/* no mapping */
	assert_int_equal(dc_sym_func_key(s, 100, 0x1000), DC_SYM_KEY_UNKNOWN);
	assert_null(dc_sym_name(s, DC_SYM_KEY_UNKNOWN));
	assert_int_equal(dc_sym_func_start(s, 100, 0x1000), 0);
	/* missing binary: its own unknown key, reported once */
	k1 = dc_sym_func_key(s, 100, 0x7f0000000010ull);
	k2 = dc_sym_func_key(s, 100, 0x7f0000000020ull);
	assert_int_equal(k1, k2);
	assert_string_equal(dc_sym_name(s, k1), "[unknown] (/nonexistent/libx.so)");
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.last, "/nonexistent/libx.so"));
	assert_int_equal(dc_sym_nr_missing(s), 1);
	assert_string_equal(dc_sym_missing(s, 0), "/nonexistent/libx.so");
	/* a process first looked up before it has mappings is answered
	 * anew once it has them (the lookup cache's front keeps the last
	 * process, and an entry is valid for one state of its mappings) */
	assert_int_equal(dc_sym_func_key(s, 300, base1 + leaf->addr), DC_SYM_KEY_UNKNOWN);
	assert_int_equal(dc_sb_mmap(sb, 300, 0, base1, 0x20000, 0, tpath("symtest"), NULL, 0), 0);
	assert_string_equal(dc_sym_name(s, dc_sym_func_key(s, 300, base1 + leaf->addr)), "st_leaf");
	assert_string_equal(dc_sym_name(s, dc_sym_func_key(s, 100, base1 + mid->addr)), "st_middle");
	assert_string_equal(dc_sym_name(s, dc_sym_func_key(s, 300, base1 + mid->addr)), "st_middle");
	assert_int_equal(dc_sym_func_key(s, 300, 0x7f0000000010ull), DC_SYM_KEY_UNKNOWN);
	/* a new mapping over the old range changes the answer, but not
	 * the answer as of the generation before it */
	{
		uint32_t g0 = dc_sb_proc(sb, 100)->maps_gen, g1;

		assert_int_equal(dc_sb_mmap(sb, 100, 10, base1, 0x20000, 0, "/nonexistent/other",
					    NULL, 0), 0);
		g1 = dc_sb_proc(sb, 100)->maps_gen;
		assert_string_equal(dc_sym_name(s, dc_sym_func_key(s, 100, base1 + leaf->addr + 2)),
				    "[unknown] (/nonexistent/other)");
		k1 = dc_sym_func_part_gen(s, 100, g0, base1 + leaf->addr + 2, &lo, &hi);
		assert_string_equal(dc_sym_name(s, k1), "st_leaf");
		assert_int_equal(lo, base1 + leaf->addr);
		k2 = dc_sym_func_part_gen(s, 100, g1, base1 + leaf->addr + 2, &lo, &hi);
		assert_string_equal(dc_sym_name(s, k2), "[unknown] (/nonexistent/other)");
		assert_int_equal(dc_sym_inline_at_gen(s, 100, g1, base1 + leaf->addr + 2, &lo, &hi),
				 0);
		/* (again, from the cache) */
		assert_int_equal(dc_sym_func_part_gen(s, 100, g0, base1 + leaf->addr + 2, &lo, &hi),
				 k1);
	}
	dc_symbols_free(s);
	dc_sb_free(sb);
	free(v);
}

static void run(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* The build-id of a binary, from readelf. */
static size_t build_id(const char *bin, uint8_t *out, char *hex, size_t hexlen)
{
	char cmd[PATH_MAX + 64], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", bin);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (!b)
			continue;
		b += 10;
		b[strcspn(b, "\n")] = 0;
		snprintf(hex, hexlen, "%s", b);
		for (n = 0; n < 20 && sscanf(b + 2 * n, "%2hhx", &out[n]) == 1; n++)
			;
	}
	pclose(p);
	return n;
}

static const char *name_at(struct dc_symbols *s, int dso, const struct nmsym *e)
{
	uint64_t lo, hi;

	return dc_sym_name(s, dc_sym_dso_lookup(s, dso, e->addr, &lo, &hi));
}

/* Where binaries and debuginfo are found: debuginfo by build-id under the
 * debug directory, the code in perf's build-id cache (~/.debug), under
 * --symfs; a binary at its path with another build-id is not used. */
static void test_search_paths(void **state)
{
	char dir[] = "/tmp/ptf-symtest-XXXXXX", hex[64], cmd[4 * PATH_MAX], path[PATH_MAX];
	struct dc_symbols_opts o = { 0 };
	struct dc_symbols *s;
	struct nmsym *v;
	size_t n = nm_funcs(tpath("symtest"), &v);
	const struct nmsym *leaf = nm_find(v, n, "st_leaf");
	struct nmsym *vi;
	size_t ni = nm_funcs(tpath("symtest_ibt"), &vi);
	const struct nmsym *leaf_ibt = nm_find(vi, ni, "st_leaf");
	uint8_t bid[20];
	size_t nb = build_id(tpath("symtest"), bid, hex, sizeof(hex));
	int dso;

	(void)state;
	assert_int_equal(nb, 20);
	assert_non_null(mkdtemp(dir));
	/* debuginfo by build-id: the stripped binary alone in a directory */
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/bin %s/dbg/.build-id/%.2s %s/cache/.build-id/%.2s/%s %s/symfs/opt && "
		 "cp '%s' %s/bin/prog && cp '%s' %s/dbg/.build-id/%.2s/%s.debug && "
		 "cp '%s' %s/cache/.build-id/%.2s/%s/elf && cp '%s' %s/symfs/opt/prog",
		 dir, dir, hex, dir, hex, hex + 2, dir, tpath("symtest-stripped"), dir,
		 tpath("symtest.debug"), dir, hex, hex + 2, tpath("symtest"), dir, hex, hex + 2,
		 tpath("symtest"), dir);
	run(cmd);
	snprintf(path, sizeof(path), "%s/dbg", dir);
	o.debug_dir = path;
	o.buildid_dir = "/nonexistent";
	assert_int_equal(dc_symbols_new(&o, NULL, &s), 0);
	snprintf(cmd, sizeof(cmd), "%s/bin/prog", dir);
	dso = dc_sym_dso(s, cmd, NULL, 0);
	assert_string_equal(name_at(s, dso, leaf), "st_leaf");
	dc_symbols_free(s);
	/* code from perf's build-id cache for a path that is gone */
	snprintf(path, sizeof(path), "%s/cache", dir);
	o.debug_dir = "/nonexistent";
	o.buildid_dir = path;
	assert_int_equal(dc_symbols_new(&o, NULL, &s), 0);
	dso = dc_sym_dso(s, "/gone/prog", bid, nb);
	assert_non_null(dc_sym_dso_file(s, dso));
	assert_non_null(strstr(dc_sym_dso_file(s, dso), "/elf"));
	assert_string_equal(name_at(s, dso, leaf), "st_leaf");
	dc_symbols_free(s);
	/* --symfs */
	snprintf(path, sizeof(path), "%s/symfs", dir);
	o.buildid_dir = "/nonexistent";
	o.symfs = path;
	assert_int_equal(dc_symbols_new(&o, NULL, &s), 0);
	dso = dc_sym_dso(s, "/opt/prog", NULL, 0);
	assert_string_equal(name_at(s, dso, leaf), "st_leaf");
	/* a file at the path with another build-id is not the binary */
	bid[0] ^= 0xff;
	dso = dc_sym_dso(s, tpath("symtest"), bid, nb);
	assert_null(dc_sym_dso_file(s, dso));
	assert_int_equal(dc_sym_nr_missing(s), 1);
	dc_symbols_free(s);
	/* --symfs comes before the path: under it, the recorded path holds
	 * another program (symtest_ibt) than the file at that path here */
	assert_non_null(leaf_ibt);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"%s/symfs$(dirname '%s')\" && cp '%s' '%s/symfs%s'",
		 dir, tpath("symtest"), tpath("symtest_ibt"), dir, tpath("symtest"));
	run(cmd);
	snprintf(path, sizeof(path), "%s/symfs", dir);
	assert_int_equal(dc_symbols_new(&o, NULL, &s), 0);
	dso = dc_sym_dso(s, tpath("symtest"), NULL, 0);
	assert_non_null(dc_sym_dso_file(s, dso));
	assert_ptr_equal(strstr(dc_sym_dso_file(s, dso), path), dc_sym_dso_file(s, dso));
	assert_string_equal(name_at(s, dso, leaf_ibt), "st_leaf");
	dc_symbols_free(s);
	free(vi);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
	free(v);
}

/* A loaded binary is shared by later symbolizers of the same unchanged
 * file (one read, same answers, DWARF too) and read again once the file
 * changes: replaced by another binary, or only touched. */
static void test_image_cache(void **state)
{
	char dir[] = "/tmp/ptf-imgcache-XXXXXX", cmd[4 * PATH_MAX], prog[PATH_MAX];
	struct dc_symbols *s1, *s2, *s3;
	struct nmsym *v, *vi;
	size_t n = nm_funcs(tpath("symtest"), &v), ni = nm_funcs(tpath("symtest_ibt"), &vi);
	const struct nmsym *leaf = nm_find(v, n, "st_leaf"), *leaf_ibt = nm_find(vi, ni, "st_leaf");
	uint64_t l0, r0, l, r, lo, hi, k1, k2;
	const char *src1, *src2;
	int d1, d2, d3;

	(void)state;
	assert_non_null(leaf);
	assert_non_null(leaf_ibt);
	assert_true(leaf->addr != leaf_ibt->addr);
	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", tpath("symtest"), prog);
	run(cmd);
	dc_sym_img_counters(&l0, &r0);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s1), 0);
	d1 = dc_sym_dso(s1, prog, NULL, 0);
	k1 = dc_sym_dso_lookup(s1, d1, leaf->addr + 1, &lo, &hi);
	assert_string_equal(dc_sym_name(s1, k1), "st_leaf");
	src1 = dc_sym_srcline(s1, k1);
	assert_non_null(src1);
	dc_sym_img_counters(&l, &r);
	assert_int_equal(l, l0 + 1);
	assert_int_equal(r, r0);
	/* a second symbolizer while the first lives, a third after it is gone */
	assert_int_equal(dc_symbols_new(NULL, NULL, &s2), 0);
	d2 = dc_sym_dso(s2, prog, NULL, 0);
	k2 = dc_sym_dso_lookup(s2, d2, leaf->addr + 1, &lo, &hi);
	assert_string_equal(dc_sym_name(s2, k2), "st_leaf");
	assert_int_equal(lo, leaf->addr);
	assert_int_equal(hi, leaf->addr + leaf->size);
	src2 = dc_sym_srcline(s2, k2);
	assert_non_null(src2);
	assert_string_equal(src1, src2);
	dc_symbols_free(s1);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s3), 0);
	d3 = dc_sym_dso(s3, prog, NULL, 0);
	assert_string_equal(name_at(s3, d3, leaf), "st_leaf");
	dc_sym_img_counters(&l, &r);
	assert_int_equal(l, l0 + 1);
	assert_int_equal(r, r0 + 2);
	assert_string_equal(name_at(s2, d2, leaf), "st_leaf");   /* still valid */
	dc_symbols_free(s2);
	dc_symbols_free(s3);
	/* another binary at the same path: its own symbols */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", tpath("symtest_ibt"), prog);
	run(cmd);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s1), 0);
	d1 = dc_sym_dso(s1, prog, NULL, 0);
	k1 = dc_sym_dso_lookup(s1, d1, leaf_ibt->addr + 1, &lo, &hi);
	assert_string_equal(dc_sym_name(s1, k1), "st_leaf");
	assert_int_equal(lo, leaf_ibt->addr);
	assert_int_equal(hi, leaf_ibt->addr + leaf_ibt->size);
	dc_symbols_free(s1);
	dc_sym_img_counters(&l, &r);
	assert_int_equal(l, l0 + 2);
	/* the same bytes, touched: read again */
	snprintf(cmd, sizeof(cmd), "touch -d '2001-02-03 04:05:06' '%s'", prog);
	run(cmd);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s1), 0);
	d1 = dc_sym_dso(s1, prog, NULL, 0);
	assert_string_equal(name_at(s1, d1, leaf_ibt), "st_leaf");
	dc_symbols_free(s1);
	dc_sym_img_counters(&l, &r);
	assert_int_equal(l, l0 + 3);
	assert_int_equal(r, r0 + 2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
	free(v);
	free(vi);
}

/* A binary stripped of its DWARF but not of its symbols (`strip -g`,
 * `objcopy --strip-debug`) with its debuginfo by build-id: the names come
 * from its own symbols, the DWARF (srclines here; inline frames the same
 * way) from the debuginfo. */
static void test_strip_debug_only(void **state)
{
	char dir[] = "/tmp/ptf-stripg-XXXXXX", hex[64], cmd[4 * PATH_MAX], path[PATH_MAX];
	struct dc_symbols_opts o = { 0 };
	struct dc_symbols *s;
	struct nmsym *v;
	size_t n = nm_funcs(tpath("symtest"), &v);
	const struct nmsym *leaf = nm_find(v, n, "st_leaf");
	uint8_t bid[20];
	uint64_t lo, hi, k;
	int dso;

	(void)state;
	assert_non_null(leaf);
	assert_int_equal(build_id(tpath("symtest"), bid, hex, sizeof(hex)), 20);
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/dbg/.build-id/%.2s && objcopy --strip-debug '%s' %s/prog && "
		 "cp '%s' %s/dbg/.build-id/%.2s/%s.debug && "
		 "! readelf -S %s/prog | grep -q debug_info && readelf -S %s/prog | grep -q symtab",
		 dir, hex, tpath("symtest"), dir, tpath("symtest.debug"), dir, hex, hex + 2, dir,
		 dir);
	run(cmd);
	snprintf(path, sizeof(path), "%s/dbg", dir);
	o.debug_dir = path;
	assert_int_equal(dc_symbols_new(&o, NULL, &s), 0);
	snprintf(path, sizeof(path), "%s/prog", dir);
	dso = dc_sym_dso(s, path, bid, 20);
	k = dc_sym_dso_lookup(s, dso, leaf->addr + 1, &lo, &hi);
	assert_string_equal(dc_sym_name(s, k), "st_leaf");
	assert_int_equal(lo, leaf->addr);
	assert_non_null(dc_sym_srcline(s, k));
	assert_non_null(strstr(dc_sym_srcline(s, k), "symtest.c:"));
	dc_symbols_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
	free(v);
}

static int nwarn;

static void count_warn(void *ctx, const char *msg)
{
	(void)msg;
	(*(int *)ctx)++;
}

/* A source of binaries for dc_sym_preload_from: a NULL-terminated list. */
struct names {
	const char *const *v;
	size_t i;
};

static int next_name(void *ctx, const char **path, const uint8_t **bid, size_t *n)
{
	struct names *nm = ctx;

	if (!nm->v[nm->i])
		return 0;
	*path = nm->v[nm->i++];
	*bid = NULL;
	*n = 0;
	return 1;
}

/* DWARF opened ahead: the symbolizer's thread takes the binaries its
 * source names, finds their files as loading them would and opens their
 * DWARF; lookups of the decoding thread then find it open (no second
 * open) and answer as they do without. A binary that is not there, or the
 * [vdso], is no warning. */
static void test_preload_dwarf(void **state)
{
	char dir[] = "/tmp/ptf-preload-XXXXXX", cmd[4 * PATH_MAX], prog[PATH_MAX];
	struct dc_symbols_opts o = { .warn = count_warn, .warn_ctx = &nwarn };
	const char *list[] = { prog, "/no/such/binary", "[vdso]", NULL };
	struct names nm = { list, 0 };
	struct dc_symbols *s1, *s2;
	struct nmsym *v;
	size_t n = nm_funcs(tpath("symtest"), &v);
	const struct nmsym *leaf = nm_find(v, n, "st_leaf");
	uint64_t opens0, asked = 0, opened = 0, lo, hi, k1, k2;
	const char *src1, *src2;
	bool done = false;
	int d1, d2;

	(void)state;
	nwarn = 0;
	assert_non_null(leaf);
	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);      /* a file not opened before */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", tpath("symtest"), prog);
	run(cmd);
	opens0 = dc_sym_dwarf_opens();
	assert_int_equal(dc_symbols_new(&o, NULL, &s1), 0);
	assert_int_equal(dc_sym_preload_from(s1, next_name, &nm), 0);
	assert_int_equal(dc_sym_preload_from(s1, next_name, &nm), -EBUSY);
	for (int i = 0; i < 10000 && !done; i++) {
		usleep(1000);
		dc_sym_dwarf_preloaded(s1, &asked, &opened, &done);
	}
	assert_true(done);
	assert_int_equal(nm.i, 3);
	assert_int_equal(asked, 2);
	assert_int_equal(opened, 1);
	assert_int_equal(dc_sym_dwarf_opens(), opens0 + 1);
	d1 = dc_sym_dso(s1, prog, NULL, 0);
	k1 = dc_sym_dso_lookup(s1, d1, leaf->addr + 1, &lo, &hi);
	src1 = dc_sym_srcline(s1, k1);
	assert_non_null(src1);
	assert_int_equal(dc_sym_dwarf_opens(), opens0 + 1);  /* found open */
	/* the same answer from the same bytes opened the usual way */
	assert_int_equal(dc_symbols_new(&o, NULL, &s2), 0);
	d2 = dc_sym_dso(s2, tpath("symtest"), NULL, 0);
	k2 = dc_sym_dso_lookup(s2, d2, leaf->addr + 1, &lo, &hi);
	src2 = dc_sym_srcline(s2, k2);
	assert_non_null(src2);
	assert_string_equal(src1, src2);
	dc_symbols_free(s2);
	dc_symbols_free(s1);
	assert_int_equal(nwarn, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
	free(v);
}

/* Build-ids compare equal when one is the other zero-padded (perf before
 * 5.11 wrote every id as 20 bytes): an md5 id (16) against its padded 20. */
static void test_build_id_eq(void **state)
{
	uint8_t md5[16], padded[20] = { 0 }, other[20];

	(void)state;
	for (int i = 0; i < 16; i++)
		md5[i] = (uint8_t)(0xa0 + i);
	memcpy(padded, md5, 16);
	memcpy(other, padded, 20);
	other[19] = 1;
	assert_true(dc_build_id_eq(md5, 16, md5, 16));
	assert_true(dc_build_id_eq(md5, 16, padded, 20));
	assert_true(dc_build_id_eq(padded, 20, md5, 16));
	assert_false(dc_build_id_eq(md5, 16, other, 20));   /* the rest is not zero */
	assert_false(dc_build_id_eq(other, 20, md5, 16));
	assert_false(dc_build_id_eq(md5, 16, padded + 1, 19));
	assert_false(dc_build_id_eq(md5, 0, md5, 0));       /* no id is no match */
	assert_false(dc_build_id_eq(md5, 0, padded, 20));
}

/* The instruction counter's cache answers per code: the same addresses
 * in two images (two processes) hold different code, so different counts;
 * a count not made yet is unknown (-2), so the caller reads the code. */
static void test_insn_count_per_code(void **state)
{
	static const uint8_t three_nops[] = { 0x90, 0x90, 0x90, 0xc3 };
	static const uint8_t one_nop[] = { 0x0f, 0x1f, 0x00, 0xc3 };   /* nopl (%rax) */
	struct dc_insn_counter *c = dc_insn_counter_new();

	(void)state;
	assert_non_null(c);
	assert_int_equal(dc_insn_count_known(c, 1, 0x1000, 0x1003), -2);
	assert_int_equal(dc_insn_count(c, 1, three_nops, sizeof(three_nops), 0x1000, 0x1003), 3);
	assert_int_equal(dc_insn_count_known(c, 1, 0x1000, 0x1003), 3);
	assert_int_equal(dc_insn_count_known(c, 2, 0x1000, 0x1003), -2);
	assert_int_equal(dc_insn_count(c, 2, one_nop, sizeof(one_nop), 0x1000, 0x1003), 1);
	assert_int_equal(dc_insn_count_known(c, 2, 0x1000, 0x1003), 1);
	/* not an instruction boundary: -1, and nothing cached */
	assert_int_equal(dc_insn_count(c, 2, one_nop, sizeof(one_nop), 0x1000, 0x1001), -1);
	assert_int_equal(dc_insn_count_known(c, 2, 0x1000, 0x1001), -2);
	dc_insn_counter_free(c);
}

/* .eh_frame's FDEs as readelf prints them (pc=START..END), not through the
 * code under test. */
static size_t readelf_fdes(const char *bin, struct dc_fde *v, size_t max)
{
	char cmd[PATH_MAX + 64], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s'", bin);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, b;
		const char *pc = strstr(line, " FDE cie=") ? strstr(line, "pc=") : NULL;

		if (pc && n < max && sscanf(pc, "pc=%llx..%llx", &a, &b) == 2)
			v[n++] = (struct dc_fde){ a, b };
	}
	pclose(p);
	return n;
}

static bool has_fde(const struct dc_fde *v, size_t n, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].start == a && v[i].end == b)
			return true;
	return false;
}

/* The number in hex a shell command prints first. */
static unsigned long long cmd_hex(const char *cmd)
{
	unsigned long long v = 0;
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	assert_int_equal(fscanf(p, "%llx", &v), 1);
	pclose(p);
	return v;
}

/* The ELF address of bin's .text. */
static unsigned long long text_vaddr(const char *bin)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | awk '$2 == \".text\" {print $4}'", bin);
	return cmd_hex(cmd);
}

static const char *fde_name_at(struct dc_symbols *s, int dso, uint64_t a, uint64_t *lo, uint64_t *hi)
{
	return dc_sym_name(s, dc_sym_dso_lookup(s, dso, a, lo, hi));
}

/* symtest stripped (no symbols, no debuglink): every function with an FDE
 * is one of its own, "symtest+0xSTART" over the FDE's range, whatever the
 * order of lookups; crt's functions without one stay "[unknown] (path)";
 * PLT stubs keep their names. With one symbol added inside st_middle, its
 * FDE crosses a symbol: unnamed; st_leaf's, still in the gap, is not. */
static void test_fde(void **state)
{
	char dir[] = "/tmp/ptf_fde_XXXXXX", bin[PATH_MAX], cross[PATH_MAX], cmd[3 * PATH_MAX];
	char want[PATH_MAX + 16];
	struct dc_fde f[256];
	struct dc_symbols *s, *s2;
	struct nmsym *v;
	size_t n, nf, named = 0;
	uint64_t lo, hi, keys[64];
	const struct nmsym *mid, *leaf;
	unsigned long long text = 0;
	int dso, dso2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/symtest", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s'", tpath("symtest"), bin);
	assert_int_equal(system(cmd), 0);
	n = nm_funcs(tpath("symtest"), &v);
	nf = readelf_fdes(bin, f, 256);
	assert_true(nf > 10);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, bin, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		if (!has_fde(f, nf, v[i].addr, v[i].addr + v[i].size))
			continue;
		snprintf(want, sizeof(want), "symtest+0x%llx", (unsigned long long)v[i].addr);
		assert_string_equal(fde_name_at(s, dso, v[i].addr + v[i].size - 1, &lo, &hi), want);
		assert_int_equal(lo, v[i].addr);
		assert_int_equal(hi, v[i].addr + v[i].size);
		assert_string_equal(fde_name_at(s, dso, v[i].addr, &lo, &hi), want);
		if (named < 64)
			keys[named] = dc_sym_dso_lookup(s, dso, v[i].addr, &lo, &hi);
		named++;
	}
	assert_true(named >= 10);
	/* another symbolizer, the other way round: the same keys */
	assert_int_equal(dc_symbols_new(NULL, NULL, &s2), 0);
	dso2 = dc_sym_dso(s2, bin, NULL, 0);
	assert_int_equal(dso2, dso);
	for (size_t i = n, k = named; i-- > 0;) {
		if (!has_fde(f, nf, v[i].addr, v[i].addr + v[i].size) || --k >= 64)
			continue;
		assert_int_equal(dc_sym_dso_lookup(s2, dso2, v[i].addr + 1, &lo, &hi), keys[k]);
	}
	dc_symbols_free(s2);
	/* no FDE: frame_dummy (crt, unsized in nm: looked up by name) */
	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"frame_dummy\" {print $1}'",
		 tpath("symtest"));
	{
		unsigned long long a = cmd_hex(cmd);

		assert_false(has_fde(f, nf, a, a + 1));
		snprintf(want, sizeof(want), "[unknown] (%s)", bin);
		assert_string_equal(fde_name_at(s, dso, a, &lo, &hi), want);
	}
	/* the PLT (an FDE covers it): its stubs' names */
	assert_non_null(strstr(fde_name_at(s, dso, f[1].start + 16, &lo, &hi), "@plt"));
	dc_symbols_free(s);
	/* a symbol inside st_middle */
	mid = nm_find(v, n, "st_middle");
	leaf = nm_find(v, n, "st_leaf");
	assert_non_null(mid);
	assert_non_null(leaf);
	text = text_vaddr(tpath("symtest"));
	snprintf(cross, sizeof(cross), "%s/cross", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all --add-symbol st_cross=.text:0x%llx,global,"
		 "function '%s' '%s'", (unsigned long long)(mid->addr + 8 - text),
		 tpath("symtest"), cross);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, cross, NULL, 0);
	snprintf(want, sizeof(want), "[unknown] (%s)", cross);
	assert_string_equal(fde_name_at(s, dso, mid->addr, &lo, &hi), want);
	snprintf(want, sizeof(want), "cross+0x%llx", (unsigned long long)leaf->addr);
	assert_string_equal(fde_name_at(s, dso, leaf->addr, &lo, &hi), want);
	assert_string_equal(fde_name_at(s, dso, mid->addr + 8, &lo, &hi), "st_cross");
	dc_symbols_free(s);
	free(v);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A versioned C++ name in a symbol table ("_Z...@@V1", as .symver in a
 * library's source makes one in its .symtab): demangled without the
 * version (before, the version kept it from demangling, and it showed
 * mangled). */
static void test_versioned_cxx_name(void **state)
{
	char dir[] = "/tmp/ptf_symver.XXXXXX", bin[600], cmd[2000];
	unsigned long long text;
	struct dc_symbols *s;
	uint64_t lo, hi;
	int dso;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/v", dir);
	text = text_vaddr(tpath("symtest"));
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all --add-symbol "
		 "'_ZN5outer5inner7Counter4bumpEi@@V1=.text:0,global,function' '%s' '%s'",
		 tpath("symtest"), bin);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, bin, NULL, 0);
	assert_string_equal(dc_sym_name(s, dc_sym_dso_lookup(s, dso, text, &lo, &hi)),
			    "outer::inner::Counter::bump(int)");
	dc_symbols_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* gcc's .cold parts (testdata/emu_cold, emu_coldxx: -O2) are their
 * function's code: an address in "process.cold" has process's key and
 * name (its range is the part's own), and, in a process, process's entry
 * as its function's start; the decoder's dc_sym_func_part still tells the
 * part apart ("process.cold", for jump events). C++: "app::step(int)
 * [clone .cold]" is app::step(int)'s. */
static void test_cold_parts(void **state)
{
	static const struct { const char *name; size_t base; } names[] = {
		{ "process.cold", 7 }, { "f.cold.12", 1 }, { "f.isra.0.cold", 8 },
		{ "step(int) [clone .cold]", 9 }, { "step(int) [clone .cold.3]", 9 },
		{ "f(int) [clone .isra.0] [clone .cold]", 22 }, { "x.cold.cold", 6 },
		{ "cold", 0 }, { ".cold", 0 }, { "f.colder", 0 }, { "f.cold.", 0 },
		{ "f.cold1", 0 }, { "f.cold.1x", 0 },
		{ "f [clone .cold.]", 0 }, { "[clone .cold]", 0 }, { "", 0 },
	};
	static const struct { const char *prog, *hot, *cold; } progs[] = {
		{ "emu_cold", "process", "process.cold" },
		{ "emu_cold", "walk", "walk.cold" },
		{ "emu_coldxx", "app::step(int)", "app::step(int) [clone .cold]" },
		{ "emu_coldxx", "main", "main.cold" },
		/* (process's kept name is its global alias, in .dynsym too) */
		{ "cold_alias", "api_process", "process.cold" },
	};
	const uint64_t base = 0x555555554000ull;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (dc_sym_cold_base(names[i].name, strlen(names[i].name)) != names[i].base)
			fail_msg("dc_sym_cold_base(%s) = %zu, want %zu", names[i].name,
				 dc_sym_cold_base(names[i].name, strlen(names[i].name)), names[i].base);
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct nmsym *v;
		size_t n = nm_funcs(tpath(progs[i].prog), &v);
		const struct nmsym *h = nm_find(v, n, progs[i].hot), *c = nm_find(v, n, progs[i].cold);
		struct dc_sideband *sb;
		struct dc_symbols *s;
		uint64_t lo, hi, kh, kc;
		int dso;

		if (!h || !c)
			fail_msg("nm has no %s or %s in %s", progs[i].hot, progs[i].cold,
				 progs[i].prog);
		assert_int_equal(dc_sb_new(&sb), 0);
		assert_int_equal(dc_symbols_new(NULL, sb, &s), 0);
		dso = dc_sym_dso(s, tpath(progs[i].prog), NULL, 0);
		assert_true(dso >= 0);
		kh = dc_sym_dso_lookup(s, dso, h->addr + 1, &lo, &hi);
		assert_string_equal(dc_sym_name(s, kh), progs[i].hot);
		kc = dc_sym_dso_lookup(s, dso, c->addr + c->size - 1, &lo, &hi);
		assert_int_equal(kc, kh);
		assert_int_equal(lo, c->addr);
		assert_int_equal(hi, c->addr + c->size);
		/* in a process (a PIE mapped whole at base) */
		assert_int_equal(dc_sb_mmap(sb, 100, 0, base, 0x20000, 0, tpath(progs[i].prog),
					    NULL, 0), 0);
		assert_int_equal(dc_sym_func_key(s, 100, base + c->addr), kh);
		assert_int_equal(dc_sym_func_key(s, 100, base + h->addr), kh);
		assert_int_equal(dc_sym_func_start(s, 100, base + c->addr + 1), base + h->addr);
		assert_int_equal(dc_sym_func_start(s, 100, base + h->addr + 1), base + h->addr);
		kc = dc_sym_func_part(s, 100, base + c->addr + 1, &lo, &hi);
		assert_true(kc != kh);
		assert_string_equal(dc_sym_name(s, kc), progs[i].cold);
		assert_int_equal(lo, base + c->addr);
		assert_int_equal(dc_sym_func_part(s, 100, base + h->addr, &lo, &hi), kh);
		assert_int_equal(lo, base + h->addr);
		dc_symbols_free(s);
		dc_sb_free(sb);
		free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symtab),
		cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_process_lookup),
		cmocka_unit_test(test_search_paths),
		cmocka_unit_test(test_strip_debug_only),
		cmocka_unit_test(test_image_cache),
		cmocka_unit_test(test_preload_dwarf),
		cmocka_unit_test(test_build_id_eq),
		cmocka_unit_test(test_insn_count_per_code),
		cmocka_unit_test(test_fde),
		cmocka_unit_test(test_cold_parts),
		cmocka_unit_test(test_versioned_cxx_name),
	};

	find_testdata();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
