// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Heartbeats between nodes, the receiving side: a node heard from is
 * up, and the time it was heard is what heartbeat_send.c's check
 * compares against the platform's timeout.  Every core answers
 * HEARTBEAT; only the simulator sends them (heartbeat_send.c, which
 * smartio.ko leaves out: its NTB transport has its own link events).
 */
#include "core_int.h"

int sio_h_heartbeat(struct sio_core *c, u32 self, const struct sio_parsed *p,
		    struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int node = sio_msg_node(r, p, SIO_A_NODE);
	struct sio_node *n;
	u64 seq;

	(void)rep;
	if (node < 0)
		return node;
	if ((u32)node == self)
		return -EINVAL;
	n = sio_node(r, (u32)node);
	seq = sio_nla_u64(&p->tb[SIO_A_SEQ]);
	/* A reordered or replayed beat says nothing about the present. */
	if (n->heard_ns && seq <= n->beat_seq && n->state == SIO_NODE_UP)
		return -EALREADY;
	n->beat_seq = seq;
	n->heard_ns = sio_core_mono_ns(c);
	if (n->state != SIO_NODE_UP)
		sio_core_node_up(c, (u32)node);
	return 0;
}
