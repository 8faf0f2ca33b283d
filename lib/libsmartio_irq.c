// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio: the interrupt routing of devices (smartio(7), msi and irq/).
 * Reads the registry and the simulated nodes' interrupt counters under the
 * fabric lock, and only under it (sio_lib_reg()).
 */
#include <errno.h>
#include <string.h>

#include "smartio_internal.h"

int smartio_msi_vectors(struct smartio *h, unsigned dev,
			struct smartio_msi_vector *out, unsigned max)
{
	struct sio_registry *r;
	struct sio_device *d;
	unsigned i, n;

	sio_lib_lock(h);
	r = sio_lib_reg(h);
	if (dev >= r->ndevices) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	d = sio_dev(r, dev);
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

	if (sio_lib_is_kernel(h))
		return -EOPNOTSUPP;	/* real vectors count in /proc/interrupts */
	sio_lib_lock(h);
	if (dev >= sio_lib_reg(h)->ndevices) {
		sio_lib_unlock(h);
		return -ENXIO;
	}
	d = sio_dev(sio_lib_reg(h), dev);
	if (d->irq_mode != SIO_IRQ_NONE && vec < d->irq_count) {
		*count = sim_node_hw(f, d->irq_node)->msi_count[d->irq_base + vec];
		rc = 0;
	}
	sio_lib_unlock(h);
	return rc;
}
