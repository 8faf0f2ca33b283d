// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs control, for tests until the generic netlink family exists:
 *   /sys/kernel/debug/smartio/ctl    write a command, read its answer
 *   /sys/kernel/debug/smartio/state  devices and borrows, with every window
 *                                    address resolved through the LUTs
 * Commands build the core's protocol messages and dispatch them as host0:
 *   lend <dev> all|none | borrow <dev> <node> | return <dev> <node> |
 *   cfgread <dev> <node> <offset> <length>
 * The answer is the core's errno, then the data a read returned, in hex.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sio_kmod.h"

#define SIO_CTL_ANSWER 1024

static struct dentry *sio_dbg;
static char sio_answer[SIO_CTL_ANSWER];

static int ctl_call(u8 cmd, const char *dev, const char *node, u64 a, u64 b,
		    struct sio_strbuf *out)
{
	struct sio_parsed *rep;
	struct sio_msg m;
	u8 *req, *repbuf;
	int d, n = -EINVAL, err = -ENOMEM;

	req = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	repbuf = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	rep = kmalloc(sizeof(*rep), GFP_KERNEL);
	if (!req || !repbuf || !rep)
		goto out;
	mutex_lock(&sio_k.lock);
	d = sio_dev_lookup(sio_k.reg, dev);
	if (node)
		n = sio_node_lookup(sio_k.reg, node);
	err = d < 0 ? d : node && n < 0 ? n : 0;
	if (!err) {
		sio_msg_init(&m, req, SIO_MSG_MAX, cmd, SIO_F_REQUEST, 0);
		sio_msg_put_u32(&m, SIO_A_DEV, sio_dev(sio_k.reg, d)->fdid);
		if (cmd == SIO_CMD_LEND) {
			sio_msg_put_u32(&m, SIO_A_FLAGS, (u32)a);
			sio_msg_put_u64(&m, SIO_A_MASK, a == SIO_LEND_ALL ? 3 : 0);
		} else {
			sio_msg_put_u32(&m, SIO_A_NODE, n);
		}
		if (cmd == SIO_CMD_CFG_READ) {
			sio_msg_put_u64(&m, SIO_A_OFFSET, a);
			sio_msg_put_u64(&m, SIO_A_SIZE, b);
		}
		err = sio_core_call(&sio_k.core, SIO_K_LENDER, SIO_K_LENDER,
				    &m, rep, repbuf, SIO_MSG_MAX);
	}
	if (!err && rep->present[SIO_A_DATA]) {
		u32 i;

		for (i = 0; i < rep->tb[SIO_A_DATA].len; i++) {
			if (out->len + 4 > out->cap)
				break;
			out->len += snprintf(out->buf + out->len,
					     out->cap - out->len, " %02x",
					     rep->tb[SIO_A_DATA].data[i]);
		}
	}
	mutex_unlock(&sio_k.lock);
out:
	kfree(req);
	kfree(repbuf);
	kfree(rep);
	return err;
}

/* Borrow and return do more than the core's part (sio_shadow.c). */
static int ctl_lending(bool borrow, const char *dev, const char *node)
{
	int d, n;

	mutex_lock(&sio_k.lock);
	d = sio_dev_lookup(sio_k.reg, dev);
	n = sio_node_lookup(sio_k.reg, node);
	mutex_unlock(&sio_k.lock);
	if (d < 0 || n < 0)
		return d < 0 ? d : n;
	return borrow ? sio_k_borrow(d, n) : sio_k_return(d, n);
}

static ssize_t ctl_write(struct file *f, const char __user *ubuf, size_t len,
			 loff_t *pos)
{
	char line[128], verb[16], dev[SIO_TOPO_NAME], arg[SIO_TOPO_NAME];
	char data[SIO_CTL_ANSWER - 16];
	struct sio_strbuf sb;
	unsigned long long a = 0, b = 0;
	int n, err;

	if (len >= sizeof(line))
		return -EINVAL;
	if (copy_from_user(line, ubuf, len))
		return -EFAULT;
	line[len] = 0;
	data[0] = 0;
	sio_sb_init(&sb, data, sizeof(data));
	n = sscanf(line, "%15s %31s %31s %llx %llu", verb, dev, arg, &a, &b);
	if (n == 3 && !strcmp(verb, "lend") && !strcmp(arg, "all"))
		err = ctl_call(SIO_CMD_LEND, dev, NULL, SIO_LEND_ALL, 0, &sb);
	else if (n == 3 && !strcmp(verb, "lend") && !strcmp(arg, "none"))
		err = ctl_call(SIO_CMD_LEND, dev, NULL, SIO_LEND_NONE, 0, &sb);
	else if (n == 3 && !strcmp(verb, "borrow"))
		err = ctl_lending(true, dev, arg);
	else if (n == 3 && !strcmp(verb, "return"))
		err = ctl_lending(false, dev, arg);
	else if (n == 5 && !strcmp(verb, "cfgread"))
		err = ctl_call(SIO_CMD_CFG_READ, dev, arg, a, b, &sb);
	else
		return -EINVAL;
	snprintf(sio_answer, sizeof(sio_answer), "%d%s\n", err, data);
	return len;
}

static ssize_t ctl_read(struct file *f, char __user *ubuf, size_t len,
			loff_t *pos)
{
	return simple_read_from_buffer(ubuf, len, pos, sio_answer,
				       strlen(sio_answer));
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.write = ctl_write,
	.read = ctl_read,
	.llseek = default_llseek,
};

static void show_resolved(struct seq_file *s, const char *what, u32 node,
			  u64 addr, u64 len)
{
	u32 tnode;
	u64 taddr;

	if (sio_kplat_resolve(node, addr, len, &tnode, &taddr))
		seq_printf(s, " %s=%#llx->unmapped", what, addr);
	else
		seq_printf(s, " %s=%#llx->%s:%#llx", what, addr,
			   sio_node(sio_k.reg, tnode)->name, taddr);
}

static int state_show(struct seq_file *s, void *unused)
{
	struct sio_registry *r = sio_k.reg;
	u32 i, b;

	mutex_lock(&sio_k.lock);
	for (i = 0; i < r->nnodes; i++)
		seq_printf(s, "node %s id=%u %s\n", sio_node(r, i)->name,
			   sio_node(r, i)->id,
			   sio_node(r, i)->state == SIO_NODE_UP ? "up" : "down");
	for (i = 0; i < r->ndevices; i++) {
		struct sio_device *d = sio_dev(r, i);

		seq_printf(s, "dev %s bdf=%s lender=%s policy=%u borrowers=%#llx",
			   d->name, d->bdf, sio_node(r, d->node)->name,
			   d->policy, d->borrowers);
		for (b = 0; b < SIO_MAX_BARS; b++)
			if (d->bar[b].size)
				seq_printf(s, " bar%u=%#llx+%#llx", b,
					   d->bar[b].addr, d->bar[b].size);
		seq_puts(s, "\n");
	}
	for (i = 0; i < r->max_borrows; i++) {
		struct sio_borrow *bo = sio_borrow_at(r, i);
		struct sio_device *d;

		if (!bo->used)
			continue;
		d = sio_dev(r, bo->dev);
		seq_printf(s, "borrow %s by=%s", d->name,
			   sio_node(r, bo->borrower)->name);
		for (b = 0; b < SIO_MAX_BARS; b++) {
			char what[8];

			if (!bo->bar_local[b])
				continue;
			snprintf(what, sizeof(what), "bar%u", b);
			show_resolved(s, what, bo->borrower, bo->bar_local[b],
				      d->bar[b].size);
		}
		show_resolved(s, "dma", bo->lender, bo->dma_addr,
			      bo->iova_size);
		show_resolved(s, "msi", bo->lender, bo->msi_addr, SIO_MSI_SIZE);
		seq_printf(s, " iova=%#llx+%#llx\n", bo->iova, bo->iova_size);
	}
	for (i = 0; i < sio_k.ndevs; i++)
		sio_shadow_show(s, &sio_k.dev[i]);
	mutex_unlock(&sio_k.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

int sio_ctl_init(void)
{
	sio_dbg = debugfs_create_dir("smartio", NULL);
	debugfs_create_file("ctl", 0600, sio_dbg, NULL, &ctl_fops);
	debugfs_create_file("state", 0400, sio_dbg, NULL, &state_fops);
	return 0;
}

void sio_ctl_exit(void)
{
	debugfs_remove_recursive(sio_dbg);
}
