// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smartio-ntb-switch (contrib/qemu) joins ports as its protocol says:
 * a hello gets the switch state and every present peer's RAM fd, and the
 * peers get the newcomer's; a taken or out-of-range port is refused;
 * forwarded accesses reach their port with the sender's real port as
 * source (a forged one is overwritten); a read for an absent port is
 * answered all-ones; a departure is announced, clears the port's state,
 * and frees its number.  No client stalls the switch for the others (issue
 * 28 item 11): relays go on while a connection never says hello, and
 * while a port never reads what the switch sends it, which is in the end
 * let go as gone.  Clients here play QEMU's device model.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ntbsw-proto.h"

static int failures;
static char sock_path[108];

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok: " __VA_ARGS__);				\
	} else {							\
		printf("FAIL (%s:%d): ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		failures++;						\
	}								\
	putchar('\n');							\
} while (0)

/* 1: a message (fd in *got_fd or -1); 0: EOF; -1: nothing in 2 s. */
static int recv_msg(int fd, struct ntbsw_msg *m, int *got_fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	*got_fd = -1;
	if (poll(&p, 1, 2000) != 1)
		return -1;
	return ntbsw_recv_msg(fd, m, got_fd) == 0;
}

static int connect_switch(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	strcpy(sa.sun_path, sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		exit(1);
	}
	return fd;
}

/* Hello as port; returns the connection, *reply the switch's answer. */
static int hello(unsigned int port, struct ntbsw_msg *reply, int *fd)
{
	struct ntbsw_msg m = { .type = NTBSW_HELLO, .arg0 = port,
			       .arg1 = 1 << 20 };
	int ram = memfd_create("ram", 0);
	int c = connect_switch();

	if (ram < 0 || ftruncate(ram, 1 << 20) < 0) {
		perror("memfd");
		exit(1);
	}
	ntbsw_send_msg(c, &m, ram);
	close(ram);
	if (recv_msg(c, reply, fd) != 1)
		reply->type = 0;
	return c;
}

static pid_t start_switch(const char *bin, const char *nports)
{
	pid_t sw;

	unlink(sock_path);
	sw = fork();
	if (sw == 0) {
		execl(bin, bin, "-S", sock_path, "-n", nports, "-w", "1M",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && access(sock_path, F_OK); i++)
		usleep(20000);
	return sw;
}

/* Reads and closes what a newly joined port gets (its peers' RAM fds and
 * pipe ends) until 0.3 s pass with nothing. */
static void drain_join(int c)
{
	struct pollfd p = { .fd = c, .events = POLLIN };
	struct ntbsw_msg m;
	int fd;

	while (poll(&p, 1, 300) == 1 && ntbsw_recv_msg(c, &m, &fd) == 0)
		if (fd >= 0)
			close(fd);
}

/* Port 0 sends a write for port 1 through the switch; 1: it arrived. */
static int relayed(int c0, int c1, uint64_t addr)
{
	struct ntbsw_msg m = { .type = NTBSW_FWD_WRITE, .dst = 1,
			       .arg0 = addr, .arg1 = 4 };
	int fd;

	if (ntbsw_send_msg_flags(c0, &m, -1, MSG_DONTWAIT) < 0)
		return 0;
	while (recv_msg(c1, &m, &fd) == 1) {
		if (fd >= 0)
			close(fd);
		if (m.type == NTBSW_FWD_WRITE && m.arg0 == addr)
			return 1;
	}
	return 0;
}

/*
 * A switch of 4 ports with ports 0 and 1 relaying through it: a client
 * that connects and stays silent, and port 2 that joins and never reads,
 * while port 0 sends notices to all that port 1 reads as they come.
 */
static void no_client_stalls_the_switch(const char *bin)
{
	enum { NOTES = 20000 };
	struct pollfd out, in1;
	struct ntbsw_msg m;
	unsigned int got = 0, sent = 0, down2 = 0, i;
	int c0, c1, c2, silent, fd;
	pid_t sw = start_switch(bin, "4");

	c0 = hello(0, &m, &fd);
	if (fd >= 0)
		close(fd);
	c1 = hello(1, &m, &fd);
	if (fd >= 0)
		close(fd);
	drain_join(c0);
	drain_join(c1);
	CHECK(relayed(c0, c1, 0x1000), "ports 0 and 1 relay through the switch");

	silent = connect_switch();
	usleep(100000);
	CHECK(relayed(c0, c1, 0x2000),
	      "a write relays while a connection has not said hello");
	c2 = hello(2, &m, &fd);
	CHECK(m.type == NTBSW_WELCOME,
	      "port 2 joins while the silent connection waits");
	if (fd >= 0)
		close(fd);
	drain_join(c0);
	drain_join(c1);
	CHECK(relayed(c0, c1, 0x3000), "and relays go on after it joined");

	/* Port 2 reads nothing from here on. */
	out = (struct pollfd){ .fd = c0, .events = POLLOUT };
	in1 = (struct pollfd){ .fd = c1, .events = POLLIN };
	m = (struct ntbsw_msg){ .type = NTBSW_NOTIFY, .dst = NTBSW_DST_ALL,
				.arg0 = NTBSW_NOTE_DB };
	for (i = 0; i < NOTES; i++) {
		struct ntbsw_msg r;

		while (ntbsw_send_msg_flags(c0, &m, -1, MSG_DONTWAIT) < 0) {
			if (errno != EAGAIN || poll(&out, 1, 3000) != 1)
				goto stalled;
		}
		sent++;
		/* Port 1 reads what has come, as a live QEMU does. */
		while (poll(&in1, 1, 0) == 1 &&
		       ntbsw_recv_msg(c1, &r, &fd) == 0) {
			if (fd >= 0)
				close(fd);
			got += r.type == NTBSW_NOTIFY;
			down2 += r.type == NTBSW_PORT_DOWN && r.src == 2;
		}
	}
stalled:
	CHECK(sent == NOTES, "port 0 sent %u of %u notices with port 2 not "
	      "reading (the switch went on reading port 0)", sent, NOTES);
	while (got < sent) {
		struct ntbsw_msg r;

		if (recv_msg(c1, &r, &fd) != 1)
			break;
		if (fd >= 0)
			close(fd);
		got += r.type == NTBSW_NOTIFY;
		down2 += r.type == NTBSW_PORT_DOWN && r.src == 2;
	}
	CHECK(got == sent, "port 1 got %u of the %u notices, in order of "
	      "arrival", got, sent);
	CHECK(relayed(c0, c1, 0x4000),
	      "a write relays after port 2 stopped reading");
	CHECK(down2 == 1, "port 2, not reading, was let go and announced "
	      "to port 1");
	/* The silent connection is let go when its 5 s are up. */
	{
		struct pollfd h = { .fd = silent, .events = POLLIN };
		char b;

		CHECK(poll(&h, 1, 8000) == 1 && recv(silent, &b, 1, 0) == 0,
		      "a connection that never says hello is closed");
	}
	close(silent);
	close(c0);
	close(c1);
	close(c2);
	kill(sw, SIGTERM);
	waitpid(sw, NULL, 0);
	unlink(sock_path);
}

/*
 * A receiver reads its data pipe in batches (ntbsw_pipe_read_many): whole
 * messages in the order written, a short count when the pipe ran dry (no
 * read for EAGAIN after it), and a torn message or the writer's end
 * reported as such.
 */
static void pipe_reads_whole_messages_in_batches(void)
{
	struct ntbsw_msg in[16], out;
	int p[2], n, k;

	if (pipe(p) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		CHECK(0, "a pipe for the batch reads");
		return;
	}
	for (k = 0; k < 3; k++) {
		out = (struct ntbsw_msg){ .type = NTBSW_FWD_WRITE,
					  .arg0 = 0x1000 + k, .arg1 = 4 };
		ntbsw_pipe_write(p[1], &out);
	}
	n = ntbsw_pipe_read_many(p[0], in, 16);
	CHECK(n == 3 && in[0].arg0 == 0x1000 && in[2].arg0 == 0x1002,
	      "one read takes the 3 messages written, in order (got %d)", n);
	errno = 0;
	n = ntbsw_pipe_read_many(p[0], in, 16);
	CHECK(n == -1 && errno == EAGAIN, "an empty pipe answers EAGAIN");
	for (k = 0; k < 20; k++)
		ntbsw_pipe_write(p[1], &out);
	n = ntbsw_pipe_read_many(p[0], in, 16);
	CHECK(n == 16, "a read takes at most the 16 asked for (got %d)", n);
	n = ntbsw_pipe_read_many(p[0], in, 16);
	CHECK(n == 4, "and the next the 4 left (got %d)", n);
	CHECK(write(p[1], &out, 20) == 20, "a torn message written");
	errno = 0;
	n = ntbsw_pipe_read_many(p[0], in, 16);
	CHECK(n == -1 && errno == EPROTO, "a torn message is EPROTO");
	close(p[1]);
	errno = 0;
	n = ntbsw_pipe_read_many(p[0], in, 16);
	CHECK(n == -1 && errno == ECONNRESET,
	      "the writer's end gone is ECONNRESET");
	close(p[0]);
}

int main(int argc, char **argv)
{
	struct ntbsw_state *st = NULL;
	struct ntbsw_msg m;
	unsigned int k;
	int c0, c1, cx, fd, sfd, e0[4] = { -1, -1, -1, -1 },
	    e1[4] = { -1, -1, -1, -1 };
	pid_t sw;

	char bin[512];

	if (argc == 2) {
		snprintf(bin, sizeof(bin), "%s", argv[1]);
	} else {
		const char *b = getenv("BUILDDIR");

		snprintf(bin, sizeof(bin), "%s/contrib/qemu/smartio-ntb-switch",
			 b ? b : ".");
	}
	signal(SIGPIPE, SIG_IGN);
	pipe_reads_whole_messages_in_batches();
	snprintf(sock_path, sizeof(sock_path), "/tmp/test-ntbsw.%d",
		 (int)getpid());
	sw = start_switch(bin, "3");

	c0 = hello(0, &m, &sfd);
	CHECK(m.type == NTBSW_WELCOME && sfd >= 0, "port 0 welcomed with the state");
	if (sfd >= 0)
		st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
			  MAP_SHARED, sfd, 0);
	CHECK(st && st != MAP_FAILED && st->magic == NTBSW_MAGIC &&
	      st->nports == 3 && st->mw_size == (1u << 20) &&
	      st->port[0].present == 1 && st->port[0].ram_size == (1u << 20),
	      "the state: 3 ports, 1 MiB windows, port 0 present");
	if (!st || st == MAP_FAILED)
		return 1;

	cx = hello(0, &m, &fd);
	CHECK(m.type == NTBSW_REFUSED, "a second port 0 is refused");
	close(cx);
	cx = hello(3, &m, &fd);
	CHECK(m.type == NTBSW_REFUSED, "port 3 of a 3-port switch is refused");
	close(cx);

	c1 = hello(1, &m, &fd);
	CHECK(m.type == NTBSW_WELCOME, "port 1 welcomed");
	CHECK(recv_msg(c1, &m, &fd) == 1 && m.type == NTBSW_PEER_RAM &&
	      m.src == 0 && fd >= 0 && m.arg1 == (1u << 20),
	      "port 1 gets port 0's RAM fd");
	if (fd >= 0)
		close(fd);
	CHECK(recv_msg(c0, &m, &fd) == 1 && m.type == NTBSW_PEER_RAM &&
	      m.src == 1 && fd >= 0, "port 0 gets port 1's RAM fd");
	if (fd >= 0)
		close(fd);
	/* Each gets its pipes to the other: data, then interrupts. */
	for (k = NTBSW_LINK_DATA_TX; k <= NTBSW_LINK_IRQ_RX; k++) {
		CHECK(recv_msg(c0, &m, &e0[k]) == 1 &&
		      m.type == NTBSW_PEER_LINK && m.src == 1 &&
		      m.arg0 == k && e0[k] >= 0,
		      "port 0 gets its pipe end to or from port 1");
		CHECK(recv_msg(c1, &m, &e1[k]) == 1 &&
		      m.type == NTBSW_PEER_LINK && m.src == 0 &&
		      m.arg0 == k && e1[k] >= 0,
		      "port 1 gets its pipe end to or from port 0");
	}
	m = (struct ntbsw_msg){ .type = NTBSW_FWD_WRITE, .dst = 1,
				.arg0 = 0x3000, .arg1 = 2, .data = { 9, 8 } };
	if (e0[NTBSW_LINK_DATA_TX] >= 0)
		ntbsw_pipe_write(e0[NTBSW_LINK_DATA_TX], &m);
	memset(&m, 0, sizeof(m));
	CHECK(e1[NTBSW_LINK_DATA_RX] >= 0 &&
	      ntbsw_pipe_read(e1[NTBSW_LINK_DATA_RX], &m) == 0 &&
	      m.type == NTBSW_FWD_WRITE && m.arg0 == 0x3000 && m.data[1] == 8,
	      "a write on port 0's data pipe reaches port 1's, past the switch");
	m = (struct ntbsw_msg){ .type = NTBSW_FWD_WRITE, .dst = 0,
				.arg0 = 0xfee00000, .arg1 = 4 };
	if (e1[NTBSW_LINK_IRQ_TX] >= 0)
		ntbsw_pipe_write(e1[NTBSW_LINK_IRQ_TX], &m);
	memset(&m, 0, sizeof(m));
	CHECK(e0[NTBSW_LINK_IRQ_RX] >= 0 &&
	      ntbsw_pipe_read(e0[NTBSW_LINK_IRQ_RX], &m) == 0 &&
	      m.type == NTBSW_FWD_WRITE && m.arg0 == 0xfee00000,
	      "an MSI on port 1's interrupt pipe reaches port 0's");

	m = (struct ntbsw_msg){ .type = NTBSW_FWD_WRITE, .src = 2, .dst = 1,
				.arg0 = 0x1000, .arg1 = 4,
				.data = { 1, 2, 3, 4 } };
	ntbsw_send_msg(c0, &m, -1);
	CHECK(recv_msg(c1, &m, &fd) == 1 && m.type == NTBSW_FWD_WRITE &&
	      m.src == 0 && m.arg0 == 0x1000 && m.data[3] == 4,
	      "a forwarded write reaches port 1 from port 0 (forged source 2 overwritten)");

	m = (struct ntbsw_msg){ .type = NTBSW_FWD_READ, .dst = 2, .tag = 7,
				.arg0 = 0x2000, .arg1 = 8 };
	ntbsw_send_msg(c0, &m, -1);
	CHECK(recv_msg(c0, &m, &fd) == 1 && m.type == NTBSW_FWD_RESP &&
	      m.tag == 7 && m.arg1 == 1 && m.data[0] == 0xff &&
	      m.data[7] == 0xff, "a read for absent port 2 is answered all-ones");

	st->port[1].link_en = 1;
	close(c1);
	for (k = 0; k < 4; k++)
		if (e1[k] >= 0)
			close(e1[k]);
	CHECK(recv_msg(c0, &m, &fd) == 1 && m.type == NTBSW_PORT_DOWN &&
	      m.src == 1, "port 1's departure is announced to port 0");
	CHECK(st->port[1].present == 0 && st->port[1].link_en == 0,
	      "port 1's state is cleared");
	c1 = hello(1, &m, &fd);
	CHECK(m.type == NTBSW_WELCOME, "port 1 may join again");

	CHECK(recv_msg(c1, &m, &fd) == 1 && m.type == NTBSW_PEER_RAM &&
	      m.src == 0, "port 1, back, gets port 0's RAM again");
	if (fd >= 0)
		close(fd);
	CHECK(recv_msg(c0, &m, &fd) == 1 && m.type == NTBSW_PEER_RAM &&
	      m.src == 1, "port 0 gets the new port 1's RAM");
	if (fd >= 0)
		close(fd);
	for (k = NTBSW_LINK_DATA_TX; k <= NTBSW_LINK_IRQ_RX; k++) {
		CHECK(recv_msg(c0, &m, &fd) == 1 &&
		      m.type == NTBSW_PEER_LINK && m.src == 1 &&
		      m.arg0 == k && fd >= 0,
		      "and new pipes to and from it");
		if (fd >= 0)
			close(fd);
	}
	/* The old pipes' other ends went with the old port 1 (EOF, not
	 * EAGAIN: the switch kept no copy of them). */
	for (k = NTBSW_LINK_DATA_RX; k <= NTBSW_LINK_IRQ_RX; k += 2)
		if (e0[k] >= 0)
			fcntl(e0[k], F_SETFL, O_NONBLOCK);
	CHECK(e0[NTBSW_LINK_DATA_RX] >= 0 &&
	      ntbsw_pipe_read(e0[NTBSW_LINK_DATA_RX], &m) < 0 &&
	      errno == ECONNRESET,
	      "port 0's data pipe from the old port 1 has ended");
	CHECK(e0[NTBSW_LINK_IRQ_RX] >= 0 &&
	      ntbsw_pipe_read(e0[NTBSW_LINK_IRQ_RX], &m) < 0 &&
	      errno == ECONNRESET,
	      "port 0's interrupt pipe from the old port 1 has ended");
	close(c0);
	close(c1);
	kill(sw, SIGTERM);
	waitpid(sw, NULL, 0);
	no_client_stalls_the_switch(bin);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
