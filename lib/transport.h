/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lies behind a libsmartio handle and the two transports that carry
 * its commands and registry reads, one file each: transport_sim.c (the
 * embedded simulated fabric) and transport_kernel.c (smartio.ko, through
 * ktrans.c's generic netlink socket and kudev.c's uevent monitor).
 * libsmartio.c chooses one at open and calls it only through struct
 * sio_lib_transport.  Private to those three files.
 */
#ifndef SIO_LIB_TRANSPORT_H
#define SIO_LIB_TRANSPORT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "smartio.h"
#include "core.h"
#include "sim/fabric.h"

/*
 * A BAR or a segment as viewer sees it: [addr, addr + size) of its
 * address space, which the simulator follows; smartio.ko names its file
 * by the uevent properties a, b and c instead (a node, then a device and
 * "barN", or "seg" and a segment's name).
 */
struct sio_lib_mapping {
	unsigned viewer;
	u64 addr, size;
	const char *a, *b, *c;
};

/*
 * What differs between the two transports, chosen once at open:
 * sio_lib_sim_transport (the embedded simulated fabric, transport_sim.c)
 * or sio_lib_kernel_transport (smartio.ko over generic netlink,
 * transport_kernel.c).  The entries after map_path are the simulator's
 * alone (NULL over smartio.ko, whose links are cables, whose devices do
 * their own DMA, and which logs blocked DMA instead of counting it).
 */
struct sio_lib_transport {
	/* Around every read of the registry (REG). */
	void (*lock)(struct smartio *h);
	void (*unlock)(struct smartio *h);
	/* One protocol message as this handle's node: the reply's length. */
	int (*call)(struct smartio *h, const void *req, u32 len, void *rep,
		    u32 cap);
	void (*close)(struct smartio *h);
	uint64_t (*change_count)(struct smartio *h);
	int (*change_wait)(struct smartio *h, uint64_t seen, int timeout_ms);
	int (*event_wait)(struct smartio *h, uint64_t cursor, int timeout_ms);
	/* The file that maps a BAR or a segment (struct sio_lib_mapping). */
	int (*map_path)(struct smartio *h, const struct sio_lib_mapping *m,
			char *path, size_t pathlen);
	int (*link_set)(struct smartio *h, unsigned node, unsigned adapter,
			int up);
	int (*dma)(struct smartio *h, unsigned dev, uint64_t addr, void *buf,
		   size_t len, int write);
	uint64_t (*blocked)(struct smartio *h, unsigned node);
};

struct smartio {
	const struct sio_lib_transport *t;
	struct sim_fabric f;	/* embedded fabric, unused with k */
	/*
	 * The registry queries read, valid only between sio_lib_lock() and
	 * sio_lib_unlock(): the fabric's shared one, or with k (and with the
	 * test hook sio_lib_copy_registry()) a copy that the next lock of any
	 * thread may free.
	 */
	struct sio_registry *reg;
	/* The test hook: two copies, the one not current kept unreadable. */
	int copy;
	u32 copy_change;	/* the fabric's change count it was taken at */
	unsigned copy_cur;
	void *copies[2];
	unsigned self;
	struct sio_ktrans *k;	/* kernel transport: smartio.ko */
	/* With k: one user of the socket and of the registry copy at a time. */
	pthread_mutex_t klock;
	/*
	 * With k: the monitor of smartio.ko's uevents (NULL without libudev
	 * or when none can be made: then the generation is polled), the
	 * kernel's generation as last learnt (atomic), and when it was last
	 * asked for (klock).
	 */
	struct sio_kudev *u;
	uint64_t kgen;
	uint64_t kgen_asked_ms;
};

#define REG(h) ((h)->reg)

extern const struct sio_lib_transport sio_lib_sim_transport;
extern const struct sio_lib_transport sio_lib_kernel_transport;

/*
 * Each transport's open, for a calloc()ed h: 0 with h ready and h->t
 * its transport, or -errno with nothing held.
 */
int sio_lib_open_sim(struct smartio *h, const struct smartio_open_opts *o);
int sio_lib_open_kernel(struct smartio *h, const struct smartio_open_opts *o);

static inline uint64_t sio_lib_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
