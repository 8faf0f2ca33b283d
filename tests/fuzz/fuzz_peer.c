// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness for messages arriving from an NTB peer (issue 12,
 * defect 7): any byte string, claiming any origin, delivered to the core
 * of a simulated node as the transport delivers it, with the node at the
 * other end of the link (sio_core_dispatch_from).
 *
 * Input: byte 0 picks the receiving node, byte 1 the sending one (never
 * the receiver: this is the peer path), bit 0 of byte 2 runs the core as
 * separate machines (SIO_CORE_SEPARATE, as smartio.ko over an NTB), byte
 * 3 is reserved; the rest is the message.
 *
 * The fabric is one simulated cluster for the whole run (the built-in
 * four hosts), prepared with a lent and borrowed device and an exported,
 * attached segment so that messages find state to act on; accepted
 * messages change it as they would.  Beyond "does not crash" (the
 * sanitizers watch) it checks:
 *  - every message gets an answer: a reply carrying an errno;
 *  - a refused message changes nothing (tests/peer_state.h: the registry
 *    but for the event ring, refusal counters and heartbeat clocks), and a
 *    refusal for a forged origin (EPERM) is counted exactly once.
 * A violated property aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smartio_internal.h"
#include "../peer_state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_peer: %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

static struct smartio *h;

static void close_fabric(void)
{
	smartio_close(h);
}

static void open_fabric(void)
{
	struct smartio_open_opts o = { 0 };
	char name[64];
	int nvme0, host0, host1;

	snprintf(name, sizeof(name), "fuzz-peer-%d", (int)getpid());
	o.fabric = name;
	o.create = 1;
	CHECK(smartio_open(&h, &o) == 0);
	atexit(close_fabric);
	nvme0 = smartio_device_find(h, "nvme0");
	host0 = smartio_node_find(h, "host0");
	host1 = smartio_node_find(h, "host1");
	CHECK(nvme0 >= 0 && host0 >= 0 && host1 >= 0);
	CHECK(!smartio_lend(h, (unsigned)nvme0, SMARTIO_LEND_ALL, 0));
	CHECK(!smartio_borrow(h, (unsigned)nvme0, (unsigned)host1));
	CHECK(!smartio_segment_create(h, (unsigned)host0, "seg0"));
	CHECK(!smartio_segment_set_size(h, (unsigned)host0, "seg0", 65536));
	CHECK(!smartio_segment_set_available(h, (unsigned)host0, "seg0", 1));
	CHECK(!smartio_segment_attach(h, (unsigned)host0, "seg0",
				      (unsigned)host1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 reply[SIO_MSG_MAX];
	struct sim_fabric *f;
	struct sio_registry *r;
	struct sio_parsed p;
	unsigned char *before;
	u32 self, from, refused;
	int n, err;

	if (size < 4)
		return 0;
	if (!h)
		open_fabric();
	f = sio_lib_fabric(h);
	r = f->reg;
	sim_lock(f);
	self = data[0] % r->nnodes;
	from = (self + 1 + data[1] % (r->nnodes - 1)) % r->nnodes;
	f->core.flags = data[2] & 1 ? SIO_CORE_SEPARATE : 0;
	before = peer_state(r);
	refused = sio_node(r, from)->refused;
	n = sio_core_dispatch_from(&f->core, self, from, data + 4,
				   (u32)(size - 4), reply, sizeof(reply));
	CHECK(n > 0);
	CHECK(!sio_msg_parse(reply, (u32)n, &p));
	CHECK(p.flags & SIO_F_REPLY);
	CHECK(p.present[SIO_A_ERRNO]);
	err = sio_nla_s32(&p.tb[SIO_A_ERRNO]);
	if (err < 0)
		CHECK(peer_state_same(r, before));
	if (err == -EPERM)
		CHECK(sio_node(r, from)->refused == refused + 1);
	else
		CHECK(sio_node(r, from)->refused == refused);
	f->core.flags = 0;
	sim_unlock(f);
	free(before);
	return 0;
}
