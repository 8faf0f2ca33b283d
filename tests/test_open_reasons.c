// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libsmartio(3) promises errbuf a one-line reason for every failure of
 * smartio_open (issue 32, item 6): joining a node or a fabric that
 * another live process serves (EBUSY) names the node and that process;
 * an unknown node, a fabric that does not exist, a malformed fabric name
 * and smartio.ko that is not there each get a sentence too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* smartio_open with these options; returns rc and leaves the reason in err. */
static int open_with(const char *fabric, const char *node, int create,
		     char *err, size_t errlen)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;
	int rc;

	o.fabric = fabric;
	o.node = node;
	o.create = create;
	o.errbuf = err;
	o.errlen = errlen;
	memset(err, 'x', errlen - 1);	/* stale text must not survive */
	err[errlen - 1] = '\0';
	rc = smartio_open(&h, &o);
	if (!rc)
		smartio_close(h);
	return rc;
}

/* One line, not empty, containing each of the NULL-terminated words. */
static int is_reason(const char *err, ...)
{
	const char *word;
	va_list ap;
	int ok = err[0] && !strchr(err, '\n') && err[0] != 'x';

	va_start(ap, err);
	while ((word = va_arg(ap, const char *)))
		ok = ok && strstr(err, word);
	va_end(ap);
	if (!ok)
		fprintf(stderr, "reason: '%s'\n", err);
	return ok;
}

/*
 * In a child (the node is this process's own otherwise): join the
 * fabric that this process serves, three ways.  Exit 0 when each is
 * refused with EBUSY and a reason naming what holds it.
 */
static int child_joins(const char *fabric, pid_t server)
{
	char err[256], pid[32];
	int bad = 0;

	snprintf(pid, sizeof(pid), "%d", (int)server);
	bad |= open_with(fabric, "host0", 0, err, sizeof(err)) != -EBUSY ||
	       !is_reason(err, "host0", fabric, pid, "served", NULL);
	bad |= open_with(fabric, NULL, -1, err, sizeof(err)) != -EBUSY ||
	       !is_reason(err, "host0", fabric, pid, "served", NULL);
	bad |= open_with(fabric, "host0", 1, err, sizeof(err)) != -EBUSY ||
	       !is_reason(err, fabric, "serves it", NULL);
	return bad;
}

static void test_joining_a_served_node_says_who_serves_it(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	pid_t parent = getpid(), pid;
	char ptext[16];
	char *argv[] = { (char *)"test_open_reasons", (char *)"--join",
			 fabric, ptext, NULL };
	int status;

	(void)state;
	/*
	 * The child runs this program again (see main): forked from a
	 * process whose simulator threads run, it could inherit an
	 * allocator lock one of them held, which AddressSanitizer's
	 * allocator never releases there (test_fabric_open.c says more).
	 */
	snprintf(ptext, sizeof(ptext), "%d", (int)parent);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	smartio_close(h);
}

static void test_every_other_failure_has_a_reason(void **state)
{
	char fabric[64], missing[64], err[256];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	int rc;

	(void)state;
	assert_int_equal(open_with(fabric, "host9", 0, err, sizeof(err)), -ENOENT);
	assert_true(is_reason(err, "host9", fabric, NULL));
	th_fabric_name(missing, sizeof(missing));
	assert_int_equal(open_with(missing, NULL, 0, err, sizeof(err)), -ENOENT);
	assert_true(is_reason(err, missing, NULL));
	assert_int_equal(open_with("a/b", NULL, 1, err, sizeof(err)), -EINVAL);
	assert_true(is_reason(err, "a/b", NULL));
	/* smartio.ko is not loaded where the unit tests run; if it is, fine. */
	rc = open_with("kernel", NULL, 0, err, sizeof(err));
	if (rc)
		assert_true(is_reason(err, "smartio.ko", NULL));
	/* No errbuf: the failure alone, nothing written anywhere. */
	{
		struct smartio_open_opts o = { .fabric = missing, .create = 0 };
		struct smartio *h2 = NULL;

		assert_int_equal(smartio_open(&h2, &o), -ENOENT);
	}
	smartio_close(h);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_joining_a_served_node_says_who_serves_it),
		cmocka_unit_test(test_every_other_failure_has_a_reason),
	};

	/* The child test_joining_a_served_node_says_who_serves_it runs. */
	if (argc == 4 && !strcmp(argv[1], "--join"))
		return child_joins(argv[2], (pid_t)atoi(argv[3]));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
