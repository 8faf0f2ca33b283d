// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 28, item 8: the simulated fabric's one registry serves every node,
 * and one node's users cannot take all of a table's records: each node
 * holds at most its share (the table's size divided by the number of
 * nodes) and gets EDQUOT beyond it, unsized segments included; another
 * node can still create its own.  The borrow, attachment, DMA-mapping and
 * peer-mapping tables cannot be filled through the API with a few devices
 * and LUT slots, so there a node's share is taken by records written into
 * the registry (as a process of that node could have made them), and the
 * real operations are tried against it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>

#include "harness.h"
#include "smartio_internal.h"
#include "fabric.h"

/* The simulator's segment table (lib/sim/fabric.c sim_limits). */
#define SIM_SEGMENTS 1024

static void test_one_node_cannot_take_every_segment_record(void **state)
{
	char fabric[64], name[32];
	struct smartio *h0 = th_open(TH_SMALL_TOPO, "host0", fabric,
				     sizeof(fabric));
	struct smartio *h = th_join(fabric, "host1");	/* host1's user */
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	unsigned share = SIM_SEGMENTS / smartio_node_count(h), n;
	int rc = 0;

	(void)state;
	for (n = 0; n < SIM_SEGMENTS; n++) {
		snprintf(name, sizeof(name), "s%u", n);
		rc = smartio_segment_create(h, host1, name);
		if (rc)
			break;
	}
	fprintf(stderr, "host1 created %u segments, then: %s\n", n,
		smartio_strerror(rc));
	assert_int_equal(rc, -EDQUOT);
	assert_int_equal(n, share);
	/* Nothing changed by the refusal; the other nodes keep theirs. */
	assert_int_equal(smartio_segment_find(h, host1, name), -ENOENT);
	assert_int_equal(smartio_segment_create(h0, host0, "mine"), 0);
	/* A record given back is room again. */
	assert_int_equal(smartio_segment_destroy(h, host1, "s0"), 0);
	assert_int_equal(smartio_segment_create(h, host1, name), 0);
	smartio_close(h);
	smartio_close(h0);
}

/* Records of host1's written into free borrow (or attachment) slots until
 * it holds share of them; dev and seg name nothing in use.  Returns the
 * slots written, to be given back. */
static unsigned fill_borrows(struct sio_registry *r, unsigned node,
			     unsigned spare_dev, unsigned share, u32 *slots)
{
	unsigned i, n = 0, held = 0;

	for (i = 0; i < r->max_borrows; i++)
		held += sio_borrow_at(r, i)->used &&
			sio_borrow_at(r, i)->borrower == node;
	for (i = 0; i < r->max_borrows && held < share; i++) {
		struct sio_borrow *b = sio_borrow_at(r, i);

		if (b->used)
			continue;
		b->used = 1;
		b->borrower = (u16)node;
		b->dev = spare_dev;
		b->lender = 0xffff;
		slots[n++] = i;
		held++;
	}
	return n;
}

static unsigned fill_attach(struct sio_registry *r, unsigned node,
			    unsigned share, u32 *slots)
{
	unsigned i, n = 0, held = 0;

	for (i = 0; i < r->max_attach; i++)
		held += sio_attach_at(r, i)->used &&
			sio_attach_at(r, i)->node == node;
	for (i = 0; i < r->max_attach && held < share; i++) {
		struct sio_attach *a = sio_attach_at(r, i);

		if (a->used)
			continue;
		a->used = 1;
		a->node = (u16)node;
		a->seg = r->max_segments - 1;	/* no segment lives there */
		a->lut = -1;
		slots[n++] = i;
		held++;
	}
	return n;
}

static void test_one_node_cannot_take_every_borrow_or_attachment(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(TH_SMALL_TOPO, NULL, fabric, sizeof(fabric));
	struct sim_fabric *f = sio_lib_fabric(h);
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	unsigned host2 = th_node(h, "host2"), nvme0 = th_dev(h, "nvme0");
	unsigned nvme3 = th_dev(h, "nvme3"), n, i;
	u32 slots[1024];

	(void)state;
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	sim_lock(f);
	n = fill_borrows(f->reg, host1, nvme3,
			 f->reg->max_borrows / f->reg->nnodes, slots);
	sim_unlock(f);
	assert_int_equal(smartio_borrow(h, nvme0, host1), -EDQUOT);
	assert_int_equal(smartio_borrow(h, nvme0, host2), 0);
	assert_int_equal(smartio_return(h, nvme0, host2), 0);
	sim_lock(f);
	for (i = 0; i < n; i++)
		sio_borrow_at(f->reg, slots[i])->used = 0;
	sim_unlock(f);
	assert_int_equal(smartio_borrow(h, nvme0, host1), 0);
	assert_int_equal(smartio_return(h, nvme0, host1), 0);

	assert_int_equal(smartio_segment_create(h, host0, "buf"), 0);
	assert_int_equal(smartio_segment_set_size(h, host0, "buf", 1 << 20), 0);
	assert_int_equal(smartio_segment_set_available(h, host0, "buf", 1), 0);
	sim_lock(f);
	n = fill_attach(f->reg, host1, f->reg->max_attach / f->reg->nnodes,
			slots);
	sim_unlock(f);
	assert_int_equal(smartio_segment_attach(h, host0, "buf", host1),
			 -EDQUOT);
	assert_int_equal(smartio_segment_attach(h, host0, "buf", host2), 0);
	assert_int_equal(smartio_segment_detach(h, host0, "buf", host2), 0);
	sim_lock(f);
	for (i = 0; i < n; i++)
		sio_attach_at(f->reg, slots[i])->used = 0;
	sim_unlock(f);
	assert_int_equal(smartio_segment_attach(h, host0, "buf", host1), 0);
	assert_int_equal(smartio_segment_detach(h, host0, "buf", host1), 0);
	smartio_close(h);
}

/* DMA-mapping records of owner's in free slots until it holds share of
 * them; seg names no segment, dev nothing that maps. */
static unsigned fill_segdma(struct sio_registry *r, unsigned owner,
			    unsigned spare_dev, unsigned share, u32 *slots)
{
	unsigned i, n = 0, held = 0;

	for (i = 0; i < r->max_segdma; i++)
		held += sio_segdma_at(r, i)->used &&
			sio_segdma_at(r, i)->owner == owner;
	for (i = 0; i < r->max_segdma && held < share; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used)
			continue;
		m->used = 1;
		m->owner = owner;
		m->seg = r->max_segments - 1;
		m->dev = spare_dev;
		m->lut = -1;
		slots[n++] = i;
		held++;
	}
	return n;
}

/* Peer-mapping records asked by node, of spare_dev onto itself. */
static unsigned fill_peermap(struct sio_registry *r, unsigned node,
			     unsigned spare_dev, unsigned share, u32 *slots)
{
	unsigned i, n = 0, held = 0;

	for (i = 0; i < r->max_peermap; i++)
		held += sio_peermap_at(r, i)->used &&
			sio_peermap_at(r, i)->node == node;
	for (i = 0; i < r->max_peermap && held < share; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used)
			continue;
		m->used = 1;
		m->node = (u16)node;
		m->dev = spare_dev;
		m->peer = spare_dev;
		m->lut = -1;
		slots[n++] = i;
		held++;
	}
	return n;
}

/*
 * A DMA mapping is charged to the segment's owner, a peer mapping to the
 * node that asks for it: past its share that node gets EDQUOT, another
 * node's request still succeeds, and a record given back is room again.
 */
static void test_one_node_cannot_take_every_dma_or_peer_mapping(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(TH_SMALL_TOPO, NULL, fabric, sizeof(fabric));
	struct sim_fabric *f = sio_lib_fabric(h);
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	unsigned nvme0 = th_dev(h, "nvme0"), nvme1 = th_dev(h, "nvme1");
	unsigned nvme3 = th_dev(h, "nvme3"), n, i;
	uint64_t io = 0;
	u32 slots[1024];

	(void)state;
	assert_int_equal(smartio_segment_create(h, host0, "b0"), 0);
	assert_int_equal(smartio_segment_set_size(h, host0, "b0", 1 << 20), 0);
	assert_int_equal(smartio_segment_create(h, host1, "b1"), 0);
	assert_int_equal(smartio_segment_set_size(h, host1, "b1", 1 << 20), 0);
	sim_lock(f);
	n = fill_segdma(f->reg, host1, nvme3,
			f->reg->max_segdma / f->reg->nnodes, slots);
	sim_unlock(f);
	assert_true(n > 0);
	assert_int_equal(smartio_segment_dma_map(h, host1, "b1", nvme0, &io),
			 -EDQUOT);
	assert_int_equal(smartio_segment_dma_map(h, host0, "b0", nvme0, &io), 0);
	assert_int_equal(smartio_segment_dma_unmap(h, host0, "b0", nvme0), 0);
	sim_lock(f);
	for (i = 0; i < n; i++)
		sio_segdma_at(f->reg, slots[i])->used = 0;
	sim_unlock(f);
	assert_int_equal(smartio_segment_dma_map(h, host1, "b1", nvme0, &io), 0);
	assert_int_equal(smartio_segment_dma_unmap(h, host1, "b1", nvme0), 0);

	/* host0, the lender of both, asks; host1 borrows both to ask too. */
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_lend(h, nvme1, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, nvme0, host1), 0);
	assert_int_equal(smartio_borrow(h, nvme1, host1), 0);
	sim_lock(f);
	n = fill_peermap(f->reg, host0, nvme3,
			 f->reg->max_peermap / f->reg->nnodes, slots);
	sim_unlock(f);
	assert_true(n > 0);
	assert_int_equal(smartio_peer_map(h, nvme0, nvme1, host0), -EDQUOT);
	assert_int_equal(smartio_peer_addr(h, nvme0, nvme1, 0, &io), -ENOENT);
	assert_int_equal(smartio_peer_map(h, nvme0, nvme1, host1), 0);
	assert_int_equal(smartio_peer_unmap(h, nvme0, nvme1, host1), 0);
	sim_lock(f);
	for (i = 0; i < n; i++)
		sio_peermap_at(f->reg, slots[i])->used = 0;
	sim_unlock(f);
	assert_int_equal(smartio_peer_map(h, nvme0, nvme1, host0), 0);
	assert_int_equal(smartio_peer_unmap(h, nvme0, nvme1, host0), 0);
	assert_int_equal(smartio_return(h, nvme0, host1), 0);
	assert_int_equal(smartio_return(h, nvme1, host1), 0);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_node_cannot_take_every_segment_record),
		cmocka_unit_test(test_one_node_cannot_take_every_borrow_or_attachment),
		cmocka_unit_test(test_one_node_cannot_take_every_dma_or_peer_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
