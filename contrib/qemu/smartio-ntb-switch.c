/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smartio-ntb-switch: the switch that joins N QEMU guests' smartio-ntb-port
 * functions (man/smartio-ntb-port.7).
 *
 *   smartio-ntb-switch -S SOCKET -n PORTS [-w WINDOW_SIZE]
 *
 * It owns the switch state (a memfd every port maps: presence, link
 * enables, doorbells, scratchpads, LUTs, counters), hands each arriving
 * port that state, every present peer's guest RAM fd and pipes for each
 * two ports, on which they forward to each other, and relays
 * the rest in order (one stream per port).  It is never in the path of
 * an access to peer RAM, nor of one forwarded between two ports.  A port
 * whose QEMU goes away is cleared and announced; a port number is served
 * by one QEMU at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ntbsw-proto.h"

struct port {
	int fd;		/* connection, -1 when absent */
	int ram_fd;
	uint64_t ram_size;
};

static struct ntbsw_state *st;
static int st_fd;
static struct port ports[NTBSW_MAX_PORTS];
static unsigned int nports;

static void clear_port_state(unsigned int p)
{
	struct ntbsw_port_state *ps = &st->port[p];

	__atomic_store_n(&ps->present, 0, __ATOMIC_SEQ_CST);
	memset(&ps->link_en, 0, sizeof(*ps) - sizeof(ps->present));
	ps->db_mask = ~0ULL;
}

static void port_gone(unsigned int p)
{
	struct ntbsw_msg m = { .type = NTBSW_PORT_DOWN, .src = p };
	unsigned int q;

	close(ports[p].fd);
	if (ports[p].ram_fd >= 0)
		close(ports[p].ram_fd);
	ports[p].fd = -1;
	ports[p].ram_fd = -1;
	clear_port_state(p);
	fprintf(stderr, "smartio-ntb-switch: port %u left\n", p);
	for (q = 0; q < nports; q++)
		if (ports[q].fd >= 0)
			ntbsw_send_msg(ports[q].fd, &m, -1);
}

/* Hands port p the end fd of one of its pipes to or from peer q. */
static void give_end(unsigned int p, unsigned int q, unsigned int kind, int fd)
{
	struct ntbsw_msg pl = { .type = NTBSW_PEER_LINK, .src = q, .dst = p,
				.arg0 = kind };

	ntbsw_send_msg(ports[p].fd, &pl, fd);
}

/*
 * Gives ports p and q pipes of their own (data and interrupts, each way:
 * ntbsw-proto.h), so that what one forwards to the other skips this
 * process.  Each pipe joins those two alone, so the receiving port knows
 * the sender as the switch would stamp it.  Without them (a pipe could
 * not be made) they go on through relay().
 */
static void peer_link(unsigned int p, unsigned int q)
{
	unsigned int tx;
	int pq[2], qp[2];

	for (tx = NTBSW_LINK_DATA_TX; tx <= NTBSW_LINK_IRQ_TX; tx += 2) {
		if (pipe2(pq, O_CLOEXEC) < 0) {
			perror("smartio-ntb-switch: pipe");
			return;
		}
		if (pipe2(qp, O_CLOEXEC) < 0) {
			perror("smartio-ntb-switch: pipe");
			close(pq[0]);
			close(pq[1]);
			return;
		}
		give_end(p, q, tx, pq[1]);
		give_end(p, q, tx + 1, qp[0]);
		give_end(q, p, tx, qp[1]);
		give_end(q, p, tx + 1, pq[0]);
		close(pq[0]);
		close(pq[1]);
		close(qp[0]);
		close(qp[1]);
	}
}

/* A new connection: its HELLO names the port and passes its RAM fd. */
static void port_arrive(int fd)
{
	struct ntbsw_msg m, r = { .type = NTBSW_WELCOME };
	unsigned int p, q;
	int ram_fd;

	if (ntbsw_recv_msg(fd, &m, &ram_fd) < 0 || m.type != NTBSW_HELLO ||
	    m.arg0 >= nports || ports[m.arg0].fd >= 0 || ram_fd < 0 ||
	    m.arg1 == 0) {
		r.type = NTBSW_REFUSED;
		ntbsw_send_msg(fd, &r, -1);
		fprintf(stderr, "smartio-ntb-switch: refused a port (%s)\n",
			m.type == NTBSW_HELLO && m.arg0 < nports ?
			"port taken or no RAM fd" : "bad hello");
		if (ram_fd >= 0)
			close(ram_fd);
		close(fd);
		return;
	}
	p = m.arg0;
	clear_port_state(p);
	st->port[p].ram_size = m.arg1;
	ports[p] = (struct port){ .fd = fd, .ram_fd = ram_fd,
				  .ram_size = m.arg1 };
	__atomic_store_n(&st->port[p].present, 1, __ATOMIC_SEQ_CST);
	r.dst = p;
	if (ntbsw_send_msg(fd, &r, st_fd) < 0) {
		port_gone(p);
		return;
	}
	fprintf(stderr, "smartio-ntb-switch: port %u joined (RAM %llu MiB)\n",
		p, (unsigned long long)(m.arg1 >> 20));
	for (q = 0; q < nports; q++) {
		struct ntbsw_msg pr = { .type = NTBSW_PEER_RAM };

		if (q == p || ports[q].fd < 0)
			continue;
		pr.src = q;
		pr.dst = p;
		pr.arg1 = ports[q].ram_size;
		ntbsw_send_msg(fd, &pr, ports[q].ram_fd);
		pr.src = p;
		pr.dst = q;
		pr.arg1 = ports[p].ram_size;
		ntbsw_send_msg(ports[q].fd, &pr, ram_fd);
		peer_link(p, q);
	}
}

/* Relay one message from port p; false when p is gone. */
static int relay(unsigned int p)
{
	struct ntbsw_msg m;
	unsigned int q;
	int fd;

	if (ntbsw_recv_msg(ports[p].fd, &m, &fd) < 0)
		return 0;
	if (fd >= 0)
		close(fd);	/* ports never pass fds after the hello */
	m.src = p;		/* the requester id is the port: never forged */
	switch (m.type) {
	case NTBSW_NOTIFY:
		for (q = 0; q < nports; q++)
			if (q != p && ports[q].fd >= 0 &&
			    (m.dst == NTBSW_DST_ALL || m.dst == q))
				ntbsw_send_msg(ports[q].fd, &m, -1);
		break;
	case NTBSW_FWD_WRITE:
	case NTBSW_FWD_READ:
	case NTBSW_FWD_RESP:
		if (m.dst < nports && m.dst != p && ports[m.dst].fd >= 0) {
			ntbsw_send_msg(ports[m.dst].fd, &m, -1);
		} else if (m.type == NTBSW_FWD_READ) {
			/* Nobody there: answer for it, all-ones. */
			struct ntbsw_msg r = { .type = NTBSW_FWD_RESP,
					       .src = m.dst, .tag = m.tag,
					       .arg1 = 1 };

			memset(r.data, 0xff, sizeof(r.data));
			ntbsw_send_msg(ports[p].fd, &r, -1);
		}
		break;
	default:
		break;
	}
	return 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: smartio-ntb-switch -S SOCKET -n PORTS "
		"[-w WINDOW_BYTES] [-W WINDOW1_BYTES]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd[NTBSW_MAX_PORTS + 1];
	unsigned long long wsize = 4ULL << 20, w1size = 0, v;
	const char *path = NULL;
	char *end;
	int c, lfd;
	unsigned int p;

	while ((c = getopt(argc, argv, "S:n:w:W:")) != -1) {
		switch (c) {
		case 'S':
			path = optarg;
			break;
		case 'n':
			nports = strtoul(optarg, &end, 0);
			if (*end || nports < 2 || nports > NTBSW_MAX_PORTS) {
				fprintf(stderr, "-n: 2..%d ports\n",
					NTBSW_MAX_PORTS);
				return 2;
			}
			break;
		case 'w':
		case 'W':
			v = strtoull(optarg, &end, 0);
			if (*end == 'M' || *end == 'm') {
				v <<= 20;
				end++;
			} else if (*end == 'G' || *end == 'g') {
				v <<= 30;
				end++;
			}
			if (*end || !ntbsw_wsize_ok(v)) {
				fprintf(stderr, "-%c: a power of two from "
					"%d KiB to 4 GiB\n", c,
					NTBSW_NR_LUT * 4);
				return 2;
			}
			if (c == 'w')
				wsize = v;
			else
				w1size = v;
			break;
		default:
			usage();
		}
	}
	if (!path || !nports || optind != argc)
		usage();
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "socket path too long\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	st_fd = memfd_create("smartio-ntb-switch", MFD_CLOEXEC);
	if (st_fd < 0 || ftruncate(st_fd, sizeof(*st)) < 0) {
		perror("memfd");
		return 1;
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  st_fd, 0);
	if (st == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	st->nports = nports;
	st->mw_size = wsize;
	/* Window 1 as large as window 0 unless -W says otherwise. */
	st->mw1_size = w1size ? w1size : wsize;
	for (p = 0; p < NTBSW_MAX_PORTS; p++) {
		ports[p].fd = -1;
		ports[p].ram_fd = -1;
		clear_port_state(p);
	}
	st->magic = NTBSW_MAGIC;

	strcpy(sa.sun_path, path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 16) < 0) {
		perror(path);
		return 1;
	}
	fprintf(stderr, "smartio-ntb-switch: %u ports, windows of %llu and "
		"%llu KiB, on %s\n", nports, wsize >> 10,
		(unsigned long long)st->mw1_size >> 10, path);

	for (;;) {
		unsigned int n = 0;

		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (p = 0; p < nports; p++)
			pfd[n++] = (struct pollfd){ .fd = ports[p].fd,
						    .events = POLLIN };
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			return 1;
		}
		for (p = 0; p < nports; p++) {
			if (ports[p].fd < 0 || !pfd[p + 1].revents)
				continue;
			if (!relay(p))
				port_gone(p);
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0)
				port_arrive(fd);
		}
	}
}
