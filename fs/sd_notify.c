// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The service manager's readiness protocol (sd_notify(3), without
 * libsystemd): once /smartio is mounted, one datagram "READY=1" to the
 * socket that $NOTIFY_SOCKET names, so that a Type=notify unit starts what
 * follows it only when the mount serves.  Without $NOTIFY_SOCKET (not
 * started by systemd) it does nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sfs.h"

int sfs_sd_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[64];
	size_t len;
	socklen_t salen;
	int fd, rc = 0;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	/* A path socket, or an abstract one written with a leading '@'. */
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%d", (int)getpid());
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, salen) < 0)
		rc = -errno;
	close(fd);
	/* What the daemon starts later is not the service's main process. */
	unsetenv("NOTIFY_SOCKET");
	return rc;
}
