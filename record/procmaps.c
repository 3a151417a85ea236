/* Executable mappings of a running process from /proc/PID/maps. */
#include "decoder/dc_vec.h"
#include "record/procmaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* 1 and *m filled, 0 skipped, or -ENOMEM. */
static int parse_line(const char *line, bool all, struct rc_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
		   &off, &maj, &min, &ino, &pos) < 7)
		return 0;
	if (perms[2] != 'x')
		return 0;
	const char *path = line + pos;
	size_t len = strcspn(path, "\n");
	/* (anonymous ones too: JIT code, which perf records as //anon) */
	if (!all && len && path[0] != '/' && (len != 6 || memcmp(path, "[vdso]", 6)))
		return 0;
	if (len == 0) {
		path = "//anon";
		len = strlen(path);
	}
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = off;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  PROT_EXEC;
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	m->path = strndup(path, len);
	return m->path ? 1 : -ENOMEM;
}

int rc_maps_read(pid_t pid, bool all, struct rc_map **out, size_t *n)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -errno;
	struct rc_map *maps = NULL;
	size_t nr = 0, cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	int rc = 0;
	while (getline(&line, &lcap, f) > 0) {
		struct rc_map m;
		int r = parse_line(line, all, &m);
		if (r < 0) {
			rc = r;
			break;
		}
		if (r == 0)
			continue;
		if (DC_VEC_PUSH_ROOM(maps, nr, cap, 16)) {
			free(m.path);
			rc = -ENOMEM;
			break;
		}
		maps[nr++] = m;
	}
	free(line);
	fclose(f);
	if (rc < 0) {
		rc_maps_free(maps, nr);
		return rc;
	}
	*out = maps;
	*n = nr;
	return 0;
}

void rc_maps_free(struct rc_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

void rc_map_mmap2(const struct rc_map *m, uint32_t pid, uint32_t tid, struct dc_rec_mmap *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->tid = tid;
	r->start = m->start;
	r->len = m->end - m->start;
	r->pgoff = m->pgoff;
	r->is_mmap2 = true;
	r->maj = m->maj;
	r->min = m->min;
	r->ino = m->ino;
	r->prot = m->prot;
	r->flags = m->flags;
	r->filename = m->path;
}

pid_t rc_proc_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}
