// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Two OS processes joined to one simulated fabric: each serves one node,
 * sees the other's node and devices, and sees a borrow the other made.
 * When one is killed with SIGKILL the survivor declares it down and cleans
 * its borrows within the failure detector's bound (3 s).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "smartio_internal.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Child: joins as host1, borrows nvme0 of host0, reports, then idles. */
static void child(const char *fabric, int wfd)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h;
	struct smartio_node_info ni;
	char ok = 'y';
	int dev;

	o.fabric = fabric;
	o.node = "host1";
	if (smartio_open(&h, &o))
		_exit(2);
	/* It sees the parent's node up and its device. */
	if (smartio_node_info(h, 0, &ni) || ni.state != SMARTIO_NODE_UP ||
	    strcmp(ni.name, "host0"))
		ok = 'n';
	dev = smartio_device_find(h, "nvme0");
	if (dev < 0 || smartio_borrow(h, (unsigned)dev, smartio_self(h)))
		ok = 'n';
	if (write(wfd, &ok, 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/*
 * Runs this program again in a child, as `ROLE FABRIC [FD]` (see main).
 * The parent serves a fabric, so its simulator threads run: a child that
 * only forked would inherit whatever allocator lock one of them held at
 * that moment, which AddressSanitizer's allocator never gives back there
 * (test_fabric_open.c says more).  exec starts the child afresh; between
 * fork and exec it calls nothing but execv and _exit.
 */
static pid_t spawn_self(const char *role, const char *fabric, int fd)
{
	char fdtext[16];
	char *argv[] = { (char *)"test_multiprocess", (char *)role,
			 (char *)fabric, fdtext, NULL };
	pid_t pid;

	snprintf(fdtext, sizeof(fdtext), "%d", fd);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

/* Forks a child serving host1 that borrows nvme0; returns its pid. */
static pid_t spawn_borrower(const char *fabric)
{
	int fds[2];
	char got = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = spawn_self("--borrower", fabric, fds[1]);
	close(fds[1]);
	assert_int_equal(read(fds[0], &got, 1), 1);
	assert_int_equal(got, 'y');
	close(fds[0]);
	return pid;
}

/* Child: serving host0, which another process serves, is EBUSY. */
static int serve_served(const char *fabric)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;

	o.fabric = fabric;
	o.node = "host0";
	return smartio_open(&h, &o) == -EBUSY ? 0 : 1;
}

static double wait_state(struct smartio *h, unsigned node, int want,
			 double t0, double limit)
{
	struct smartio_node_info ni;

	for (;;) {
		assert_int_equal(smartio_node_info(h, node, &ni), 0);
		if (ni.state == want)
			return now_s() - t0;
		assert_true(now_s() - t0 < limit);
		usleep(20000);
	}
}

static void test_two_processes_share_one_fabric_and_detect_death(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned nvme0 = th_dev(h, "nvme0"), host1 = th_node(h, "host1");
	struct smartio_device_info di;
	struct smartio_node_info ni;
	uint64_t cur;
	unsigned l0 = th_luts_used(h, 0), r0 = th_reqs_used(h, 0);
	int status;
	double t0;
	pid_t pid;

	(void)state;
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	pid = spawn_borrower(fabric);
	/* The other process's borrow is visible here at once. */
	assert_int_equal(smartio_node_info(h, host1, &ni), 0);
	assert_int_equal(ni.state, SMARTIO_NODE_UP);
	assert_int_equal(smartio_device_info(h, nvme0, &di), 0);
	assert_int_equal(di.borrowers, 1ull << host1);
	assert_true(th_luts_used(h, 0) > l0);
	cur = smartio_event_cursor(h);
	t0 = now_s();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	wait_state(h, host1, SMARTIO_NODE_DOWN, t0, 3.0);
	assert_int_equal(smartio_device_info(h, nvme0, &di), 0);
	assert_int_equal(di.borrowers, 0);
	assert_int_equal(th_luts_used(h, 0), l0);
	assert_int_equal(th_reqs_used(h, 0), r0);
	assert_true(th_saw_event(h, &cur, "node-down", "nodes/host1"));
	smartio_close(h);
}

/* Waits (at most 5 s) until every thread of pid is stopped. */
static void wait_stopped(pid_t pid)
{
	double t0 = now_s();
	char path[320], line[512];
	struct dirent *e;
	int running;
	DIR *d;

	do {
		running = 0;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		d = opendir(path);
		assert_non_null(d);
		while ((e = readdir(d))) {
			FILE *f;
			char *st;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stat",
				 (int)pid, e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(line, sizeof(line), f) &&
			    (st = strrchr(line, ')')) && st[1] == ' ' &&
			    st[2] != 'T' && st[2] != 't')
				running = 1;
			fclose(f);
		}
		closedir(d);
		if (running)
			usleep(1000);
	} while (running && now_s() - t0 < 5.0);
	assert_false(running);
}

/*
 * A process that stops (SIGSTOP: alive, but silent) is declared down by
 * the heartbeat timeout and its borrows are cleaned; when it continues, its
 * heartbeats bring its node back up.
 */
static void test_stopped_process_goes_down_and_comes_back(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned nvme0 = th_dev(h, "nvme0"), host1 = th_node(h, "host1");
	unsigned l0 = th_luts_used(h, 0), r0 = th_reqs_used(h, 0);
	struct smartio_device_info di;
	uint64_t cur;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	pid = spawn_borrower(fabric);
	cur = smartio_event_cursor(h);
	/*
	 * Stopped while we hold the fabric's lock, so never inside it: a
	 * process stopped holding it would stop every node of the simulated
	 * fabric (one lock in shared memory), which no heartbeat can detect.
	 */
	sim_lock(sio_lib_fabric(h));
	kill(pid, SIGSTOP);
	wait_stopped(pid);	/* every thread, before anyone else may lock */
	sim_unlock(sio_lib_fabric(h));
	wait_state(h, host1, SMARTIO_NODE_DOWN, now_s(), 3.0);
	assert_int_equal(smartio_device_info(h, nvme0, &di), 0);
	assert_int_equal(di.borrowers, 0);
	assert_int_equal(th_luts_used(h, 0), l0);
	assert_int_equal(th_reqs_used(h, 0), r0);
	assert_true(th_saw_event(h, &cur, "node-down", "nodes/host1"));
	kill(pid, SIGCONT);
	wait_state(h, host1, SMARTIO_NODE_UP, now_s(), 3.0);
	assert_true(th_saw_event(h, &cur, "node-up", "nodes/host1"));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	smartio_close(h);
}

/*
 * A process that runs but could not beat for longer than a stopped one is
 * given (its beat thread waited 3 s for the fabric's lock, as on a loaded
 * machine) stays up, its borrow kept: slow is not dead.
 */
static void test_starved_process_stays_up(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned nvme0 = th_dev(h, "nvme0"), host1 = th_node(h, "host1");
	struct smartio_device_info di;
	struct smartio_node_info ni;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	pid = spawn_borrower(fabric);
	sim_lock(sio_lib_fabric(h));
	sleep(3);
	sim_check_liveness(sio_lib_fabric(h));
	sim_unlock(sio_lib_fabric(h));
	assert_int_equal(smartio_node_info(h, host1, &ni), 0);
	assert_int_equal(ni.state, SMARTIO_NODE_UP);
	assert_int_equal(smartio_device_info(h, nvme0, &di), 0);
	assert_int_equal(di.borrowers, 1ull << host1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	smartio_close(h);
}

/*
 * A node alone has nobody to send heartbeats to; the first process that
 * joins must not find it silent and take it down (and with it what is
 * routed to it).  Its last beat is made to look 20 s old, as after a
 * long time alone; one beat period later a second process joins.
 */
static void test_lone_node_stays_up_when_another_joins(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0");
	struct smartio_node_info ni;
	struct timespec ts;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(smartio_lend(h, th_dev(h, "nvme0"),
				      SMARTIO_LEND_ALL, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sim_lock(sio_lib_fabric(h));
	sio_node(sio_lib_reg(h), host0)->heard_ns =
		(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec -
		20000000000ull;
	sim_unlock(sio_lib_fabric(h));
	usleep(3 * SIM_HEARTBEAT_MS * 1000);
	pid = spawn_borrower(fabric);
	assert_int_equal(smartio_node_info(h, host0, &ni), 0);
	assert_int_equal(ni.state, SMARTIO_NODE_UP);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	smartio_close(h);
}

/* A killed child that nobody has reaped yet is a zombie: dead, not hung. */
static void test_unreaped_zombie_is_down_without_waiting_for_timeout(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned nvme0 = th_dev(h, "nvme0"), host1 = th_node(h, "host1");
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	pid = spawn_borrower(fabric);
	kill(pid, SIGKILL);
	/* Well under the 2 s heartbeat timeout: found by process liveness. */
	wait_state(h, host1, SMARTIO_NODE_DOWN, now_s(), 1.5);
	waitpid(pid, &status, 0);
	smartio_close(h);
}

/*
 * A fabric left behind by a dead process whose pid now belongs to someone
 * else (here: us) is stale, not busy: nobody holds its state file's flock,
 * and the start time recorded with a node's owner pid tells the two
 * processes apart.
 */
static void test_stale_fabric_with_a_reused_pid_is_rebuilt(void **state)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;
	struct sim_shared *sh;
	struct sim_node_hw *hw;
	char fabric[64], path[128];
	struct stat st;
	int status, fd;
	pid_t pid;
	u32 i;

	(void)state;
	th_fabric_name(fabric, sizeof(fabric));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		o.fabric = fabric;
		o.create = 1;
		_exit(smartio_open(&h, &o) ? 1 : 0);	/* dies without closing */
	}
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(path, sizeof(path), "/dev/shm/smartio-%s/state", fabric);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	sh = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, 0);
	assert_true(sh != MAP_FAILED);
	/* The dead owner's pid is reused by this process. */
	hw = (struct sim_node_hw *)((char *)sh + sh->nodes_hw_off);
	for (i = 0; i < 4; i++)
		if (hw[i].owner_pid)
			hw[i].owner_pid = getpid();
	munmap(sh, (size_t)st.st_size);
	close(fd);

	o.fabric = fabric;
	o.create = 1;
	assert_int_equal(smartio_open(&h, &o), 0);
	smartio_close(h);
}

static void test_second_process_cannot_serve_a_served_node(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	pid_t pid;
	int status;

	(void)state;
	pid = spawn_self("--serve-served", fabric, -1);
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	smartio_close(h);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_processes_share_one_fabric_and_detect_death),
		cmocka_unit_test(test_second_process_cannot_serve_a_served_node),
		cmocka_unit_test(test_stale_fabric_with_a_reused_pid_is_rebuilt),
		cmocka_unit_test(test_stopped_process_goes_down_and_comes_back),
		cmocka_unit_test(test_starved_process_stays_up),
		cmocka_unit_test(test_lone_node_stays_up_when_another_joins),
		cmocka_unit_test(test_unreaped_zombie_is_down_without_waiting_for_timeout),
	};

	/* The children spawn_self starts. */
	if (argc == 4 && !strcmp(argv[1], "--borrower"))
		child(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "--serve-served"))
		return serve_served(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
