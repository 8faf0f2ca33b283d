// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 12, defect 6: a registry record that did not come from this
 * process (smartio.ko's REG_READ copy, another process's shared memory)
 * is refused by sio_registry_check unless every table offset, count and
 * index stays inside it; libsmartio's kernel transport takes a corrupted
 * copy for nothing.  A registry built by sio_registry_init passes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "topology_parse.h"

static const struct sio_reg_limits limits = {
	.max_borrows = 16, .max_segments = 16, .max_attach = 16,
	.max_segdma = 16, .max_peermap = 16,
};

struct reg {
	struct sio_registry *r;
	u64 size;
};

static int setup(void **state)
{
	struct sio_topology t;
	struct reg *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	assert_int_equal(sio_topo_default(&t), 0);
	g->size = sio_registry_size(&t, &limits);
	assert_true(g->size > sizeof(struct sio_registry));
	g->r = calloc(1, g->size);
	assert_non_null(g->r);
	assert_int_equal(sio_registry_init(g->r, g->size, &t, &limits), 0);
	sio_topo_free(&t);
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct reg *g = *state;

	free(g->r);
	free(g);
	return 0;
}

static int check(struct reg *g)
{
	return sio_registry_check(g->r, g->size);
}

static void test_a_built_registry_passes(void **state)
{
	struct reg *g = *state;

	assert_int_equal(check(g), 0);
	assert_int_equal(g->r->total_size, g->size);
}

static void test_a_short_or_foreign_record_is_refused(void **state)
{
	struct reg *g = *state;

	assert_int_equal(sio_registry_check(g->r, sizeof(*g->r) - 1), -EPROTO);
	assert_int_equal(sio_registry_check(g->r, g->size - 1), -EPROTO);
	g->r->version++;
	assert_int_equal(check(g), -EPROTO);
}

/* Each table offset moved past the end, or onto another table. */
static void test_table_offsets_past_the_end_are_refused(void **state)
{
	struct reg *g = *state;
	u64 *offs[] = {
		&g->r->nodes_off, &g->r->devices_off, &g->r->borrows_off,
		&g->r->segments_off, &g->r->attach_off, &g->r->segdma_off,
		&g->r->events_off, &g->r->peermap_off,
	};
	size_t i;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		u64 keep = *offs[i];

		*offs[i] = g->size;
		assert_int_equal(check(g), -EPROTO);
		*offs[i] = ~0ull - 64;
		assert_int_equal(check(g), -EPROTO);
		*offs[i] = g->r->nodes_off;	/* overlapping, in bounds */
		if (i)
			assert_int_equal(check(g), -EPROTO);
		*offs[i] = keep;
		assert_int_equal(check(g), 0);
	}
}

/* Counts larger than the record holds, or than the core's limits. */
static void test_counts_too_large_are_refused(void **state)
{
	struct reg *g = *state;
	u32 *counts[] = {
		&g->r->nnodes, &g->r->ndevices, &g->r->max_borrows,
		&g->r->max_segments, &g->r->max_attach, &g->r->max_segdma,
		&g->r->max_peermap,
	};
	size_t i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		u32 keep = *counts[i];

		*counts[i] = keep + 1;
		assert_int_equal(check(g), -EPROTO);
		*counts[i] = 0xffffffffu;
		assert_int_equal(check(g), -EPROTO);
		*counts[i] = keep;
	}
	g->r->nnodes = 0;
	assert_int_equal(check(g), -EPROTO);
	g->r->nnodes = SIO_MAX_NODES + 1;
	assert_int_equal(check(g), -EPROTO);
}

/* A total size that claims more than was read. */
static void test_total_size_beyond_the_copy_is_refused(void **state)
{
	struct reg *g = *state;

	g->r->total_size = g->size + 4096;
	assert_int_equal(check(g), -EPROTO);
	g->r->total_size = g->size - 64;
	assert_int_equal(check(g), -EPROTO);
}

/* Records whose indexes lead out of their tables. */
static void test_record_indexes_out_of_range_are_refused(void **state)
{
	struct reg *g = *state;
	struct sio_registry *r = g->r;
	struct sio_borrow *b = sio_borrow_at(r, 3);
	struct sio_segment *s = sio_seg(r, 2);
	struct sio_attach *a = sio_attach_at(r, 1);
	struct sio_node *n = sio_node(r, 0);
	struct sio_device *d = sio_dev(r, 0);

	b->used = 1;
	b->dev = r->ndevices;
	assert_int_equal(check(g), -EPROTO);
	b->dev = 0;
	b->borrower = (u16)r->nnodes;
	assert_int_equal(check(g), -EPROTO);
	b->used = 0;			/* an unused record is not followed */
	assert_int_equal(check(g), 0);
	s->used = 1;
	s->owner = (u16)r->nnodes;
	assert_int_equal(check(g), -EPROTO);
	s->used = 0;
	a->used = 1;
	a->seg = r->max_segments;
	assert_int_equal(check(g), -EPROTO);
	a->used = 0;
	n->nadapters = SIO_MAX_ADAPTERS + 1;
	assert_int_equal(check(g), -EPROTO);
	n->nadapters = 0;
	d->node = (u16)r->nnodes;
	assert_int_equal(check(g), -EPROTO);
	d->node = 0;
	memset(d->name, 'x', sizeof(d->name));	/* no terminating NUL */
	assert_int_equal(check(g), -EPROTO);
}

/* Issue 17: switch indexes in adapters and borrow routes, window shift. */
static void test_switch_indexes_out_of_range_are_refused(void **state)
{
	struct reg *g = *state;
	struct sio_registry *r = g->r;
	struct sio_borrow *b = sio_borrow_at(r, 2);
	struct sio_adapter *ad = &sio_node(r, 1)->adapter[0];

	assert_int_equal(r->nswitches, 0);
	b->used = 1;
	b->l_hops = 1;			/* route_sw[0] = 0: no such switch */
	assert_int_equal(check(g), -EPROTO);
	b->l_hops = SIO_MAX_HOPS + 1;
	assert_int_equal(check(g), -EPROTO);
	b->l_hops = 0;
	b->l_window_shift = 64;
	assert_int_equal(check(g), -EPROTO);
	b->l_window_shift = 0;
	assert_int_equal(check(g), 0);
	b->used = 0;
	ad->sw = 1;
	assert_int_equal(check(g), -EPROTO);
	ad->sw = 0;
	r->nswitches = SIO_MAX_SWITCHES + 1;
	assert_int_equal(check(g), -EPROTO);
	r->nswitches = 0;
	assert_int_equal(check(g), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_built_registry_passes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_short_or_foreign_record_is_refused, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_table_offsets_past_the_end_are_refused, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_counts_too_large_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_total_size_beyond_the_copy_is_refused, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_record_indexes_out_of_range_are_refused, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_switch_indexes_out_of_range_are_refused, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
