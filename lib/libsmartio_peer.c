// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio: peer-to-peer mappings between devices (smartio(7),
 * dev/<dev>/peers/).  Commands go to the core like every other; the
 * addresses are read from the registry under the fabric lock, and only
 * under it (sio_lib_reg()).
 */
#include <errno.h>

#include "smartio_internal.h"

static int peer_cmd(struct smartio *h, u8 cmd, unsigned dev, unsigned peer,
		    unsigned asker)
{
	struct sio_registry *r;
	u8 buf[256];
	struct sio_msg m;
	u32 dev_id, peer_id;
	int rc = 0;

	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if (dev >= r->ndevices || peer >= r->ndevices)
		rc = -ENXIO;
	else if (asker >= r->nnodes)
		rc = -ENOENT;
	else {
		dev_id = sio_dev(r, dev)->fdid;
		peer_id = sio_dev(r, peer)->fdid;
	}
	sio_lib_unlock(h);
	if (rc)
		return rc;
	sio_msg_init(&m, buf, sizeof(buf), cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_DEV, dev_id);
	sio_msg_put_u32(&m, SIO_A_NODE, asker);
	sio_msg_put_u32(&m, SIO_A_INDEX, peer_id);
	return sio_lib_command(h, &m, NULL);
}

int smartio_peer_map(struct smartio *h, unsigned dev, unsigned peer,
		     unsigned asker)
{
	return peer_cmd(h, SIO_CMD_PEER_MAP, dev, peer, asker);
}

int smartio_peer_unmap(struct smartio *h, unsigned dev, unsigned peer,
		       unsigned asker)
{
	return peer_cmd(h, SIO_CMD_PEER_UNMAP, dev, peer, asker);
}

int smartio_peer_addr(struct smartio *h, unsigned dev, unsigned peer,
		      unsigned bar, uint64_t *addr)
{
	struct sio_registry *r;
	int rc = -ENOENT;
	u32 i;

	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if (dev >= r->ndevices || peer >= r->ndevices) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->kind != SIO_PEERMAP_EXPOSED &&
		    m->dev == dev && m->peer == peer && m->bar == bar) {
			*addr = m->ioaddr;
			rc = 0;
			break;
		}
	}
	sio_lib_unlock(h);
	return rc;
}

int smartio_peers(struct smartio *h, unsigned dev, unsigned *peers,
		  unsigned max)
{
	struct sio_registry *r;
	unsigned n = 0, last = 0;
	int any = 0;
	u32 i;

	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if (dev >= r->ndevices) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	/* Ascending by device index: repeated passes for the next larger. */
	for (;;) {
		unsigned next = 0;
		int found = 0;

		for (i = 0; i < r->max_peermap; i++) {
			struct sio_peermap *m = sio_peermap_at(r, i);

			if (!m->used || m->kind == SIO_PEERMAP_EXPOSED ||
			    m->dev != dev || (any && m->peer <= last))
				continue;
			if (!found || m->peer < next)
				next = m->peer;
			found = 1;
		}
		if (!found)
			break;
		if (n < max)
			peers[n] = next;
		n++;
		last = next;
		any = 1;
	}
	sio_lib_unlock(h);
	return (int)n;
}
