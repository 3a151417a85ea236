/* ptflame - decoder/fde.c: the function ranges of an ELF file's .eh_frame.
 *
 * Every function a compiler emits has an FDE there, and strip keeps it, so
 * the code of a stripped binary's own functions can still be told apart
 * (DESIGN.md section 4, "Unnamed code"). libdw walks the section
 * (dwarf_next_cfi: entry lengths, CIE or FDE, the CIE's augmentation); its
 * lookup by address (dwarf_cfi_addrframe, dwarf_frame_info) gives only the
 * CFI row around the address, not the FDE's range, and libdw has no call
 * that does. So the FDE's two leading fields, its initial location and
 * address range, are read here, in the pointer encoding the CIE's 'R'
 * augmentation names. Encodings compilers do not emit for them (LEB128,
 * relative to text or data, indirect) leave that FDE out: its code stays
 * unnamed. */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "decoder/dc_vec.h"
#include "decoder/symbols.h"

#define PE_OMIT 0xff

/* Bytes of a fixed-size pointer encoding; 0: not one. */
static size_t enc_size(uint8_t enc, bool elf64)
{
	switch (enc & 0x0f) {
	case 0x00: return elf64 ? 8 : 4;       /* absptr */
	case 0x02: case 0x0a: return 2;        /* udata2, sdata2 */
	case 0x03: case 0x0b: return 4;        /* udata4, sdata4 */
	case 0x04: case 0x0c: return 8;        /* udata8, sdata8 */
	default: return 0;
	}
}

/* A pointer of encoding enc (its format only) at p, sign-extended when
 * signed. */
static uint64_t enc_read(const uint8_t *p, uint8_t enc, size_t n, bool little)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[little ? i : n - 1 - i] << (8 * i);
	if ((enc & 0x08) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= UINT64_MAX << (8 * n);
	return v;
}

/* The FDE pointer encoding of a CIE ('R' in a "z" augmentation; absptr
 * without one); PE_OMIT when it cannot be told. */
static uint8_t cie_fde_enc(const Dwarf_CIE *c, bool elf64)
{
	const uint8_t *p = c->augmentation_data, *end = p + c->augmentation_data_size;
	const char *a = c->augmentation;

	if (!a || a[0] != 'z')
		return a && !a[0] ? 0x00 : PE_OMIT;
	for (a++; *a; a++) {
		size_t n;

		switch (*a) {
		case 'L': p++; break;                  /* LSDA encoding */
		case 'P':                              /* personality */
			if (p >= end || !(n = enc_size(*p, elf64)))
				return PE_OMIT;
			p += 1 + n;
			break;
		case 'R': return p < end ? *p : PE_OMIT;
		case 'S': case 'B': case 'G': break;   /* no data */
		default: return PE_OMIT;
		}
	}
	return 0x00;
}

/* One FDE's [start, end) at section address sec_addr + (f->start - base). */
static bool fde_range(const Dwarf_FDE *f, uint8_t enc, const uint8_t *base, uint64_t sec_addr,
		      bool elf64, bool little, struct dc_fde *out)
{
	size_t n = enc_size(enc, elf64);
	uint64_t loc;

	if (enc == PE_OMIT || (enc & 0x80) || ((enc & 0x70) != 0x00 && (enc & 0x70) != 0x10) ||
	    !n || f->start + 2 * n > f->end)
		return false;
	loc = enc_read(f->start, enc, n, little);
	if ((enc & 0x70) == 0x10)              /* pcrel: from the field itself */
		loc += sec_addr + (uint64_t)(f->start - base);
	out->start = loc;
	out->end = loc + enc_read(f->start + n, enc & 0x07, n, little);
	return out->end > out->start;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct dc_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Walk the section's entries; each FDE's CIE is read again only when it is
 * another than the last one's (compilers emit one or two per unit). */
static int walk(Elf *elf, Elf_Data *d, uint64_t sec_addr, struct dc_fde **v, size_t *n)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	bool elf64 = ident[EI_CLASS] == ELFCLASS64, little = ident[EI_DATA] == ELFDATA2LSB;
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint8_t enc = PE_OMIT;
	size_t cap = 0;
	Dwarf_CFI_Entry e, ce;

	while (off < d->d_size) {
		int r = dwarf_next_cfi(ident, d, true, off, &next, &e);

		if (r > 0 || next <= off)
			break;
		off = next;
		if (r < 0 || dwarf_cfi_cie_p(&e))
			continue;
		if (e.fde.CIE_pointer != cie_off) {
			Dwarf_Off skip;

			cie_off = e.fde.CIE_pointer;
			enc = !dwarf_next_cfi(ident, d, true, cie_off, &skip, &ce) &&
			      dwarf_cfi_cie_p(&ce) ? cie_fde_enc(&ce.cie, elf64) : PE_OMIT;
		}
		if (DC_VEC_PUSH_ROOM(*v, *n, cap, 256))
			return -ENOMEM;
		if (fde_range(&e.fde, enc, d->d_buf, sec_addr, elf64, little, &(*v)[*n]))
			(*n)++;
	}
	return 0;
}

int dc_fde_ranges(Elf *elf, struct dc_fde **out, size_t *nout)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = 0;

	*out = NULL;
	*nout = 0;
	if (!elf || !elf_getident(elf, NULL) || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) && !ret) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		/* (lld types it SHT_X86_64_UNWIND) */
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(name, ".eh_frame") ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		ret = walk(elf, d, sh.sh_addr, out, nout);
	}
	if (ret) {
		free(*out);
		*out = NULL;
		*nout = 0;
	} else if (*nout) {
		qsort(*out, *nout, sizeof(**out), cmp_fde);
	}
	return ret;
}

const struct dc_fde *dc_fde_find(const struct dc_fde *v, size_t n, uint64_t vaddr)
{
	size_t a = DC_VEC_UPPER(v, n, start, vaddr);   /* first starting after vaddr */

	/* (FDEs do not nest: the last one starting at or before vaddr) */
	return a && vaddr < v[a - 1].end ? &v[a - 1] : NULL;
}
