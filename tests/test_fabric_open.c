// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening and closing a simulated fabric (issue 28, items 5-7), tried as
 * a hostile local user and a crashed daemon would leave it:
 *   - a lock another user holds on the shared memory directory (/dev/shm,
 *     mode 1777) does not hold up an open: only the fabric's own
 *     directory, which its owner alone can open, is locked;
 *   - a state file left by a daemon killed while it created the fabric,
 *     or by another version, is rebuilt when no process has the fabric
 *     open, with a message saying so; joined only, it is refused at once
 *     with that message;
 *   - a node that joined while the last other node leaves keeps a fabric
 *     that exists: closing and joining are serialized.
 * Every open is done by a child process the test waits for with a bound,
 * so a blocked open fails the test instead of hanging it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "fabric.h"

#include "smartio_internal.h"

#define TOPO \
	"fabric luts=16 requesters=8 reserved=2 window=256M\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"device host0 nic0 bdf=0000:06:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=128K\n"

/* Far beyond any open's time on a loaded machine; only a hang reaches it. */
#define HANG_S 60

struct fx {
	char fabric[64];
	char dir[128];
	const char *topo;
	pid_t holder;		/* a child holding a lock, killed at teardown */
};

static int setup(void **state)
{
	static struct fx fx;

	memset(&fx, 0, sizeof(fx));
	th_fabric_name(fx.fabric, sizeof(fx.fabric));
	snprintf(fx.dir, sizeof(fx.dir), "/dev/shm/smartio-%s", fx.fabric);
	fx.topo = th_topology_file(TOPO);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[256];

	if (fx->holder > 0) {
		kill(fx->holder, SIGKILL);
		waitpid(fx->holder, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Waits for pid at most HANG_S seconds; kills it past that.  Its status. */
static int wait_bounded(pid_t pid)
{
	int ws, i;

	for (i = 0; i < HANG_S * 50; i++) {
		if (waitpid(pid, &ws, WNOHANG) == pid)
			return ws;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	fail_msg("child %d still running after %d s", (int)pid, HANG_S);
	return -1;
}

/*
 * fork() for a child that goes on to open a fabric.  The parent must not
 * run the simulator's threads yet: a child forked while one of them (a
 * served fabric's sim-beat) holds a lock of the allocator never sees it
 * released, and its first malloc or pthread_create waits for ever.
 * glibc's malloc takes its locks across fork; AddressSanitizer's
 * allocator (GCC 12) does not, which is how these tests used to hang
 * under make check-asan.  Threads of a sanitizer's own runtime (TSan
 * keeps one) are its business: only the simulator's ("sim-...") count.
 */
static pid_t fork_before_open(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int threads = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *c;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		c = fopen(path, "r");
		if (c && fgets(comm, sizeof(comm), c) &&
		    !strncmp(comm, "sim-", 4))
			threads++;
		if (c)
			fclose(c);
	}
	closedir(d);
	if (threads)
		fail_msg("fork with %d simulator threads running: open the "
			 "fabric after forking", threads);
	return fork();
}

/* In a child: opens fx's fabric (create as given) serving node, closes. */
static int open_in_child(struct fx *fx, int create, const char *node,
			 char *err, size_t errlen)
{
	int fds[2], ws;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct smartio_open_opts o = { 0 };
		struct smartio *h = NULL;
		char msg[512] = "";
		int rc;

		close(fds[0]);
		o.fabric = fx->fabric;
		o.topology = create ? fx->topo : NULL;
		o.node = node;
		o.create = create;
		o.errbuf = msg;
		o.errlen = sizeof(msg);
		rc = smartio_open(&h, &o);
		if (!rc)
			smartio_close(h);
		if (write(fds[1], msg, strlen(msg)) < 0)
			_exit(100);
		_exit(-rc);
	}
	close(fds[1]);
	ws = wait_bounded(pid);
	n = read(fds[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	assert_true(WIFEXITED(ws));
	return -WEXITSTATUS(ws);
}

/*
 * A child that holds an exclusive flock on /dev/shm until killed, as
 * "nobody" when the test runs as root (any local user can).
 */
static pid_t hold_shm_lock(void)
{
	int fds[2];
	char ok = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct passwd *pw = getpwnam("nobody");
		int fd;

		if (geteuid() == 0 && pw && setuid(pw->pw_uid))
			_exit(1);
		fd = open("/dev/shm", O_RDONLY | O_DIRECTORY);
		if (fd < 0 || flock(fd, LOCK_EX))
			_exit(1);
		ok = 1;
		if (write(fds[1], &ok, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &ok, 1), 1);
	close(fds[0]);
	return pid;
}

static void test_lock_on_shm_dir_does_not_block_open(void **state)
{
	struct fx *fx = *state;
	char err[512];
	int rc;

	fx->holder = hold_shm_lock();

	/* Create it, then open it again (rebuilt: its only user is gone). */
	rc = open_in_child(fx, 1, NULL, err, sizeof(err));
	if (!rc)
		rc = open_in_child(fx, -1, "host1", err, sizeof(err));
	if (rc)
		fprintf(stderr, "open: %s (%s)\n", strerror(-rc), err);
	assert_int_equal(rc, 0);
}

/*
 * Leaves a fabric whose only process died without closing it, and patches
 * its state file as a killed creator or another version would leave it:
 * magic 0 (never published), or the version given.
 */
static void leave_broken_state(struct fx *fx, u32 magic, u32 version)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;
	struct sim_shared *sh;
	char path[200];
	struct stat st;
	int ws, fd;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		o.fabric = fx->fabric;
		o.topology = fx->topo;
		o.create = 1;
		_exit(smartio_open(&h, &o) ? 1 : 0);	/* dies holding it */
	}
	ws = wait_bounded(pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	snprintf(path, sizeof(path), "%s/state", fx->dir);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	sh = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, 0);
	assert_true(sh != MAP_FAILED);
	sh->magic = magic;
	sh->version = version;
	munmap(sh, (size_t)st.st_size);
	close(fd);
}

static void test_unfinished_state_is_rebuilt(void **state)
{
	struct fx *fx = *state;
	char err[512];

	leave_broken_state(fx, 0, SIM_VERSION);
	/* Joining only: refused at once, saying why and what to do. */
	assert_int_equal(open_in_child(fx, 0, "host1", err, sizeof(err)),
			 -EPROTO);
	fprintf(stderr, "join: %s\n", err);
	assert_non_null(strstr(err, "unfinished"));
	assert_non_null(strstr(err, "rebuild"));
	/* Creating: rebuilt, and the note says so. */
	assert_int_equal(open_in_child(fx, -1, "host0", err, sizeof(err)), 0);
	fprintf(stderr, "create: %s\n", err);
	assert_non_null(strstr(err, "unfinished"));
	assert_non_null(strstr(err, "rebuilt"));
}

static void test_state_of_another_version_is_rebuilt(void **state)
{
	struct fx *fx = *state;
	char err[512];

	leave_broken_state(fx, SIM_MAGIC, SIM_VERSION - 1);
	assert_int_equal(open_in_child(fx, 0, "host1", err, sizeof(err)),
			 -EPROTO);
	fprintf(stderr, "join: %s\n", err);
	assert_non_null(strstr(err, "version"));
	assert_int_equal(open_in_child(fx, 1, "host0", err, sizeof(err)), 0);
	fprintf(stderr, "create: %s\n", err);
	assert_non_null(strstr(err, "version"));
	assert_non_null(strstr(err, "rebuilt"));
}

/* A state of another version that a live process maps is not rebuilt
 * under it: the open is refused, saying so. */
static void test_state_in_use_is_not_rebuilt(void **state)
{
	struct fx *fx = *state;
	char err[512], path[200];
	int fds[2];
	char ok = 0;

	leave_broken_state(fx, SIM_MAGIC, SIM_VERSION + 1);
	snprintf(path, sizeof(path), "%s/state", fx->dir);
	assert_int_equal(pipe(fds), 0);
	fx->holder = fork();
	assert_true(fx->holder >= 0);
	if (fx->holder == 0) {
		int fd = open(path, O_RDWR);

		if (fd < 0 || mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) ==
		    MAP_FAILED)
			_exit(1);
		ok = 1;
		if (write(fds[1], &ok, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &ok, 1), 1);
	close(fds[0]);
	assert_int_equal(open_in_child(fx, -1, "host0", err, sizeof(err)),
			 -EPROTO);
	fprintf(stderr, "create: %s\n", err);
	assert_non_null(strstr(err, "still has the fabric open"));
}

/*
 * Issue 28, item 7: a process joins (host1) while the fabric's only
 * other process (host0) closes, and serves only after that close: the
 * fabric it serves must still be the one under the fabric's name.  The
 * joiner is a real process, stopped between its join and its serve; it
 * is forked before this process opens the fabric (see
 * fork_before_open) and waits until it has.
 */
static void test_join_and_last_close_serialized(void **state)
{
	struct fx *fx = *state;
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;
	int opened[2], joined[2], go[2], ws;
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe(opened), 0);
	assert_int_equal(pipe(joined), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork_before_open();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sim_open so = { 0 };
		struct sim_fabric f;
		struct stat named, mapped;
		char path[300];
		int same;

		if (read(opened[0], &c, 1) != 1)
			_exit(3);
		so.name = fx->fabric;
		so.create = 0;
		if (sim_fabric_open(&f, &so))
			_exit(2);
		if (write(joined[1], "j", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		if (sim_fabric_serve(&f, 1u << 1))
			_exit(4);
		snprintf(path, sizeof(path), "%s/state", f.dir);
		same = stat(path, &named) == 0 && fstat(f.fd, &mapped) == 0 &&
		       named.st_ino == mapped.st_ino;
		sim_fabric_close(&f);
		_exit(same ? 0 : 5);
	}
	close(opened[0]);
	close(joined[1]);
	close(go[0]);
	o.fabric = fx->fabric;
	o.topology = fx->topo;
	o.node = "host0";
	o.create = 1;
	assert_int_equal(smartio_open(&h, &o), 0);
	assert_int_equal(write(opened[1], "o", 1), 1);
	assert_int_equal(read(joined[0], &c, 1), 1);
	smartio_close(h);	/* the last process that serves a node */
	assert_int_equal(write(go[1], "g", 1), 1);
	ws = wait_bounded(pid);
	close(opened[1]);
	close(joined[0]);
	close(go[1]);
	assert_true(WIFEXITED(ws));
	if (WEXITSTATUS(ws) == 5)
		fail_msg("the joiner serves a fabric removed under it");
	assert_int_equal(WEXITSTATUS(ws), 0);
	/* The joiner was the last: the fabric is gone with it. */
	assert_int_equal(access(fx->dir, F_OK), -1);
}

/*
 * The same race left to the scheduler, 40 times: a child joins (host1)
 * the moment the parent, the fabric's only process, closes.  The child
 * either finds no fabric (ENOENT: it came after the close) or serves the
 * one still under the fabric's name.  Each child is forked before the
 * parent opens the fabric, and released once it has.
 */
static void test_join_racing_last_close(void **state)
{
	struct fx *fx = *state;
	int round, late = 0;

	for (round = 0; round < 40; round++) {
		struct smartio_open_opts o = { 0 };
		struct smartio *h = NULL;
		int go[2], ws;
		pid_t pid;

		assert_int_equal(pipe(go), 0);
		pid = fork_before_open();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct smartio_open_opts j = { 0 };
			struct smartio *hj = NULL;
			struct stat named, mapped;
			char path[300], c;
			int rc, same;

			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(3);
			j.fabric = fx->fabric;
			j.node = "host1";
			rc = smartio_open(&hj, &j);
			if (rc)
				_exit(rc == -ENOENT ? 4 : 2);
			snprintf(path, sizeof(path), "%s/state",
				 smartio_fabric_dir(hj));
			same = stat(path, &named) == 0 &&
			       fstat(sio_lib_fabric(hj)->fd, &mapped) == 0 &&
			       named.st_ino == mapped.st_ino;
			smartio_close(hj);
			_exit(same ? 0 : 5);
		}
		close(go[0]);
		o.fabric = fx->fabric;
		o.topology = fx->topo;
		o.node = "host0";
		o.create = 1;
		assert_int_equal(smartio_open(&h, &o), 0);
		assert_int_equal(write(go[1], "g", 1), 1);
		close(go[1]);
		smartio_close(h);
		ws = wait_bounded(pid);
		assert_true(WIFEXITED(ws));
		if (WEXITSTATUS(ws) == 5)
			fail_msg("round %d: the joiner serves a removed fabric",
				 round);
		assert_true(WEXITSTATUS(ws) == 0 || WEXITSTATUS(ws) == 4);
		late += WEXITSTATUS(ws) == 4;
		assert_int_equal(access(fx->dir, F_OK), -1);
	}
	fprintf(stderr, "40 rounds: the joiner came after the close %d times\n",
		late);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lock_on_shm_dir_does_not_block_open,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unfinished_state_is_rebuilt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_of_another_version_is_rebuilt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_in_use_is_not_rebuilt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_and_last_close_serialized,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_racing_last_close,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
