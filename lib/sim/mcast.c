// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Multicast in the simulated switches (SmartIO section 6.5; the groups
 * are the core's, lib/core/mcast.c).  A device's write into a group
 * leaves its node by the adapter cabled to the group's switch (or to one
 * cascaded with it), and the switches send it out on the port of every
 * member; the member's adapter puts it
 * at the same offset of the member's buffer (its overlay BAR).  A member
 * whose node or link is down gets nothing, as a port with nobody behind
 * it drops the copy.  The simulator makes the copies one after another,
 * but paces them as the switch sends them, together: the write takes the
 * time of one over the slowest member's path (sim_pace_reserve_many).
 */
#include <errno.h>
#include <string.h>

#include "fabric.h"

/* Where member node k puts [off, off + len) of the group: 0 or -ENOENT.
 * fabric: the switches the group's write goes through (a mask). */
static int member_loc(struct sim_fabric *f, const struct sio_mcast *g, u32 k,
		      u32 fabric, u64 off, size_t len, struct sim_loc *loc)
{
	struct sio_registry *r = f->reg;
	const struct sio_mcast_member *m = &g->member[k];

	if (!m->kind || sio_fabric_adapter(r, k, fabric, 1) < 0 ||
	    sio_node(r, k)->state != SIO_NODE_UP)
		return -ENOENT;
	loc->node = k;
	loc->index = m->index;
	loc->offset = off;
	if (m->kind == SIO_MCAST_SEG) {
		const struct sio_segment *s = sio_seg(r, m->index);

		if (!s->used || !s->sized || s->owner != k || s->size < off + len)
			return -ENOENT;
		loc->kind = SIM_LOC_RAM;
	} else {
		const struct sio_device *d = sio_dev(r, m->index);

		if (d->node != k || d->bar[m->bar].size < off + len)
			return -ENOENT;
		loc->kind = SIM_LOC_BAR;
		loc->bar = m->bar;
	}
	return 0;
}

int sim_mcast_write(struct sim_fabric *f, u32 dev, u32 group, u64 off,
		    void *buf, size_t len, u64 *done_ns)
{
	struct sio_registry *r = f->reg;
	struct sim_loc loc[SIO_MAX_NODES];
	struct sim_dmakey key[SIO_MAX_NODES];
	struct sio_mcast *g;
	u32 n = 0, k, fabric;
	u64 missed;
	s32 out;
	int err = 0;

	sim_lock(f);
	g = sio_mcast_at(r, group);
	fabric = sio_switch_fabric(r, g->sw);
	out = sio_fabric_adapter(r, sio_dev(r, dev)->node, fabric, 1);
	if (!g->used || off >= g->size || len > g->size - off || out < 0)
		err = -EFAULT;	/* gone meanwhile, or no way to the switch */
	for (k = 0; !err && k < r->nnodes; k++) {
		memset(&loc[n], 0, sizeof(loc[n]));
		loc[n].adapter = out;
		if (!member_loc(f, g, k, fabric, off, len, &loc[n]) &&
		    !sim_dmakey_of(f, &loc[n], &key[n]))
			n++;
	}
	if (!err) {
		g->writes++;
		g->delivered += n;
		if (f->pace)
			*done_ns = sim_pace_reserve_many(f, dev, loc, n, len, 1);
	}
	sim_unlock(f);
	missed = err ? 0 : sim_dmamap_write_many(f, loc, key, n, buf, len);
	for (k = 0; !err && k < n; k++)
		if (missed >> k & 1)
			err = sim_loc_copy(f, &loc[k], &key[k], buf, len, 1);
	return err;
}
