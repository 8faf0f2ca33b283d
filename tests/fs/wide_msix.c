// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * For tests/fs/test_irq_wide_vectors.py: gives a simulated device the
 * interrupt routing that a function with a full 2048-entry MSI-X table
 * would get, and fires its vectors.  No device model has more than 16
 * vectors, yet /smartio must name vectors up to 2047 (PCIe's MSI-X
 * maximum); this writes what msi.c would record for such a function
 * (mode, count, node, base) under the fabric lock, and counts a message
 * where the simulated interrupt controller counts one (lib/sim/sio_plat.c).
 *
 *   wide_msix FABRIC JOIN-AS route DEV NODE COUNT
 *   wide_msix FABRIC JOIN-AS fire DEV VEC
 *   wide_msix FABRIC JOIN-AS unroute DEV
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "smartio_internal.h"

static unsigned num(const char *s, unsigned max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > max) {
		fprintf(stderr, "wide_msix: bad number '%s'\n", s);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	struct smartio_open_opts oo = { 0 };
	struct sio_registry *r;
	struct sio_device *d;
	struct smartio *h;
	int dev, node, rc;

	if (argc < 5) {
		fprintf(stderr, "usage: wide_msix FABRIC JOIN-AS "
			"route DEV NODE COUNT | fire DEV VEC | unroute DEV\n");
		return 2;
	}
	oo.fabric = argv[1];
	oo.node = argv[2];
	rc = smartio_open(&h, &oo);
	if (rc) {
		fprintf(stderr, "wide_msix: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	dev = smartio_device_find(h, argv[4]);
	if (dev < 0) {
		fprintf(stderr, "wide_msix: no device %s\n", argv[4]);
		return 1;
	}
	sio_lib_lock(h);
	r = sio_lib_reg(h);
	d = sio_dev(r, (unsigned)dev);
	rc = 0;
	if (!strcmp(argv[3], "route") && argc == 7) {
		node = sio_node_lookup(r, argv[5]);
		if (node < 0) {
			rc = 1;
		} else {
			d->irq_mode = SIO_IRQ_MSIX;
			d->irq_node = (u16)node;
			d->irq_base = 0;
			d->irq_count = (u16)num(argv[6], SIO_DEV_IRQ_MAX);
		}
	} else if (!strcmp(argv[3], "fire") && argc == 6) {
		unsigned vec = num(argv[5], SIO_DEV_IRQ_MAX - 1);

		if (d->irq_mode == SIO_IRQ_NONE || vec >= d->irq_count)
			rc = 1;
		else
			sim_node_hw(sio_lib_fabric(h), d->irq_node)
				->msi_count[d->irq_base + vec]++;
	} else if (!strcmp(argv[3], "unroute") && argc == 5) {
		d->irq_mode = SIO_IRQ_NONE;
		d->irq_count = 0;
	} else {
		rc = 2;
	}
	sio_lib_unlock(h);
	smartio_close(h);
	if (rc)
		fprintf(stderr, "wide_msix: %s refused\n", argv[3]);
	return rc;
}
