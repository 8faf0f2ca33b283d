// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio: multicast groups of the cluster switches (smartio(7),
 * MULTICAST; lib/core/mcast.c).  Commands go to the core like every other;
 * groups are read from the registry under the fabric lock, and only
 * under it (sio_lib_reg()).
 */
#include <errno.h>
#include <string.h>

#include "smartio_internal.h"

/*
 * The message for cmd on group (its INDEX), with the fabric id of dev
 * when dev is not -1: 0, or -ENXIO for a device that does not exist.
 */
static int mcast_msg(struct smartio *h, struct sio_msg *m, u8 *buf, u32 cap,
		     u8 cmd, unsigned group, long long dev)
{
	struct sio_registry *r;
	int rc = 0;

	sio_msg_init(m, buf, cap, cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(m, SIO_A_INDEX, group);
	if (dev < 0)
		return 0;
	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if ((unsigned long long)dev >= r->ndevices)
		rc = -ENXIO;
	else
		sio_msg_put_u32(m, SIO_A_DEV, sio_dev(r, (u32)dev)->fdid);
	sio_lib_unlock(h);
	return rc;
}

/*
 * cmd on group for node (NODE), with device dev when it is not -1 and
 * attribute attr = val when attr is not 0; the core's errno, and the
 * address its reply carries in *addr when addr is given.
 */
static int node_cmd(struct smartio *h, u8 cmd, unsigned group, long long dev,
		    unsigned node, int attr, u32 val, uint64_t *addr)
{
	u8 buf[128];
	struct sio_msg m;
	int rc = mcast_msg(h, &m, buf, sizeof(buf), cmd, group, dev);

	if (rc)
		return rc;
	sio_msg_put_u32(&m, SIO_A_NODE, node);
	if (attr)
		sio_msg_put_u32(&m, (u16)attr, val);
	return sio_lib_command(h, &m, addr);
}

int smartio_mcast_lookup(struct smartio *h, const char *name)
{
	struct sio_registry *r;
	int rc = -ENOENT;
	u32 i;

	if (!name)
		return -EINVAL;
	sio_lib_lock(h);
	r = sio_lib_reg(h);
	for (i = 0; i < r->max_mcast && rc < 0; i++)
		if (sio_mcast_at(r, i)->used &&
		    !strncmp(sio_mcast_at(r, i)->name, name, SIO_TOPO_NAME))
			rc = (int)i;
	sio_lib_unlock(h);
	return rc;
}

unsigned smartio_mcast_count(struct smartio *h)
{
	return SIO_LIB_REG_COUNT(h, max_mcast);
}

int smartio_mcast_info(struct smartio *h, unsigned group,
		       struct smartio_mcast_info *out)
{
	struct sio_registry *r;
	struct sio_mcast *g;
	int rc = 0;
	u32 k;

	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if (group >= r->max_mcast || !sio_mcast_at(r, group)->used) {
		sio_lib_unlock(h);
		return -ENOENT;
	}
	g = sio_mcast_at(r, group);
	memset(out, 0, sizeof(*out));
	memcpy(out->name, g->name, sizeof(out->name) - 1);
	out->sw = g->sw;
	out->size = g->size;
	out->writes = g->writes;
	out->delivered = g->delivered;
	for (k = 0; k < r->nnodes && k < SIO_MAX_NODES; k++)
		if (g->member[k].kind)
			out->members |= 1ull << k;
	for (k = 0; k < SIO_MCAST_MAPS; k++)
		if (g->map[k].used)
			out->mapped++;
	sio_lib_unlock(h);
	return rc;
}

int smartio_mcast_create(struct smartio *h, const char *name, unsigned sw,
			 uint64_t size)
{
	u8 buf[256];
	struct sio_msg m;
	int rc;

	if (!name || strlen(name) >= SIO_NAME_MAX)
		return -EINVAL;
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_MCAST_CREATE, SIO_F_REQUEST,
		     0);
	sio_msg_put_str(&m, SIO_A_NAME, name);
	sio_msg_put_u32(&m, SIO_A_INDEX, sw);
	sio_msg_put_u64(&m, SIO_A_SIZE, size);
	rc = sio_lib_command(h, &m, NULL);
	return rc ? rc : smartio_mcast_lookup(h, name);
}

int smartio_mcast_destroy(struct smartio *h, unsigned group)
{
	u8 buf[64];
	struct sio_msg m;

	mcast_msg(h, &m, buf, sizeof(buf), SIO_CMD_MCAST_DESTROY, group, -1);
	return sio_lib_command(h, &m, NULL);
}

int smartio_mcast_set_size(struct smartio *h, unsigned group, uint64_t size)
{
	u8 buf[64];
	struct sio_msg m;

	mcast_msg(h, &m, buf, sizeof(buf), SIO_CMD_MCAST_SIZE, group, -1);
	sio_msg_put_u64(&m, SIO_A_SIZE, size);
	return sio_lib_command(h, &m, NULL);
}

int smartio_mcast_dma_addr(struct smartio *h, unsigned group, unsigned dev,
			   uint64_t *ioaddr)
{
	struct sio_registry *r;
	int rc = -ENOENT;
	u32 k;

	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if (group < r->max_mcast && sio_mcast_at(r, group)->used) {
		const struct sio_mcast *g = sio_mcast_at(r, group);

		for (k = 0; k < SIO_MCAST_MAPS && rc; k++)
			if (g->map[k].used && g->map[k].dev == dev) {
				*ioaddr = g->map[k].iova;
				rc = 0;
			}
	}
	sio_lib_unlock(h);
	return rc;
}

int smartio_mcast_join_segment(struct smartio *h, unsigned group,
			       unsigned node, const char *segment)
{
	u8 buf[256];
	struct sio_msg m;

	if (!segment || strlen(segment) >= SIO_NAME_MAX)
		return -EINVAL;
	mcast_msg(h, &m, buf, sizeof(buf), SIO_CMD_MCAST_JOIN, group, -1);
	sio_msg_put_u32(&m, SIO_A_NODE, node);
	sio_msg_put_str(&m, SIO_A_NAME, segment);
	return sio_lib_command(h, &m, NULL);
}

int smartio_mcast_join_bar(struct smartio *h, unsigned group, unsigned node,
			   unsigned dev, unsigned bar)
{
	return node_cmd(h, SIO_CMD_MCAST_JOIN, group, dev, node, SIO_A_KIND,
			bar, NULL);
}

int smartio_mcast_leave(struct smartio *h, unsigned group, unsigned node)
{
	return node_cmd(h, SIO_CMD_MCAST_LEAVE, group, -1, node, 0, 0, NULL);
}

int smartio_mcast_map(struct smartio *h, unsigned group, unsigned dev,
		      unsigned user, uint64_t *ioaddr)
{
	return node_cmd(h, SIO_CMD_MCAST_MAP, group, dev, user, 0, 0, ioaddr);
}

int smartio_mcast_unmap(struct smartio *h, unsigned group, unsigned dev,
			unsigned user)
{
	return node_cmd(h, SIO_CMD_MCAST_UNMAP, group, dev, user, 0, 0, NULL);
}
