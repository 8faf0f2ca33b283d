// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio's kernel transport: commands go to smartio.ko as generic
 * netlink messages (ktrans.c), and queries read a copy of its registry
 * that every lock refreshes and the next lock of any thread may free, so
 * smartiofs's threads take turns (klock).  Changes are followed by
 * smartio.ko's generation, from its uevents (kudev.c) or polled.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ktrans.h"
#include "kudev.h"
#include "transport.h"

static void kernel_lock(struct smartio *h)
{
	void *reg;

	pthread_mutex_lock(&h->klock);
	if (!sio_ktrans_registry(h->k, &reg))
		h->reg = reg;
}

static void kernel_unlock(struct smartio *h)
{
	pthread_mutex_unlock(&h->klock);
}

/* The kernel's node list stands for the cluster; self is host0 or o->node. */
int sio_lib_open_kernel(struct smartio *h, const struct smartio_open_opts *o)
{
	void *reg;
	int rc = sio_ktrans_open(&h->k), node;

	if (rc)
		return rc;
	pthread_mutex_init(&h->klock, NULL);
	if (sio_kudev_open(&h->u))
		h->u = NULL;	/* no libudev or no monitor: poll */
	rc = sio_ktrans_registry(h->k, &reg);
	if (!rc) {
		h->reg = reg;
		node = o->node ? sio_node_lookup(REG(h), o->node) : 0;
		rc = node < 0 ? -ENOENT : 0;
		h->self = node < 0 ? 0 : (unsigned)node;
	}
	if (!rc) {
		h->t = &sio_lib_kernel_transport;
		return 0;
	}
	sio_kudev_close(h->u);
	h->u = NULL;
	sio_ktrans_close(h->k);
	pthread_mutex_destroy(&h->klock);
	h->k = NULL;
	return rc;
}

static void kernel_close(struct smartio *h)
{
	sio_kudev_close(h->u);
	sio_ktrans_close(h->k);
	pthread_mutex_destroy(&h->klock);
}

static int kernel_call(struct smartio *h, const void *req, u32 len,
		       void *rep, u32 cap)
{
	int n;

	pthread_mutex_lock(&h->klock);
	n = sio_ktrans_call(h->k, req, len, rep, cap);
	pthread_mutex_unlock(&h->klock);
	return n;
}

/*
 * smartio.ko's character device for a BAR or a segment, found with libudev
 * by its uevent properties (a node, SMARTIO_DEVICE and SMARTIO_BAR, or an
 * owner and SMARTIO_SEGMENT): the name udev/60-smartio.rules gives it
 * (/dev/smartio/a/b/c) when udev made one, else the kernel's /dev/sio-a-b-c.
 * Without libudev the two names are tried in turn.
 */
static int kernel_path(struct smartio *h, const struct sio_lib_mapping *m,
		       char *path, size_t pathlen)
{
	static const char *const dirs[] = { "/dev/smartio/", "/dev/sio-" };
	static const char seps[] = { '/', '-' };
	const char *a = m->a, *b = m->b, *c = m->c;
	unsigned i;
	int n;

	(void)h;

	n = strcmp(b, "seg") ?
		sio_kudev_find(a, "SMARTIO_DEVICE", b, "SMARTIO_BAR", c + 3,
			       path, pathlen) :
		sio_kudev_find(a, "SMARTIO_SEGMENT", c, NULL, NULL, path,
			       pathlen);
	if (n != -EOPNOTSUPP)
		return n;
	for (i = 0; i < 2; i++) {
		n = snprintf(path, pathlen, "%s%s%c%s%c%s", dirs[i], a,
			     seps[i], b, seps[i], c);
		if (n < 0 || (size_t)n >= pathlen)
			return -ENAMETOOLONG;
		if (!access(path, F_OK))
			return 0;
	}
	return -ENXIO;
}

/*
 * smartio.ko: its generation moves with every change of its registry or
 * events.  With a udev monitor, the fabric device's change uevents carry
 * it, so following the kernel costs no request; the kernel is still asked
 * every KERNEL_RESYNC_MS (and after uevents were lost), so that a monitor
 * that went quiet (udevd stopped) delays a change, never hides it.
 * Without a monitor, the kernel is asked every KERNEL_POLL_MS.
 */
#define KERNEL_RESYNC_MS 5000
#define KERNEL_POLL_MS 50

static uint64_t kernel_generation(struct smartio *h)
{
	uint64_t now = sio_lib_mono_ms(), gen;

	pthread_mutex_lock(&h->klock);
	if (!h->u || now - h->kgen_asked_ms >= KERNEL_RESYNC_MS) {
		if (!sio_ktrans_generation(h->k, &gen))
			__atomic_store_n(&h->kgen, gen, __ATOMIC_RELEASE);
		h->kgen_asked_ms = now;
	}
	pthread_mutex_unlock(&h->klock);
	return __atomic_load_n(&h->kgen, __ATOMIC_ACQUIRE);
}

static int kernel_wait(struct smartio *h, uint64_t seen, int timeout_ms)
{
	uint64_t start = sio_lib_mono_ms(), gen, cur;
	int left, slice, rc;

	for (;;) {
		if (kernel_generation(h) != seen)
			return 1;
		left = timeout_ms < 0 ? KERNEL_RESYNC_MS :
			timeout_ms - (int)(sio_lib_mono_ms() - start);
		if (left <= 0)
			return 0;
		if (!h->u) {
			slice = left < KERNEL_POLL_MS ? left : KERNEL_POLL_MS;
			usleep((useconds_t)slice * 1000u);
			continue;
		}
		gen = __atomic_load_n(&h->kgen, __ATOMIC_ACQUIRE);
		rc = sio_kudev_wait(h->u, left < KERNEL_RESYNC_MS ? left :
				    KERNEL_RESYNC_MS, &gen);
		if (rc < 0) {
			/* uevents lost: ask the kernel at the next check */
			pthread_mutex_lock(&h->klock);
			h->kgen_asked_ms = 0;
			pthread_mutex_unlock(&h->klock);
			continue;
		}
		cur = __atomic_load_n(&h->kgen, __ATOMIC_ACQUIRE);
		while (gen > cur &&
		       !__atomic_compare_exchange_n(&h->kgen, &cur, gen, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE))
			;
	}
}

/* smartio.ko: the events are looked at only when the generation moved. */
static int kernel_event_wait(struct smartio *h, uint64_t cursor, int timeout_ms)
{
	uint64_t start = sio_lib_mono_ms(), seen;
	int left = timeout_ms;

	for (;;) {
		seen = kernel_generation(h);
		if (smartio_event_cursor(h) > cursor)
			return 1;
		if (timeout_ms >= 0) {
			left = timeout_ms - (int)(sio_lib_mono_ms() - start);
			if (left <= 0)
				return 0;
		}
		if (!kernel_wait(h, seen, left))
			return 0;
	}
}

const struct sio_lib_transport sio_lib_kernel_transport = {
	.lock = kernel_lock,
	.unlock = kernel_unlock,
	.call = kernel_call,
	.close = kernel_close,
	.change_count = kernel_generation,
	.change_wait = kernel_wait,
	.event_wait = kernel_event_wait,
	.map_path = kernel_path,
};
