// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * REG_READ: registry bytes [OFFSET, OFFSET + SIZE) for a user of this
 * node, with the registry's total size (SIZE) and the generation (SEQ);
 * SIZE 0 asks for the generation alone, which is how libsmartio checks
 * that its copy is still current.  smartio.ko's users have no shared
 * mapping of the registry, so libsmartio queries it this way; the bytes
 * are struct sio_registry and its tables as registry.h lays them out,
 * a layout smartio(4) freezes for SIO_GENL_VERSION 1.  Only this node's
 * users may read (origin SIO_FROM_LOCAL): a peer has its own copies.
 */
#include "core_int.h"

int sio_h_reg_read(struct sio_core *c, u32 self, const struct sio_parsed *p,
		   struct sio_msg *rep)
{
	u64 off = sio_nla_u64(&p->tb[SIO_A_OFFSET]);
	u64 size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	u64 total = c->reg->total_size;
	u8 *data;

	(void)self;
	if (off > total || size > SIO_DATA_MAX)
		return -EINVAL;
	if (size > total - off)
		size = total - off;
	sio_msg_put_u64(rep, SIO_A_SIZE, total);
	sio_msg_put_u64(rep, SIO_A_SEQ,
			c->ops->generation ? c->ops->generation(c->plat) : 0);
	data = sio_msg_reserve(rep, SIO_A_DATA, (u32)size);
	if (data)
		sio_memcpy(data, (const u8 *)c->reg + off, size);
	return rep->err;
}
