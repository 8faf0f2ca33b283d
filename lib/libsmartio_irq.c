// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio: the interrupt routing of devices (smartio(7), msi and irq/).
 * Reads the registry and the simulated nodes' interrupt counters under the
 * fabric lock.
 */
#include <errno.h>
#include <string.h>

#include "smartio_internal.h"

int smartio_msi_vectors(struct smartio *h, unsigned dev,
			struct smartio_msi_vector *out, unsigned max)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	struct sio_device *d;
	unsigned i, n;

	if (dev >= f->reg->ndevices)
		return -ENXIO;
	sio_lib_lock(h);
	d = sio_dev(f->reg, dev);
	n = d->irq_mode == SIO_IRQ_NONE ? 0 : d->irq_count;
	for (i = 0; i < n && i < max; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].vec = i;
		out[i].node = d->irq_node;
		out[i].addr = d->irq_addr;
		out[i].data = d->irq_base + i;
		out[i].msix = d->irq_mode == SIO_IRQ_MSIX;
	}
	sio_lib_unlock(h);
	return (int)n;
}

int smartio_irq_count(struct smartio *h, unsigned dev, unsigned vec,
		      uint64_t *count)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	struct sio_device *d;
	int rc = -ENOENT;

	if (dev >= f->reg->ndevices)
		return -ENXIO;
	if (sio_lib_is_kernel(h))
		return -EOPNOTSUPP;	/* real vectors count in /proc/interrupts */
	sio_lib_lock(h);
	d = sio_dev(f->reg, dev);
	if (d->irq_mode != SIO_IRQ_NONE && vec < d->irq_count) {
		*count = sim_node_hw(f, d->irq_node)->msi_count[d->irq_base + vec];
		rc = 0;
	}
	sio_lib_unlock(h);
	return rc;
}
