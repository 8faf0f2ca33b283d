// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check-ntb's guest helper (static, the guest has no libc): whether a
 * device's DMA lands in this machine's memory while a read is pending.
 *
 *   sio_dmacanary DEV OFFSET LEN WATCH_S NOTE >OUT
 *
 * Fills a shared buffer of LEN bytes (a multiple of 4096) with a canary,
 * reads LEN bytes of DEV at OFFSET into it with O_DIRECT in a child (the
 * device writes the buffer itself), and watches the buffer for WATCH_S
 * seconds; then writes its verdict to NOTE (the caller waits for that
 * file), waits for the read (up to 300 s more) and writes the buffer to
 * standard output.  Exit status:
 *   0  the canary was intact for WATCH_S s with the read pending, and the
 *      read then returned LEN bytes (on standard output)
 *   1  bytes of the canary changed while the read was pending: data
 *      landed (the offset of the first changed byte is in NOTE)
 *   2  the read returned within WATCH_S s
 *   3  the canary held, but the read then failed or returned short
 *      (standard error says how, and whether the canary still holds)
 *   4  the read was still pending after 300 s more
 *   5  usage or setup error
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The canary byte at i: position-dependent, no disk content matches it. */
static unsigned char canary(size_t i)
{
	return (unsigned char)(0xc5 ^ (i * 131) ^ (i >> 9));
}

static void note(const char *path, const char *fmt, long a, long b)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fprintf(f, fmt, a, b);
	fputc('\n', f);
	fclose(f);
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

/* The first byte of buf that is not the canary, or -1. */
static long changed(const volatile unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != canary(i))
			return (long)i;
	return -1;
}

int main(int argc, char **argv)
{
	volatile unsigned char *buf;
	volatile long *result;
	size_t len, i;
	long off, watch, t0, first = -1;
	pid_t child;
	int status, fd;

	if (argc != 6) {
		fprintf(stderr, "usage: sio_dmacanary DEV OFFSET LEN WATCH_S NOTE\n");
		return 5;
	}
	off = strtol(argv[2], NULL, 0);
	len = strtoul(argv[3], NULL, 0);
	watch = strtol(argv[4], NULL, 0);
	if (off < 0 || off % 4096 || !len || len % 4096 || len > (1u << 20) ||
	    watch <= 0) {
		fprintf(stderr, "sio_dmacanary: OFFSET and LEN multiples of 4096 (LEN <= 1 MiB), WATCH_S > 0\n");
		return 5;
	}
	/* Shared with the child: it reads into it, we watch it. */
	buf = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		return 5;
	}
	result = (volatile long *)(buf + len);
	*result = -1000;
	for (i = 0; i < len; i++)
		buf[i] = canary(i);
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 5;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 5;
	}
	if (child == 0) {
		ssize_t n = pread(fd, (void *)buf, len, off);

		*result = n < 0 ? -errno : n;
		_exit(0);
	}
	t0 = now_ms();
	while (now_ms() - t0 < watch * 1000) {
		first = changed(buf, len);
		if (first >= 0 || waitpid(child, &status, WNOHANG) == child)
			break;
		usleep(20000);
	}
	if (first >= 0) {
		note(argv[5], "landed: byte %ld of the buffer changed after %ld ms, before the read was seen to return",
		     first, now_ms() - t0);
		return 1;
	}
	if (*result != -1000) {
		note(argv[5], "returned: the read returned %ld after %ld ms",
		     *result, now_ms() - t0);
		return 2;
	}
	note(argv[5], "intact: the canary held for %ld s with the read of %ld bytes pending",
	     watch, (long)len);
	/* The verdict above is the caller's cue; now the read's end. */
	for (t0 = now_ms(); now_ms() - t0 < 300000; usleep(100000))
		if (waitpid(child, &status, WNOHANG) == child)
			break;
	if (*result == -1000) {
		kill(child, SIGKILL);
		fprintf(stderr, "sio_dmacanary: the read still pending after 300 s more\n");
		return 4;
	}
	if (*result != (long)len) {
		first = changed(buf, len);
		fprintf(stderr, "sio_dmacanary: the read returned %ld (%s), ",
			*result, *result < 0 ? strerror((int)-*result) : "short");
		if (first < 0)
			fprintf(stderr, "the canary intact\n");
		else
			fprintf(stderr, "byte %ld of the canary changed\n",
				first);
		return 3;
	}
	if (fwrite((const void *)buf, 1, len, stdout) != len)
		return 5;
	return 0;
}
