// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "smartio": libsmartio's kernel transport.
 * A request is the core's own protocol message (lib/core/proto.h has the
 * same layout as a generic netlink message), handed to the core as this
 * machine's node (host0, or node= with fabric=ntb); the core's reply
 * attributes travel back in a SIO_CMD_REPLY message.  Borrow, return and
 * reclaim also hot-add or hot-remove the shadow device (sio_shadow.c);
 * SIO_CMD_REG_READ copies registry bytes for libsmartio's queries
 * (lib/core/reg_read.c).
 *
 * The operations, their permissions and their policies are generated at
 * load from the command table (lib/core/cmds.h): a command whose row says
 * SIO_GENL_NOT_OFFERED is no operation, so generic netlink answers it
 * EOPNOTSUPP before any code of ours runs (the node-to-node commands enter
 * only through the NTB transport, sio_ntb.c; multicast has no kernel
 * platform yet).  An operation's policy is its row's required and
 * optional attributes, typed as the core's parser types them, and
 * validation is strict: an unknown or unexpected attribute, a wrong
 * length or trailing bytes are refused with EINVAL.  smartio(4) has the
 * table of operations, the privilege each needs and the commands not
 * offered.
 */
#include <linux/capability.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "sio_kmod.h"
#include "core_int.h"

/*
 * Config space a user without CAP_SYS_ADMIN may read: the standard
 * header, as PCI sysfs gives it (reading further can have side effects
 * on some devices).
 */
#define SIO_CFG_OPEN 64

/*
 * The operations run in parallel (generic netlink's own mutex would hold
 * every family of the system while a return waits up to 30 s for a
 * shadow's DMA mappings to drain, or a command waits 5 s for an NTB
 * peer).  The core runs under sio_k.lock; this lock serialises the
 * hot-plug half of borrow, return and reclaim (the device's claim, views
 * and shadow in struct sio_kdev), which sio_k.lock does not cover.
 */
static DEFINE_MUTEX(sio_genl_hotplug);

/* Each command's SIO_GENL_* flags (lib/core/cmds.h), 0 when not offered. */
static u8 sio_genl_flags[SIO_CMD_MAX + 1] __ro_after_init;

static struct genl_family sio_genl_family;

/*
 * Borrow, return and reclaim: the core's part plus the shadow's hot-add or
 * hot-remove (sio_shadow.c); SR-IOV: the core's part plus the VFs' views
 * (sio_sriov.c).
 */
static int lending(const struct sio_parsed *p)
{
	int dev, node;

	sio_k_lock();
	dev = sio_msg_dev(sio_k.reg, p);
	node = p->cmd == SIO_CMD_SRIOV_SET ? 0 :
	       sio_msg_node(sio_k.reg, p, SIO_A_NODE);
	sio_k_unlock();
	if (dev < 0 || node < 0)
		return dev < 0 ? dev : node;
	if (p->cmd == SIO_CMD_SRIOV_SET)
		return sio_k_sriov(dev, sio_nla_u64(&p->tb[SIO_A_SIZE]));
	/*
	 * A sized DMA window (SIO_A_SIZE, window= of smartio(7)): over an
	 * NTB, the borrow's window in the NTB function's IOMMU domain.  The
	 * core checks the size.
	 */
	if (p->cmd == SIO_CMD_BORROW)
		return sio_k.fab->borrow(dev, node, p->present[SIO_A_SIZE] ?
				    sio_nla_u64(&p->tb[SIO_A_SIZE]) : 0);
	if (p->cmd == SIO_CMD_RETURN)
		return sio_k.fab->give_back(dev, node);
	return sio_k.fab->reclaim(dev, node);
}

static int sio_genl_doit(struct sk_buff *skb, struct genl_info *info)
{
	u32 len = info->nlhdr->nlmsg_len;
	struct sio_parsed *p;
	struct sk_buff *msg;
	struct sio_msg rep;
	u8 *repbuf;
	void *hdr;
	int n, err;

	atomic64_inc(&sio_k.requests);
	repbuf = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	err = -ENOMEM;
	if (!repbuf || !p)
		goto out;
	/* The core's own parser as well: the layouts must agree. */
	err = sio_msg_parse(info->nlhdr, len, p);
	if (err)
		goto out;
	if (sio_genl_flags[p->cmd] & SIO_GENL_HOTPLUG) {
		sio_msg_init(&rep, repbuf, SIO_MSG_MAX, SIO_CMD_REPLY,
			     SIO_F_REPLY, p->seq);
		sio_msg_put_s32(&rep, SIO_A_ERRNO, lending(p));
		n = sio_msg_finish(&rep);
	} else {
		sio_k_lock();
		n = sio_core_dispatch(&sio_k.core, sio_k.self, info->nlhdr,
				      len, repbuf, SIO_MSG_MAX);
		sio_k_unlock();
	}
	err = n < 0 ? n : 0;
	if (err)
		goto out;
	msg = genlmsg_new(n, GFP_KERNEL);
	err = -ENOMEM;
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &sio_genl_family, 0, SIO_CMD_REPLY);
	if (!hdr) {
		nlmsg_free(msg);
		goto out;
	}
	skb_put_data(msg, repbuf + SIO_MSG_HDRLEN, n - SIO_MSG_HDRLEN);
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	kfree(repbuf);
	kfree(p);
	return err;
}

/*
 * A config read past the standard header needs CAP_SYS_ADMIN (PCI sysfs
 * gives other users the first 64 bytes only).  The policy made both
 * attributes u64 when present; the core refuses a request without them.
 *
 * Without CAP_SYS_ADMIN a read also speaks for this machine's node only
 * (EPERM otherwise): over an NTB a read of another machine's device in
 * another node's name would be forwarded, and that machine would refuse
 * it as a forged origin and count it against this node, so any user
 * could make this node look hostile there (issue 28, item 13).  On one
 * machine both nodes are this machine's.
 */
static int cfg_read_allowed(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a_off = info->attrs[SIO_A_OFFSET];
	struct nlattr *a_size = info->attrs[SIO_A_SIZE];
	struct nlattr *a_node = info->attrs[SIO_A_NODE];
	bool admin = netlink_capable(skb, CAP_SYS_ADMIN);
	u64 off, size;

	if (!admin && sio_k.fab->separate && a_node &&
	    nla_get_u32(a_node) != sio_k.self)
		return -EPERM;
	if (!a_off || !a_size)
		return 0;
	off = nla_get_u64(a_off);
	size = nla_get_u64(a_size);
	if (off <= SIO_CFG_OPEN && size <= SIO_CFG_OPEN - off)
		return 0;
	return admin ? 0 : -EPERM;
}

static int sio_genl_pre_doit(const struct SIO_GENL_DOIT_OPS *ops,
			     struct sk_buff *skb, struct genl_info *info)
{
	int err;

	/*
	 * CAP_SYS_ADMIN, not generic netlink's CAP_NET_ADMIN: these
	 * operations take PCI functions from their drivers and program
	 * IOMMUs and NTB windows, which is system administration.  Like
	 * GENL_ADMIN_PERM, netlink_capable() checks both the socket's opener
	 * and the sender, in the initial user namespace.
	 */
	if ((ops->internal_flags & SIO_GENL_ADMIN) &&
	    !netlink_capable(skb, CAP_SYS_ADMIN))
		return -EPERM;
	/* What kernel lockdown refuses through PCI sysfs and setpci. */
	if (ops->internal_flags & SIO_GENL_PCI) {
		err = security_locked_down(LOCKDOWN_PCI_ACCESS);
		if (err)
			return err;
	}
	if (ops->internal_flags & SIO_GENL_CFG_HEADER) {
		err = cfg_read_allowed(skb, info);
		if (err)
			return err;
	}
	if (ops->internal_flags & SIO_GENL_HOTPLUG)
		mutex_lock(&sio_genl_hotplug);
	return 0;
}

static void sio_genl_post_doit(const struct SIO_GENL_DOIT_OPS *ops,
			       struct sk_buff *skb, struct genl_info *info)
{
	if (ops->internal_flags & SIO_GENL_HOTPLUG)
		mutex_unlock(&sio_genl_hotplug);
}

/* --- operations and policies, from the command table -------------------- */

/*
 * Who may do what is each row's genl column (lib/core/cmds.h).  Every
 * state change needs CAP_SYS_ADMIN.  Lockdown's PCI_ACCESS is checked
 * wherever a device or its DMA is handed to someone: lending policy and
 * mode, borrow, config writes, a segment or a peer's BAR mapped for a
 * device.  Return and reclaim only take access away, so lockdown does not
 * stop them (a device borrowed before lockdown can still be given back).
 * Segments alone are memory of the fabric, not PCI access.  Queries are
 * open to every user: the registry holds the state smartio(7) shows to
 * everyone (names, modes, fabric addresses, no secret and no kernel
 * pointer), and config reads are open within the standard header
 * (cfg_read_allowed).
 */
/* In the order SIO_GENL_ROW (lib/core/cmds.h) fills it. */
struct sio_genl_row {
	u8 cmd;
	u8 flags;	/* SIO_GENL_* */
	u32 attrs;	/* the policy: required | optional */
};

static const struct sio_genl_row sio_genl_rows[] __initconst = {
	SIO_CMDS(SIO_GENL_ROW)
};

static struct genl_ops sio_genl_ops[SIO_GENL_NOPS] __ro_after_init;
static struct nla_policy sio_genl_pol[SIO_GENL_NOPS][SIO_A_MAX + 1]
	__ro_after_init;

/* The attributes of attrs, typed as the core's parser types them. */
static void __init sio_genl_policy(struct nla_policy *pol, u32 attrs)
{
	u16 a;

	for (a = 1; a <= SIO_A_MAX; a++) {
		if (!(attrs & BIT(a)))
			continue;
		switch (sio_attr_kind(a)) {
		case SIO_K_U32:
			pol[a].type = NLA_U32;
			break;
		case SIO_K_U64:
			pol[a].type = NLA_U64;
			break;
		case SIO_K_STR:
			pol[a].type = NLA_NUL_STRING;
			pol[a].len = SIO_NAME_MAX - 1;
			break;
		case SIO_K_BIN:
			pol[a].type = NLA_BINARY;
			pol[a].len = SIO_DATA_MAX;
			break;
		default:
			pol[a].type = NLA_NESTED;
			break;
		}
	}
}

static int __init sio_genl_build(void)
{
	const struct sio_genl_row *r;
	u32 n = 0;

	for (r = sio_genl_rows; r < sio_genl_rows + ARRAY_SIZE(sio_genl_rows);
	     r++) {
		if (r->flags & SIO_GENL_NOT_OFFERED)
			continue;
		if (WARN_ON(n >= SIO_GENL_NOPS))
			return -EINVAL;
		sio_genl_flags[r->cmd] = r->flags;
		sio_genl_policy(sio_genl_pol[n], r->attrs);
		sio_genl_ops[n].cmd = r->cmd;
		sio_genl_ops[n].doit = sio_genl_doit;
		sio_genl_ops[n].policy = sio_genl_pol[n];
		sio_genl_ops[n].maxattr = SIO_A_MAX;
		sio_genl_ops[n].internal_flags = r->flags;
		n++;
	}
	return n == SIO_GENL_NOPS ? 0 : -EINVAL;
}

static struct genl_family sio_genl_family __ro_after_init = {
	.name = SIO_GENL_NAME,
	.version = SIO_GENL_VERSION,
	.netnsok = false,
	.parallel_ops = true,
	.pre_doit = sio_genl_pre_doit,
	.post_doit = sio_genl_post_doit,
	.module = THIS_MODULE,
	.ops = sio_genl_ops,
	.n_ops = SIO_GENL_NOPS,
	/*
	 * resv_start_op stays 0: every command, from the first, gets the
	 * reserved header byte checked and its policy enforced (a higher
	 * value would leave the commands below it to the legacy rules).
	 */
};

int __init sio_genl_init(void)
{
	int err = sio_genl_build();

	return err ? err : genl_register_family(&sio_genl_family);
}

void sio_genl_exit(void)
{
	genl_unregister_family(&sio_genl_family);
}
