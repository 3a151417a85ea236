/* ptflame - decoder/outfile.c: the output-target rule (see outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/outfile.h"

/* The descriptor a name stands for (-, /dev/stdout, /dev/fd/N, ...), or -1. */
static int named_fd(const char *path)
{
	static const char *const prefixes[] = { "/dev/fd/", "/proc/self/fd/" };
	char *end;
	long n;

	if (!path || !strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t len = strlen(prefixes[i]);

		if (strncmp(path, prefixes[i], len) || path[len] < '0' || path[len] > '9')
			continue;
		errno = 0;
		n = strtol(path + len, &end, 10);
		if (!errno && !*end && n <= INT_MAX)
			return (int)n;
	}
	return -1;
}

/* Where a chain of symlinks ending nowhere points: the path to create.
 * NULL when path is no symlink (or on a loop / error). */
static char *dangling_target(const char *path)
{
	char *p = strdup(path), buf[PATH_MAX];
	struct stat st;

	for (int hops = 0; p && hops < 40; hops++) {
		ssize_t n;
		char *next, *dir;

		if (lstat(p, &st) || !S_ISLNK(st.st_mode))
			return hops ? p : (free(p), NULL);
		n = readlink(p, buf, sizeof(buf) - 1);
		if (n < 0)
			break;
		buf[n] = '\0';
		dir = buf[0] == '/' ? NULL : dirname(p);
		if (asprintf(&next, "%s%s%s", dir ? dir : "", dir ? "/" : "", buf) < 0)
			break;
		free(p);
		p = next;
	}
	free(p);
	return NULL;
}

int dc_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	char *tmpl;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (asprintf(&tmpl, "%s/ptflame.XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	else
		unlink(tmpl);
	free(tmpl);
	return fd;
}

static void clear(struct dc_out *o)
{
	free(o->final);
	free(o->tmp);
	*o = (struct dc_out){ .fd = -1, .target_fd = -1 };
}

/* A temporary file beside o->final, created with mode. */
static int open_tmp(struct dc_out *o, mode_t mode, bool keep_mode)
{
	static unsigned seq;

	for (int i = 0; i < 100; i++) {
		free(o->tmp);
		if (asprintf(&o->tmp, "%s.tmp.%d.%u", o->final, (int)getpid(), seq++) < 0) {
			o->tmp = NULL;
			return -ENOMEM;
		}
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (o->fd >= 0) {
			if (keep_mode)
				fchmod(o->fd, mode);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	return -errno;
}

int dc_out_open(struct dc_out *o, const char *path, unsigned flags, mode_t mode,
		char *err, size_t errlen)
{
	int nfd = named_fd(path), ret;
	const char *name = path ? path : "stdout";
	bool existing = false;
	struct stat st;

	*o = (struct dc_out){ .fd = -1, .target_fd = -1, .flags = flags };
	if (nfd >= 0) {
		o->target_fd = fcntl(nfd, F_DUPFD_CLOEXEC, 3);
		if (o->target_fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", name, strerror(errno));
			return ret;
		}
		goto in_place;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: is a directory", path);
			return -EISDIR;
		}
		if (!S_ISREG(st.st_mode)) {
			/* a device, FIFO or socket: never replaced */
			o->target_fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
			if (o->target_fd < 0) {
				ret = -errno;
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				return ret;
			}
			goto in_place;
		}
		o->final = realpath(path, NULL);
		mode = st.st_mode & 07777;
		existing = true;
	} else if (errno == ENOENT) {
		o->final = dangling_target(path);
		if (!o->final)
			o->final = strdup(path);
	} else {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (!o->final) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
		clear(o);
		return -ENOMEM;
	}
	ret = open_tmp(o, mode, existing);
	if (ret) {
		/* (the temporary file's name would only confuse) */
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-ret));
		clear(o);
		return ret;
	}
	return 0;
in_place:
	if (!(flags & DC_OUT_SEEKABLE)) {
		o->fd = o->target_fd;
		o->target_fd = -1;
		return 0;
	}
	o->fd = dc_tmpfile();
	if (o->fd < 0) {
		ret = o->fd;
		snprintf(err, errlen, "%s: cannot create a temporary file: %s", name, strerror(-ret));
		close(o->target_fd);
		clear(o);
		return ret;
	}
	return 0;
}

/* Copy the spool (from its start) to the target. */
static int copy_spool(struct dc_out *o)
{
	char buf[1 << 16];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(o->fd, buf, sizeof(buf), off), w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		off += n;
		for (char *p = buf; n; p += w, n -= w) {
			w = write(o->target_fd, p, (size_t)n);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return -errno;
		}
	}
}

static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int dc_out_commit(struct dc_out *o, char *err, size_t errlen)
{
	const char *what = o->tmp ? o->tmp : "the output";
	int ret = 0;

	if (o->target_fd >= 0 && (ret = copy_spool(o)))
		snprintf(err, errlen, "write: %s", strerror(-ret));
	if (!ret && o->tmp && (o->flags & DC_OUT_SYNC) && fsync(o->fd) < 0) {
		ret = -errno;
		snprintf(err, errlen, "fsync %s: %s", what, strerror(errno));
	}
	if (close(o->fd) < 0 && !ret) {
		ret = -errno;
		snprintf(err, errlen, "close %s: %s", what, strerror(errno));
	}
	o->fd = -1;
	if (o->target_fd >= 0 && close(o->target_fd) < 0 && !ret) {
		ret = -errno;
		snprintf(err, errlen, "close: %s", strerror(errno));
	}
	o->target_fd = -1;
	if (!ret && o->tmp) {
		if (rename(o->tmp, o->final) < 0) {
			ret = -errno;
			snprintf(err, errlen, "rename %s: %s", o->tmp, strerror(errno));
		} else {
			if (o->flags & DC_OUT_SYNC)
				sync_dir(o->final);
			free(o->tmp);
			o->tmp = NULL;
		}
	}
	dc_out_abort(o);
	return ret;
}

void dc_out_abort(struct dc_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->target_fd >= 0)
		close(o->target_fd);
	if (o->tmp)
		unlink(o->tmp);
	clear(o);
}
