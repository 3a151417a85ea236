/* record/emulate_sym.c: the emulator's view of a process's code. Tested on
 * this test program itself: its own /proc/self/maps, its own symbols. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/emulate.h"

int main(void);

__attribute__((noinline, used)) int emu_helper_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, used)) int emu_helper_b(int x)
{
	return x * 5 + emu_helper_a(x);
}

static const struct rc_map *map_of(const struct rc_map *m, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= m[i].start && a < m[i].end)
			return &m[i];
	return NULL;
}

static void self_exe(char *buf, size_t n)
{
	ssize_t r = readlink("/proc/self/exe", buf, n - 1);
	assert_true(r > 0);
	buf[r] = 0;
}

static void test_maps_hold_our_code(void **state)
{
	(void)state;
	struct rc_map *m;
	size_t n;
	assert_int_equal(rc_maps_read(getpid(), false, &m, &n), 0);
	char exe[PATH_MAX];
	self_exe(exe, sizeof(exe));
	const struct rc_map *mm = map_of(m, n, (uintptr_t)emu_helper_a);
	assert_non_null(mm);
	assert_string_equal(mm->path, exe);
	assert_true(mm->prot & 4);  /* PROT_EXEC */
	/* only executable mappings: our stack is not listed */
	int local;
	assert_null(map_of(m, n, (uintptr_t)&local));
	/* nor [vsyscall] (a kernel address), which only `all` lists */
	assert_null(map_of(m, n, 0xffffffffff600000ull));
	rc_maps_free(m, n);
}

/* Anonymous executable memory (JIT code) is listed as "//anon", as perf's
 * MMAP records name it, so that a recording says what is there. */
static void test_maps_anon_exec(void **state)
{
	(void)state;
	struct rc_map *m;
	size_t n;
	void *x = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *d = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(x != MAP_FAILED && d != MAP_FAILED);
	assert_int_equal(rc_maps_read(getpid(), false, &m, &n), 0);
	const struct rc_map *mm = map_of(m, n, (uintptr_t)x);
	assert_non_null(mm);
	assert_string_equal(mm->path, "//anon");
	assert_null(map_of(m, n, (uintptr_t)d));
	rc_maps_free(m, n);
	munmap(x, 4096);
	munmap(d, 4096);
}

static void test_bad_pid(void **state)
{
	(void)state;
	struct rc_map *m;
	size_t n;
	assert_true(rc_maps_read(0x7ffffff0, false, &m, &n) < 0);
}

static void test_symbol_addresses(void **state)
{
	(void)state;
	struct rc_map *m;
	size_t n;
	assert_int_equal(rc_maps_read(getpid(), false, &m, &n), 0);
	char exe[PATH_MAX];
	self_exe(exe, sizeof(exe));
	struct rc_emu_syms *s = rc_emu_syms_new();
	assert_non_null(s);
	assert_int_equal(rc_emu_sym_addr(s, m, n, exe, "emu_helper_a"), (uintptr_t)emu_helper_a);
	assert_int_equal(rc_emu_sym_addr(s, m, n, exe, "emu_helper_b"), (uintptr_t)emu_helper_b);
	assert_int_equal(rc_emu_sym_addr(s, m, n, exe, "main"), (uintptr_t)main);
	assert_int_equal(rc_emu_sym_addr(s, m, n, exe, "no_such_symbol_here"), 0);
	assert_int_equal(rc_emu_sym_addr(s, m, n, "/no/such/file", "main"), 0);
	rc_emu_syms_free(s);
	rc_maps_free(m, n);
}

static void test_function_keys(void **state)
{
	(void)state;
	struct rc_map *m;
	size_t n;
	assert_int_equal(rc_maps_read(getpid(), false, &m, &n), 0);
	struct rc_emu_syms *s = rc_emu_syms_new();
	uint64_t a = (uintptr_t)emu_helper_a, b = (uintptr_t)emu_helper_b;
	const struct rc_map *ma = map_of(m, n, a), *mb = map_of(m, n, b);
	assert_non_null(ma);
	/* inside one function: one key; two functions: two keys */
	assert_true(rc_emu_func_key(s, ma, a) == rc_emu_func_key(s, ma, a + 2));
	assert_true(rc_emu_func_key(s, ma, a) != rc_emu_func_key(s, mb, b));
	/* libc: atoi and qsort are different functions (dynsym; not IFUNCs,
	 * whose chosen variants have no symbol in Debian's stripped libc) */
	uint64_t sl = (uintptr_t)atoi, mc = (uintptr_t)qsort;
	const struct rc_map *ml = map_of(m, n, sl), *mm = map_of(m, n, mc);
	assert_non_null(ml);
	assert_non_null(mm);
	assert_true(rc_emu_func_key(s, ml, sl) != rc_emu_func_key(s, mm, mc));
	/* no mapping: one "unknown" key, never equal to a real function's */
	assert_true(rc_emu_func_key(s, NULL, 1) == rc_emu_func_key(s, NULL, 2));
	assert_true(rc_emu_func_key(s, NULL, a) != rc_emu_func_key(s, ma, a));
	rc_emu_syms_free(s);
	rc_maps_free(m, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_hold_our_code),
		cmocka_unit_test(test_maps_anon_exec),
		cmocka_unit_test(test_bad_pid),
		cmocka_unit_test(test_symbol_addresses),
		cmocka_unit_test(test_function_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL) + (emu_helper_b(1) == 0);
}
