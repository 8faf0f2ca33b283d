// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Node liveness.  The platform's failure detector (heartbeats in the
 * simulator, NTB link events in the kernel) calls these; the survivors clean
 * up every mapping that involved the lost node so that its LUT, requester
 * and window entries come back.
 */
#include "core_int.h"

static void node_event(struct sio_core *c, u32 kind, u32 node)
{
	char obj[SIO_EVENT_OBJ];
	struct sio_strbuf sb;

	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, "nodes/");
	sio_sb_str(&sb, sio_node(c->reg, node)->name);
	sio_event_emit(c, kind, obj, "");
}

void sio_core_node_up(struct sio_core *c, u32 node)
{
	struct sio_registry *r = c->reg;
	struct sio_node *n = sio_node(r, node);
	u32 i;

	if (n->state == SIO_NODE_UP)
		return;
	n->state = SIO_NODE_UP;
	n->generation++;
	/* Its heartbeat timeout starts now, not at its last life's beat. */
	n->heard_ns = c->ops->mono_ns ? c->ops->mono_ns(c->plat)
				      : c->ops->now_ns(c->plat);
	for (i = 0; i < r->ndevices; i++)
		if (sio_dev(r, i)->node == node)
			sio_dev(r, i)->gone = 0;
	node_event(c, SIO_EV_NODE_UP, node);
}

void sio_core_node_down(struct sio_core *c, u32 node)
{
	struct sio_registry *r = c->reg;
	struct sio_node *n = sio_node(r, node);
	u32 i;

	if (n->state == SIO_NODE_DOWN)
		return;
	n->state = SIO_NODE_DOWN;
	/*
	 * The cause before its effects: a reader of the events (and
	 * smartio(7)'s example) sees the node go down, then the returns,
	 * reclaims and detaches that its loss forced.
	 */
	node_event(c, SIO_EV_NODE_DOWN, node);
	sio_msi_node_down(c, node);
	sio_peer_node_down(c, node);
	sio_segments_node_down(c, node);
	for (i = 0; i < r->max_borrows; i++) {
		struct sio_borrow *b = sio_borrow_at(r, i);
		u32 dev = b->dev, borrower = b->borrower;
		int lender_lost = b->lender == node;

		if (!b->used || (borrower != node && !lender_lost))
			continue;
		sio_borrow_release(c, i, 1, 1);
		sio_event_dev(c, lender_lost ? SIO_EV_RECLAIM : SIO_EV_RETURN,
			      dev, "node", sio_node(r, borrower)->name);
	}
	for (i = 0; i < r->ndevices; i++)
		if (sio_dev(r, i)->node == node)
			sio_dev(r, i)->gone = 1;
}

void sio_core_dma_fault(struct sio_core *c, u32 node, u16 rid, u64 addr,
			const char *why)
{
	struct sio_registry *r = c->reg;
	char obj[SIO_EVENT_OBJ], args[SIO_EVENT_ARGS];
	struct sio_strbuf sb;
	u32 i;

	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, "nodes/");
	sio_sb_str(&sb, sio_node(r, node)->name);
	for (i = 0; i < r->ndevices; i++) {
		struct sio_device *d = sio_dev(r, i);

		if (d->node == node && d->rid == rid) {
			d->stats.dma_faults++;
			sio_sb_init(&sb, obj, sizeof(obj));
			sio_sb_str(&sb, "dev/");
			sio_sb_str(&sb, d->name);
			break;
		}
	}
	sio_sb_init(&sb, args, sizeof(args));
	sio_sb_str(&sb, "addr=");
	sio_sb_hex(&sb, addr);
	sio_sb_str(&sb, " reason=");
	sio_sb_str(&sb, why);
	sio_event_emit(c, SIO_EV_DMA_FAULT, obj, args);
}
