/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one reader of /proc/<pid>/stat: the simulator tells a live node
 * process from a dead or reused one by its start time, smartiofs watches
 * its holders and its own daemon by state and start time.
 *
 * Header-only: smartiofs links only libsmartio's public symbols.
 */
#ifndef SIO_PROCSTAT_H
#define SIO_PROCSTAT_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "../read_text.h"

/*
 * State of pid's main thread (field 3: 'Z' or 'X' once it has exited), 0
 * when the process is gone or its line cannot be read; with start, also
 * its start time (field 22, clock ticks since boot), and 0 is returned
 * when that cannot be read.
 */
static inline char sio_proc_stat(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p, state;
	unsigned int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (sio_read_text(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');	/* the command name may hold anything */
	if (!p || p[1] != ' ')
		return 0;
	state = p[2];
	if (!start)
		return state;
	for (i = 3, p += 2; i < 22 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", start) != 1)
		return 0;
	return state;
}

#endif
