// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "smartio": libsmartio's kernel transport.
 * A request is the core's own protocol message (lib/core/proto.h has the
 * same layout as a generic netlink message), handed to the core as this
 * machine's node (host0, or node= with fabric=ntb); the core's reply attributes travel back in a
 * SIO_CMD_REPLY message.  Borrow, return and reclaim also hot-add or
 * hot-remove the shadow device (sio_shadow.c); SIO_CMD_REG_READ copies
 * registry bytes for libsmartio's queries.  Changing state needs CAP_NET_ADMIN.
 */
#include <linux/slab.h>
#include <net/genetlink.h>

#include "sio_kmod.h"
#include "core_int.h"

static struct genl_family sio_genl_family;

/*
 * Registry bytes [off, off + size) and the generation (sio_fabric.c),
 * under the lock; size 0 asks for the generation alone, which is how
 * libsmartio checks that its copy is still current.
 */
static int reg_read(const struct sio_parsed *p, struct sio_msg *rep)
{
	u64 off, size, total;
	u8 *data;

	if (sio_msg_require(p, SIO_ATTR_BIT(SIO_A_OFFSET) |
			       SIO_ATTR_BIT(SIO_A_SIZE)))
		return -EINVAL;
	off = sio_nla_u64(&p->tb[SIO_A_OFFSET]);
	size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	mutex_lock(&sio_k.lock);
	total = sio_k.reg->total_size;
	if (off > total || size > SIO_DATA_MAX)
		goto inval;
	size = min(size, total - off);
	sio_msg_put_u64(rep, SIO_A_SIZE, total);
	sio_msg_put_u64(rep, SIO_A_SEQ, sio_k.notifies);
	data = sio_msg_reserve(rep, SIO_A_DATA, size);
	if (data)
		memcpy(data, (u8 *)sio_k.reg + off, size);
	mutex_unlock(&sio_k.lock);
	return rep->err;
inval:
	mutex_unlock(&sio_k.lock);
	return -EINVAL;
}

/*
 * Borrow, return and reclaim: the core's part plus the shadow's hot-add or
 * hot-remove (sio_shadow.c).
 */
static int lending(const struct sio_parsed *p)
{
	int dev, node;

	mutex_lock(&sio_k.lock);
	dev = sio_msg_dev(sio_k.reg, p);
	node = sio_msg_node(sio_k.reg, p, SIO_A_NODE);
	mutex_unlock(&sio_k.lock);
	if (dev < 0 || node < 0)
		return dev < 0 ? dev : node;
	if (p->cmd == SIO_CMD_BORROW)
		return sio_k_borrow(dev, node);
	if (p->cmd == SIO_CMD_RETURN)
		return sio_k_return(dev, node);
	return sio_k_reclaim(dev, node);
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
	err = sio_msg_parse(info->nlhdr, len, p);
	if (err)
		goto out;
	sio_msg_init(&rep, repbuf, SIO_MSG_MAX, SIO_CMD_REPLY, SIO_F_REPLY,
		     p->seq);
	if (p->cmd == SIO_CMD_REG_READ || p->cmd == SIO_CMD_BORROW ||
	    p->cmd == SIO_CMD_RETURN || p->cmd == SIO_CMD_RECLAIM) {
		if (p->cmd == SIO_CMD_REG_READ) {
			sio_msg_put_s32(&rep, SIO_A_ERRNO, 0);
			err = reg_read(p, &rep);
		} else {
			err = lending(p);
		}
		if (err) {
			sio_msg_init(&rep, repbuf, SIO_MSG_MAX, SIO_CMD_REPLY,
				     SIO_F_REPLY, p->seq);
			sio_msg_put_s32(&rep, SIO_A_ERRNO, err);
		} else if (p->cmd != SIO_CMD_REG_READ) {
			sio_msg_put_s32(&rep, SIO_A_ERRNO, 0);
		}
		n = sio_msg_finish(&rep);
	} else {
		mutex_lock(&sio_k.lock);
		n = sio_core_dispatch(&sio_k.core, sio_k.self, info->nlhdr,
				      len, repbuf, SIO_MSG_MAX);
		mutex_unlock(&sio_k.lock);
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

static struct genl_small_ops sio_genl_ops[SIO_CMD_MAX];

static struct genl_family sio_genl_family = {
	.name = SIO_GENL_NAME,
	.version = SIO_GENL_VERSION,
	.maxattr = 0,		/* the core parses the attributes itself */
	.netnsok = false,
	.module = THIS_MODULE,
	.small_ops = sio_genl_ops,
	.resv_start_op = SIO_CMD_MAX + 1,
};

int sio_genl_init(void)
{
	u32 cmd, n = 0;

	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		if (cmd == SIO_CMD_REPLY)
			continue;
		sio_genl_ops[n].cmd = cmd;
		sio_genl_ops[n].doit = sio_genl_doit;
		sio_genl_ops[n].validate = GENL_DONT_VALIDATE_STRICT |
					   GENL_DONT_VALIDATE_DUMP;
		if (cmd != SIO_CMD_REG_READ)
			sio_genl_ops[n].flags = GENL_ADMIN_PERM;
		n++;
	}
	sio_genl_family.n_small_ops = n;
	return genl_register_family(&sio_genl_family);
}

void sio_genl_exit(void)
{
	genl_unregister_family(&sio_genl_family);
}
