/* Unit tests for decoder/symbols.c: a damaged ELF file costs work in
 * proportion to its size. Section headers can name the same bytes any number
 * of times; symbols.c reads at most the file's size of PLT, relocation and
 * symbol-table sections in all (the ELF files are written here). */
#include <elf.h>
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

#include "decoder/symbols.h"

#define PLT_OFF 128
#define PLT_SIZE 4096
#define PLT_ADDR(i) (UINT64_C(0x10000) * ((i) + 1))

/* An x86-64 ELF file whose nplt section headers, all named ".plt", share
 * one PLT_SIZE bytes of code in the file at different addresses
 * (PLT_ADDR(i)). Returns the file's path (in a fresh temporary folder). */
static char *write_elf(unsigned nplt, char *dir)
{
	static const char shstr[] = "\0.shstrtab\0.plt";
	unsigned shnum = 2 + nplt;
	size_t shoff = PLT_OFF + PLT_SIZE, size = shoff + shnum * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, size);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);
	char *path = malloc(PATH_MAX);
	FILE *f;

	assert_non_null(img);
	assert_non_null(path);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (uint16_t)shnum;
	eh->e_shstrndx = 1;
	memcpy(img + sizeof(*eh), shstr, sizeof(shstr));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = sizeof(*eh),
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	for (unsigned i = 0; i < nplt; i++)
		sh[2 + i] = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_PROGBITS,
					  .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = PLT_ADDR(i),
					  .sh_offset = PLT_OFF, .sh_size = PLT_SIZE,
					  .sh_addralign = 16, .sh_entsize = 16 };
	memset(img + PLT_OFF, 0x90, PLT_SIZE);      /* nops: PLT entries without a slot */
	snprintf(path, PATH_MAX, "%s/damaged.so", dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
	free(img);
	return path;
}

static const char *name_at(struct dc_symbols *s, int dso, uint64_t vaddr)
{
	uint64_t lo, hi;
	const char *n = dc_sym_name(s, dc_sym_dso_lookup(s, dso, vaddr, &lo, &hi));

	return n ? n : "(none)";
}

/* The first .plt is read (every entry a function named "[.plt]"); the
 * others name bytes already read and are skipped: without the bound, a file
 * of a few KB with thousands of such headers made millions of symbols. */
static void test_plt_sections_share_bytes(void **state)
{
	char dir[] = "/tmp/ptflame-symbound.XXXXXX";
	struct dc_symbols *s;
	char *path;
	int dso;
	uint64_t lo, hi;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = write_elf(3, dir);
	assert_int_equal(dc_symbols_new(NULL, NULL, &s), 0);
	dso = dc_sym_dso(s, path, NULL, 0);
	assert_true(dso >= 0);
	assert_non_null(dc_sym_dso_file(s, dso));
	assert_string_equal(name_at(s, dso, PLT_ADDR(0)), "[.plt]");
	assert_string_equal(name_at(s, dso, PLT_ADDR(0) + PLT_SIZE - 16), "[.plt]");
	dc_sym_dso_lookup(s, dso, PLT_ADDR(0) + 32, &lo, &hi);
	assert_int_equal(lo, PLT_ADDR(0) + 32);
	assert_int_equal(hi, PLT_ADDR(0) + 48);
	for (unsigned i = 1; i < 3; i++)
		assert_string_not_equal(name_at(s, dso, PLT_ADDR(i)), "[.plt]");
	dc_symbols_free(s);
	unlink(path);
	rmdir(dir);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plt_sections_share_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
