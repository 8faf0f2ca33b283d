// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Who has a simulated fabric open (issue 28, items 6 and 7).
 *
 * Every handle holds a shared flock on the fabric's state file from the
 * moment it creates or joins the fabric until it closes: a process that
 * dies lets go of it with its files, whatever it was doing, so a state
 * nobody holds is one nobody will finish or use.  The probes below run
 * under the fabric directory's open lock, which every creator, joiner and
 * closer takes: none of them can attach or leave in between.
 *
 * A state of another version may come from a smartio that did not take
 * this flock (version 5 and before): for those, a process that maps the
 * file is looked for in /proc as well.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fabric.h"

int sim_state_attach(int fd)
{
	return flock(fd, LOCK_SH | LOCK_NB) < 0 ? -errno : 0;
}

/* Whether a line of /proc/<pid>/maps maps the file (dev, ino). */
static int maps_file(const char *line, const struct stat *st)
{
	unsigned maj, min;
	unsigned long long ino;

	if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) != 3)
		return 0;
	return ino == (unsigned long long)st->st_ino &&
	       maj == major(st->st_dev) && min == minor(st->st_dev);
}

/* A process (other than this one) that maps the file st, 0 if none seen. */
static pid_t mapper_of(const struct stat *st)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	char path[64], line[512];

	if (!proc)
		return 0;
	while (!found && (e = readdir(proc))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		FILE *maps;

		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
		maps = fopen(path, "re");
		if (!maps)
			continue;	/* gone, or another user's */
		while (fgets(line, sizeof(line), maps))
			if (maps_file(line, st)) {
				found = (pid_t)pid;
				break;
			}
		fclose(maps);
	}
	closedir(proc);
	return found;
}

int sim_state_users(int dirfd, int any_version)
{
	int fd = openat(dirfd, "state", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int busy;

	if (fd < 0)
		return 0;
	busy = flock(fd, LOCK_EX | LOCK_NB) < 0;
	if (!busy && any_version && !fstat(fd, &st) && mapper_of(&st))
		busy = 1;
	close(fd);
	return busy;
}
