/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One small text file read whole (a /proc or /sys entry, a mounted
 * namespace's attribute), header-only so that smartiofs, the simulator
 * and contrib tools share it without linking anything.
 */
#ifndef SIO_READ_TEXT_H
#define SIO_READ_TEXT_H

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Up to cap - 1 bytes of the file at path, NUL-terminated in buf (cap
 * > 0): how many, or -errno (buf untouched).  One read: these files
 * answer in one.
 */
static inline ssize_t sio_read_text(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return n;
}

#endif /* SIO_READ_TEXT_H */
