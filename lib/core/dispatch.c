// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Message dispatch: decides which node owns a request, forwards it there
 * when that is not us, runs the handler and answers with SIO_CMD_REPLY
 * (BORROW_GRANT / BORROW_DENY for a borrow request) carrying SIO_A_ERRNO.
 * What it knows of a command (handler, route, required attributes) is
 * the command's row of cmds.h; a request without a required attribute is
 * EINVAL before it is routed, forwarded or handled.
 */
#include "core_int.h"

#define SIO_CMD_ROW(cmd, name, handler, route, origin, req, opt, genl) \
	[SIO_CMD_##cmd] = { handler, route, origin, req, opt },
static const struct sio_cmd_row rows[SIO_CMD_MAX + 1] = {
	SIO_CMDS(SIO_CMD_ROW)
};

const struct sio_cmd_row *sio_cmd_row(u8 cmd)
{
	return cmd && cmd <= SIO_CMD_MAX ? &rows[cmd] : NULL;
}

/* Every attribute the row requires, or EINVAL before anything runs. */
static int required_present(const struct sio_cmd_row *e,
			    const struct sio_parsed *p)
{
	return sio_msg_require(p, e->required) ? -EINVAL : 0;
}

/* Device index from SIO_A_DEV: -EINVAL when absent, -ENXIO when unknown. */
int sio_msg_dev(struct sio_registry *r, const struct sio_parsed *p)
{
	if (!p->present[SIO_A_DEV])
		return -EINVAL;
	return sio_dev_lookup_fdid(r, sio_nla_u32(&p->tb[SIO_A_DEV]));
}

/* Node index from attribute attr: -EINVAL when absent, -ENOENT when unknown. */
int sio_msg_node(struct sio_registry *r, const struct sio_parsed *p, int attr)
{
	u32 n;

	if (!p->present[attr])
		return -EINVAL;
	n = sio_nla_u32(&p->tb[attr]);
	return n < r->nnodes ? (int)n : -ENOENT;
}

static int owner_of(struct sio_core *c, const struct sio_parsed *p,
		    u8 route, u32 self)
{
	struct sio_registry *r = c->reg;
	int dev;

	switch (route) {
	case SIO_TO_LENDER_SEP_SELF:
	case SIO_TO_LENDER:
		if (route == SIO_TO_LENDER_SEP_SELF && p->from == self &&
		    (c->flags & SIO_CORE_SEPARATE))
			return (int)self;
		dev = sio_msg_dev(r, p);
		return dev < 0 ? dev : sio_dev(r, (u32)dev)->node;
	case SIO_TO_NODE:
		return sio_msg_node(r, p, SIO_A_NODE);
	case SIO_TO_PEER:
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
	const struct sio_cmd_row *e;
	int err, owner, n;
	u8 rcmd;

	err = sio_msg_parse(req, len, &p);
	if (err)
		return reply_errno(reply, cap, SIO_CMD_REPLY, 0, err);
	e = sio_cmd_row(p.cmd);
	if (!e || !e->handler || self >= c->reg->nnodes)
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, -EPROTO);
	err = required_present(e, &p);
	if (err)
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, err);
	p.from = from;
	err = sio_origin_check(c, self, from, &p);
	owner = err ? err : owner_of(c, &p, e->route, self);
	/* A peer's message is for this node: never relayed. */
	if (!err && owner >= 0 && (u32)owner != self && from != self)
		err = -EPERM;
	if (err == -EPERM) {
		sio_peer_refused(c, from, p.cmd);
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, err);
	}
	if (owner < 0)
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, owner);
	/*
	 * Separate registries: a user's command that acts for this node
	 * only (SIO_FROM_LOCAL_SEP: lend policy, mode, borrow, return,
	 * attach) but belongs to another node would be refused there
	 * (origin.c) and counted against this node.  Refused here, before
	 * anything is sent, whatever it carries (a borrow's window=).
	 */
	if ((u32)owner != self && from == self &&
	    e->origin == SIO_FROM_LOCAL_SEP &&
	    (c->flags & SIO_CORE_SEPARATE))
		return reply_errno(reply, cap, SIO_CMD_REPLY, p.seq, -EPERM);
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
