/* ptflame - record/: --filter FUNC: a function symbol -> the kernel's
 * address-filter range "START/SIZE@FILE", where START is a FILE offset
 * (the kernel maps it through each mapping's vm_pgoff). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "record/ptrecord.h"

/* Virtual address -> file offset through the PT_LOAD segment holding it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* Look for a defined function named func in one symbol table section. */
static int find_in_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			  const char *func, GElf_Sym *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (!data || !sh->sh_entsize)
		return -ENOENT;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name && !strcmp(name, func)) {
			*out = sym;
			return 0;
		}
	}
	return -ENOENT;
}

int rc_pt_resolve_filter(const char *path, const char *func, uint64_t *file_off,
			 uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Sym sym = { 0 };   /* (set when rc becomes 0; -O3 cannot tell) */
	int fd, rc = -ENOENT;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = -ENOEXEC;
		goto out;
	}
	/* .symtab first (has static functions), then .dynsym. */
	for (int pass = 0; pass < 2 && rc; pass++) {
		scn = NULL;
		while (rc && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				rc = find_in_symtab(elf, scn, &sh, func, &sym);
		}
	}
	if (!rc) {
		rc = vaddr_to_offset(elf, sym.st_value, file_off);
		/* A size-less symbol (hand-written asm) still gets one byte. */
		*size = sym.st_size ? sym.st_size : 1;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}
