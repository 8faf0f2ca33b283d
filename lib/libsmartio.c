// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio: the library's calls, written once for both transports.
 * Commands are encoded as protocol messages and handed to the handle's
 * transport (transport.h): the embedded simulated fabric's core
 * (transport_sim.c) or smartio.ko over generic netlink
 * (transport_kernel.c).  Queries read the registry under the transport's
 * lock, and only under it: over smartio.ko the registry is a copy that the
 * next lock may replace and free, and smartiofs calls in from many
 * threads at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smartio_internal.h"
#include "sim/topology_parse.h"
#include "transport.h"

/*
 * Queries read the registry under the fabric lock; over the kernel
 * transport they read a fresh copy of smartio.ko's registry instead (the
 * last good one if the kernel does not answer).
 */
void sio_lib_lock(struct smartio *h)
{
	h->t->lock(h);
}

struct sio_registry *sio_lib_reg(struct smartio *h)
{
	return REG(h);
}

/* Over smartio.ko every lock reads a copy already. */
void sio_lib_copy_registry(struct smartio *h)
{
	h->copy = 1;
}

void sio_lib_unlock(struct smartio *h)
{
	h->t->unlock(h);
}

int sio_lib_is_kernel(const struct smartio *h)
{
	return h->t == &sio_lib_kernel_transport;
}

/*
 * The one-line reason libsmartio(3) promises for every failure, for the
 * failures whose code path left errbuf empty.
 */
static void open_reason(const struct smartio_open_opts *o, int rc)
{
	const char *fabric = o->fabric ? o->fabric : "default";
	int kernel = o->fabric && !strcmp(o->fabric, "kernel");

	if (!o->errbuf || !o->errlen || o->errbuf[0])
		return;
	if (rc == -ENOENT && o->node)
		snprintf(o->errbuf, o->errlen, "unknown node '%s' in fabric '%s'",
			 o->node, fabric);
	else if (kernel)
		snprintf(o->errbuf, o->errlen,
			 "fabric 'kernel': smartio.ko cannot be used: %s",
			 strerror(-rc));
	else if (rc == -ENOENT)
		snprintf(o->errbuf, o->errlen,
			 "no fabric '%s' to join (nothing serves it)", fabric);
	else if (rc == -EBUSY)
		snprintf(o->errbuf, o->errlen,
			 "fabric '%s' exists and a live process serves it",
			 fabric);
	else
		snprintf(o->errbuf, o->errlen, "cannot open fabric '%s': %s",
			 fabric, strerror(-rc));
}

static int open_handle(struct smartio **hp, const struct smartio_open_opts *o)
{
	struct smartio *h = calloc(1, sizeof(*h));
	int rc;

	if (!h)
		return -ENOMEM;
	/*
	 * fabric "kernel" is smartio.ko, which must be loaded; with no fabric
	 * named and nothing to create, smartio.ko is used when it is loaded.
	 */
	if ((o->fabric && !strcmp(o->fabric, "kernel")) ||
	    (!o->fabric && o->create != 1 && !o->topology)) {
		rc = sio_lib_open_kernel(h, o);
		if (!rc || o->fabric || (rc != -ENOENT && rc != -EOPNOTSUPP))
			goto out;
	}
	rc = sio_lib_open_sim(h, o);
out:
	if (rc)
		free(h);
	else
		*hp = h;
	return rc;
}

int smartio_open(struct smartio **hp, const struct smartio_open_opts *o)
{
	struct smartio_open_opts def = { 0 };
	int rc;

	if (!o)
		o = &def;
	if (o->errbuf && o->errlen)
		o->errbuf[0] = '\0';
	rc = open_handle(hp, o);
	if (rc)
		open_reason(o, rc);
	return rc;
}

int smartio_topology_check(const char *path, unsigned *nodes,
			   unsigned *devices, char *errbuf, size_t errlen)
{
	struct sio_topology topo = { 0 };
	char err[256] = "";
	int rc;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!path)
		return -EINVAL;
	/* The same parse and the same words as smartio_open's. */
	rc = sio_topo_load(path, &topo, err, sizeof(err));
	if (rc) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: %s", path, err);
		return rc;
	}
	if (nodes)
		*nodes = topo.nnodes;
	if (devices)
		*devices = topo.ndevices;
	sio_topo_free(&topo);
	return 0;
}

void smartio_close(struct smartio *h)
{
	if (!h)
		return;
	h->t->close(h);
	free(h);
}

struct sim_fabric *sio_lib_fabric(struct smartio *h)
{
	return &h->f;
}

const char *smartio_fabric_dir(const struct smartio *h)
{
	return h->f.dir;
}

/* A count of the registry's header, read under the lock. */
u32 sio_lib_reg_count(struct smartio *h, size_t off)
{
	u32 n;

	sio_lib_lock(h);
	memcpy(&n, (const u8 *)REG(h) + off, sizeof(n));
	sio_lib_unlock(h);
	return n;
}

unsigned smartio_node_count(struct smartio *h)
{
	return SIO_LIB_REG_COUNT(h, nnodes);
}

unsigned smartio_device_count(struct smartio *h)
{
	return SIO_LIB_REG_COUNT(h, ndevices);
}

unsigned smartio_self(struct smartio *h)
{
	return h->self;
}

int smartio_node_find(struct smartio *h, const char *name)
{
	int rc;

	sio_lib_lock(h);
	rc = sio_node_lookup(REG(h), name);
	sio_lib_unlock(h);
	return rc;
}

int smartio_device_find(struct smartio *h, const char *name)
{
	int rc;

	sio_lib_lock(h);
	rc = sio_dev_lookup(REG(h), name);
	sio_lib_unlock(h);
	return rc;
}

int smartio_node_info(struct smartio *h, unsigned node,
		      struct smartio_node_info *out)
{
	struct sio_node *n;

	sio_lib_lock(h);
	if (node >= REG(h)->nnodes) {
		sio_lib_unlock(h);
		return -ENOENT;
	}
	n = sio_node(REG(h), node);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", n->name);
	out->id = n->id;
	out->state = n->state == SIO_NODE_UP ? SMARTIO_NODE_UP : SMARTIO_NODE_DOWN;
	out->nadapters = n->nadapters;
	out->generation = n->generation;
	sio_lib_unlock(h);
	return 0;
}

int smartio_adapter_info(struct smartio *h, unsigned node, unsigned adapter,
			 struct smartio_adapter_info *out)
{
	struct sio_adapter *a;

	sio_lib_lock(h);
	if (node >= REG(h)->nnodes ||
	    adapter >= sio_node(REG(h), node)->nadapters) {
		sio_lib_unlock(h);
		return -ENOENT;
	}
	a = &sio_node(REG(h), node)->adapter[adapter];
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", a->name);
	out->link_up = a->link_up;
	out->peers = a->peers;
	out->luts_used = a->luts.used;
	out->luts_total = a->luts.total;
	out->req_used = a->reqs_out.used + a->reqs_out.reserved;
	out->req_total = a->reqs_out.total;
	out->req_in_used = a->reqs_in.used + a->reqs_in.reserved;
	out->req_in_total = a->reqs_in.total;
	out->req_reserved = a->reqs_in.reserved;
	out->sw = a->sw ? (int)a->sw - 1 : -1;
	out->port = a->port;
	out->window = a->window_size;
	sio_lib_unlock(h);
	return 0;
}

unsigned smartio_switch_count(struct smartio *h)
{
	return SIO_LIB_REG_COUNT(h, nswitches);
}

int smartio_switch_info(struct smartio *h, unsigned sw,
			struct smartio_switch_info *out)
{
	struct sio_switch *s;
	unsigned p;

	sio_lib_lock(h);
	if (sw >= REG(h)->nswitches) {
		sio_lib_unlock(h);
		return -ENOENT;
	}
	s = sio_switch_at(REG(h), sw);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", s->name);
	out->nports = s->nports;
	for (p = 0; p < s->nports && p < SMARTIO_MAX_SWITCH_PORTS; p++) {
		const struct sio_swport *sp = &s->port[p];
		struct smartio_port_info *o = &out->port[p];

		o->kind = sp->kind;
		o->node = sp->node;
		o->adapter = sp->adapter;
		o->peer_switch = sp->peer_sw;
		o->peer_port = sp->peer_port;
		o->req_used = sp->out_used + sp->out_reserved;
		o->req_total = sp->out_total;
		o->req_in_used = sp->in_used + sp->in_reserved;
		o->req_in_total = sp->in_total;
	}
	sio_lib_unlock(h);
	return 0;
}

/* A path's ends exist (under the lock): node, its adapter, node to. */
static int path_ends_ok(struct smartio *h, unsigned node, unsigned adapter,
			unsigned to)
{
	return node < REG(h)->nnodes && to < REG(h)->nnodes &&
	       adapter < sio_node(REG(h), node)->nadapters;
}

int smartio_path_hops(struct smartio *h, unsigned node, unsigned adapter,
		      unsigned to)
{
	int rc;

	sio_lib_lock(h);
	if (!path_ends_ok(h, node, adapter, to))
		rc = -ENOENT;
	else
		rc = sio_path_hops(REG(h), node, adapter, to);
	sio_lib_unlock(h);
	return rc;
}

int smartio_path_speed(struct smartio *h, unsigned node, unsigned adapter,
		       unsigned to, uint64_t *rate, unsigned *latency_ns)
{
	struct sio_path_speed ps;
	int rc;

	sio_lib_lock(h);
	if (!path_ends_ok(h, node, adapter, to))
		rc = -ENOENT;
	else
		rc = sio_path_speed(REG(h), node, adapter, to, &ps);
	sio_lib_unlock(h);
	if (!rc) {
		*rate = ps.rate;
		*latency_ns = ps.latency_ns;
	}
	return rc;
}

int smartio_link_set(struct smartio *h, unsigned node, unsigned adapter,
		     int up)
{
	if (!h->t->link_set)
		return -EOPNOTSUPP;	/* a real link is the cable's */
	return h->t->link_set(h, node, adapter, up);
}

int smartio_device_info(struct smartio *h, unsigned dev,
			struct smartio_device_info *out)
{
	struct sio_device *d;
	unsigned b;

	sio_lib_lock(h);
	/* A slot no device fills (yet): another machine's, over an NTB. */
	if (dev >= REG(h)->ndevices || !sio_dev(REG(h), dev)->present) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	d = sio_dev(REG(h), dev);
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", d->name);
	snprintf(out->bdf, sizeof(out->bdf), "%s", d->bdf);
	out->fdid = d->fdid;
	out->node = d->node;
	out->vendor = d->vendor;
	out->device = d->device;
	out->subsys_vendor = d->subsys_vendor;
	out->subsys_device = d->subsys_device;
	out->class_code = d->class_code;
	out->revision = d->revision;
	out->config_size = d->config_size;
	out->mode = d->mode;
	out->policy = d->policy;
	out->lend_mask = d->lend_mask;
	out->borrowers = d->borrowers;
	out->gone = d->gone;
	out->state = d->borrowers ? SMARTIO_DEV_BORROWED :
		     d->policy != SIO_LEND_NONE ? SMARTIO_DEV_AVAILABLE :
						  SMARTIO_DEV_LOCAL;
	for (b = 0; b < SMARTIO_MAX_BARS; b++) {
		out->bar[b].addr = d->bar[b].addr;
		out->bar[b].size = d->bar[b].size;
		out->bar[b].flags = d->bar[b].flags;
	}
	_Static_assert(sizeof(out->stats) == sizeof(d->stats),
		       "smartio_dev_stats mirrors sio_dev_stats");
	memcpy(&out->stats, &d->stats, sizeof(out->stats));
	sio_lib_unlock(h);
	return 0;
}

int smartio_dma_windows(struct smartio *h, unsigned dev,
			struct smartio_dma_window *out, unsigned max)
{
	struct sio_registry *r;
	unsigned i, n = 0;

	sio_lib_lock(h);
	r = REG(h);
	if (dev >= r->ndevices) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	for (i = 0; i < r->max_borrows; i++) {
		struct sio_borrow *b = sio_borrow_at(r, i);

		/*
		 * A window the lender mapped (slots or the direct window),
		 * or, in the borrower's own registry of a kernel, one it
		 * translates inbound.
		 */
		if (!b->used || b->dev != dev || !b->iova_size ||
		    (b->l_lut < 0 && !b->dma_direct &&
		     !(b->inbound & (1u << SIO_INB_DMA))) ||
		    !(sio_dev(r, dev)->borrowers >> b->borrower & 1))
			continue;
		if (n < max) {
			out[n].node = b->borrower;
			out[n].iova = b->iova;
			out[n].size = b->iova_size;
			out[n].ioaddr = b->dma_addr;
		}
		n++;
	}
	sio_lib_unlock(h);
	return (int)n;
}

unsigned smartio_segment_slots(struct smartio *h)
{
	return SIO_LIB_REG_COUNT(h, max_segments);
}

int smartio_segment_at(struct smartio *h, unsigned i,
		       struct smartio_segment_info *out)
{
	struct sio_segment *s;
	int used;

	sio_lib_lock(h);
	if (i >= REG(h)->max_segments) {
		sio_lib_unlock(h);
		return 0;
	}
	s = sio_seg(REG(h), i);
	used = s->used;
	if (used) {
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "%s", s->name);
		out->owner = s->owner;
		out->sized = s->sized;
		out->size = s->size;
		out->available = s->available;
		out->attached = s->attached;
	}
	sio_lib_unlock(h);
	return used;
}

int smartio_segment_find(struct smartio *h, unsigned owner, const char *name)
{
	int rc;

	sio_lib_lock(h);
	rc = sio_seg_lookup(REG(h), owner, name);
	sio_lib_unlock(h);
	return rc;
}

int smartio_segment_dma_addr(struct smartio *h, unsigned owner,
			     const char *name, unsigned dev, uint64_t *ioaddr)
{
	struct sio_registry *r;
	int seg, rc = -ENOENT;
	unsigned i;

	sio_lib_lock(h);
	r = REG(h);
	seg = sio_seg_lookup(r, owner, name);
	for (i = 0; seg >= 0 && i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && m->seg == (u32)seg && m->dev == dev) {
			*ioaddr = m->ioaddr;
			rc = 0;
			break;
		}
	}
	sio_lib_unlock(h);
	return seg < 0 ? seg : rc;
}

/* Runs one command as this handle's node; returns the core's errno. */
static int command(struct smartio *h, struct sio_msg *m, uint64_t *addr_out,
		   void *data_out, uint32_t data_cap)
{
	u8 repbuf[SIO_MSG_MAX];
	struct sio_parsed rep;
	int len, n, err;

	len = sio_msg_finish(m);
	if (len < 0)
		return len;
	n = h->t->call(h, m->buf, (u32)len, repbuf, sizeof(repbuf));
	if (n < 0)
		return n;
	err = sio_msg_parse(repbuf, (u32)n, &rep);
	if (err)
		return err;
	if (!rep.present[SIO_A_ERRNO])
		return -EPROTO;
	err = sio_nla_s32(&rep.tb[SIO_A_ERRNO]);
	if (err)
		return err;
	if (addr_out && rep.present[SIO_A_ADDR])
		*addr_out = sio_nla_u64(&rep.tb[SIO_A_ADDR]);
	if (data_out && rep.present[SIO_A_DATA]) {
		n = rep.tb[SIO_A_DATA].len;
		if ((uint32_t)n > data_cap)
			n = (int)data_cap;
		memcpy(data_out, rep.tb[SIO_A_DATA].data, (size_t)n);
		return n;
	}
	return 0;
}

int sio_lib_command(struct smartio *h, struct sio_msg *m, uint64_t *addr_out)
{
	return command(h, m, addr_out, NULL, 0);
}

struct cmdbuf {
	u8 buf[SIO_MSG_MAX];
	struct sio_msg m;
};

static struct sio_msg *cmd_start(struct cmdbuf *cb, u8 cmd)
{
	sio_msg_init(&cb->m, cb->buf, sizeof(cb->buf), cmd, SIO_F_REQUEST, 0);
	return &cb->m;
}

/* The fabric-wide id of device dev, read under the lock: 0 or -ENXIO. */
static int dev_fdid(struct smartio *h, unsigned dev, u32 *fdid)
{
	int rc = -ENXIO;

	sio_lib_lock(h);
	if (dev < REG(h)->ndevices) {
		*fdid = sio_dev(REG(h), dev)->fdid;
		rc = 0;
	}
	sio_lib_unlock(h);
	return rc;
}

static int dev_cmd(struct smartio *h, u8 cmd, unsigned dev, int node_attr,
		   unsigned node)
{
	struct cmdbuf cb;
	struct sio_msg *m = cmd_start(&cb, cmd);
	u32 fdid;

	if (dev_fdid(h, dev, &fdid))
		return -ENXIO;
	sio_msg_put_u32(m, SIO_A_DEV, fdid);
	if (node_attr)
		sio_msg_put_u32(m, (u16)node_attr, node);
	return command(h, m, NULL, NULL, 0);
}

static int check_node(struct smartio *h, unsigned node)
{
	return node < smartio_node_count(h) ? 0 : -ENOENT;
}

int smartio_lend(struct smartio *h, unsigned dev, int policy, uint64_t mask)
{
	struct cmdbuf cb;
	struct sio_msg *m = cmd_start(&cb, SIO_CMD_LEND);
	u32 fdid;

	if (dev_fdid(h, dev, &fdid))
		return -ENXIO;
	if (policy < 0)
		return -EINVAL;
	sio_msg_put_u32(m, SIO_A_DEV, fdid);
	sio_msg_put_u32(m, SIO_A_FLAGS, (u32)policy);
	sio_msg_put_u64(m, SIO_A_MASK, mask);
	return command(h, m, NULL, NULL, 0);
}

int smartio_borrow(struct smartio *h, unsigned dev, unsigned node)
{
	return smartio_borrow_window(h, dev, node, 0);
}

int smartio_borrow_window(struct smartio *h, unsigned dev, unsigned node,
			  uint64_t window)
{
	struct cmdbuf cb;
	struct sio_msg *m;
	u32 fdid;

	if (check_node(h, node))
		return -ENOENT;
	m = cmd_start(&cb, SIO_CMD_BORROW);
	if (dev_fdid(h, dev, &fdid))
		return -ENXIO;
	sio_msg_put_u32(m, SIO_A_DEV, fdid);
	sio_msg_put_u32(m, SIO_A_NODE, node);
	if (window)
		sio_msg_put_u64(m, SIO_A_SIZE, window);
	return command(h, m, NULL, NULL, 0);
}

int smartio_return(struct smartio *h, unsigned dev, unsigned node)
{
	int rc = check_node(h, node);

	return rc ? rc : dev_cmd(h, SIO_CMD_RETURN, dev, SIO_A_NODE, node);
}

int smartio_reclaim(struct smartio *h, unsigned dev, unsigned asker)
{
	int rc = check_node(h, asker);

	return rc ? rc : dev_cmd(h, SIO_CMD_RECLAIM, dev, SIO_A_NODE, asker);
}

int smartio_set_mode(struct smartio *h, unsigned dev, int mode)
{
	if (mode < 0)
		return -EINVAL;
	return dev_cmd(h, SIO_CMD_SET_MODE, dev, SIO_A_MODE, (unsigned)mode);
}

int smartio_sriov_set(struct smartio *h, unsigned dev, unsigned numvfs)
{
	struct cmdbuf cb;
	struct sio_msg *m = cmd_start(&cb, SIO_CMD_SRIOV_SET);
	u32 fdid;

	if (dev_fdid(h, dev, &fdid))
		return -ENXIO;
	sio_msg_put_u32(m, SIO_A_DEV, fdid);
	sio_msg_put_u64(m, SIO_A_SIZE, numvfs);
	return command(h, m, NULL, NULL, 0);
}

int smartio_sriov_info(struct smartio *h, unsigned dev,
		       struct smartio_sriov_info *out)
{
	struct sio_device *d;

	sio_lib_lock(h);
	if (dev >= REG(h)->ndevices || !sio_dev(REG(h), dev)->present) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	d = sio_dev(REG(h), dev);
	out->total = d->sriov_total;
	out->num = d->sriov_num;
	/* A registry copy from smartio.ko is checked where it is used. */
	out->pf = d->sriov_pf < REG(h)->ndevices ? (int)d->sriov_pf : -1;
	sio_lib_unlock(h);
	return 0;
}

static int cfg_cmd(struct smartio *h, u8 cmd, unsigned dev, unsigned who,
		   uint32_t off, void *buf, uint32_t len)
{
	struct cmdbuf cb;
	struct sio_msg *m = cmd_start(&cb, cmd);
	u32 fdid;

	if (dev_fdid(h, dev, &fdid))
		return -ENXIO;
	if (check_node(h, who))
		return -ENOENT;
	if (len > SIO_DATA_MAX)
		return -EINVAL;
	sio_msg_put_u32(m, SIO_A_DEV, fdid);
	sio_msg_put_u32(m, SIO_A_NODE, who);
	sio_msg_put_u64(m, SIO_A_OFFSET, off);
	if (cmd == SIO_CMD_CFG_WRITE)
		sio_msg_put_bin(m, SIO_A_DATA, buf, len);
	else
		sio_msg_put_u64(m, SIO_A_SIZE, len);
	return command(h, m, NULL, cmd == SIO_CMD_CFG_READ ? buf : NULL, len);
}

int smartio_config_read(struct smartio *h, unsigned dev, unsigned who,
			uint32_t off, void *buf, uint32_t len)
{
	return cfg_cmd(h, SIO_CMD_CFG_READ, dev, who, off, buf, len);
}

int smartio_config_write(struct smartio *h, unsigned dev, unsigned who,
			 uint32_t off, const void *buf, uint32_t len)
{
	int rc = cfg_cmd(h, SIO_CMD_CFG_WRITE, dev, who, off, (void *)buf, len);

	return rc < 0 ? rc : (int)len;
}

static int seg_cmd(struct smartio *h, u8 cmd, unsigned owner, const char *name,
		   int attr, uint64_t val, uint64_t *addr_out)
{
	struct cmdbuf cb;
	struct sio_msg *m = cmd_start(&cb, cmd);
	u32 fdid;

	if (check_node(h, owner))
		return -ENOENT;
	if (!name || strlen(name) >= SIO_NAME_MAX)
		return -EINVAL;
	sio_msg_put_u32(m, SIO_A_NODE, owner);
	sio_msg_put_str(m, SIO_A_NAME, name);
	if (attr == SIO_A_SIZE)
		sio_msg_put_u64(m, SIO_A_SIZE, val);
	else if (attr == SIO_A_DEV && val <= UINT32_MAX &&
		 !dev_fdid(h, (unsigned)val, &fdid))
		sio_msg_put_u32(m, SIO_A_DEV, fdid);
	else if (attr == SIO_A_DEV)
		return -ENXIO;
	else if (attr)
		sio_msg_put_u32(m, (u16)attr, (u32)val);
	return command(h, m, addr_out, NULL, 0);
}

int smartio_segment_create(struct smartio *h, unsigned owner, const char *name)
{
	return seg_cmd(h, SIO_CMD_SEG_CREATE, owner, name, 0, 0, NULL);
}

int smartio_segment_set_size(struct smartio *h, unsigned owner,
			     const char *name, uint64_t size)
{
	return seg_cmd(h, SIO_CMD_SEG_SIZE, owner, name, SIO_A_SIZE, size, NULL);
}

int smartio_segment_destroy(struct smartio *h, unsigned owner,
			    const char *name)
{
	return seg_cmd(h, SIO_CMD_SEG_DESTROY, owner, name, 0, 0, NULL);
}

int smartio_segment_set_available(struct smartio *h, unsigned owner,
				  const char *name, int available)
{
	if (available != 0 && available != 1)
		return -EINVAL;
	return seg_cmd(h, SIO_CMD_SEG_AVAILABLE, owner, name, SIO_A_FLAGS,
		       (uint64_t)available, NULL);
}

int smartio_segment_attach(struct smartio *h, unsigned owner,
			   const char *name, unsigned node)
{
	if (check_node(h, node))
		return -ENOENT;
	return seg_cmd(h, SIO_CMD_SEG_ATTACH, owner, name, SIO_A_PEER, node,
		       NULL);
}

int smartio_segment_detach(struct smartio *h, unsigned owner,
			   const char *name, unsigned node)
{
	if (check_node(h, node))
		return -ENOENT;
	return seg_cmd(h, SIO_CMD_SEG_DETACH, owner, name, SIO_A_PEER, node,
		       NULL);
}

int smartio_segment_dma_map(struct smartio *h, unsigned owner,
			    const char *name, unsigned dev, uint64_t *ioaddr)
{
	uint64_t addr = 0;
	int rc = seg_cmd(h, SIO_CMD_SEG_DMA_MAP, owner, name, SIO_A_DEV, dev,
			 &addr);

	if (!rc && ioaddr)
		*ioaddr = addr;
	return rc;
}

int smartio_segment_dma_unmap(struct smartio *h, unsigned owner,
			      const char *name, unsigned dev)
{
	return seg_cmd(h, SIO_CMD_SEG_DMA_UNMAP, owner, name, SIO_A_DEV, dev,
		       NULL);
}

int smartio_resolve_bar(struct smartio *h, unsigned viewer, unsigned dev,
			unsigned bar, char *path, size_t pathlen,
			uint64_t *size)
{
	struct sio_registry *r;
	struct sio_device *d;
	u64 addr;
	int rc;

	if (bar >= SMARTIO_MAX_BARS)
		return -EINVAL;
	sio_lib_lock(h);
	r = REG(h);
	if (dev >= r->ndevices || viewer >= r->nnodes) {
		/* decided under the lock: r may be retired once it is dropped */
		rc = dev >= r->ndevices ? -ENXIO : -ENOENT;
		sio_lib_unlock(h);
		return rc;
	}
	d = sio_dev(r, dev);
	if (!d->bar[bar].size) {
		rc = -ENOENT;
	} else if (d->node == viewer) {
		addr = d->bar[bar].addr;
		rc = 0;
	} else {
		rc = sio_borrow_find(r, dev, viewer);
		if (rc >= 0 && (d->borrowers >> viewer & 1)) {
			addr = sio_borrow_at(r, (u32)rc)->bar_local[bar];
			rc = 0;
		} else {
			rc = -EACCES;
		}
	}
	if (!rc) {
		char barname[16];
		struct sio_lib_mapping m = {
			.viewer = viewer, .addr = addr,
			.size = d->bar[bar].size,
			.a = sio_node(r, viewer)->name, .b = d->name,
			.c = barname,
		};

		snprintf(barname, sizeof(barname), "bar%u", bar);
		rc = h->t->map_path(h, &m, path, pathlen);
	}
	if (!rc && size)
		*size = d->bar[bar].size;
	sio_lib_unlock(h);
	return rc;
}

int smartio_resolve_segment(struct smartio *h, unsigned viewer,
			    unsigned owner, const char *name, char *path,
			    size_t pathlen, uint64_t *size)
{
	struct sio_registry *r;
	struct sio_segment *s;
	u64 addr = 0;
	int seg, rc = -EACCES;
	unsigned i;

	sio_lib_lock(h);
	r = REG(h);
	if (viewer >= r->nnodes || owner >= r->nnodes) {
		sio_lib_unlock(h);
		return -ENOENT;
	}
	seg = sio_seg_lookup(r, owner, name);
	if (seg < 0) {
		sio_lib_unlock(h);
		return seg;
	}
	s = sio_seg(r, (u32)seg);
	if (!s->sized) {
		rc = -ENOENT;
	} else if (viewer == owner) {
		addr = s->phys;
		rc = 0;
	} else {
		for (i = 0; i < r->max_attach; i++) {
			struct sio_attach *a = sio_attach_at(r, i);

			if (a->used && a->seg == (u32)seg && a->node == viewer) {
				addr = a->local_addr;
				rc = 0;
				break;
			}
		}
	}
	if (!rc) {
		struct sio_lib_mapping m = {
			.viewer = viewer, .addr = addr, .size = s->size,
			.a = sio_node(r, owner)->name, .b = "seg", .c = s->name,
		};

		rc = h->t->map_path(h, &m, path, pathlen);
	}
	if (!rc && size)
		*size = s->size;
	sio_lib_unlock(h);
	return rc;
}

int smartio_dma(struct smartio *h, unsigned dev, uint64_t addr, void *buf,
		size_t len, int write)
{
	if (!h->t->dma)
		return -EOPNOTSUPP;	/* a simulated device's DMA only */
	return h->t->dma(h, dev, addr, buf, len, write);
}

uint64_t smartio_blocked(struct smartio *h, unsigned node)
{
	if (!h->t->blocked)
		return 0;	/* smartio.ko does not count them: see the kernel log */
	return h->t->blocked(h, node);
}

uint64_t smartio_event_cursor(struct smartio *h)
{
	uint64_t seq;

	sio_lib_lock(h);
	seq = __atomic_load_n(&REG(h)->event_seq, __ATOMIC_ACQUIRE);
	sio_lib_unlock(h);
	return seq;
}

int smartio_event_read(struct smartio *h, uint64_t *cursor, char *buf,
		       size_t len)
{
	struct sio_registry *r;
	struct sio_event ev;
	u64 head, next = *cursor + 1;
	int n;

	sio_lib_lock(h);
	r = REG(h);
	head = r->event_seq;
	if (next > head) {
		sio_lib_unlock(h);
		return 0;
	}
	if (head - next >= SIO_EVENT_RING) {
		u64 lost = head - SIO_EVENT_RING + 1 - next;

		*cursor = head - SIO_EVENT_RING;
		sio_lib_unlock(h);
		n = snprintf(buf, len, "lost n=%" PRIu64, lost);
		return n < 0 ? -EIO : (int)((size_t)n < len ? (size_t)n : len - 1);
	}
	ev = *sio_event_at(r, next);
	sio_lib_unlock(h);
	*cursor = next;
	n = snprintf(buf, len, "%" PRIu64 " %" PRIu64 ".%09" PRIu64 " %s %s%s%s",
		     ev.seq, (uint64_t)(ev.time_ns / 1000000000u),
		     (uint64_t)(ev.time_ns % 1000000000u), sio_event_kind_name(ev.kind),
		     ev.object, ev.args[0] ? " " : "", ev.args);
	return n < 0 ? -EIO : (int)((size_t)n < len ? (size_t)n : len - 1);
}

uint64_t smartio_change_count(struct smartio *h)
{
	return h->t->change_count(h);
}

int smartio_change_wait(struct smartio *h, uint64_t seen, int timeout_ms)
{
	return h->t->change_wait(h, seen, timeout_ms);
}

int smartio_event_wait(struct smartio *h, uint64_t cursor, int timeout_ms)
{
	return h->t->event_wait(h, cursor, timeout_ms);
}

const char *smartio_strerror(int err)
{
	return strerror(err < 0 ? -err : err);
}
