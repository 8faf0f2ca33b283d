// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio and smartio.ko's devices through libudev; see kudev.h.
 *
 * libudev objects are not thread-safe, so the monitor is drained under a
 * mutex; poll() on its socket needs none, so any number of threads sleep
 * on it at once and whichever wakes first takes the uevents (the others
 * find the new generation in the library's copy and return too).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "kudev.h"

#ifdef HAVE_LIBUDEV
#include <libudev.h>

struct sio_kudev {
	struct udev *udev;
	struct udev_monitor *mon;
	pthread_mutex_t lock;
	int fd;
};

int sio_kudev_open(struct sio_kudev **up)
{
	struct sio_kudev *u = calloc(1, sizeof(*u));
	/*
	 * udevd's copy of a uevent comes after its rules ran (the names in
	 * /dev/smartio exist by then); without udevd, the kernel's own.
	 */
	const char *source = access("/run/udev/control", F_OK) ? "kernel"
							       : "udev";
	int rc = -ENOMEM;

	if (!u)
		return rc;
	pthread_mutex_init(&u->lock, NULL);
	u->udev = udev_new();
	if (!u->udev)
		goto fail;
	u->mon = udev_monitor_new_from_netlink(u->udev, source);
	rc = -errno ? -errno : -EIO;
	if (!u->mon)
		goto fail;
	if (udev_monitor_filter_add_match_subsystem_devtype(u->mon, "smartio",
							    NULL) < 0 ||
	    udev_monitor_enable_receiving(u->mon) < 0) {
		rc = -errno ? -errno : -EIO;
		goto fail;
	}
	u->fd = udev_monitor_get_fd(u->mon);
	*up = u;
	return 0;
fail:
	sio_kudev_close(u);
	return rc;
}

void sio_kudev_close(struct sio_kudev *u)
{
	if (!u)
		return;
	if (u->mon)
		udev_monitor_unref(u->mon);
	if (u->udev)
		udev_unref(u->udev);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

/* Takes the queued uevents: how many, or -ENOBUFS if some were lost. */
static int drain(struct sio_kudev *u, uint64_t *gen)
{
	struct udev_device *d;
	const char *v;
	int n = 0, lost = 0;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		errno = 0;
		d = udev_monitor_receive_device(u->mon);
		if (!d) {
			/* After an overflow the queue goes on: read on. */
			if (errno == ENOBUFS && lost++ < 4)
				continue;
			break;	/* EAGAIN: drained */
		}
		v = udev_device_get_property_value(d, "SMARTIO_GENERATION");
		if (v) {
			uint64_t g = strtoull(v, NULL, 10);

			if (g > *gen)
				*gen = g;
		}
		udev_device_unref(d);
		n++;
	}
	pthread_mutex_unlock(&u->lock);
	return lost ? -ENOBUFS : n;
}

int sio_kudev_wait(struct sio_kudev *u, int timeout_ms, uint64_t *gen)
{
	struct pollfd p = { .fd = u->fd, .events = POLLIN };
	int n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 0;
	n = drain(u, gen);
	return n < 0 ? n : 1;
}

int sio_kudev_find(const char *node, const char *key, const char *val,
		   const char *key2, const char *val2, char *path, size_t len)
{
	struct udev *udev = udev_new();
	struct udev_enumerate *e = NULL;
	struct udev_list_entry *it, *l;
	int rc = -ENXIO;

	if (!udev)
		return -ENOMEM;
	e = udev_enumerate_new(udev);
	/* One property to enumerate by (several would be or-ed), then all. */
	if (!e || udev_enumerate_add_match_subsystem(e, "smartio") < 0 ||
	    udev_enumerate_add_match_property(e, key, val) < 0 ||
	    udev_enumerate_scan_devices(e) < 0) {
		rc = -EIO;
		goto out;
	}
	udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d = udev_device_new_from_syspath(
			udev, udev_list_entry_get_name(it));
		const char *dn, *n, *v2;

		if (!d)
			continue;
		n = udev_device_get_property_value(d, "SMARTIO_NODE");
		v2 = key2 ? udev_device_get_property_value(d, key2) : NULL;
		dn = udev_device_get_devnode(d);
		if (!dn || !n || strcmp(n, node) ||
		    (key2 && (!v2 || strcmp(v2, val2)))) {
			udev_device_unref(d);
			continue;
		}
		/* udev/60-smartio.rules' name when it made one. */
		udev_list_entry_foreach(l, udev_device_get_devlinks_list_entry(d))
			if (!strncmp(udev_list_entry_get_name(l),
				     "/dev/smartio/", 13)) {
				dn = udev_list_entry_get_name(l);
				break;
			}
		rc = (size_t)snprintf(path, len, "%s", dn) < len ? 0
								: -ENAMETOOLONG;
		udev_device_unref(d);
		break;
	}
out:
	if (e)
		udev_enumerate_unref(e);
	udev_unref(udev);
	return rc;
}

#else /* !HAVE_LIBUDEV */

int sio_kudev_open(struct sio_kudev **u)
{
	(void)u;
	return -EOPNOTSUPP;
}

void sio_kudev_close(struct sio_kudev *u)
{
	(void)u;
}

int sio_kudev_wait(struct sio_kudev *u, int timeout_ms, uint64_t *gen)
{
	(void)u, (void)timeout_ms, (void)gen;
	return -EOPNOTSUPP;
}

int sio_kudev_find(const char *node, const char *key, const char *val,
		   const char *key2, const char *val2, char *path, size_t len)
{
	(void)node, (void)key, (void)val, (void)key2, (void)val2;
	(void)path, (void)len;
	return -EOPNOTSUPP;
}
#endif
