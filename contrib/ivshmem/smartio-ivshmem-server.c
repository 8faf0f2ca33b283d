// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smartio-ivshmem-server: the server that QEMU's ivshmem-doorbell devices
 * connect to (protocol version 0, QEMU docs/specs/ivshmem-spec.rst).
 *
 * It owns one shared memory object and, for every connected peer, one
 * eventfd per interrupt vector.  The protocol is one-way: every message
 * is a little-endian int64, optionally carrying one file descriptor.
 *
 *   to a new peer:   0 (version), its id, -1 + shm fd,
 *                    for each other peer: that id x N, each + eventfd,
 *                    its own id x N, each + its own eventfd;
 *   to the others:   the new id x N, each + the new peer's eventfds;
 *   on a departure:  the departed id, without a descriptor, to the rest.
 *
 * Ids are never reused: QEMU (7.2 at least) frees a departed peer's
 * vector table and would write into freed memory if the same id joined
 * again.  Instead a peer takes the lowest free slot s of max_peers and
 * the id s + k * max_peers for the k-th use of that slot, so that
 * id % max_peers tells which slot a peer occupies: a guest that restarts
 * while its peer runs is back in its old slot, under a new id.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "numparse.h"

#define MAX_VECTORS 1024
#define MAX_PEERS_LIMIT 65536
#define MAX_ID 65535		/* the Doorbell register has 16 bits for it */

struct peer {
	int id;			/* -1: slot unused */
	int uses;		/* ids handed out in this slot so far */
	int conn;		/* the peer's connection */
	int *efd;		/* its eventfds, one per vector */
};

struct server {
	const char *sock_path;
	const char *shm_name;	/* NULL: anonymous memfd */
	uint64_t shm_size;
	int vectors;
	int max_peers;
	int verbose;
	int listen_fd;
	int shm_fd;
	struct peer *peers;	/* max_peers slots; id % max_peers is the slot */
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void logmsg(const struct server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logmsg(const struct server *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: smartio-ivshmem-server -S socket [-l size] [-n vectors]\n"
		"                              [-m shm-name] [-p max-peers] [-v]\n"
		"Serves QEMU ivshmem-doorbell devices (protocol version 0):\n"
		"  -S socket     UNIX socket path to listen on (required)\n"
		"  -l size       shared memory size, a power of two; suffix K, M\n"
		"                or G (default 4M)\n"
		"  -n vectors    interrupt vectors per peer (default 1, at most %d)\n"
		"  -m shm-name   use POSIX shared memory /shm-name (kept after exit)\n"
		"                instead of an anonymous memfd\n"
		"  -p max-peers  most peers at once (default 16, at most %d)\n"
		"  -v            log connections and departures to stdout\n"
		"QEMU side: -chardev socket,path=socket,id=ivs\n"
		"           -device ivshmem-doorbell,chardev=ivs,vectors=vectors\n",
		MAX_VECTORS, MAX_PEERS_LIMIT);
}

/* A size in numparse.h's grammar (4096, 0x1000, 64K, 4M, 1G), a power of two. */
static int parse_size(const char *arg, uint64_t *out)
{
	u64 v;

	if (sio_parse_u64(arg, strlen(arg), 1, &v) || v == 0 ||
	    (v & (v - 1)) != 0)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(const char *arg, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* Send one protocol message: a little-endian int64, optionally with an fd. */
static int send_msg(int conn, int64_t value, int fd)
{
	unsigned char buf[8];
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint64_t u = (uint64_t)value;
	ssize_t n;

	for (int i = 0; i < 8; i++)
		buf[i] = (unsigned char)(u >> (8 * i));
	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.space;
		msg.msg_controllen = sizeof(ctl.space);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do {
		n = sendmsg(conn, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(buf) ? 0 : -1;
}

/* Tell conn about peer p: its id with each of its eventfds. */
static int announce(const struct server *s, int conn, const struct peer *p)
{
	for (int v = 0; v < s->vectors; v++)
		if (send_msg(conn, p->id, p->efd[v]) < 0)
			return -1;
	return 0;
}

static void peer_free(const struct server *s, struct peer *p)
{
	if (p->conn >= 0)
		close(p->conn);
	if (p->efd) {
		for (int v = 0; v < s->vectors; v++)
			if (p->efd[v] >= 0)
				close(p->efd[v]);
		free(p->efd);
	}
	p->efd = NULL;
	p->conn = -1;
	p->id = -1;
}

static void peer_leave(struct server *s, struct peer *p);

/* Send to every connected peer but skip; drop the ones that fail. */
static void broadcast_join(struct server *s, const struct peer *joined)
{
	for (int i = 0; i < s->max_peers; i++) {
		struct peer *q = &s->peers[i];

		if (q->id < 0 || q == joined)
			continue;
		if (announce(s, q->conn, joined) < 0) {
			logmsg(s, "peer %d: send failed (%s), dropping it",
			       q->id, strerror(errno));
			peer_leave(s, q);
		}
	}
}

static void peer_leave(struct server *s, struct peer *p)
{
	int id = p->id;

	peer_free(s, p);
	logmsg(s, "peer %d left", id);
	for (int i = 0; i < s->max_peers; i++) {
		struct peer *q = &s->peers[i];

		if (q->id < 0)
			continue;
		if (send_msg(q->conn, id, -1) < 0) {
			logmsg(s, "peer %d: send failed (%s), dropping it",
			       q->id, strerror(errno));
			peer_leave(s, q);
		}
	}
}

static void peer_join(struct server *s, int conn)
{
	struct peer *p = NULL;
	long id = -1;

	for (int slot = 0; slot < s->max_peers; slot++) {
		if (s->peers[slot].id < 0) {
			p = &s->peers[slot];
			id = slot + (long)p->uses * s->max_peers;
			break;
		}
	}
	if (!p) {
		fprintf(stderr, "smartio-ivshmem-server: %d peers connected, "
			"refusing another\n", s->max_peers);
		close(conn);
		return;
	}
	if (id > MAX_ID) {
		fprintf(stderr, "smartio-ivshmem-server: slot %ld has used all "
			"its ids, refusing\n", id % s->max_peers);
		close(conn);
		return;
	}
	p->uses++;
	p->efd = malloc(sizeof(int) * (size_t)s->vectors);
	if (!p->efd) {
		close(conn);
		return;
	}
	p->conn = conn;
	for (int v = 0; v < s->vectors; v++)
		p->efd[v] = -1;
	for (int v = 0; v < s->vectors; v++) {
		p->efd[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (p->efd[v] < 0) {
			perror("smartio-ivshmem-server: eventfd");
			peer_free(s, p);
			return;
		}
	}

	/* Steps 1-3: version, id, shared memory. */
	if (send_msg(conn, 0, -1) < 0 || send_msg(conn, id, -1) < 0 ||
	    send_msg(conn, -1, s->shm_fd) < 0)
		goto fail;
	/* Step 4: the peers already there. */
	for (int i = 0; i < s->max_peers; i++) {
		if (s->peers[i].id < 0)
			continue;
		if (announce(s, conn, &s->peers[i]) < 0)
			goto fail;
	}
	/* Step 5: its own vectors (for receiving). */
	p->id = (int)id;
	if (announce(s, conn, p) < 0)
		goto fail;
	logmsg(s, "peer %ld joined (slot %ld)", id, id % s->max_peers);
	broadcast_join(s, p);
	return;
fail:
	logmsg(s, "new peer: send failed (%s)", strerror(errno));
	peer_free(s, p);
}

static int open_shm(struct server *s)
{
	int fd;

	if (s->shm_name) {
		char name[256];

		snprintf(name, sizeof(name), "/%s", s->shm_name);
		fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "smartio-ivshmem-server: shm_open %s: %s\n",
				name, strerror(errno));
			return -1;
		}
	} else {
		fd = memfd_create("smartio-ivshmem", MFD_CLOEXEC);
		if (fd < 0) {
			perror("smartio-ivshmem-server: memfd_create");
			return -1;
		}
	}
	if (ftruncate(fd, (off_t)s->shm_size) < 0) {
		perror("smartio-ivshmem-server: ftruncate");
		close(fd);
		return -1;
	}
	s->shm_fd = fd;
	return 0;
}

static int open_socket(struct server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(s->sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "smartio-ivshmem-server: socket path too long\n");
		return -1;
	}
	strcpy(sa.sun_path, s->sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("smartio-ivshmem-server: socket");
		return -1;
	}
	unlink(s->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 8) < 0) {
		fprintf(stderr, "smartio-ivshmem-server: %s: %s\n",
			s->sock_path, strerror(errno));
		close(fd);
		return -1;
	}
	s->listen_fd = fd;
	return 0;
}

static int serve(struct server *s)
{
	struct pollfd *pfd;
	int *owner;

	pfd = calloc((size_t)s->max_peers + 1, sizeof(*pfd));
	owner = calloc((size_t)s->max_peers + 1, sizeof(*owner));
	if (!pfd || !owner) {
		free(pfd);
		free(owner);
		return -1;
	}
	while (!stop_requested) {
		nfds_t n = 0;

		pfd[n].fd = s->listen_fd;
		pfd[n].events = POLLIN;
		owner[n++] = -1;
		for (int i = 0; i < s->max_peers; i++) {
			if (s->peers[i].id < 0)
				continue;
			pfd[n].fd = s->peers[i].conn;
			pfd[n].events = POLLIN;
			owner[n++] = i;
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("smartio-ivshmem-server: poll");
			break;
		}
		/* Departures first, so that a returning guest gets its id. */
		for (nfds_t i = 1; i < n; i++) {
			struct peer *p = &s->peers[owner[i]];
			char junk[64];
			ssize_t r;

			if (!pfd[i].revents || p->id < 0 || p->conn != pfd[i].fd)
				continue;
			/* Clients never send; anything readable is EOF or junk. */
			r = recv(p->conn, junk, sizeof(junk), MSG_DONTWAIT);
			if (r == 0 || (r < 0 && errno != EAGAIN &&
				       errno != EINTR) ||
			    (pfd[i].revents & (POLLHUP | POLLERR)))
				peer_leave(s, p);
		}
		if (pfd[0].revents & POLLIN) {
			int conn = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (conn >= 0)
				peer_join(s, conn);
			else if (errno != EINTR && errno != EAGAIN)
				perror("smartio-ivshmem-server: accept");
		}
	}
	free(pfd);
	free(owner);
	return 0;
}

int main(int argc, char **argv)
{
	struct server s = {
		.shm_size = 4u << 20, .vectors = 1, .max_peers = 16,
		.listen_fd = -1, .shm_fd = -1,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int c;

	while ((c = getopt(argc, argv, "S:l:n:m:p:vh")) != -1) {
		switch (c) {
		case 'S':
			s.sock_path = optarg;
			break;
		case 'l':
			if (parse_size(optarg, &s.shm_size) < 0) {
				fprintf(stderr, "smartio-ivshmem-server: bad size "
					"'%s' (a power of two)\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (parse_int(optarg, 1, MAX_VECTORS, &s.vectors) < 0) {
				fprintf(stderr, "smartio-ivshmem-server: bad "
					"vector count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			s.shm_name = optarg;
			break;
		case 'p':
			if (parse_int(optarg, 1, MAX_PEERS_LIMIT, &s.max_peers) < 0) {
				fprintf(stderr, "smartio-ivshmem-server: bad "
					"peer count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'v':
			s.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!s.sock_path || optind != argc) {
		usage(stderr);
		return 2;
	}
	s.peers = calloc((size_t)s.max_peers, sizeof(*s.peers));
	if (!s.peers)
		return 1;
	for (int i = 0; i < s.max_peers; i++) {
		s.peers[i].id = -1;
		s.peers[i].conn = -1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (open_shm(&s) < 0 || open_socket(&s) < 0)
		return 1;
	logmsg(&s, "listening on %s: %" PRIu64 " bytes, %d vectors, "
	       "at most %d peers", s.sock_path, s.shm_size, s.vectors,
	       s.max_peers);
	serve(&s);

	for (int i = 0; i < s.max_peers; i++)
		if (s.peers[i].id >= 0)
			peer_free(&s, &s.peers[i]);
	free(s.peers);
	close(s.listen_fd);
	unlink(s.sock_path);
	close(s.shm_fd);
	logmsg(&s, "stopped");
	return 0;
}
