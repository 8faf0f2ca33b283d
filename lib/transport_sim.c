// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio's simulator transport: commands are encoded as protocol
 * messages and handed to the core of the embedded simulated fabric, as
 * transport_kernel.c hands them to smartio.ko over generic netlink.
 * Queries read the shared registry under the fabric lock, and only under
 * it (the test hook sio_lib_copy_registry() makes them read a copy, as
 * over smartio.ko).  The simulator's alone: links that go down, devices'
 * DMA, and blocked transactions counted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "smartio_internal.h"
#include "sim/topology_parse.h"
#include "transport.h"

/*
 * The kernel transport's way with its copy, over the simulated fabric: a
 * lock that finds the registry changed since the last copy copies it into
 * the other of two buffers and makes that one current (the kernel
 * transport swaps its two buffers likewise, and reallocates one when the
 * size changes).  The buffer no longer current is PROT_NONE until it is
 * used again, so that a read of the registry outside the lock faults at
 * once (tests/test_registry_race.c), with or without AddressSanitizer.
 */
static void copy_registry(struct smartio *h)
{
	size_t size = h->f.sh->reg_size;
	u32 change = __atomic_load_n(&h->f.sh->change, __ATOMIC_ACQUIRE);
	unsigned next = h->copy_cur ^ 1;

	if (h->reg != h->f.reg && change == h->copy_change)
		return;
	if (!h->copies[next]) {
		void *c = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			return;	/* the last copy stays */
		h->copies[next] = c;
	} else if (mprotect(h->copies[next], size, PROT_READ | PROT_WRITE)) {
		return;
	}
	memcpy(h->copies[next], h->f.reg, size);
	if (h->reg == h->copies[h->copy_cur])
		mprotect(h->reg, size, PROT_NONE);
	h->copy_cur = next;
	h->copy_change = change;
	h->reg = h->copies[next];
}

static void copies_free(struct smartio *h)
{
	unsigned i;

	for (i = 0; i < 2; i++)
		if (h->copies[i])
			munmap(h->copies[i], h->f.sh->reg_size);
}

static void sim_transport_lock(struct smartio *h)
{
	sim_lock(&h->f);
	if (h->copy)
		copy_registry(h);
}

static void sim_transport_unlock(struct smartio *h)
{
	sim_unlock(&h->f);
}

/*
 * errbuf's reason for a node of mask that another live process serves
 * (sim_fabric_serve's -EBUSY): which node, and which process holds it.
 */
static void busy_reason(struct smartio *h, u64 mask,
			const struct smartio_open_opts *o)
{
	const char *fabric = o->fabric ? o->fabric : "default";
	u32 i;

	if (!o->errbuf || !o->errlen)
		return;
	sio_lib_lock(h);
	for (i = 0; i < REG(h)->nnodes; i++) {
		s32 pid = sim_node_hw(&h->f, i)->owner_pid;

		if (!(mask >> i & 1) || pid == getpid() ||
		    sio_node(REG(h), i)->state != SIO_NODE_UP)
			continue;
		snprintf(o->errbuf, o->errlen,
			 "node %s of fabric '%s' is already served by process %d",
			 sio_node(REG(h), i)->name, fabric, (int)pid);
		break;
	}
	sio_lib_unlock(h);
}

/*
 * Joins (or creates, as o says) the simulated fabric o->fabric and serves
 * o->node of it, or all its nodes.
 */
int sio_lib_open_sim(struct smartio *h, const struct smartio_open_opts *o)
{
	struct sio_topology topo = { 0 };
	struct sim_open so = { 0 };
	char err[256] = "";
	u64 mask;
	int rc, node = -1;

	if (o->create != 0) {
		rc = o->topology ? sio_topo_load(o->topology, &topo, err, sizeof(err))
				 : sio_topo_default(&topo);
		if (rc) {
			if (o->topology && o->errbuf && o->errlen)
				snprintf(o->errbuf, o->errlen, "%s: %s",
					 o->topology, err);
			return rc;
		}
	}
	so.name = o->fabric ? o->fabric : "default";
	so.shm_dir = o->shm_dir;
	so.group = o->group;
	so.err = o->errbuf;
	so.errlen = o->errlen;
	so.topo = o->create != 0 ? &topo : NULL;
	so.create = o->node ? (o->create == 1 ? 1 : o->create) : o->create;
	rc = sim_fabric_open(&h->f, &so);
	sio_topo_free(&topo);
	if (rc)
		return rc;
	h->t = &sio_lib_sim_transport;
	h->reg = h->f.reg;
	if (o->node) {
		sio_lib_lock(h);
		node = sio_node_lookup(REG(h), o->node);
		sio_lib_unlock(h);
		if (node < 0) {
			/* A note of a rebuilt fabric is no reason. */
			if (o->errbuf && o->errlen)
				o->errbuf[0] = '\0';
			sim_fabric_close(&h->f);
			return -ENOENT;
		}
		mask = 1ull << node;
		h->self = (unsigned)node;
	} else {
		mask = sio_all_nodes((u32)smartio_node_count(h));
		h->self = 0;
	}
	rc = sim_fabric_serve(&h->f, mask);
	if (rc) {
		if (o->errbuf && o->errlen)
			o->errbuf[0] = '\0';	/* as above */
		if (rc == -EBUSY)
			busy_reason(h, mask, o);
		sim_fabric_close(&h->f);
		return rc;
	}
	return 0;
}

static void sim_transport_close(struct smartio *h)
{
	copies_free(h);
	sim_fabric_close(&h->f);
}

static int sim_transport_link_set(struct smartio *h, unsigned node,
				  unsigned adapter, int up)
{
	int rc;

	if (up != 0 && up != 1)
		return -EINVAL;
	sim_lock(&h->f);
	rc = sio_core_link_set(&h->f.core, node, adapter, up);
	sim_unlock(&h->f);
	/* A borrow that ended is over only when its mappings are. */
	sim_revoke_settle(&h->f);
	return rc;
}

static int sim_transport_call(struct smartio *h, const void *req, u32 len,
			      void *rep, u32 cap)
{
	int n;

	sio_lib_lock(h);
	n = sio_core_dispatch(&h->f.core, h->self, req, len, rep, cap);
	sio_lib_unlock(h);
	/* A borrow that ended is over only when its mappings are. */
	sim_revoke_settle(&h->f);
	return n;
}

/* The simulator's file behind what viewer's address leads to. */
static int resolve(struct smartio *h, const struct sio_lib_mapping *m,
		   char *path, size_t pathlen)
{
	struct sim_loc loc;
	int rc = sim_translate_cpu(&h->f, m->viewer, m->addr, m->size, &loc);

	if (rc)
		return rc == -EFAULT ? -ENXIO : rc;
	return sim_backing_path(&h->f, &loc, path, pathlen);
}

static int sim_transport_dma(struct smartio *h, unsigned dev, uint64_t addr,
			     void *buf, size_t len, int write)
{
	return sim_dma(&h->f, dev, addr, buf, len, write);
}

static uint64_t sim_transport_blocked(struct smartio *h, unsigned node)
{
	uint64_t n = 0;

	sio_lib_lock(h);
	if (node < REG(h)->nnodes)
		n = sim_node_hw(&h->f, node)->blocked;
	sio_lib_unlock(h);
	return n;
}

static uint64_t sim_transport_change_count(struct smartio *h)
{
	return __atomic_load_n(&h->f.sh->change, __ATOMIC_ACQUIRE);
}

static int sim_transport_change_wait(struct smartio *h, uint64_t seen,
				     int timeout_ms)
{
	return sim_wait_change(&h->f, (u32)seen, timeout_ms);
}

static int sim_transport_event_wait(struct smartio *h, uint64_t cursor,
				    int timeout_ms)
{
	uint64_t start = sio_lib_mono_ms();
	int waited = 0, slice;

	for (;;) {
		u32 seen = (u32)smartio_change_count(h);

		if (smartio_event_cursor(h) > cursor)
			return 1;
		if (timeout_ms >= 0 && waited >= timeout_ms)
			return 0;
		/* Short slices keep the timeout honest across spurious wakes. */
		slice = timeout_ms < 0 ? 100 :
			(timeout_ms - waited < 100 ? timeout_ms - waited : 100);
		sim_wait_change(&h->f, seen, slice);
		waited = (int)(sio_lib_mono_ms() - start);
	}
}

const struct sio_lib_transport sio_lib_sim_transport = {
	.lock = sim_transport_lock,
	.unlock = sim_transport_unlock,
	.call = sim_transport_call,
	.close = sim_transport_close,
	.change_count = sim_transport_change_count,
	.change_wait = sim_transport_change_wait,
	.event_wait = sim_transport_event_wait,
	.map_path = resolve,
	.link_set = sim_transport_link_set,
	.dma = sim_transport_dma,
	.blocked = sim_transport_blocked,
};
