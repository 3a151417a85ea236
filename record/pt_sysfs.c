/* ptflame - record/: sysfs text parsing for the PT recorder (pure). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/pt_internal.h"

static const char *skip_space(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

static int parse_uint(const char **s, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	*v = strtoul(*s, &end, 10);
	if (errno)
		return -EINVAL;
	*s = end;
	return 0;
}

/* "A" or "A-B" (A <= B) at *s, which moves past it; *a, *b the bounds. */
static int parse_range(const char **s, unsigned long *a, unsigned long *b)
{
	if (parse_uint(s, a))
		return -EINVAL;
	*b = *a;
	if (**s == '-') {
		(*s)++;
		if (parse_uint(s, b) || *b < *a)
			return -EINVAL;
	}
	return 0;
}

int rc_pt_parse_cpulist(const char *s, int *cpus, size_t max)
{
	size_t n = 0;

	s = skip_space(s);
	if (!*s)
		return -EINVAL;
	while (*s) {
		unsigned long a, b;

		if (parse_range(&s, &a, &b) || b > 1u << 20)
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++) {
			if (n == max)
				return -E2BIG;
			cpus[n++] = (int)c;
		}
		if (*s == ',')
			s++;
		else if (*skip_space(s))
			return -EINVAL;
		else
			break;
	}
	return (int)n;
}

int rc_pt_parse_format(const char *s, uint64_t *mask)
{
	*mask = 0;
	s = skip_space(s);
	if (strncmp(s, "config:", 7))
		return -EINVAL;
	s += 7;
	for (;;) {
		unsigned long a, b;

		if (parse_range(&s, &a, &b) || b > 63)
			return -EINVAL;
		for (unsigned long i = a; i <= b; i++)
			*mask |= 1ULL << i;
		if (*s != ',')
			break;
		s++;
	}
	return *skip_space(s) ? -EINVAL : 0;
}

int rc_pt_set_field(uint64_t *config, uint64_t mask, uint64_t value)
{
	for (int bit = 0; bit < 64; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		if (value & 1)
			*config |= 1ULL << bit;
		else
			*config &= ~(1ULL << bit);
		value >>= 1;
	}
	return value ? -ERANGE : 0;
}

int rc_pt_pick_period(uint64_t valid, int target)
{
	int pick = -1;

	for (int v = 0; v < 64; v++) {
		if (!(valid & (1ULL << v)))
			continue;
		if (v <= target || pick < 0)
			pick = v;
		if (v >= target)
			break;
	}
	return pick;
}

void rc_pt_valid_str(uint64_t valid, char *buf, size_t len)
{
	size_t pos = 0;
	int v = 0;

	if (len)
		buf[0] = '\0';
	while (v < 64) {
		int end;

		if (!(valid & (1ULL << v))) {
			v++;
			continue;
		}
		end = v;
		while (end + 1 < 64 && (valid & (1ULL << (end + 1))))
			end++;
		if (pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%d", pos ? "," : "", v);
		if (end > v && pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%d", end > v + 1 ? "-" : ",", end);
		v = end + 1;
	}
}

int rc_pt_parse_module(const char *line, char *name, size_t namelen, uint64_t *addr,
		       uint64_t *size)
{
	char nm[64], state[16];
	unsigned long long sz, a;
	int n = 0;

	/* "name size refcount deps state address [taint]" */
	if (sscanf(line, "%63s %llu %*d %*s %15s %llx%n", nm, &sz, state, &a, &n) != 4 || !n)
		return -EINVAL;
	if (strcmp(state, "Live") || !a || !sz)
		return -ENOENT;
	snprintf(name, namelen, "[%s]", nm);
	*addr = a;
	*size = sz;
	return 0;
}
