/* ptflame tests: a perf.data written with the writer, with known contents,
 * shared by the unit tests (round trip through the reader) and the e2e test
 * (perf script -D reads it). */
#ifndef PTFLAME_TEST_PERFDATA_SAMPLE_H
#define PTFLAME_TEST_PERFDATA_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "record/record.h"

/* The values written; tests compare what readers see against these. */
#define SMP_PT_TYPE 8              /* intel_pt PMU type, also priv[0] */
#define SMP_PT_ID0 1001
#define SMP_PT_ID1 1002
#define SMP_DUMMY_ID0 2001
#define SMP_DUMMY_ID1 2002
#define SMP_PID 4242
#define SMP_TID 4243
#define SMP_CHILD 4250
#define SMP_COMM "sample-prog"
#define SMP_FILE "/usr/lib/sample/libsample.so"
#define SMP_MMAP_START 0x7f0012340000ULL
#define SMP_MMAP_LEN 0x21000ULL
#define SMP_MMAP_PGOFF 0x3000ULL
#define SMP_MMAP_INO 123456ULL
#define SMP_T0 1000000000ULL       /* first record's time, ns */
#define SMP_AUX_REF 0x1122334455667788ULL

/* The AUXTRACE payload: PSB, PSBEND, PADs (a valid PT stream), then 5 odd
 * bytes so the writer must pad. */
extern const uint8_t smp_aux_payload[];
extern const size_t smp_aux_payload_size;
extern const struct dc_pt_info smp_pt_info;

/* The sample's two attrs (intel_pt: SMP_PT_ID0/1, dummy: SMP_DUMMY_ID0/1). */
int smp_add_attrs(struct rc_perf_writer *w);
/* Write the sample file to path; 0 or a negative errno (message in err). */
int smp_write(const char *path, char *err, size_t errlen);
/* The same plus `extra` more COMM records at the end (big files). */
int smp_write_n(const char *path, unsigned extra, char *err, size_t errlen);
/* The sample with `extra_maps` MMAP2 records after it (file names from
 * smp_extra_file), compressed as perf record -z at level (0: not). */
int smp_write_z(const char *path, unsigned extra_maps, int level, char *err, size_t errlen);
#define SMP_EXTRA_NAME 200
void smp_extra_file(unsigned i, char name[SMP_EXTRA_NAME]);

#endif
