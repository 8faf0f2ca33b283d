// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A process SIGKILLed while it holds the simulated fabric's lock, half way
 * through taking or giving back LUT slots, requester entries or a segment
 * attachment: the next process to take the lock finds the state put back in
 * line with the records (lib/core/repair.c).  The dying process is a real
 * forked child that shares the fabric's memory and really dies holding the
 * robust mutex.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "smartio_internal.h"
#include "core_int.h"

typedef void (*half_done_fn)(struct sim_fabric *f, void *arg);

/* Runs fn in a child under the fabric lock, then kills the child there. */
static void die_inside_lock(struct smartio *h, half_done_fn fn, void *arg)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		sim_lock(f);
		fn(f, arg);
		raise(SIGKILL);
		_exit(0);	/* not reached */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static u32 repairs(struct smartio *h)
{
	return sio_lib_fabric(h)->sh->repairs;
}

struct stray {
	u32 node, count;
};

/* A run of LUT slots and a requester entry taken, no record written yet. */
static void take_without_record(struct sim_fabric *f, void *arg)
{
	struct stray *s = arg;
	struct sio_adapter *ad = &sio_node(f->reg, s->node)->adapter[0];

	assert_true(sio_bitmap_alloc(&ad->luts, s->count) >= 0);
	assert_true(sio_bitmap_alloc(&ad->reqs_out, 1) >= 0);
	assert_true(sio_bitmap_alloc(&ad->reqs_in, 1) >= 0);
}

static void test_taken_without_record_come_back(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host1 = th_node(h, "host1");
	unsigned luts = th_luts_used(h, host1), reqs = th_reqs_used(h, host1);
	struct stray s = { host1, 3 };
	u32 before = repairs(h);

	(void)state;
	die_inside_lock(h, take_without_record, &s);
	/* The first taker of the lock repairs: this read is one. */
	assert_int_equal(th_luts_used(h, host1), luts);
	assert_int_equal(th_reqs_used(h, host1), reqs);
	assert_int_equal(repairs(h), before + 1);
	smartio_close(h);
}

/* Gives back a borrow's BAR slots and stops before clearing the record. */
static void half_return(struct sim_fabric *f, void *arg)
{
	struct sio_borrow *b = sio_borrow_at(f->reg, *(u32 *)arg);
	struct sio_adapter *ad =
		&sio_node(f->reg, b->borrower)->adapter[b->b_adapter];
	u32 i;

	for (i = 0; i < SIO_MAX_BARS; i++)
		if (b->bar_local[i])
			sio_lut_unmap(&f->core, b->borrower, b->b_adapter,
				      (s32)((b->bar_local[i] - ad->window_base) /
					    ad->slot_size), 1);
	sio_bitmap_free(&ad->reqs_in, (u32)b->b_req, 1);
}

static void test_half_returned_borrow_is_whole_again(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host1 = th_node(h, "host1"), dev = th_dev(h, "nvme0");
	unsigned luts0 = th_luts_used(h, host1), luts1, reqs1;
	struct sim_fabric *f = sio_lib_fabric(h);
	u32 bidx;

	(void)state;
	assert_int_equal(smartio_lend(h, dev, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, dev, host1), 0);
	luts1 = th_luts_used(h, host1);
	reqs1 = th_reqs_used(h, host1);
	assert_true(luts1 > luts0);
	sim_lock(f);
	bidx = (u32)sio_borrow_find(f->reg, dev, host1);
	sim_unlock(f);
	die_inside_lock(h, half_return, &bidx);
	/* The record still names them: taken again, and the return frees all. */
	assert_int_equal(th_luts_used(h, host1), luts1);
	assert_int_equal(th_reqs_used(h, host1), reqs1);
	assert_int_equal(smartio_return(h, dev, host1), 0);
	assert_int_equal(th_luts_used(h, host1), luts0);
	smartio_close(h);
}

/* The owner recorded the peer; the peer died before its own record. */
static void owner_side_only(struct sim_fabric *f, void *arg)
{
	sio_seg(f->reg, *(u32 *)arg)->attached |= 1ull << 2;
}

static void test_attach_mask_follows_records(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	struct smartio_segment_info si;
	int seg;

	(void)state;
	assert_int_equal(smartio_segment_create(h, host0, "keep"), 0);
	assert_int_equal(smartio_segment_set_size(h, host0, "keep", 65536), 0);
	assert_int_equal(smartio_segment_set_available(h, host0, "keep", 1), 0);
	assert_int_equal(smartio_segment_attach(h, host0, "keep", host1), 0);
	seg = smartio_segment_find(h, host0, "keep");
	assert_true(seg >= 0);
	die_inside_lock(h, owner_side_only, &seg);
	assert_int_equal(smartio_segment_at(h, (unsigned)seg, &si), 1);
	assert_int_equal(si.attached, 1ull << host1);
	assert_int_equal(smartio_segment_detach(h, host0, "keep", host1), 0);
	assert_int_equal(smartio_segment_destroy(h, host0, "keep"), 0);
	smartio_close(h);
}

/* Nothing half done: the takeover changes nothing and counts no repair. */
static void nothing(struct sim_fabric *f, void *arg)
{
	(void)f;
	(void)arg;
}

static void test_clean_death_changes_nothing(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host1 = th_node(h, "host1"), dev = th_dev(h, "nvme0");
	unsigned luts;
	u32 before;

	(void)state;
	assert_int_equal(smartio_lend(h, dev, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, dev, host1), 0);
	luts = th_luts_used(h, host1);
	before = repairs(h);
	die_inside_lock(h, nothing, NULL);
	assert_int_equal(th_luts_used(h, host1), luts);
	assert_int_equal(repairs(h), before);
	assert_int_equal(smartio_return(h, dev, host1), 0);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken_without_record_come_back),
		cmocka_unit_test(test_half_returned_borrow_is_whole_again),
		cmocka_unit_test(test_attach_mask_follows_records),
		cmocka_unit_test(test_clean_death_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
