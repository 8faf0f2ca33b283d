// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reaper: a small child process that ends the FUSE connection of a
 * smartiofs that dies without stopping cleanly.
 *
 * Why it exists: the watcher thread invalidates kernel dentries
 * (fuse_lowlevel_notify_inval_entry), and the kernel takes the parent
 * directory's lock to do it.  If a client's mkdir, rmdir or lookup in that
 * directory holds the lock while it waits for this daemon's answer and the
 * daemon is SIGKILLed at that moment, the watcher stays in the kernel
 * (uninterruptible), so the process can never finish exiting, the
 * /dev/fuse descriptor is never closed and the client waits forever.  Only
 * an abort through fusectl (/sys/fs/fuse/connections/N/abort) ends that,
 * and a dying process cannot do it for itself.
 *
 * The child holds no descriptor of the daemon but one end of a pipe.  When
 * the daemon's main thread is gone while the process still exists (it is
 * dying: smartiofs never leaves its main thread early), the child aborts
 * the connection.  A clean stop closes the pipe and the child leaves.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procstat.h"
#include "sfs.h"

#define REAPER_POLL_MS 100

static struct {
	pid_t pid;
	int pipe_w;
} rp = { -1, -1 };

/* The fusectl name of the connection mounted at mnt: its device minor. */
static int connection_of(const char *mnt, unsigned *conn)
{
	char line[4096], point[4096], type[256];
	unsigned major, minor;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return -errno;
	/* "id parent major:minor root point opts ... - type source opts";
	 * the last match wins, as a mount over another hides it. */
	while (fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*u %*u %u:%u %*s %4095s", &major,
				    &minor, point) != 3 ||
		    sscanf(dash, " - %255s", type) != 1)
			continue;
		if (strcmp(point, mnt) || strncmp(type, "fuse", 4))
			continue;
		*conn = (major << 20) | minor;
		found = 1;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static void abort_connection(unsigned conn, const char *mnt)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", conn);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	/* fusectl is mounted at boot by systemd, but not in every container. */
	if (fd < 0 && errno == ENOENT &&
	    !mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL))
		fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		fprintf(stderr, "smartiofs: %s: daemon died stuck in the kernel "
			"and %s cannot be written: %s\n", mnt, path,
			strerror(errno));
	} else {
		fprintf(stderr, "smartiofs: %s: daemon died with a thread stuck "
			"in the kernel; FUSE connection %u aborted\n", mnt,
			conn);
	}
	if (fd >= 0)
		close(fd);
}

static void reaper_main(pid_t daemon, int pipe_r, unsigned conn,
			const char *mnt)
{
	struct pollfd p = { .fd = pipe_r, .events = POLLIN };
	char state;

	for (;;) {
		if (poll(&p, 1, REAPER_POLL_MS) > 0)
			_exit(0);	/* clean stop, or the process is gone */
		state = sio_proc_stat(daemon, NULL);
		if (!state)
			_exit(0);
		/* Its files are released before it becomes a zombie: a
		 * closed pipe here means it is not stuck, only dead. */
		if ((state == 'Z' || state == 'X') && poll(&p, 1, 0) == 0) {
			abort_connection(conn, mnt);
			_exit(0);
		}
	}
}

int reaper_start(const char *mnt)
{
	unsigned conn;
	int fds[2], err;
	pid_t daemon = getpid(), pid;

	err = connection_of(mnt, &conn);
	if (err)
		return err;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		/* Nothing of the daemon's, above all not /dev/fuse. */
		if (dup2(fds[0], 3) < 0)
			_exit(1);
		close_range(4, ~0u, 0);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		prctl(PR_SET_NAME, "smartiofs-reap");
		reaper_main(daemon, 3, conn, mnt);
	}
	close(fds[0]);
	rp.pid = pid;
	rp.pipe_w = fds[1];
	return 0;
}

void reaper_stop(void)
{
	if (rp.pid < 0)
		return;
	close(rp.pipe_w);
	waitpid(rp.pid, NULL, 0);
	rp.pid = -1;
	rp.pipe_w = -1;
}
