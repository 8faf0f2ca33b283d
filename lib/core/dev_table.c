// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Device tables: one cluster-wide device registry when every machine keeps
 * a registry of its own (smartio.ko over an NTB, SIO_CORE_SEPARATE).
 *
 * Every machine lays out the same device slots, so a device has one index
 * and fdid everywhere; the slots of other machines' devices start absent
 * (topology "absent": present 0).  A lender owns the records of its
 * devices and sends them to every peer as DEV_TABLE (NODE, then one
 * SIO_A_DATA of exactly sizeof(struct sio_dev_wire) per device) after
 * every change; the receiver replaces its copies of that lender's devices
 * with the table, whole or not at all.  Commands for a device still go to
 * its lender (dispatch.c), which alone changes its record.
 *
 * SR-IOV (sriov.c) travels too: a PF's TotalVFs and NumVFs, and a VF's
 * distance back to its PF's slot (VF k is k + 1 after it), so that
 * every node knows which devices are whose VFs; the bytes were padding
 * before, which older lenders send as zeros (no SR-IOV).
 */
#include "core_int.h"

/* One device as it travels (little endian, as every message). */
struct sio_dev_wire {
	u32 fdid;
	u16 rid;
	u8 mode;
	u8 policy;
	char name[SIO_TOPO_NAME];
	char bdf[16];
	u16 vendor, device, subsys_vendor, subsys_device;
	u32 class_code;
	u32 config_size;
	u8 revision;
	u8 vf_back;		/* a VF: its PF is this many slots before; 0 */
	u16 sriov_total, sriov_num;	/* a PF's TotalVFs and NumVFs */
	u8 pad[2];
	u64 lend_mask;
	u64 borrowers;
	struct sio_bar bar[SIO_MAX_BARS];
	struct sio_dev_stats stats;
};

_Static_assert(sizeof(struct sio_dev_wire) == 320,
	       "the device record's wire size is part of the protocol");

static void wire_from(struct sio_dev_wire *w, const struct sio_device *d)
{
	sio_memset(w, 0, sizeof(*w));
	w->fdid = d->fdid;
	w->rid = d->rid;
	w->mode = d->mode;
	w->policy = d->policy;
	sio_strlcpy(w->name, d->name, sizeof(w->name));
	sio_strlcpy(w->bdf, d->bdf, sizeof(w->bdf));
	w->vendor = d->vendor;
	w->device = d->device;
	w->subsys_vendor = d->subsys_vendor;
	w->subsys_device = d->subsys_device;
	w->class_code = d->class_code;
	w->config_size = d->config_size;
	w->revision = d->revision;
	if (d->sriov_pf != SIO_NO_PF)
		w->vf_back = (u8)((d->fdid & 0xfffffu) - d->sriov_pf);
	w->sriov_total = d->sriov_total;
	w->sriov_num = d->sriov_num;
	w->lend_mask = d->lend_mask;
	w->borrowers = d->borrowers;
	sio_memcpy(w->bar, d->bar, sizeof(w->bar));
	w->stats = d->stats;
}

int sio_core_dev_table(struct sio_core *c, u32 self, u32 dst, void *buf,
		       u32 cap)
{
	struct sio_registry *r = c->reg;
	struct sio_dev_wire w;
	struct sio_msg m;
	u8 *out;
	u32 i;

	if (self >= r->nnodes || dst >= r->nnodes)
		return -EINVAL;
	sio_msg_init(&m, buf, cap, SIO_CMD_DEV_TABLE, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, self);
	for (i = 0; i < r->ndevices; i++) {
		const struct sio_device *d = sio_dev(r, i);

		if (d->node != self || !d->present)
			continue;
		out = sio_msg_reserve(&m, SIO_A_DATA, sizeof(w));
		if (!out)
			return m.err;
		/* Attributes are 4-byte aligned, the record wants 8: copied. */
		wire_from(&w, d);
		sio_memcpy(out, &w, sizeof(w));
	}
	sio_msg_put_u32(&m, SIO_A_SRC, sio_node(r, self)->id);
	sio_msg_put_u32(&m, SIO_A_DST, sio_node(r, dst)->id);
	return m.err ? m.err : sio_msg_finish(&m);
}

static int name_ok(const char *s, u32 cap)
{
	u32 n = (u32)sio_strnlen(s, cap), i;

	if (n == 0 || n >= cap)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
		      ch == '.' || ch == ':'))
			return 0;
	}
	return 1;
}

/* A BAR as a lender may describe it: absent, or a sized power of two. */
static int bar_ok(const struct sio_bar *b)
{
	if (!b->size)
		return !b->addr && !b->flags;
	return !(b->size & (b->size - 1)) && b->size >= 16 &&
	       b->addr + b->size > b->addr && !(b->addr & (b->size - 1)) &&
	       !(b->flags & ~(SIO_BAR_MEM64 | SIO_BAR_PREFETCH));
}

/*
 * SR-IOV as a lender may describe it: a VF's PF and a PF's VFs are slots
 * of the same lender, a VF has none of its own, NumVFs <= TotalVFs.
 */
static int sriov_ok(struct sio_registry *r, u32 owner, u32 idx,
		    const struct sio_dev_wire *w)
{
	u32 k;

	if (w->sriov_num > w->sriov_total ||
	    w->sriov_total > SIO_SRIOV_MAX_VFS || (w->vf_back && w->sriov_total))
		return 0;
	if (w->vf_back && (w->vf_back > idx ||
			   sio_dev(r, idx - w->vf_back)->node != owner))
		return 0;
	if (w->sriov_total >= r->ndevices - idx)
		return 0;
	for (k = 1; k <= w->sriov_total; k++)
		if (sio_dev(r, idx + k)->node != owner)
			return 0;
	return 1;
}

/*
 * The record w of owner's table: its slot here (index), or -EPROTO.  The
 * slot is owner's, the names are well formed and no present device of
 * another owner has the name; a device self borrows keeps its BARs.
 */
static int wire_ok(struct sio_registry *r, u32 self, u32 owner,
		   const struct sio_dev_wire *w)
{
	u32 idx = w->fdid & 0xfffffu, i;
	u64 all = sio_all_nodes(r->nnodes);
	const struct sio_device *d;

	if (w->fdid >> 20 != owner || idx >= r->ndevices)
		return -EPROTO;
	d = sio_dev(r, idx);
	if (d->node != owner || d->fdid != w->fdid ||
	    !name_ok(w->name, sizeof(w->name)) ||
	    !name_ok(w->bdf, sizeof(w->bdf)) || w->mode > SIO_MODE_SHARED ||
	    w->policy > SIO_LEND_LIST || (w->lend_mask & ~all) ||
	    (w->borrowers & ~all) || (w->borrowers >> owner & 1) ||
	    (w->config_size != 256 && w->config_size != 4096))
		return -EPROTO;
	for (i = 0; i < SIO_MAX_BARS; i++)
		if (!bar_ok(&w->bar[i]))
			return -EPROTO;
	if (!sriov_ok(r, owner, idx, w))
		return -EPROTO;
	for (i = 0; i < r->ndevices; i++) {
		const struct sio_device *o = sio_dev(r, i);

		if (i != idx && o->present && o->node != owner &&
		    sio_streq(o->name, w->name))
			return -EPROTO;
	}
	if (sio_borrow_find(r, idx, self) >= 0 &&
	    sio_memcmp(d->bar, w->bar, sizeof(d->bar)))
		return -EPROTO;	/* our mappings were made for those BARs */
	return (int)idx;
}

/* Record a of a table, into w (attributes are 4-byte aligned only). */
static int wire_get(const struct sio_nla *a, struct sio_dev_wire *w)
{
	if (a->len != sizeof(*w))
		return -EPROTO;
	sio_memcpy(w, a->data, sizeof(*w));
	return 0;
}

/* Every record first; two records for one slot or one name are refused. */
static int table_ok(struct sio_registry *r, u32 self, u32 owner,
		    const struct sio_parsed *p)
{
	const u32 name_at = (u32)__builtin_offsetof(struct sio_dev_wire, name);
	struct sio_dev_wire w;
	struct sio_nla a, b;
	u32 pos = 0, pos2, fdid;
	int idx;

	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (a.type != SIO_A_DATA)
			continue;
		if (wire_get(&a, &w))
			return -EPROTO;
		idx = wire_ok(r, self, owner, &w);
		if (idx < 0)
			return idx;
		pos2 = pos;
		while (sio_nla_next(p->attrs, p->attrs_len, &pos2, &b)) {
			if (b.type != SIO_A_DATA || b.len != sizeof(w))
				continue;
			sio_memcpy(&fdid, b.data, sizeof(fdid));
			/* w's name is checked: compared with its NUL. */
			if (fdid == w.fdid ||
			    !sio_memcmp(b.data + name_at, w.name,
					sio_strnlen(w.name, sizeof(w.name)) + 1))
				return -EPROTO;
		}
	}
	return 0;
}

static void wire_to(struct sio_device *d, const struct sio_dev_wire *w)
{
	sio_strlcpy(d->name, w->name, sizeof(d->name));
	sio_strlcpy(d->bdf, w->bdf, sizeof(d->bdf));
	d->rid = w->rid;
	d->mode = w->mode;
	d->policy = w->policy;
	d->vendor = w->vendor;
	d->device = w->device;
	d->subsys_vendor = w->subsys_vendor;
	d->subsys_device = w->subsys_device;
	d->class_code = w->class_code;
	d->config_size = w->config_size;
	d->revision = w->revision;
	d->lend_mask = w->lend_mask;
	d->borrowers = w->borrowers;
	sio_memcpy(d->bar, w->bar, sizeof(d->bar));
	d->stats = w->stats;
	d->model = SIO_MODEL_GENERIC;
	d->sriov_pf = w->vf_back ? (w->fdid & 0xfffffu) - w->vf_back :
				   SIO_NO_PF;
	d->sriov_total = w->sriov_total;
	d->sriov_num = w->sriov_num;
}

/*
 * DEV_TABLE from a lender: its devices' records replace the copies here;
 * slots it no longer lists are absent again.
 */
int sio_h_dev_table(struct sio_core *c, u32 self, const struct sio_parsed *p,
		    struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int owner = sio_msg_node(r, p, SIO_A_NODE), err;
	struct sio_dev_wire w;
	struct sio_nla a;
	u32 i, pos = 0;

	(void)rep;
	if (!(c->flags & SIO_CORE_SEPARATE))
		return -EOPNOTSUPP;	/* one registry: nothing to copy */
	if (p->from == self)
		return -EPERM;		/* only a lender's own table */
	if (owner < 0)
		return owner;
	if ((u32)owner == self)
		return -EINVAL;
	err = table_ok(r, self, (u32)owner, p);
	if (err)
		return err;
	for (i = 0; i < r->ndevices; i++) {
		struct sio_device *d = sio_dev(r, i);

		if (d->node == (u32)owner)
			d->present = 0;
	}
	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		struct sio_device *d;

		if (a.type != SIO_A_DATA || wire_get(&a, &w))
			continue;
		d = sio_dev(r, w.fdid & 0xfffffu);
		wire_to(d, &w);
		d->present = 1;
		d->gone = !sio_node_up(r, (u32)owner);
	}
	if (c->ops->notify)
		c->ops->notify(c->plat);
	return 0;
}

void sio_core_dev_forget(struct sio_core *c, u32 self, u32 owner)
{
	struct sio_registry *r = c->reg;
	u32 i;

	if (owner == self || owner >= r->nnodes)
		return;
	for (i = 0; i < r->ndevices; i++) {
		struct sio_device *d = sio_dev(r, i);

		if (d->node == owner && d->present) {
			d->present = 0;
			d->gone = 1;
		}
	}
	if (c->ops->notify)
		c->ops->notify(c->plat);
}
