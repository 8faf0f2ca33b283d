// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smartiofs: options, startup and the session loop (smartiofs(8)).
 *
 *   smartiofs [--fabric NAME] [--topology FILE] [--node NAME] [FUSE options]
 *             [SOURCE] MOUNTPOINT
 *
 * Without --node the process creates the embedded simulated cluster and
 * serves every node of it (self is the first node); with --node it joins
 * the fabric, creating it if needed, and serves that node alone.  The
 * options are also accepted as -o fabric=,node=,topology= so that the file
 * system mounts from fstab through mount.fuse3.
 *
 * Startup errors are one line on stderr and exit status 1.  Unless -f is
 * given the daemon detaches only after the mount exists, so that its exit
 * status tells whether mounting worked.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sfs.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

struct sfs sfs;

struct options {
	char *fabric;
	char *topology;
	char *check;		/* --check FILE: parse a topology, mount nothing */
	char *node;
	char *operator_group;
	char *group;
	char *pos[3];
	int npos;
	int help;
	int version;
	int stats;
	int manage;
	int list_attributes;
};

enum { KEY_HELP, KEY_VERSION };

#define OPT(t, field) { t, offsetof(struct options, field), 0 }

/*
 * "--x %s" before "--x=%s": libfuse applies every template that matches,
 * in order, and "--x %s" also matches "--x=VALUE", taking "=VALUE"; the
 * "=" form, applied last, gives the value without it.
 */
static const struct fuse_opt option_spec[] = {
	OPT("--fabric %s", fabric), OPT("--fabric=%s", fabric),
	OPT("fabric=%s", fabric),
	OPT("--topology %s", topology), OPT("--topology=%s", topology),
	OPT("topology=%s", topology),
	OPT("--check %s", check), OPT("--check=%s", check),
	OPT("--node %s", node), OPT("--node=%s", node), OPT("node=%s", node),
	OPT("--operator-group %s", operator_group),
	OPT("--operator-group=%s", operator_group),
	OPT("operator_group=%s", operator_group),
	{ "--manage", offsetof(struct options, manage), 1 },
	{ "manage", offsetof(struct options, manage), 1 },
	OPT("--fabric-group %s", group), OPT("--fabric-group=%s", group),
	OPT("fabric_group=%s", group),
	{ "--stats", offsetof(struct options, stats), 1 },
	/* Not in --help: what the tables define, for the man page's test. */
	{ "--list-attributes", offsetof(struct options, list_attributes), 1 },
	{ "stats", offsetof(struct options, stats), 1 },
	FUSE_OPT_KEY("-h", KEY_HELP), FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION), FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END
};

static int option_proc(void *data, const char *arg, int key,
		       struct fuse_args *outargs)
{
	struct options *o = data;

	(void)outargs;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (o->npos >= 3)
			return -1;
		o->pos[o->npos] = strdup(arg);
		if (!o->pos[o->npos])
			return -1;
		o->npos++;
		return 0;
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	default:
		return 1;
	}
}

/* The command's name, not argv[0] (libtool's fs/.libs/smartiofs in a build). */
static void usage(void)
{
	printf("usage: smartiofs [options] [SOURCE] MOUNTPOINT\n\n"
	       "smartiofs options:\n"
	       "    --fabric NAME, -o fabric=NAME      fabric to create or join "
	       "(default: SOURCE or \"default\")\n"
	       "    --topology FILE, -o topology=FILE  cluster description "
	       "when creating (smartio.conf(5))\n"
	       "    --check FILE                       parse a topology file, "
	       "mount nothing\n"
	       "    --node NAME, -o node=NAME          serve this node only "
	       "(join or create the fabric)\n"
	       "    --fabric-group GROUP, -o fabric_group=GROUP\n"
	       "                                       share the simulated "
	       "fabric with GROUP\n"
	       "    --stats, -o stats                  operation counters in "
	       "the xattr user.smartiofs.stats\n"
	       "    --operator-group GROUP, -o operator_group=GROUP\n"
	       "                                       members may control "
	       "the cluster (smartio(7))\n"
	       "    --manage, -o manage                this --node is the "
	       "management node: act for all\n\n");
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						     noreturn));

static void operator_group(const char *name);

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("smartiofs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* operator_group=: a group name or a decimal gid (no group entry needed). */
static void operator_group(const char *name)
{
	struct group *g = getgrnam(name);
	unsigned long v = 0;
	const char *p;

	if (g) {
		sfs.operator_gid = g->gr_gid;
	} else {
		for (p = name; *p >= '0' && *p <= '9' && v <= UINT_MAX; p++)
			v = v * 10 + (unsigned long)(*p - '0');
		if (!name[0] || *p || v >= (gid_t)-1)
			die("unknown operator group '%s'", name);
		sfs.operator_gid = (gid_t)v;
	}
	sfs.has_operator_group = 1;
}

/* Opens the cluster; msg receives libsmartio's reason on failure. */
static int open_cluster(const struct options *o, char *msg, size_t msglen)
{
	struct smartio_open_opts so = { 0 };

	so.fabric = o->fabric;
	so.topology = o->topology;
	so.node = o->node;
	so.group = o->group;
	so.create = o->node ? -1 : 1;
	so.errbuf = msg;
	so.errlen = msglen;
	return smartio_open(&sfs.h, &so);
}

static void open_error(const struct options *o, int rc, const char *msg)
{
	const char *fabric = o->fabric ? o->fabric : "default";

	/*
	 * Creating a fabric that is served: whether any node is left to
	 * join is not known here, so point at where its mounts are named.
	 */
	if (msg[0] && rc == -EBUSY && !o->node)
		die("%s (findmnt -t fuse.smartiofs shows the mounts serving "
		    "'%s')", msg, fabric);
	if (msg[0])
		die("%s", msg);
	if (rc == -ENOENT && o->node)
		die("unknown node '%s' in fabric '%s'", o->node, fabric);
	if (rc == -EBUSY && o->node)
		die("node '%s' of fabric '%s' is already served by a running "
		    "process", o->node, fabric);
	if (o->topology)
		die("%s: %s", o->topology, strerror(-rc));
	die("cannot open fabric '%s': %s", fabric, strerror(-rc));
}

/*
 * The mount's options naming it in /proc/mounts: type fuse.smartiofs and
 * the source "<fabric>" or "<fabric>:<node>", so that findmnt tells one
 * mount from another.  A comma or backslash of the fabric's name is
 * escaped for libfuse's option parser.
 */
static void mount_source(const struct options *o, char *buf, size_t len)
{
	const char *f = o->fabric ? o->fabric : "default";
	size_t n = (size_t)snprintf(buf, len, "-osubtype=smartiofs,fsname=");

	for (; *f && n + 3 < len; f++) {
		if (*f == ',' || *f == '\\')
			buf[n++] = '\\';
		buf[n++] = *f;
	}
	buf[n] = '\0';
	if (o->node)
		snprintf(buf + n, len - n, ":%s", o->node);
}

/*
 * --check FILE: the topology parsed as a mount would parse it, nothing
 * created or mounted; errors with the line number, exit 1.
 */
static int check_topology(const char *path)
{
	unsigned nodes = 0, devices = 0;
	char msg[512];
	int rc = smartio_topology_check(path, &nodes, &devices, msg, sizeof(msg));

	if (rc) {
		fprintf(stderr, "smartiofs: %s\n", msg);
		return 1;
	}
	printf("%s: %u nodes, %u devices\n", path, nodes, devices);
	return 0;
}

/* Forks; the parent waits for the child's startup verdict and exits. */
/*
 * The signals that end the daemon go to the threads that serve FUSE.
 * libfuse's handler only marks the session as exited; a thread of the
 * simulator or the watcher that took the signal would leave every FUSE
 * thread asleep in its read or wait, and the daemon would never exit
 * while a lazily unmounted file is still open.  Threads inherit the mask,
 * so it is set while they are started and lifted by serve.
 */
static void exit_signals(int how)
{
	sigset_t set;

	loop_exit_signals(&set);
	pthread_sigmask(how, &set, NULL);
}

static int detach(void)
{
	int fds[2];
	char status = 1;
	pid_t pid;

	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1) {
			int ws;

			waitpid(pid, &ws, 0);
			status = 1;
		}
		_exit(status ? 1 : 0);
	}
	close(fds[0]);
	setsid();
	return fds[1];
}

static void detached(int fd)
{
	char ok = 0;
	int null = open("/dev/null", O_RDWR);

	if (write(fd, &ok, 1) != 1) {
		/* The parent is gone: nothing to tell. */
	}
	close(fd);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
}

/* Help, the attribute list or the version: 1 when o asks for one. */
static int print_only(const struct options *o)
{
	if (o->help)
		usage();
	else if (o->list_attributes)
		tree_print(stdout);
	else if (o->version)
		printf("smartiofs %s (FUSE library %s)\n", PACKAGE_VERSION,
		       fuse_pkgversion());
	else
		return 0;
	return 1;
}

/*
 * The positional arguments, fabric= and node= checked, the mountpoint
 * resolved into mnt and the topology file into topo; dies on a bad one.
 */
static void check_args(struct options *o, char *mnt, char *topo)
{
	const char *mountpoint;
	struct stat st;

	if (o->npos == 0)
		die("no mountpoint given (see --help)");
	if (o->npos > 2)
		die("too many arguments: '%s'", o->pos[2]);
	mountpoint = o->pos[o->npos - 1];
	/* From fstab the source names the fabric unless fabric= does. */
	if (o->npos == 2 && !o->fabric && strcmp(o->pos[0], "none") &&
	    strcmp(o->pos[0], "smartiofs") && strcmp(o->pos[0], "smartio"))
		o->fabric = strdup(o->pos[0]);
	if (o->fabric && (!o->fabric[0] || strchr(o->fabric, '/') ||
			  strlen(o->fabric) > 64))
		die("invalid fabric name '%s'", o->fabric);
	if (o->node && (!o->node[0] || strlen(o->node) >= SMARTIO_NAME_MAX))
		die("unknown node '%s'", o->node);
	if (!realpath(mountpoint, mnt) || stat(mnt, &st)) {
		if (errno == ENOTCONN)	/* the daemon of a mount there died */
			die("%s: a stale mount whose daemon is gone: run "
			    "fusermount3 -u %s first", mountpoint, mountpoint);
		die("%s: %s", mountpoint, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		die("%s: %s", mountpoint, strerror(ENOTDIR));
	if (o->topology) {
		if (!realpath(o->topology, topo))
			die("%s: %s", o->topology, strerror(errno));
		free(o->topology);
		o->topology = topo;
	}
}

/* The cluster opened for o and its names and inodes loaded; dies if not. */
static void load_cluster(const struct options *o)
{
	char msg[512];
	int rc;

	sfs.xattr_stats = o->stats;
	/* The management view acts for every node (authz.c). */
	sfs.manage = !o->node || o->manage;
	if (o->operator_group)
		operator_group(o->operator_group);
	sfs.uid = getuid();
	sfs.gid = getgid();
	clock_gettime(CLOCK_REALTIME, &sfs.start);
	exit_signals(SIG_BLOCK);
	rc = open_cluster(o, msg, sizeof(msg));
	if (rc)
		open_error(o, rc, msg);
	if (msg[0])	/* a fabric rebuilt from a broken state */
		fprintf(stderr, "smartiofs: %s\n", msg);
	sfs.self = smartio_self(sfs.h);
	rc = names_load(sfs.h);
	if (!rc)
		rc = inode_init();
	if (rc)
		die("cannot load the cluster: %s", strerror(-rc));
}

/*
 * The FUSE session made and mounted at mountpoint, with the watcher and
 * the reaper for mnt; dies, or exits where libfuse said why.
 */
static void mount_session(struct fuse_args *args, const char *mountpoint,
			  const char *mnt)
{
	int rc;

	sfs.se = fuse_session_new(args, &sfs_ops, sizeof(sfs_ops), NULL);
	if (!sfs.se) {
		smartio_close(sfs.h);
		exit(1);	/* libfuse said why */
	}
	if (fuse_set_signal_handlers(sfs.se) != 0) {
		smartio_close(sfs.h);
		die("cannot install signal handlers");
	}
	if (fuse_session_mount(sfs.se, mountpoint) != 0) {
		fuse_remove_signal_handlers(sfs.se);
		fuse_session_destroy(sfs.se);
		smartio_close(sfs.h);
		exit(1);	/* libfuse said why */
	}
	rc = notify_start();
	if (rc) {
		fuse_session_unmount(sfs.se);
		smartio_close(sfs.h);
		die("cannot start the watcher: %s", strerror(-rc));
	}
	/* Without it a SIGKILL can leave the mount and its clients hung. */
	rc = reaper_start(mnt);
	if (rc)
		fprintf(stderr, "smartiofs: no reaper for %s: %s\n", mnt,
			strerror(-rc));
}

/*
 * Serves until unmounted; libfuse's result.  loop_serve takes the exit
 * signals only while it waits for a request; libfuse's loops take them in
 * their reading threads at any time.
 */
static int serve(const struct fuse_cmdline_opts *copts)
{
	struct fuse_loop_config lc;

	if (!copts->singlethread && !copts->clone_fd)
		return loop_serve(sfs.se);
	exit_signals(SIG_UNBLOCK);
	if (copts->singlethread)
		return fuse_session_loop(sfs.se);
	lc.clone_fd = copts->clone_fd;
	lc.max_idle_threads = copts->max_idle_threads;
	return fuse_session_loop_mt(sfs.se, &lc);
}

/* Everything main made, undone in reverse. */
/* What fuse_opt_parse copied (the topology path is freed once resolved). */
static void options_free(struct options *o)
{
	free(o->fabric);
	free(o->node);
	free(o->operator_group);
	free(o->group);
	free(o->check);
	while (o->npos > 0)
		free(o->pos[--o->npos]);
}

static void unmount_and_free(struct fuse_cmdline_opts *copts,
			     struct fuse_args *args, struct options *o)
{
	reaper_stop();
	notify_stop();
	wq_shutdown(&events_q);
	wq_shutdown(&irq_q);
	fuse_session_unmount(sfs.se);
	fuse_remove_signal_handlers(sfs.se);
	fuse_session_destroy(sfs.se);
	sfs_files_release_all();
	holds_free();
	listings_free();
	ops_free();
	smartio_close(sfs.h);
	inode_fini();
	names_free();
	free(copts->mountpoint);
	fuse_opt_free_args(args);
	options_free(o);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts copts;
	struct options o;
	char mnt[PATH_MAX], topo[PATH_MAX], source[300];
	int rc, ret, report = -1;

	memset(&o, 0, sizeof(o));
	if (fuse_opt_parse(&args, &o, option_spec, option_proc) == -1)
		die("invalid arguments (see --help)");
	if (o.check) {
		ret = check_topology(o.check);
		free(o.topology);
		options_free(&o);
		fuse_opt_free_args(&args);
		return ret;
	}
	/* What only prints: the arguments are freed (the ASan run checks). */
	if (print_only(&o)) {
		free(o.topology);
		options_free(&o);
		fuse_opt_free_args(&args);
		return 0;
	}
	check_args(&o, mnt, topo);
	mount_source(&o, source, sizeof(source));
	if (fuse_opt_insert_arg(&args, 1, source) ||
	    fuse_opt_add_arg(&args, mnt))
		die("out of memory");
	if (fuse_parse_cmdline(&args, &copts) != 0)
		die("invalid arguments (see --help)");
	if (!copts.mountpoint)
		die("no mountpoint given (see --help)");
	if (!copts.foreground)
		report = detach();
	load_cluster(&o);
	mount_session(&args, copts.mountpoint, mnt);
	if (report >= 0)
		detached(report);
	rc = sfs_sd_ready();	/* a Type=notify unit: the mount serves */
	if (rc)
		fprintf(stderr, "smartiofs: cannot tell the service manager "
			"that the mount is ready: %s\n", strerror(-rc));
	fuse_daemonize(1);	/* foreground from here: only chdir("/") */
	ret = serve(&copts);
	unmount_and_free(&copts, &args, &o);
	return ret < 0 ? 1 : 0;
}
