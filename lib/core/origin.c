// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Messages from another node are bound to the link they came on.  The
 * platform knows which node is at the other end of that link (smartio.ko:
 * the NTB peer; the simulator: the node whose core sent it) and says so
 * to sio_core_dispatch_from; a message only claims who sends it.  So:
 *   - SRC, when present, is the sender's fabric id, DST ours;
 *   - the node a node-to-node command acts for is the sender (the
 *     borrower of BORROW_REQ, MAP_*_WINDOW and RETURN_REQ, the heartbeat's
 *     node, the attaching node of SEG_CONNECT, the owner of SEG_TABLE and
 *     MAP_SEG_WINDOW, the asker of SEG_TABLE_GET, the user's lender of
 *     PEER_EXPOSE, or with separate registries its asker), and a
 *     RECLAIM_REQ comes from the device's lender;
 *   - it is for this node: a peer's message is never relayed.
 * Which of these a command gets is its row's origin class in cmds.h
 * (SIO_FROM_*); origin_allows() below says what each class means.
 * When the nodes are separate machines (SIO_CORE_SEPARATE), a user's
 * command the sender forwards acts for the sender's user only: the asker
 * of RECLAIM, CFG_* and PEER_MAP is the sender; it cannot set this node's
 * lend policy or mode, borrow or return for this node, or attach for it;
 * and the segment code (segment.c, peer_may) lets it create segments here
 * within the sender's share (sio_peer_seg_room) and size, export or
 * destroy only those its users created.
 */
#include "core_int.h"

/* Does attribute attr name node `want`?  Absent or unknown: the handler's
 * errno decides.
 */
static int names(struct sio_registry *r, const struct sio_parsed *p, int attr,
		 u32 want)
{
	int n = sio_msg_node(r, p, attr);

	return n < 0 || (u32)n == want;
}

/* The lender of the message's device is `want` (unknown device: yes). */
static int lender_is(struct sio_registry *r, const struct sio_parsed *p,
		     u32 want)
{
	int dev = sio_msg_dev(r, p);

	return dev < 0 || sio_dev(r, (u32)dev)->node == want;
}

/* Whether p's origin class (its row of cmds.h) lets `from` send it. */
static int origin_allows(struct sio_core *c, u32 self, u32 from,
			 const struct sio_parsed *p)
{
	const struct sio_cmd_row *e = sio_cmd_row(p->cmd);
	struct sio_registry *r = c->reg;
	int separate = !!(c->flags & SIO_CORE_SEPARATE);

	switch (e ? e->origin : SIO_FROM_LOCAL) {
	case SIO_FROM_LOCAL:
		return 0;
	case SIO_FROM_LOCAL_SEP:
		return !separate;
	case SIO_FROM_ASKER_SEP:
		return !separate || names(r, p, SIO_A_NODE, from);
	case SIO_FROM_NODE:
		return names(r, p, SIO_A_NODE, from);
	case SIO_FROM_LENDER:
		return names(r, p, SIO_A_NODE, self) && lender_is(r, p, from);
	case SIO_FROM_PEER:
		return names(r, p, SIO_A_PEER, from);
	case SIO_FROM_EXPOSER:
		/* Separate registries: the asker asks (peer_sep.c). */
		return names(r, p, separate ? SIO_A_NODE : SIO_A_PEER, from);
	default:
		return 1;
	}
}

int sio_origin_check(struct sio_core *c, u32 self, u32 from,
		     const struct sio_parsed *p)
{
	struct sio_registry *r = c->reg;

	if (from == self)
		return 0;
	if (from >= r->nnodes)
		return -EPERM;
	if (p->present[SIO_A_SRC] &&
	    sio_nla_u32(&p->tb[SIO_A_SRC]) != sio_node(r, from)->id)
		return -EPERM;
	if (p->present[SIO_A_DST] &&
	    sio_nla_u32(&p->tb[SIO_A_DST]) != sio_node(r, self)->id)
		return -EPERM;
	return origin_allows(c, self, from, p) ? 0 : -EPERM;
}

/*
 * A peer that keeps sending what is refused (or a user of it whose
 * requests it forwards) must not fill the event ring every node's
 * readers share, nor push out the events that matter: at most
 * SIO_REFUSED_BURST peer-refused events per sender within
 * SIO_REFUSED_INTERVAL_NS.  Every refusal is still counted in the node's
 * refused; the first event after a quiet stretch says how many were not
 * reported (suppressed=<n>).
 */
#define SIO_REFUSED_BURST 10
#define SIO_REFUSED_INTERVAL_NS 5000000000ull

static int refused_report(struct sio_core *c, u32 from)
{
	struct sio_refused_rate *rr = &c->refused_rate[from];
	u64 now = c->ops->mono_ns ? c->ops->mono_ns(c->plat) : 0;

	if (!rr->events || now - rr->start_ns >= SIO_REFUSED_INTERVAL_NS) {
		rr->start_ns = now;
		rr->events = 0;
	}
	if (rr->events >= SIO_REFUSED_BURST) {
		rr->quiet++;
		return 0;
	}
	rr->events++;
	return 1;
}

void sio_peer_refused(struct sio_core *c, u32 from, u8 cmd)
{
	struct sio_registry *r = c->reg;
	char obj[SIO_EVENT_OBJ], args[SIO_EVENT_ARGS];
	struct sio_strbuf sb;

	if (from >= r->nnodes || from >= SIO_MAX_NODES)
		return;
	sio_node(r, from)->refused++;
	if (!refused_report(c, from))
		return;
	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, "nodes/");
	sio_sb_str(&sb, sio_node(r, from)->name);
	sio_sb_init(&sb, args, sizeof(args));
	sio_sb_str(&sb, "cmd=");
	sio_sb_str(&sb, sio_cmd_name(cmd));
	if (c->refused_rate[from].quiet) {
		sio_sb_str(&sb, " suppressed=");
		sio_sb_u64(&sb, c->refused_rate[from].quiet);
		c->refused_rate[from].quiet = 0;
	}
	sio_event_emit(c, SIO_EV_PEER_REFUSED, obj, args);
}

/*
 * A peer's share of this node's segment records: the records of its own
 * segments (copies of its table when the registries are not shared) and
 * those its users created here.  The rest stays this node's.
 */
static u32 peer_share(struct sio_registry *r, u32 self, u32 peer, int own)
{
	u32 i, n = 0;

	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *s = sio_seg(r, i);

		if (s->used && ((own && s->owner == peer) ||
				(s->owner == self && s->creator == peer)))
			n++;
	}
	return n;
}

/* One node's share of a table of max records. */
static u32 share_of(struct sio_registry *r, u32 max)
{
	u32 cap = max / (r->nnodes ? r->nnodes : 1);

	return cap ? cap : 1;
}

static u32 share_cap(struct sio_registry *r)
{
	return share_of(r, r->max_segments);
}

int sio_peer_seg_room(struct sio_registry *r, u32 self, u32 peer, u32 own)
{
	if (peer == self)
		return 0;
	if (own == SIO_NONE)	/* one more record */
		return peer_share(r, self, peer, 1) < share_cap(r) ? 0 : -EDQUOT;
	/* A table of `own` records replaces the copies of the peer's. */
	return peer_share(r, self, peer, 0) + own <= share_cap(r) ? 0 : -EDQUOT;
}

/* Records of table t that node holds, and the table's size in *max. */
static u32 held_by(struct sio_registry *r, enum sio_share_table t, u32 node,
		   u32 *max)
{
	u32 i, n = 0;

	switch (t) {
	case SIO_SHARE_SEGMENTS:
		*max = r->max_segments;
		for (i = 0; i < *max; i++)
			n += sio_seg(r, i)->used && sio_seg(r, i)->owner == node;
		break;
	case SIO_SHARE_ATTACH:
		*max = r->max_attach;
		for (i = 0; i < *max; i++)
			n += sio_attach_at(r, i)->used &&
			     sio_attach_at(r, i)->node == node;
		break;
	case SIO_SHARE_BORROWS:
		*max = r->max_borrows;
		for (i = 0; i < *max; i++)
			n += sio_borrow_at(r, i)->used &&
			     sio_borrow_at(r, i)->borrower == node;
		break;
	case SIO_SHARE_SEGDMA:
		*max = r->max_segdma;
		for (i = 0; i < *max; i++)
			n += sio_segdma_at(r, i)->used &&
			     sio_segdma_at(r, i)->owner == node;
		break;
	case SIO_SHARE_PEERMAP:
		*max = r->max_peermap;
		for (i = 0; i < *max; i++)
			n += sio_peermap_at(r, i)->used &&
			     sio_peermap_at(r, i)->node == node;
		break;
	default:
		*max = 0;
		break;
	}
	return n;
}

int sio_share_room(struct sio_core *c, enum sio_share_table t, u32 node)
{
	u32 max, n;

	if (c->flags & SIO_CORE_SEPARATE)
		return 0;
	n = held_by(c->reg, t, node, &max);
	return n < share_of(c->reg, max) ? 0 : -EDQUOT;
}
