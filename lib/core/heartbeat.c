// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Heartbeats between nodes: every node sends HEARTBEAT to its peers at a
 * fixed period; a node not heard from for longer than the platform's
 * timeout is declared down (its mappings are cleaned by node.c), and a
 * down node that is heard again comes back up.  The kernel transport uses
 * this over the NTB; the simulator adds process liveness on top, which
 * notices a killed process sooner.
 */
#include "core_int.h"

static u64 mono_ns(struct sio_core *c)
{
	return c->ops->mono_ns ? c->ops->mono_ns(c->plat)
			       : c->ops->now_ns(c->plat);
}

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
	n->heard_ns = mono_ns(c);
	if (n->state != SIO_NODE_UP)
		sio_core_node_up(c, (u32)node);
	return 0;
}

int sio_core_heartbeat(struct sio_core *c, u32 self, u32 dst, u64 seq)
{
	u8 buf[SIO_PEER_MSG], repbuf[SIO_PEER_MSG];
	struct sio_parsed rep;
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_HEARTBEAT, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, self);
	sio_msg_put_u64(&m, SIO_A_SEQ, seq);
	sio_msg_put_u64(&m, SIO_A_TIME, c->ops->now_ns(c->plat));
	return sio_core_call(c, self, dst, &m, &rep, repbuf, sizeof(repbuf));
}

u32 sio_core_check_heartbeats(struct sio_core *c, u32 self, u64 timeout_ns)
{
	struct sio_registry *r = c->reg;
	u64 now = mono_ns(c);
	u32 i, lost = 0;

	for (i = 0; i < r->nnodes; i++) {
		struct sio_node *n = sio_node(r, i);

		if (i == self || n->state != SIO_NODE_UP || !n->heard_ns ||
		    now - n->heard_ns <= timeout_ns)
			continue;
		sio_core_node_down(c, i);
		lost++;
	}
	return lost;
}
