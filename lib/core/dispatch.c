// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Message dispatch: decides which node owns a request, forwards it there
 * when that is not us, runs the handler and answers with SIO_CMD_REPLY
 * (BORROW_GRANT / BORROW_DENY for a borrow request) carrying SIO_A_ERRNO.
 */
#include "core_int.h"

enum route { TO_SELF, TO_LENDER, TO_NODE, TO_PEER };

struct cmd_entry {
	sio_handler handler;
	u8 route;
};

static const struct cmd_entry cmds[SIO_CMD_MAX + 1] = {
	[SIO_CMD_LEND] = { sio_h_lend, TO_LENDER },
	[SIO_CMD_BORROW] = { sio_h_borrow, TO_NODE },
	[SIO_CMD_RETURN] = { sio_h_return, TO_NODE },
	[SIO_CMD_RECLAIM] = { sio_h_reclaim, TO_LENDER },
	[SIO_CMD_SET_MODE] = { sio_h_set_mode, TO_LENDER },
	[SIO_CMD_SEG_CREATE] = { sio_h_seg, TO_NODE },
	[SIO_CMD_SEG_SIZE] = { sio_h_seg, TO_NODE },
	[SIO_CMD_SEG_DESTROY] = { sio_h_seg, TO_NODE },
	[SIO_CMD_SEG_AVAILABLE] = { sio_h_seg, TO_NODE },
	[SIO_CMD_SEG_ATTACH] = { sio_h_seg, TO_PEER },
	[SIO_CMD_SEG_DETACH] = { sio_h_seg, TO_PEER },
	[SIO_CMD_SEG_DMA_MAP] = { sio_h_seg, TO_NODE },
	[SIO_CMD_SEG_DMA_UNMAP] = { sio_h_seg, TO_NODE },
	[SIO_CMD_CFG_READ] = { sio_h_cfg, TO_LENDER },
	[SIO_CMD_CFG_WRITE] = { sio_h_cfg, TO_LENDER },
	[SIO_CMD_BORROW_REQ] = { sio_h_borrow_req, TO_SELF },
	[SIO_CMD_MAP_DMA_WINDOW] = { sio_h_map_window, TO_SELF },
	[SIO_CMD_MAP_MSI_WINDOW] = { sio_h_map_window, TO_SELF },
	[SIO_CMD_RETURN_REQ] = { sio_h_return_req, TO_SELF },
	[SIO_CMD_RECLAIM_REQ] = { sio_h_reclaim_req, TO_SELF },
	[SIO_CMD_HEARTBEAT] = { sio_h_heartbeat, TO_SELF },
	[SIO_CMD_EVENT] = { sio_h_event, TO_SELF },
	[SIO_CMD_SEG_CONNECT] = { sio_h_seg_connect, TO_NODE },
	[SIO_CMD_SEG_DISCONNECT] = { sio_h_seg_connect, TO_NODE },
	[SIO_CMD_MAP_SEG_WINDOW] = { sio_h_seg_window, TO_LENDER },
	[SIO_CMD_UNMAP_SEG_WINDOW] = { sio_h_seg_window, TO_LENDER },
	[SIO_CMD_PEER_MAP] = { sio_h_peer, TO_LENDER },
	[SIO_CMD_PEER_UNMAP] = { sio_h_peer, TO_LENDER },
	[SIO_CMD_PEER_EXPOSE] = { sio_h_peer_expose, TO_LENDER },
	[SIO_CMD_PEER_UNEXPOSE] = { sio_h_peer_expose, TO_LENDER },
	[SIO_CMD_SEG_TABLE] = { sio_h_seg_table, TO_SELF },
	[SIO_CMD_SEG_TABLE_GET] = { sio_h_seg_table_get, TO_SELF },
	[SIO_CMD_DEV_TABLE] = { sio_h_dev_table, TO_SELF },
	[SIO_CMD_MAP_BAR_WINDOW] = { sio_h_map_bar_window, TO_SELF },
	[SIO_CMD_SRIOV_SET] = { sio_h_sriov, TO_LENDER },
	[SIO_CMD_MCAST_CREATE] = { sio_h_mcast, TO_SELF },
	[SIO_CMD_MCAST_DESTROY] = { sio_h_mcast, TO_SELF },
	[SIO_CMD_MCAST_JOIN] = { sio_h_mcast, TO_NODE },
	[SIO_CMD_MCAST_LEAVE] = { sio_h_mcast, TO_NODE },
	[SIO_CMD_MCAST_MAP] = { sio_h_mcast, TO_LENDER },
	[SIO_CMD_MCAST_UNMAP] = { sio_h_mcast, TO_LENDER },
	[SIO_CMD_MCAST_SIZE] = { sio_h_mcast, TO_SELF },
	[SIO_CMD_MSIX_ENTRY] = { sio_h_msix_entry, TO_LENDER },
};

static int owner_of(struct sio_registry *r, const struct sio_parsed *p,
		    u8 route, u32 self)
{
	int dev;

	switch (route) {
	case TO_LENDER:
		dev = sio_msg_dev(r, p);
		return dev < 0 ? dev : sio_dev(r, (u32)dev)->node;
	case TO_NODE:
		return sio_msg_node(r, p, SIO_A_NODE);
	case TO_PEER:
		return sio_msg_node(r, p, SIO_A_PEER);
	default:
		return (int)self;
	}
}

static int reply_errno(void *reply, u32 cap, u8 cmd, u32 seq, int err)
{
	struct sio_msg m;

	sio_msg_init(&m, reply, cap, cmd, SIO_F_REPLY, seq);
	sio_msg_put_s32(&m, SIO_A_ERRNO, err);
	return sio_msg_finish(&m);
}

int sio_core_dispatch(struct sio_core *c, u32 self, const void *req, u32 len,
		      void *reply, u32 cap)
{
	return sio_core_dispatch_from(c, self, self, req, len, reply, cap);
}

int sio_core_dispatch_from(struct sio_core *c, u32 self, u32 from,
			   const void *req, u32 len, void *reply, u32 cap)
{
	struct sio_parsed p;
	struct sio_msg m;
	const struct cmd_entry *e;
	int err, owner, n;
	u8 rcmd;

	err = sio_msg_parse(req, len, &p);
	if (err)
		return reply_errno(reply, cap, SIO_CMD_REPLY, 0, err);
	e = &cmds[p.cmd];
	if (!e->handler || self >= c->reg->nnodes)
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, -EPROTO);
	p.from = from;
	err = sio_origin_check(c, self, from, &p);
	owner = err ? err : owner_of(c->reg, &p, e->route, self);
	/*
	 * Separate registries: a local user's peer-to-peer request is this
	 * node's conversation with both lenders (peer_sep.c).
	 */
	if (!err && from == self && (c->flags & SIO_CORE_SEPARATE) &&
	    (p.cmd == SIO_CMD_PEER_MAP || p.cmd == SIO_CMD_PEER_UNMAP))
		owner = (int)self;
	/* A peer's message is for this node: never relayed. */
	if (!err && owner >= 0 && (u32)owner != self && from != self)
		err = -EPERM;
	if (err == -EPERM) {
		sio_peer_refused(c, from, p.cmd);
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, err);
	}
	if (owner < 0)
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, owner);
	if ((u32)owner != self) {
		if (!sio_node_up(c->reg, (u32)owner))
			return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq,
					   -EHOSTDOWN);
		n = c->ops->send(c->plat, self, (u32)owner, req, len, reply,
				 cap);
		return n < 0 ? reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, n)
			     : n;
	}
	rcmd = p.cmd == SIO_CMD_BORROW_REQ ? SIO_CMD_BORROW_GRANT :
					      SIO_CMD_REPLY;
	sio_msg_init(&m, reply, cap, rcmd, SIO_F_REPLY, p.seq);
	sio_msg_put_s32(&m, SIO_A_ERRNO, 0);
	err = e->handler(c, self, &p, &m);
	if (err) {
		if (p.cmd == SIO_CMD_BORROW_REQ)
			rcmd = SIO_CMD_BORROW_DENY;
		return reply_errno(reply, cap, rcmd, p.seq, err);
	}
	return sio_msg_finish(&m);
}

int sio_core_call(struct sio_core *c, u32 self, u32 dst, struct sio_msg *m,
		  struct sio_parsed *rep, void *repbuf, u32 repcap)
{
	int len, n, err;

	/*
	 * A call to ourselves is a local user's request: it names no ends,
	 * since the core may forward it as it is to the node that acts on it
	 * (smartio.ko's borrow, or a shadow's config cycle, for the other
	 * node), where a DST naming us would be refused (origin.c).
	 */
	if (dst != self) {
		sio_msg_put_u32(m, SIO_A_SRC, sio_node(c->reg, self)->id);
		sio_msg_put_u32(m, SIO_A_DST, sio_node(c->reg, dst)->id);
	}
	len = sio_msg_finish(m);
	if (len < 0)
		return len;
	if (dst == self)
		n = sio_core_dispatch(c, self, m->buf, (u32)len, repbuf, repcap);
	else if (!sio_node_up(c->reg, dst))
		return -EHOSTDOWN;
	else
		n = c->ops->send(c->plat, self, dst, m->buf, (u32)len, repbuf,
				 repcap);
	if (n < 0)
		return n;
	err = sio_msg_parse(repbuf, (u32)n, rep);
	if (err)
		return err;
	/* A reply, to this request (a grant or a denial to a borrow). */
	if (!(rep->flags & SIO_F_REPLY) || !rep->present[SIO_A_ERRNO] ||
	    (rep->cmd != SIO_CMD_REPLY &&
	     (m->buf[SIO_NLMSG_HDRLEN] != SIO_CMD_BORROW_REQ ||
	      (rep->cmd != SIO_CMD_BORROW_GRANT &&
	       rep->cmd != SIO_CMD_BORROW_DENY))))
		return -EPROTO;
	return sio_nla_s32(&rep->tb[SIO_A_ERRNO]);
}
