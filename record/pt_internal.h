/* ptflame - record/: helpers of the hardware PT recorder (internal).
 * Pure parsing of the sysfs texts the recorder reads, unit tested in
 * tests/unit/test_ring_sysfs.c. */
#ifndef PTFLAME_RECORD_PT_INTERNAL_H
#define PTFLAME_RECORD_PT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* "0-3,5,7-8\n" (/sys/devices/system/cpu/online) -> cpus[]. Returns the
 * number of CPUs, -E2BIG when more than max, -EINVAL for junk. */
int rc_pt_parse_cpulist(const char *s, int *cpus, size_t max);

/* A PMU format file ("config:14-17", "config:0", "config:1,3") -> the
 * mask of config bits it names. Only "config" fields are accepted (intel_pt
 * has no config1/config2 terms we use). 0 or -EINVAL. */
int rc_pt_parse_format(const char *s, uint64_t *mask);

/* Store value into the bits of mask (lowest bit of value into the lowest
 * bit of mask, and so on, like perf's format terms). -ERANGE when value
 * needs more bits than mask has. */
int rc_pt_set_field(uint64_t *config, uint64_t mask, uint64_t value);

/* Default period from a caps bitmask of valid values (caps/mtc_periods,
 * caps/psb_periods): the largest valid value <= target, else the smallest
 * valid one; -1 when none is valid. */
int rc_pt_pick_period(uint64_t valid, int target);

/* Valid values of a caps bitmask as text, "0,3,5-9" (for error messages). */
void rc_pt_valid_str(uint64_t valid, char *buf, size_t len);

#endif
