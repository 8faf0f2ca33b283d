// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 12, defect 1: the simulated fabric's directory
 * (/dev/shm/smartio-<name>) is trusted only when this user made it.  A
 * directory made by another user, one open to others, a symbolic link in
 * its place, or a state file of another user is refused with a message
 * naming the path (and the owner); a symbolic link planted where a backing
 * file goes is never followed; several users share a fabric only when each
 * names the group that shares it.
 *
 * The ownership cases need root (chown, and a child that becomes "nobody"
 * with setuid); they are skipped otherwise.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define TOPO \
	"fabric luts=16 requesters=8 reserved=2 window=256M\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"device host0 nic0 bdf=0000:06:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=128K\n"

#define VICTIM_TEXT "not the fabric's\n"

struct fx {
	char fabric[64];
	char dir[128];
	char err[512];
	struct smartio_open_opts o;
};

static int setup(void **state)
{
	static struct fx fx;

	memset(&fx, 0, sizeof(fx));
	th_fabric_name(fx.fabric, sizeof(fx.fabric));
	snprintf(fx.dir, sizeof(fx.dir), "/dev/shm/smartio-%s", fx.fabric);
	fx.o.fabric = fx.fabric;
	fx.o.topology = th_topology_file(TOPO);
	fx.o.create = 1;
	fx.o.errbuf = fx.err;
	fx.o.errlen = sizeof(fx.err);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	return 0;
}

static uid_t nobody_uid(void)
{
	struct passwd *pw = getpwnam("nobody");

	return pw ? pw->pw_uid : 65534;
}

static int skip_unless_root(void)
{
	if (geteuid() == 0)
		return 0;
	fprintf(stderr, "needs root (chown, setuid): skipped\n");
	return 1;
}

static void refused(struct fx *fx, const char *what)
{
	struct smartio *h = NULL;
	int rc = smartio_open(&h, &fx->o);

	if (rc == 0)
		smartio_close(h);
	assert_int_equal(rc, -EPERM);
	fprintf(stderr, "refused: %s\n", fx->err);
	assert_non_null(strstr(fx->err, fx->dir));
	if (what)
		assert_non_null(strstr(fx->err, what));
}

static void test_dir_of_another_user_refused(void **state)
{
	struct fx *fx = *state;

	if (skip_unless_root())
		return;
	assert_int_equal(mkdir(fx->dir, 0700), 0);
	assert_int_equal(chown(fx->dir, nobody_uid(), (gid_t)-1), 0);
	refused(fx, "nobody");
	/* Joining is refused alike. */
	fx->o.create = 0;
	refused(fx, "nobody");
}

static void test_dir_open_to_others_refused(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(mkdir(fx->dir, 0700), 0);
	assert_int_equal(chmod(fx->dir, 0777), 0);
	refused(fx, "0777");
	assert_int_equal(chmod(fx->dir, 0750), 0);
	refused(fx, "0750");
}

static void test_symlink_in_place_of_dir_refused(void **state)
{
	struct fx *fx = *state;
	char target[160];

	snprintf(target, sizeof(target), "%s.elsewhere", fx->dir);
	assert_int_equal(mkdir(target, 0700), 0);
	assert_int_equal(symlink(target, fx->dir), 0);
	refused(fx, "symbolic link");
	rmdir(target);
}

static void test_state_of_another_user_refused(void **state)
{
	struct fx *fx = *state;
	char path[200];
	int fd;

	if (skip_unless_root())
		return;
	assert_int_equal(mkdir(fx->dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/state", fx->dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	assert_int_equal(fchown(fd, nobody_uid(), (gid_t)-1), 0);
	close(fd);
	fx->o.create = -1;
	refused(fx, "nobody");
}

static void victim(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(VICTIM_TEXT, f);
	fclose(f);
}

static void victim_untouched(const char *path)
{
	char buf[64] = "";
	struct stat st;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, VICTIM_TEXT);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, strlen(VICTIM_TEXT));
}

static void test_symlink_for_backing_file_not_followed(void **state)
{
	struct fx *fx = *state;
	struct smartio *h = NULL;
	char vpath[160], link[200], path[SMARTIO_PATH_MAX];
	uint64_t size;
	int gen, nic, rc;

	snprintf(vpath, sizeof(vpath), "/tmp/smartio-victim-%d", (int)getpid());
	victim(vpath);
	assert_int_equal(smartio_open(&h, &fx->o), 0);
	/* A BAR file is made on first use, a segment's at sizing. */
	snprintf(link, sizeof(link), "%s/bar-nic0-0.0", fx->dir);
	assert_int_equal(symlink(vpath, link), 0);
	for (gen = 0; gen < 8; gen++) {
		snprintf(link, sizeof(link), "%s/ram-host0-%d", fx->dir, gen);
		assert_int_equal(symlink(vpath, link), 0);
	}
	nic = smartio_device_find(h, "nic0");
	assert_true(nic >= 0);
	rc = smartio_resolve_bar(h, 0, (unsigned)nic, 0, path, sizeof(path),
				 &size);
	assert_int_equal(rc, -ELOOP);
	assert_int_equal(smartio_segment_create(h, 0, "s"), 0);
	assert_int_equal(smartio_segment_set_size(h, 0, "s", 1 << 20), 0);
	assert_int_equal(smartio_resolve_segment(h, 0, 0, "s", path,
						 sizeof(path), &size), 0);
	assert_int_equal(lstat(path, (struct stat[]){ 0 }), 0);
	victim_untouched(vpath);
	smartio_close(h);
	victim_untouched(vpath);
	unlink(vpath);
}

/* A child that becomes nobody (group nogroup) and serves host1. */
static int join_as_nobody(const char *fabric, const char *group, char *err,
			  size_t errlen)
{
	struct smartio_open_opts o = { 0 };
	struct group *gr = getgrnam("nogroup");
	gid_t gid = gr ? gr->gr_gid : 65534;
	struct smartio *h = NULL;
	int rc;

	if (setgroups(1, &gid) || setgid(gid) || setuid(nobody_uid()))
		return -errno;
	o.fabric = fabric;
	o.node = "host1";
	o.create = 0;
	o.group = group;
	o.errbuf = err;
	o.errlen = errlen;
	rc = smartio_open(&h, &o);
	if (rc)
		return rc;
	/* Writes the shared state and makes a file in the directory. */
	rc = smartio_segment_create(h, 1, "shared");
	if (!rc)
		rc = smartio_segment_set_size(h, 1, "shared", 1 << 20);
	smartio_close(h);
	return rc;
}

/* The child main runs for in_child: join_as_nobody, its message on fd. */
static int nobody_child(const char *fabric, const char *group, int fd)
{
	char err[512] = "";
	int rc = join_as_nobody(fabric, strcmp(group, "-") ? group : NULL,
				err, sizeof(err));

	if (write(fd, err, strlen(err)) < 0)
		return 100;
	return rc < 0 ? -rc : 0;
}

/*
 * join_as_nobody in a child that runs this program again (see main):
 * this process serves the fabric, and a child that only forked could
 * inherit an allocator lock one of its simulator threads held, which
 * AddressSanitizer's allocator never releases there (test_fabric_open.c
 * says more).
 */
static int in_child(struct fx *fx, const char *group)
{
	int fds[2], ws;
	char err[512] = "", fdtext[16];
	char *argv[] = { (char *)"test_fabric_dir", (char *)"--join-as-nobody",
			 fx->fabric, (char *)(group ? group : "-"), fdtext,
			 NULL };
	pid_t pid;
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	snprintf(fdtext, sizeof(fdtext), "%d", fds[1]);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	fprintf(stderr, "nobody, group %s: %s (%s)\n", group ? group : "none",
		strerror(WEXITSTATUS(ws)), err);
	return -WEXITSTATUS(ws);
}

static void test_group_shares_fabric(void **state)
{
	struct fx *fx = *state;
	struct smartio *h = NULL;
	struct stat st;
	char path[200];

	if (skip_unless_root())
		return;
	/* Without the group: the directory is root's alone. */
	fx->o.node = "host0";
	assert_int_equal(smartio_open(&h, &fx->o), 0);
	assert_int_equal(stat(fx->dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(in_child(fx, NULL), -EACCES);
	smartio_close(h);

	fx->o.group = "nogroup";
	assert_int_equal(smartio_open(&h, &fx->o), 0);
	assert_int_equal(stat(fx->dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 02770);
	assert_int_equal(st.st_gid, getgrnam("nogroup")->gr_gid);
	snprintf(path, sizeof(path), "%s/state", fx->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	/* Joining a group's fabric takes the group option too. */
	assert_int_equal(in_child(fx, NULL), -EPERM);
	assert_int_equal(in_child(fx, "nogroup"), 0);
	assert_true(smartio_segment_find(h, 1, "shared") >= 0);
	smartio_close(h);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dir_of_another_user_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_open_to_others_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_in_place_of_dir_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_of_another_user_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_for_backing_file_not_followed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_shares_fabric,
						setup, teardown),
	};

	if (argc == 5 && !strcmp(argv[1], "--join-as-nobody"))
		return nobody_child(argv[2], argv[3], atoi(argv[4]));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
