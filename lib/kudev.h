/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsmartio and smartio.ko's devices through libudev (kudev.c): a monitor
 * that follows the class "smartio" (the fabric device's change uevents
 * carry the registry generation, so waiting costs no netlink request), and
 * an enumeration that finds a BAR's or a segment's character device.
 */
#ifndef SIO_KUDEV_H
#define SIO_KUDEV_H

#include <stddef.h>
#include <stdint.h>

struct sio_kudev;

/*
 * A monitor of class smartio's uevents: after udevd when it runs (the
 * /dev/smartio names exist by then), else straight from the kernel.
 * -EOPNOTSUPP without libudev, -errno when no monitor can be made.
 */
int sio_kudev_open(struct sio_kudev **u);
void sio_kudev_close(struct sio_kudev *u);

/*
 * Waits up to timeout_ms for uevents and takes every one queued.  Returns
 * 1 and the highest SMARTIO_GENERATION among them in *gen (unchanged if
 * none carried one), 0 on timeout, or -errno: -ENOBUFS when uevents were
 * lost (the caller must ask the kernel for the generation itself).
 * Several threads may wait at once; one of them takes the uevents.
 */
int sio_kudev_wait(struct sio_kudev *u, int timeout_ms, uint64_t *gen);

/*
 * The character device of class smartio whose SMARTIO_NODE is node and
 * whose key property equals val (and key2 equals val2 when key2 is set):
 * its /dev/smartio/... name when udev made one, else its /dev node.
 * -ENXIO when there is none, -EOPNOTSUPP without libudev.
 */
int sio_kudev_find(const char *node, const char *key, const char *val,
		   const char *key2, const char *val2, char *path, size_t len);

#endif
