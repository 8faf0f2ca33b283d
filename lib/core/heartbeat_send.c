// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Heartbeats between nodes, the sending side: every node sends HEARTBEAT
 * to its peers at a fixed period; a node not heard from for longer than
 * the platform's timeout is declared down (its mappings are cleaned by
 * node.c), and a down node that is heard again comes back up
 * (heartbeat.c).  The simulator drives this and adds process liveness on
 * top, which notices a killed process sooner; smartio.ko does not build
 * this file (kmod/Kbuild).
 */
#include "core_int.h"

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
	u64 now = sio_core_mono_ns(c);
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
