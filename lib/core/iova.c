// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A node's IOMMU address space (its range `iova` in the registry): an
 * address of it mapped for one requester onto a target (a BAR, a multicast
 * group, a segment), and given back.  Every user of that space takes and
 * returns addresses through these two, so the range and the platform's
 * mappings stay in step.
 */
#include "core_int.h"

/*
 * Takes size bytes of node's IOVA space and maps them for (src, rid) onto
 * phys; the address in *iova.  Nothing is kept on failure.
 */
int sio_iova_map(struct sio_core *c, u32 node, u32 src, u16 rid, u64 phys,
		 u64 size, u64 *iova)
{
	struct sio_range *space = &sio_node(c->reg, node)->iova;
	int err = sio_range_alloc(space, size, SIO_PAGE, iova);

	if (err)
		return err;
	err = c->ops->iommu_map(c->plat, node, src, rid, *iova, phys, size);
	if (err)
		sio_range_free(space, *iova);
	return err;
}

/* Undoes sio_iova_map: the platform's mapping, then the address. */
void sio_iova_unmap(struct sio_core *c, u32 node, u32 src, u16 rid, u64 iova)
{
	c->ops->iommu_unmap(c->plat, node, src, rid, iova);
	sio_range_free(&sio_node(c->reg, node)->iova, iova);
}
