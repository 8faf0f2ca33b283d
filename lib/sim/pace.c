// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pacing: the simulated fabric's device DMA takes the time the PCIe path
 * it crosses would take, so that what the papers measured comes out of the
 * simulator with its shape (issue 17, item 3).
 *
 * A transaction of len bytes from device dev to where sim_translate_dma
 * sent it takes len / rate, rate being that of the slowest link on its
 * path (sio_path_speed: the device's own link, the adapter it leaves by,
 * the switches, the adapter it arrives at; SmartIO section 7.1.5, ffLink
 * section 8.2).  It holds the device's link and the two adapters' for
 * that long in the direction its data flows (links are full duplex),
 * each a "busy until" time in the shared state, so the four engines of
 * one device, or two devices lent over one adapter, share its rate as
 * they would share the wire.  A switch is not a budget of its
 * own: its ports are at least as fast as the adapters cabled to them
 * unless the topology says otherwise, and then only the rate shows.  For
 * the device a write is done when its last byte is on the link (writes
 * are posted: nothing comes back, and what the device writes next, its
 * completion entry or interrupt, follows in order); a read when its data
 * is back, a round trip of the path's chip latencies after that (SmartIO
 * section 7.1.3): reads slow down with every hop, writes do not.
 *
 * The bytes are copied at once; only the completion waits, which is all
 * a driver can observe.  CPU loads and stores through an mmap of a BAR or
 * a segment are the user's own and never paced: no software is in their
 * path to slow them (smartio-devices(7)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"

#define NS_PER_S 1000000000ull
/*
 * Waits longer than SLEEP_NS sleep, all but the last SPIN_NS of them (a
 * nap overshoots by tens of microseconds on a virtual machine); the rest
 * spins, without yielding: on a loaded machine a yield gives the
 * processor away for a whole time slice, milliseconds.
 */
#define SLEEP_NS 200000ull
#define SPIN_NS 100000ull

void sim_pace_init(struct sim_fabric *f)
{
	const char *env = getenv("SMARTIO_PACE");

	f->pace = !f->sh->no_pace;
	if (!env)
		return;
	if (!strcmp(env, "on") || !strcmp(env, "off"))
		f->pace = !strcmp(env, "on");
	else	/* a typo must not silently change what is measured */
		fprintf(stderr, "smartio: SMARTIO_PACE must be on or off, not "
			"'%s': the fabric's setting (pace=%s) stays\n", env,
			f->pace ? "on" : "off");
}

u64 sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NS_PER_S + (u64)ts.tv_nsec;
}

void sim_wait_until(u64 t)
{
	u64 now;

	while ((now = sim_now_ns()) < t) {
		if (t - now > SLEEP_NS) {
			u64 ns = t - now - SPIN_NS;
			struct timespec ts = { (time_t)(ns / NS_PER_S),
					       (long)(ns % NS_PER_S) };

			nanosleep(&ts, NULL);
		}
	}
}

u64 sim_pace_reserve(struct sim_fabric *f, u32 dev, const struct sim_loc *loc,
		     size_t len, int write)
{
	return sim_pace_reserve_many(f, dev, loc, 1, len, write);
}

/*
 * One transaction that the fabric delivers to nloc places at once (a
 * multicast write, which the switch sends out on every member's port
 * together): it holds the device's link, the adapter it leaves by and
 * each far adapter for len / rate of the slowest of those paths.
 */
u64 sim_pace_reserve_many(struct sim_fabric *f, u32 dev,
			  const struct sim_loc *loc, u32 nloc, size_t len,
			  int write)
{
	const struct sio_device *d = sio_dev(f->reg, dev);
	struct sio_path_speed ps[SIO_MAX_NODES];
	u64 *busy[2 + SIO_MAX_NODES], rate = sio_link_rate(SIO_LINK_GEN,
							   SIO_LINK_WIDTH);
	u64 start = sim_now_ns(), end, lat = 0, ok;
	u32 to[SIO_MAX_NODES], n = 0, m = 0, i, k;
	int left = 0, via = -1;

	/* A write's data leaves the device and its node, arrives at the far
	 * node; a read's comes the other way. */
	int out = write ? SIM_LINK_OUT : SIM_LINK_IN;
	int in = write ? SIM_LINK_IN : SIM_LINK_OUT;

	/* The device's own slot: a Gen3 x8 link like the adapters'. */
	busy[n++] = &sim_dev_hw(f, dev)->link_busy_ns[out];
	/* Every place leaves by one adapter, via (a multicast write's by the
	 * one cabled to the group's switches): one search for all of them. */
	for (k = 0; k < nloc && k < SIO_MAX_NODES; k++)
		if (loc[k].adapter >= 0 && loc[k].node != d->node &&
		    (via < 0 || loc[k].adapter == via)) {
			via = loc[k].adapter;
			to[m++] = loc[k].node;
		}
	ok = m ? sio_path_speed_many(f->reg, d->node, (u32)via, to, m, ps) : 0;
	for (i = 0; i < m; i++) {
		if (!(ok >> i & 1))
			continue;
		if (ps[i].rate < rate)
			rate = ps[i].rate;
		if (ps[i].latency_ns > lat)
			lat = ps[i].latency_ns;
		if (!left++)
			busy[n++] = &sim_node_hw(f, d->node)
					     ->link_busy_ns[via][out];
		if (ps[i].far_adapter >= 0)
			busy[n++] = &sim_node_hw(f, to[i])
					     ->link_busy_ns[ps[i].far_adapter][in];
	}
	for (i = 0; i < n; i++)
		if (*busy[i] > start)
			start = *busy[i];
	/* rate is at least a Gen1 x1 link's: never 0; in two steps, so that
	 * no length overflows. */
	end = start + (u64)len / rate * NS_PER_S +
	      (u64)len % rate * NS_PER_S / rate;
	for (i = 0; i < n; i++)
		*busy[i] = end;
	return write ? end : end + 2 * lat;
}
