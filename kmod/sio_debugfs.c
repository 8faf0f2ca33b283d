// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/smartio/state, what the core and the loopback
 * adapter hold, for people debugging lending: nodes, devices, borrows with
 * every window address resolved through the LUTs, shadows, and the
 * fabric device's generation and netlink request count.  Read-only:
 * control goes through the generic netlink family (sio_genl.c).  One
 * write-only file, msix_entry, plays a hostile borrower's kernel for
 * the tests of the lender's MSI-X check.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "sio_kmod.h"

static struct dentry *sio_dbg;

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

	sio_k_lock();
	for (i = 0; i < r->nnodes; i++)
		seq_printf(s, "node %s id=%u %s refused=%u\n",
			   sio_node(r, i)->name, sio_node(r, i)->id,
			   sio_node(r, i)->state == SIO_NODE_UP ? "up" : "down",
			   sio_node(r, i)->refused);
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
	/* backing: where the memory is (fabric=ntb: the owner's window). */
	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *g = sio_seg(r, i);

		if (g->used)
			seq_printf(s, "seg %s.%s size=%#llx backing=%#llx available=%u creator=%s\n",
				   sio_node(r, g->owner)->name, g->name,
				   g->size, g->backing, g->available,
				   sio_node(r, g->creator)->name);
	}
	for (i = 0; i < sio_k.ndevs; i++)
		sio_shadow_show(s, &sio_k.dev[i]);
	if (sio_k.fab->show)
		sio_k.fab->show(s);
	seq_printf(s, "fabric generation=%llu requests=%llu\n", sio_k.notifies,
		   (u64)atomic64_read(&sio_k.requests));
	sio_k_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

/*
 * msix_entry (root, write only): "<fdid> <index> <address> <data> <ctrl>"
 * sends the lender of device fdid that MSI-X entry as this node's shadow
 * would (SIO_CMD_MSIX_ENTRY), whatever it says: what a hostile borrower's
 * kernel can send, so that the lender's check can be shown (check-ntb).
 */
static ssize_t msix_entry_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *pos)
{
	unsigned long long v[5];
	u8 e[PCI_MSIX_ENTRY_SIZE];
	struct sio_k_req *q;
	char text[96];
	int err;

	if (len >= sizeof(text))
		return -EINVAL;
	if (copy_from_user(text, ubuf, len))
		return -EFAULT;
	text[len] = '\0';
	if (sscanf(text, "%lli %lli %lli %lli %lli", &v[0], &v[1], &v[2],
		   &v[3], &v[4]) != 5 || v[0] > U32_MAX || v[1] > U32_MAX ||
	    v[3] > U32_MAX || v[4] > U32_MAX)
		return -EINVAL;
	put_unaligned_le64(v[2], e);
	put_unaligned_le32(v[3], e + 8);
	put_unaligned_le32(v[4], e + 12);
	q = sio_k_req_new(SIO_CMD_MSIX_ENTRY);
	if (!q)
		return -ENOMEM;
	sio_msg_put_u32(&q->m, SIO_A_DEV, v[0]);
	sio_msg_put_u32(&q->m, SIO_A_NODE, sio_k.self);
	sio_msg_put_u32(&q->m, SIO_A_INDEX, v[1]);
	sio_msg_put_bin(&q->m, SIO_A_DATA, e, sizeof(e));
	err = sio_k_req_send(q);
	return err ? err : len;
}

static const struct file_operations msix_entry_fops = {
	.owner = THIS_MODULE,
	.write = msix_entry_write,
};

int sio_debugfs_init(void)
{
	sio_dbg = debugfs_create_dir("smartio", NULL);
	debugfs_create_file("state", 0400, sio_dbg, NULL, &state_fops);
	debugfs_create_file("msix_entry", 0200, sio_dbg, NULL, &msix_entry_fops);
	return 0;
}

void sio_debugfs_exit(void)
{
	debugfs_remove_recursive(sio_dbg);
}
