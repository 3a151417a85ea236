/* ptflame - flamegraph/: what a read folded file holds (internal). */
#ifndef PTFLAME_FG_FOLDED_INTERNAL_H
#define PTFLAME_FG_FOLDED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_folded_entry {
	char *stack;
	uint64_t value;
};

struct fg_folded_list {
	struct fg_folded_entry *e;
	size_t n, cap;
};

struct fg_folded {
	struct fg_folded_list raw;    /* as read (annotations kept), file order */
	struct fg_folded_list plain;  /* plain names, sorted bytewise          */
	uint64_t total;
	bool annotated;
};

#endif
