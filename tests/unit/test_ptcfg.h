/* The PT decoder unit tests' one random configuration: a buffer, and the
 * timing settings libipt's query decoder reads (MTC period, CPUID 0x15
 * ratio or none, nominal frequency, the SKL168 erratum), drawn with the
 * test's generator (test_rnd.h) so that a failure reproduces. */
#ifndef PTFLAME_TEST_PTCFG_H
#define PTFLAME_TEST_PTCFG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <intel-pt.h>

#include "tests/unit/test_rnd.h"

static inline struct pt_config test_ptcfg(uint64_t *rs, uint8_t *buf, size_t len)
{
	static const uint8_t freqs[] = { 0, 1, 2, 3, 3, 3, 5, 7, 9, 10, 12 };
	struct pt_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.begin = buf;
	c.end = buf + len;
	c.mtc_freq = freqs[test_rnd(rs) % sizeof(freqs)];
	if (test_rnd(rs) % 10) {
		c.cpuid_0x15_eax = 1 + (uint32_t)(test_rnd(rs) % 4);
		c.cpuid_0x15_ebx = 1 + (uint32_t)(test_rnd(rs) % 400);
	}
	c.nom_freq = test_rnd(rs) % 3 ? (uint8_t)(8 + test_rnd(rs) % 40) : 0;
	c.errata.skl168 = test_rnd(rs) & 1;
	return c;
}

#endif
