// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smartio-ivshmem-server speaks QEMU's ivshmem protocol (version 0):
 * two clients get ids 0 and 1, the same shared memory, each other's
 * eventfds and working doorbells; a departure is announced; a returning
 * client gets the free slot under a new id (3 with -p 2: ids are never
 * reused); a client beyond -p is refused.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VECTORS 3
#define SHM_SIZE (1u << 20)

static int failures;
static char sock_path[100];

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

struct client {
	int conn;
	int64_t id;
	int shm;
	int own[VECTORS];		/* eventfds to wait on */
	int64_t peer_id;
	int peer[VECTORS];		/* eventfds to ring the peer */
};

/* One message: returns 1 and fills value/fd, 0 on EOF, -1 on timeout. */
static int recv_msg(int conn, int64_t *value, int *fd, int timeout_ms)
{
	unsigned char buf[8];
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.space, .msg_controllen = sizeof(ctl.space),
	};
	struct pollfd p = { .fd = conn, .events = POLLIN };
	struct cmsghdr *cm;
	uint64_t u = 0;
	ssize_t n;

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	n = recvmsg(conn, &msg, MSG_WAITALL);
	if (n == 0)
		return 0;
	if (n != 8) {
		printf("short message (%zd bytes)\n", n);
		return -1;
	}
	for (int i = 0; i < 8; i++)
		u |= (uint64_t)buf[i] << (8 * i);
	*value = (int64_t)u;
	*fd = -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 1;
}

static int expect(int conn, int64_t want, int want_fd, int *fd,
		  const char *what)
{
	int64_t v = -2;
	int got_fd = -1, r;

	r = recv_msg(conn, &v, &got_fd, 5000);
	if (r != 1 || v != want || (want_fd != (got_fd >= 0))) {
		printf("FAIL: %s: got r=%d value=%lld fd=%d, want %lld%s\n",
		       what, r, (long long)v, got_fd, (long long)want,
		       want_fd ? " with fd" : "");
		failures++;
		if (got_fd >= 0)
			close(got_fd);
		return -1;
	}
	if (fd)
		*fd = got_fd;
	else if (got_fd >= 0)
		close(got_fd);
	return 0;
}

static int dial(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Connect and read the greeting; peer_id < 0 when no peer is expected. */
static int client_open(struct client *c, int64_t want_id, int64_t peer_id)
{
	struct stat st;

	memset(c, 0xff, sizeof(*c));
	c->conn = dial();
	for (int i = 0; i < 500 && c->conn < 0; i++) {	/* server starting */
		usleep(10000);
		c->conn = dial();
	}
	if (c->conn < 0)
		return -1;
	if (expect(c->conn, 0, 0, NULL, "version") ||
	    expect(c->conn, want_id, 0, NULL, "own id") ||
	    expect(c->conn, -1, 1, &c->shm, "shared memory"))
		return -1;
	c->id = want_id;
	CHECK(fstat(c->shm, &st) == 0 && st.st_size == SHM_SIZE,
	      "client %lld: shared memory fd of %u bytes", (long long)want_id,
	      SHM_SIZE);
	c->peer_id = peer_id;
	for (int v = 0; peer_id >= 0 && v < VECTORS; v++)
		if (expect(c->conn, peer_id, 1, &c->peer[v], "peer vector"))
			return -1;
	for (int v = 0; v < VECTORS; v++)
		if (expect(c->conn, want_id, 1, &c->own[v], "own vector"))
			return -1;
	return 0;
}

static void client_close(struct client *c)
{
	close(c->conn);
	close(c->shm);
	for (int v = 0; v < VECTORS; v++) {
		close(c->own[v]);
		if (c->peer[v] >= 0)
			close(c->peer[v]);
		c->peer[v] = -1;
	}
}

static int quiet(int conn, int ms)
{
	int64_t v;
	int fd;

	return recv_msg(conn, &v, &fd, ms) == -1;
}

/* Ring vector v of "to" through "from"; only that vector may fire. */
static void check_doorbell(struct client *from, struct client *to, int vec)
{
	uint64_t one = 1, got = 0;
	int ok = 1;

	if (write(from->peer[vec], &one, sizeof(one)) != sizeof(one))
		ok = 0;
	for (int v = 0; v < VECTORS; v++) {
		struct pollfd p = { .fd = to->own[v], .events = POLLIN };
		int fired = poll(&p, 1, v == vec ? 2000 : 0) == 1;

		if (fired != (v == vec))
			ok = 0;
		if (fired && read(to->own[v], &got, sizeof(got)) != sizeof(got))
			ok = 0;
	}
	CHECK(ok && got == 1, "doorbell %lld -> %lld vector %d",
	      (long long)from->id, (long long)to->id, vec);
}

int main(void)
{
	const char *builddir = getenv("BUILDDIR");
	char server[512], dir[] = "/tmp/ivshmem-test.XXXXXX";
	struct client a, b, c;
	unsigned char *ma, *mb;
	int status, extra;
	pid_t pid;

	snprintf(server, sizeof(server),
		 "%s/contrib/ivshmem/smartio-ivshmem-server",
		 builddir ? builddir : ".");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/sock", dir);
	pid = fork();
	if (pid == 0) {
		execl(server, server, "-S", sock_path, "-l", "1M", "-n", "3",
		      "-p", "2", (char *)NULL);
		perror(server);
		_exit(127);
	}
	if (client_open(&a, 0, -1) < 0) {
		printf("FAIL: no server at %s\n", sock_path);
		kill(pid, SIGKILL);
		return 1;
	}
	CHECK(quiet(a.conn, 200), "first client: ids and fds, no peers");
	if (client_open(&b, 1, 0) == 0)
		printf("ok: second client gets id 1, the first's vectors, "
		       "its own\n");
	for (int v = 0; v < VECTORS; v++)
		expect(a.conn, 1, 1, &a.peer[v], "join notification");
	a.peer_id = 1;

	ma = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, a.shm, 0);
	mb = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, b.shm, 0);
	if (ma != MAP_FAILED && mb != MAP_FAILED) {
		memcpy(ma + SHM_SIZE - 6, "hello", 6);
		memcpy(mb, "olleh", 6);
		CHECK(!memcmp(mb + SHM_SIZE - 6, "hello", 6) &&
		      !memcmp(ma, "olleh", 6), "one shared memory object");
	} else {
		CHECK(0, "mmap of the shared memory");
	}

	check_doorbell(&a, &b, 2);
	check_doorbell(&b, &a, 0);
	check_doorbell(&a, &b, 1);

	/* A third client is refused at -p 2: the server closes at once. */
	extra = dial();
	{
		int64_t v;
		int xfd;

		CHECK(extra >= 0 && recv_msg(extra, &v, &xfd, 2000) == 0,
		      "a client beyond -p 2 is disconnected");
		if (extra >= 0)
			close(extra);
	}

	client_close(&b);
	expect(a.conn, 1, 0, NULL, "departure notification");
	printf("ok: departure of 1 announced without an fd\n");
	for (int v = 0; v < VECTORS; v++) {
		close(a.peer[v]);
		a.peer[v] = -1;
	}

	if (client_open(&c, 3, 0) == 0)
		printf("ok: a returning client gets slot 1 under the new id 3\n");
	for (int v = 0; v < VECTORS; v++)
		expect(a.conn, 3, 1, &a.peer[v], "rejoin notification");
	check_doorbell(&a, &c, 2);
	check_doorbell(&c, &a, 1);

	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	      access(sock_path, F_OK) != 0,
	      "SIGTERM: clean exit, socket removed");
	client_close(&a);
	client_close(&c);
	rmdir(dir);
	printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
