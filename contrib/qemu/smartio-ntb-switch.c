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
 *
 * No client can stall it for the others (issue 28 item 11): every socket
 * is non-blocking; a new connection waits among the pending ones until
 * its hello arrives (HELLO_MS at most, PENDING_MAX of them, the oldest
 * let go first); what a port cannot take at once waits in its own queue,
 * sent as it reads, and a port that lets OUTQ_MAX messages pile up has
 * stopped reading: it is let go as if its QEMU had exited.
 */
#include <errno.h>
#include <inttypes.h>
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
#include <time.h>
#include <unistd.h>

#include "ntbsw-proto.h"
#include "switchtec-gas.h"

#define HELLO_MS	5000	/* a new connection's time to say hello */
#define PENDING_MAX	16	/* connections waiting for their hello */
#define OUTQ_MAX	4096	/* messages waiting for a port that reads */

/* A message for a port that could not take it yet, with its fd (a dup). */
struct queued {
	struct ntbsw_msg m;
	int fd;
};

struct port {
	int fd;		/* connection, -1 when absent */
	int ram_fd;
	uint64_t ram_size;
	int dead;	/* stopped reading or failed: let go by reap() */
	struct queued *q;	/* ring of OUTQ_MAX, allocated when needed */
	unsigned int q_head, q_len;
};

struct pending {
	int fd;		/* -1: free */
	uint64_t deadline_ms;
};

static struct ntbsw_state *st;
static int stx_on;	/* -x: a Switchtec fabric (struct stx_state after st) */
static int st_fd;
static struct port ports[NTBSW_MAX_PORTS];
static struct pending pend[PENDING_MAX];
static unsigned int nports;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Marks port p to be let go; why goes to the log once. */
static void port_fail(unsigned int p, const char *why)
{
	if (ports[p].dead)
		return;
	ports[p].dead = 1;
	fprintf(stderr, "smartio-ntb-switch: port %u %s: let go\n", p, why);
}

/* Queues m (and a dup of fd) behind what port p has not taken yet. */
static void enqueue(unsigned int p, const struct ntbsw_msg *m, int fd)
{
	struct port *pt = &ports[p];
	struct queued *e;

	if (!pt->q) {
		pt->q = calloc(OUTQ_MAX, sizeof(*pt->q));
		if (!pt->q) {
			port_fail(p, "has no queue (out of memory)");
			return;
		}
	}
	if (pt->q_len == OUTQ_MAX) {
		port_fail(p, "stopped reading (its queue is full)");
		return;
	}
	e = &pt->q[(pt->q_head + pt->q_len) % OUTQ_MAX];
	e->m = *m;
	e->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd >= 0 && e->fd < 0) {
		port_fail(p, "cannot be handed a descriptor");
		return;
	}
	pt->q_len++;
}

/* Sends what waits for port p while it takes it. */
static void flush(unsigned int p)
{
	struct port *pt = &ports[p];

	while (pt->q_len && !pt->dead) {
		struct queued *e = &pt->q[pt->q_head];

		if (ntbsw_send_msg_flags(pt->fd, &e->m, e->fd,
					 MSG_DONTWAIT) < 0) {
			if (errno != EAGAIN)
				port_fail(p, "cannot be written");
			return;
		}
		if (e->fd >= 0)
			close(e->fd);
		pt->q_head = (pt->q_head + 1) % OUTQ_MAX;
		pt->q_len--;
	}
}

/*
 * Sends m (with fd, which stays the caller's) to port p without ever
 * waiting: at once when nothing waits before it and p's socket has room,
 * else behind what waits, in order.
 */
static void port_send(unsigned int p, const struct ntbsw_msg *m, int fd)
{
	struct port *pt = &ports[p];

	if (pt->fd < 0 || pt->dead)
		return;
	if (!pt->q_len) {
		if (ntbsw_send_msg_flags(pt->fd, m, fd, MSG_DONTWAIT) == 0)
			return;
		if (errno != EAGAIN) {
			port_fail(p, "cannot be written");
			return;
		}
	}
	enqueue(p, m, fd);
}

static void queue_free(struct port *pt)
{
	for (; pt->q_len; pt->q_len--) {
		if (pt->q[pt->q_head].fd >= 0)
			close(pt->q[pt->q_head].fd);
		pt->q_head = (pt->q_head + 1) % OUTQ_MAX;
	}
	free(pt->q);
	pt->q = NULL;
	pt->q_head = 0;
}

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
	queue_free(&ports[p]);
	ports[p].fd = -1;
	ports[p].ram_fd = -1;
	ports[p].dead = 0;
	clear_port_state(p);
	fprintf(stderr, "smartio-ntb-switch: port %u left\n", p);
	if (stx_on) {
		const struct stx_part_state *ps = &((struct stx_state *)
			((char *)st + STX_STATE_OFFSET))->part[p];

		fprintf(stderr, "smartio-ntb-switch: partition %u: %" PRIu64
			" guest errors, %" PRIu64 " accesses through no entry, %"
			PRIu64 " writes and %" PRIu64 " reads of requesters "
			"not in its table\n", p, ps->guest_errors, ps->blocked,
			ps->blocked_rid, ps->blocked_rid_rd);
	}
	for (q = 0; q < nports; q++)
		port_send(q, &m, -1);
}

/* Lets go every port marked dead, and those its announcement kills. */
static void reap(void)
{
	unsigned int p;
	int again;

	do {
		again = 0;
		for (p = 0; p < nports; p++)
			if (ports[p].fd >= 0 && ports[p].dead) {
				port_gone(p);
				again = 1;
			}
	} while (again);
}

/* Hands port p the end fd of one of its pipes to or from peer q. */
static void give_end(unsigned int p, unsigned int q, unsigned int kind, int fd)
{
	struct ntbsw_msg pl = { .type = NTBSW_PEER_LINK, .src = q, .dst = p,
				.arg0 = kind };

	port_send(p, &pl, fd);
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

/*
 * A pending connection that has something to read: its HELLO names the
 * port and passes its RAM fd.  0: it joined or was refused (no longer
 * pending); 1: nothing to read after all, still pending.
 */
static int port_arrive(int fd)
{
	struct ntbsw_msg m = { 0 }, r = { .type = NTBSW_WELCOME };
	unsigned int p, q;
	int ram_fd;

	errno = 0;
	if (ntbsw_recv_msg(fd, &m, &ram_fd) < 0 && errno == EAGAIN)
		return 1;
	if (m.type != NTBSW_HELLO || m.arg0 >= nports ||
	    ports[m.arg0].fd >= 0 || ram_fd < 0 || m.arg1 == 0) {
		r.type = NTBSW_REFUSED;
		/* never waits: a client that does not read is not owed it */
		ntbsw_send_msg_flags(fd, &r, -1, MSG_DONTWAIT);
		fprintf(stderr, "smartio-ntb-switch: refused a port (%s)\n",
			m.type == NTBSW_HELLO && m.arg0 < nports ?
			"port taken or no RAM fd" : "bad hello");
		if (ram_fd >= 0)
			close(ram_fd);
		close(fd);
		return 0;
	}
	p = m.arg0;
	clear_port_state(p);
	st->port[p].ram_size = m.arg1;
	ports[p] = (struct port){ .fd = fd, .ram_fd = ram_fd,
				  .ram_size = m.arg1 };
	__atomic_store_n(&st->port[p].present, 1, __ATOMIC_SEQ_CST);
	r.dst = p;
	port_send(p, &r, st_fd);
	fprintf(stderr, "smartio-ntb-switch: port %u joined (RAM %llu MiB)\n",
		p, (unsigned long long)(m.arg1 >> 20));
	for (q = 0; q < nports; q++) {
		struct ntbsw_msg pr = { .type = NTBSW_PEER_RAM };

		if (q == p || ports[q].fd < 0 || ports[q].dead)
			continue;
		pr.src = q;
		pr.dst = p;
		pr.arg1 = ports[q].ram_size;
		port_send(p, &pr, ports[q].ram_fd);
		pr.src = p;
		pr.dst = q;
		pr.arg1 = ports[p].ram_size;
		port_send(q, &pr, ram_fd);
		peer_link(p, q);
	}
	return 0;
}

/* A new connection waits for its hello among the pending ones. */
static void pend_add(int fd)
{
	unsigned int i, oldest = 0;

	for (i = 0; i < PENDING_MAX; i++) {
		if (pend[i].fd < 0)
			break;
		if (pend[i].deadline_ms < pend[oldest].deadline_ms)
			oldest = i;
	}
	if (i == PENDING_MAX) {
		fprintf(stderr, "smartio-ntb-switch: %d connections without "
			"a hello: the oldest let go\n", PENDING_MAX);
		close(pend[oldest].fd);
		i = oldest;
	}
	pend[i].fd = fd;
	pend[i].deadline_ms = now_ms() + HELLO_MS;
}

/* Lets go the pending connections whose time is up; the poll timeout
 * until the next deadline (-1: none). */
static int pend_expire(void)
{
	uint64_t now = now_ms(), next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < PENDING_MAX; i++) {
		if (pend[i].fd < 0)
			continue;
		if (pend[i].deadline_ms <= now) {
			fprintf(stderr, "smartio-ntb-switch: a connection "
				"said no hello in %d ms: let go\n", HELLO_MS);
			close(pend[i].fd);
			pend[i].fd = -1;
		} else if (pend[i].deadline_ms < next) {
			next = pend[i].deadline_ms;
		}
	}
	return next == UINT64_MAX ? -1 : (int)(next - now);
}

/* Relay one message from port p; false when p is gone. */
static int relay(unsigned int p)
{
	struct ntbsw_msg m;
	unsigned int q;
	int fd;

	errno = 0;
	if (ntbsw_recv_msg(ports[p].fd, &m, &fd) < 0)
		return errno == EAGAIN;	/* woken for nothing: still here */
	if (fd >= 0)
		close(fd);	/* ports never pass fds after the hello */
	m.src = p;		/* the requester id is the port: never forged */
	switch (m.type) {
	case NTBSW_NOTIFY:
		for (q = 0; q < nports; q++)
			if (q != p && (m.dst == NTBSW_DST_ALL || m.dst == q))
				port_send(q, &m, -1);
		break;
	case NTBSW_FWD_WRITE:
	case NTBSW_FWD_READ:
	case NTBSW_FWD_RESP:
		if (m.dst < nports && m.dst != p && ports[m.dst].fd >= 0 &&
		    !ports[m.dst].dead) {
			port_send(m.dst, &m, -1);
		} else if (m.type == NTBSW_FWD_READ) {
			/* Nobody there: answer for it, all-ones. */
			struct ntbsw_msg r = { .type = NTBSW_FWD_RESP,
					       .src = m.dst, .tag = m.tag,
					       .arg1 = 1 };

			memset(r.data, 0xff, sizeof(r.data));
			port_send(p, &r, -1);
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
		"[-w WINDOW_BYTES] [-W WINDOW1_BYTES]\n"
		"       [-x switchtec-option,...]  (luts=N,rids=N,bar2=BYTES,"
		"bar4=BYTES,device=ID,idprot=0|1)\n");
	exit(2);
}

/* A size with an optional K, M or G; 0 when it is not one. */
static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	return *end || end == s ? 0 : v;
}

/*
 * The Switchtec fabric's configuration, what the chip's firmware would
 * hold (-x): LUT entries per partition (a power of two, 1..512),
 * requester-id table entries (2..512), BAR2 (the LUT area and a direct
 * window as large) and BAR4 (a direct window) sizes, the PCI device id.
 */
static struct stx_state stx_cfg = {
	.device_id = STX_DEVICE_DEFAULT, .lut_entries = 32,
	.rid_entries = 32, .bar_size = { 4ULL << 20, 4ULL << 20 },
};

static int stx_option(char *opt)
{
	char *tok, *save = NULL;

	stx_on = 1;
	for (tok = strtok_r(opt, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		unsigned long long v;

		if (!strcmp(tok, "switchtec"))
			continue;
		if (!val)
			return -1;
		*val++ = 0;
		v = parse_size(val);
		if (!strcmp(tok, "luts") && v && v <= STX_MAX_LUT &&
		    !(v & (v - 1)))
			stx_cfg.lut_entries = v;
		else if (!strcmp(tok, "rids") && v >= 2 && v <= STX_MAX_RID)
			stx_cfg.rid_entries = v;
		else if (!strcmp(tok, "bar2") && v >= 2 * STX_LUT_SIZE &&
			 !(v & (v - 1)) && v <= (1ULL << 32))
			stx_cfg.bar_size[0] = v;
		else if (!strcmp(tok, "bar4") && v >= 4096 && !(v & (v - 1)) &&
			 v <= (1ULL << 32))
			stx_cfg.bar_size[1] = v;
		else if (!strcmp(tok, "device") && v >= 0x8531 && v <= 0x8536)
			stx_cfg.device_id = v;
		else if (!strcmp(tok, "idprot") && v <= 1)
			stx_cfg.id_protect = v;
		else
			return -1;
	}
	if (stx_cfg.bar_size[0] < 2ULL * stx_cfg.lut_entries * STX_LUT_SIZE) {
		fprintf(stderr, "-x: bar2 must hold the LUT area (luts x 64 "
			"KiB) and a direct window as large\n");
		return -1;
	}
	return 0;
}

/*
 * The first proxy devfn.  Linux's quirk_switchtec_ntb_dma_alias makes
 * every proxy id a DMA alias of the NT function, on the NT function's
 * bus.  On a switch that bus is the NT endpoint's own; in QEMU it is the
 * root bus, beside the guest's other devices, and an alias that names one
 * of them (00:04.0 is devfn 32) puts that device in the NT function's
 * IOMMU group, where no device can be given a domain of its own (smartio
 * could not claim a lent NVMe there).  So the proxies start at device 24,
 * which q35 leaves free (its own functions are at 00:1f).
 */
#define STX_PROXY_DEVFN0	0xc0

/*
 * Power-on state of every partition, as firmware leaves it: control
 * blocks with BAR2 and BAR4 valid, the LUT and requester-id table sizes,
 * each table entry's proxy id (read by Linux's quirk at enumeration),
 * partitions paired 0-1, 2-3, ... as NT targets.
 */
static void stx_init(struct stx_state *x)
{
	unsigned int p, i;

	*x = stx_cfg;
	x->nparts = nports;
	for (p = 0; p < nports; p++) {
		struct stx_part_state *ps = &x->part[p];
		struct stx_ntb_ctrl_regs *c = &ps->ctrl;

		c->partition_status = STX_PART_NORMAL;
		c->lut_table_entries = x->lut_entries;
		c->req_id_table_size = x->rid_entries;
		c->bar_entry[2].ctl = STX_BAR_VALID;
		c->bar_entry[4].ctl = STX_BAR_VALID;
		for (i = 0; i < x->rid_entries; i++)
			c->req_id_table[i] =
				((STX_PROXY_DEVFN0 + i) & 0xff) << 1;
		ps->active = *c;
		ps->target_part = (p ^ 1) < nports ? 1u << (p ^ 1) : 0;
	}
	x->magic = STX_STATE_MAGIC;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd[1 + NTBSW_MAX_PORTS + PENDING_MAX];
	unsigned long long wsize = 4ULL << 20, w1size = 0, v;
	size_t st_len;
	const char *path = NULL;
	char *end;
	int c, lfd;
	unsigned int p;

	while ((c = getopt(argc, argv, "S:n:w:W:x:")) != -1) {
		switch (c) {
		case 'x':
			if (stx_option(optarg) < 0) {
				fprintf(stderr, "-x: bad Switchtec option\n");
				return 2;
			}
			break;
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

	st_len = stx_on ? STX_STATE_OFFSET + sizeof(struct stx_state)
			: sizeof(*st);
	st_fd = memfd_create("smartio-ntb-switch", MFD_CLOEXEC);
	if (st_fd < 0 || ftruncate(st_fd, st_len) < 0) {
		perror("memfd");
		return 1;
	}
	st = mmap(NULL, st_len, PROT_READ | PROT_WRITE, MAP_SHARED,
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
	for (p = 0; p < PENDING_MAX; p++)
		pend[p].fd = -1;
	if (stx_on)
		stx_init((struct stx_state *)((char *)st + STX_STATE_OFFSET));
	st->magic = NTBSW_MAGIC;

	strcpy(sa.sun_path, path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
		     0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 16) < 0) {
		perror(path);
		return 1;
	}
	fprintf(stderr, "smartio-ntb-switch: %u ports, windows of %llu and "
		"%llu KiB, on %s\n", nports, wsize >> 10,
		(unsigned long long)st->mw1_size >> 10, path);

	for (;;) {
		unsigned int n = 0, i;
		int timeout = pend_expire();

		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (p = 0; p < nports; p++)
			pfd[n++] = (struct pollfd){
				.fd = ports[p].fd,
				.events = POLLIN |
					  (ports[p].q_len ? POLLOUT : 0) };
		for (i = 0; i < PENDING_MAX; i++)
			pfd[n++] = (struct pollfd){ .fd = pend[i].fd,
						    .events = POLLIN };
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			return 1;
		}
		for (p = 0; p < nports; p++) {
			short ev = pfd[1 + p].revents;

			if (ports[p].fd < 0 || !ev)
				continue;
			if (ev & POLLOUT)
				flush(p);
			if ((ev & ~POLLOUT) && !ports[p].dead && !relay(p))
				ports[p].dead = 1;	/* its QEMU went away */
		}
		reap();
		for (i = 0; i < PENDING_MAX; i++)
			if (pend[i].fd >= 0 && pfd[1 + nports + i].revents &&
			    !port_arrive(pend[i].fd))
				pend[i].fd = -1;
		reap();
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL,
					 SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (fd >= 0)
				pend_add(fd);
		}
	}
}
