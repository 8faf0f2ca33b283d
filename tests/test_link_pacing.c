// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The link's own speed (issue 17, item 3; smartio.conf(5), "Link speed
 * and pacing"): the topology gives links a generation and width and chips
 * a latency, every path knows its rate and latency, and the simulator
 * paces device DMA by them: a transfer takes at least its size over the
 * path's rate, transactions share the links they cross, reads complete a
 * round trip of chip latencies after their last byte (posted writes with
 * it), and pace=off (or
 * SMARTIO_PACE=off) leaves DMA unpaced.
 *
 * Times are only ever bounded from below: this runs on loaded machines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "harness.h"
#include "fabric.h"
#include "smartio_internal.h"
#include "topology_parse.h"

/*
 * a reaches b over a direct cable (0 switches: two adapter chips, 264 ns
 * one way) and c through two cascaded switches (604 ns); acc0 lives on b,
 * acc1 on c, both borrowed by a, which maps its segment for them.
 */
#define TOPO(fabric_opts)                                                 \
	"fabric " fabric_opts "\n"                                        \
	"switch left ports=4\n"                                           \
	"switch right ports=4\n"                                          \
	"cascade left:3 right:3\n"                                        \
	"node a id=0 ram=64M\n"                                           \
	"node b id=1 ram=64M\n"                                           \
	"node c id=2 ram=64M\n"                                           \
	"adapter a ntb0 peers=b\n"                                        \
	"adapter b ntb0 peers=a\n"                                        \
	"adapter a ntb1 switch=left:0\n"                                  \
	"adapter c ntb0 switch=right:0\n"                                 \
	"device b acc0 bdf=0000:01:00.0 vendor=0x10ee device=0x7038 "     \
	"class=0x120000 bar0=16K\n"                                       \
	"device c acc1 bdf=0000:01:00.0 vendor=0x10ee device=0x7038 "     \
	"class=0x120000 bar0=16K\n"

#define SEG (8u << 20)
#define DIRECT_NS (2 * SIO_ADAPTER_LATENCY_NS)
#define SWITCHED_NS (2 * SIO_ADAPTER_LATENCY_NS + 2 * SIO_SWITCH_LATENCY_NS)

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned a, acc0, acc1;
	uint64_t io0, io1;	/* a's segment as acc0 and acc1 reach it */
};

static struct fx *open_fx(const char *topo)
{
	static struct fx fx;

	memset(&fx, 0, sizeof(fx));
	fx.h = th_open(topo, NULL, fx.fabric, sizeof(fx.fabric));
	fx.a = th_node(fx.h, "a");
	fx.acc0 = th_dev(fx.h, "acc0");
	fx.acc1 = th_dev(fx.h, "acc1");
	assert_int_equal(smartio_lend(fx.h, fx.acc0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_lend(fx.h, fx.acc1, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx.h, fx.acc0, fx.a), 0);
	assert_int_equal(smartio_borrow(fx.h, fx.acc1, fx.a), 0);
	assert_int_equal(smartio_segment_create(fx.h, fx.a, "buf"), 0);
	assert_int_equal(smartio_segment_set_size(fx.h, fx.a, "buf", SEG), 0);
	assert_int_equal(smartio_segment_dma_map(fx.h, fx.a, "buf", fx.acc0,
						 &fx.io0), 0);
	assert_int_equal(smartio_segment_dma_map(fx.h, fx.a, "buf", fx.acc1,
						 &fx.io1), 0);
	return &fx;
}

static void close_fx(struct fx *fx)
{
	smartio_close(fx->h);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds that len bytes take at rate bytes per second. */
static uint64_t xfer_ns(uint64_t len, uint64_t rate)
{
	return len * 1000000000ull / rate;
}

/* Until when dev's own link is taken in the direction of a write (out of
 * the device) or a read (into it). */
static uint64_t dev_busy(struct fx *fx, unsigned dev, int write)
{
	struct sim_fabric *f = sio_lib_fabric(fx->h);
	uint64_t t;

	sim_lock(f);
	t = sim_dev_hw(f, dev)->link_busy_ns[write ? SIM_LINK_OUT : SIM_LINK_IN];
	sim_unlock(f);
	return t;
}

static int parse(const char *text, struct sio_topology *t, char *err,
		 size_t errlen)
{
	return sio_topo_parse(text, strlen(text), t, err, errlen);
}

static void test_parser_takes_gen_width_latency_and_pace(void **state)
{
	struct sio_topology t;
	char err[256];

	(void)state;
	assert_int_equal(parse("fabric gen=2 width=4 pace=off\n"
			       "switch s ports=4 gen=5 width=16 latency=90\n"
			       "node x id=0\nnode y id=1\n"
			       "adapter x ntb0 switch=s:0 gen=4 latency=150\n"
			       "adapter y ntb0 switch=s:1\n",
			       &t, err, sizeof(err)), 0);
	assert_int_equal(t.no_pace, 1);
	assert_int_equal(t.switches[0].gen, 5);
	assert_int_equal(t.switches[0].width, 16);
	assert_int_equal(t.switches[0].latency_ns, 90);
	assert_int_equal(t.adapters[0].gen, 4);
	assert_int_equal(t.adapters[0].width, 4);	/* the fabric's */
	assert_int_equal(t.adapters[0].latency_ns, 150);
	assert_int_equal(t.adapters[1].gen, 2);
	assert_int_equal(t.adapters[1].latency_ns, 0);	/* the default */
	sio_topo_free(&t);
	assert_int_equal(parse("node x id=0\n", &t, err, sizeof(err)), 0);
	assert_int_equal(t.no_pace, 0);			/* paced by default */
	sio_topo_free(&t);
}

static void test_parser_refuses_bad_link_values(void **state)
{
	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "fabric gen=0", "line 1: gen must be from 1 to 5: 'gen=0'" },
		{ "fabric gen=6", "line 1: gen must be from 1 to 5: 'gen=6'" },
		{ "fabric gen=3x", "line 1: gen must be from 1 to 5: 'gen=3x'" },
		{ "fabric gen=", "line 1: gen must be from 1 to 5: 'gen='" },
		{ "fabric width=3",
		  "line 1: width must be 1, 2, 4, 8 or 16 lanes: 'width=3'" },
		{ "fabric width=32",
		  "line 1: width must be 1, 2, 4, 8 or 16 lanes: 'width=32'" },
		{ "fabric width=0",
		  "line 1: width must be 1, 2, 4, 8 or 16 lanes: 'width=0'" },
		{ "fabric width=8K",
		  "line 1: width must be 1, 2, 4, 8 or 16 lanes: 'width=8K'" },
		{ "fabric pace=no", "line 1: pace must be on or off: 'pace=no'" },
		{ "fabric latency=150", "line 1: unknown fabric option: 'latency=150'" },
		{ "switch s latency=0",
		  "line 1: latency must be from 1 to 50000 ns: 'latency=0'" },
		{ "switch s latency=50001",
		  "line 1: latency must be from 1 to 50000 ns: 'latency=50001'" },
		{ "switch s gen=9", "line 1: gen must be from 1 to 5: 'gen=9'" },
		{ "node x id=0\nadapter x n peers=all width=12",
		  "line 2: width must be 1, 2, 4, 8 or 16 lanes: 'width=12'" },
		{ "node x id=0\nadapter x n peers=all pace=off",
		  "line 2: unknown adapter option: 'pace=off'" },
	};
	struct sio_topology t;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(bad[i].line, &t, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, bad[i].msg);
	}
}

static void test_path_rate_is_its_slowest_link(void **state)
{
	struct fx *fx = open_fx(TOPO("window=256M luts=64"));
	struct sio_registry *r;
	struct sio_path_speed ps;

	(void)state;
	sio_lib_lock(fx->h);
	r = sio_lib_reg(fx->h);
	/* b -> a over the cable: two adapters' chips. */
	assert_int_equal(sio_path_speed(r, 1, 0, 0, &ps), 0);
	assert_int_equal(ps.hops, 0);
	assert_int_equal(ps.rate, 7306131544ull);	/* Gen3 x8 */
	assert_int_equal(ps.latency_ns, DIRECT_NS);
	assert_int_equal(ps.far_adapter, 0);
	/* c -> a through both switches. */
	assert_int_equal(sio_path_speed(r, 2, 0, 0, &ps), 0);
	assert_int_equal(ps.hops, 2);
	assert_int_equal(ps.latency_ns, SWITCHED_NS);
	assert_int_equal(ps.far_adapter, 1);
	sio_lib_unlock(fx->h);
	close_fx(fx);

	/* A Gen4 x16 switch on a Gen2 x4 adapter: the adapter's rate. */
	fx = open_fx("fabric gen=4 width=16\n"
		     "switch left ports=4 latency=100\n"
		     "switch right ports=4 latency=100\n"
		     "cascade left:3 right:3\n"
		     "node a id=0 ram=64M\nnode b id=1 ram=64M\n"
		     "node c id=2 ram=64M\n"
		     "adapter a ntb0 peers=b\nadapter b ntb0 peers=a\n"
		     "adapter a ntb1 switch=left:0 gen=2 width=4\n"
		     "adapter c ntb0 switch=right:0 latency=1000\n"
		     "device b acc0 bdf=0000:01:00.0 vendor=0x10ee "
		     "device=0x7038 class=0x120000 bar0=16K\n"
		     "device c acc1 bdf=0000:01:00.0 vendor=0x10ee "
		     "device=0x7038 class=0x120000 bar0=16K\n");
	sio_lib_lock(fx->h);
	r = sio_lib_reg(fx->h);
	assert_int_equal(sio_path_speed(r, 2, 0, 0, &ps), 0);
	assert_int_equal(ps.rate, sio_link_rate(2, 4));
	assert_int_equal(ps.latency_ns, 1000 + 100 + 100 +
			 SIO_ADAPTER_LATENCY_NS);
	assert_int_equal(sio_path_speed(r, 1, 0, 0, &ps), 0);
	assert_int_equal(ps.rate, sio_link_rate(4, 16));
	sio_lib_unlock(fx->h);
	close_fx(fx);
}

/* A slow link (Gen1 x1, 232 MB/s): 4 MiB take at least 18 ms paced,
 * far longer than a memcpy of them. */
static void test_paced_dma_takes_at_least_size_over_rate(void **state)
{
	struct fx *fx = open_fx(TOPO("gen=1 width=1 window=256M luts=64"));
	static uint8_t buf[4u << 20];
	uint64_t t0, rate = sio_link_rate(1, 1);

	(void)state;
	memset(buf, 0x5a, sizeof(buf));
	t0 = now_ns();
	assert_int_equal(smartio_dma(fx->h, fx->acc0, fx->io0, buf,
				     sizeof(buf), 1), 0);
	assert_true(now_ns() - t0 >= xfer_ns(sizeof(buf), rate));
	/* A read as well, and through both switches. */
	t0 = now_ns();
	assert_int_equal(smartio_dma(fx->h, fx->acc1, fx->io1, buf,
				     sizeof(buf), 0), 0);
	assert_true(now_ns() - t0 >= xfer_ns(sizeof(buf), rate) + 2 * SWITCHED_NS);
	close_fx(fx);
}

/* Two transactions over one link: the second's bytes follow the first's. */
static void test_transactions_share_the_link(void **state)
{
	struct fx *fx = open_fx(TOPO("window=256M luts=64"));
	struct sim_fabric *f = sio_lib_fabric(fx->h);
	static uint8_t buf[1u << 20];
	uint64_t d1, d2, rate = sio_link_rate(3, 8);

	(void)state;
	assert_int_equal(sim_dma_start(f, fx->acc0, fx->io0, buf, sizeof(buf),
				       1, &d1), 0);
	assert_int_equal(sim_dma_start(f, fx->acc0, fx->io0, buf, sizeof(buf),
				       1, &d2), 0);
	assert_true(d1 && d2 >= d1 + xfer_ns(sizeof(buf), rate));
	close_fx(fx);
}

/* A read completes a round trip of chip latencies after its last byte, a
 * posted write with it: two more switches, 2 x 340 ns more per read. */
static void test_reads_over_more_hops_complete_later(void **state)
{
	struct fx *fx = open_fx(TOPO("window=256M luts=64"));
	struct sim_fabric *f = sio_lib_fabric(fx->h);
	uint8_t buf[4096];
	uint64_t done, t0, rate = sio_link_rate(3, 8);
	unsigned i, n = 200;

	(void)state;
	assert_int_equal(sim_dma_start(f, fx->acc0, fx->io0, buf, sizeof(buf),
				       0, &done), 0);
	assert_int_equal(done - dev_busy(fx, fx->acc0, 0), 2 * DIRECT_NS);
	assert_int_equal(sim_dma_start(f, fx->acc1, fx->io1, buf, sizeof(buf),
				       0, &done), 0);
	assert_int_equal(done - dev_busy(fx, fx->acc1, 0), 2 * SWITCHED_NS);
	assert_int_equal(sim_dma_start(f, fx->acc1, fx->io1, buf, sizeof(buf),
				       1, &done), 0);
	assert_int_equal(done, dev_busy(fx, fx->acc1, 1));
	/* One read after the other, as a driver waiting for each. */
	t0 = now_ns();
	for (i = 0; i < n; i++)
		assert_int_equal(smartio_dma(fx->h, fx->acc1, fx->io1, buf,
					     sizeof(buf), 0), 0);
	assert_true(now_ns() - t0 >=
		    n * (xfer_ns(sizeof(buf), rate) + 2 * SWITCHED_NS));
	close_fx(fx);
}

/*
 * The DMA engine model (smartio-devices(7)) over a Gen1 x1 cable (232
 * MB/s): one engine's 1 MiB transfer takes at least its setup and its
 * bytes' time (4.5 ms); four engines started together share the link, so
 * the last is done no sooner than all four transfers' bytes could cross
 * it (18 ms), not one transfer's time as with a link each.
 */
#define ENG(e) (0x100u + 0x40u * (e))
#define ENGINE_SETUP_NS 15000ull

static void engine_go(volatile uint8_t *bar0, unsigned e, uint64_t src,
		      uint64_t dst, uint32_t len)
{
	volatile uint32_t *r = (volatile uint32_t *)(bar0 + ENG(e));

	r[0] = (uint32_t)src;
	r[1] = (uint32_t)(src >> 32);
	r[2] = (uint32_t)dst;
	r[3] = (uint32_t)(dst >> 32);
	r[4] = len;
	r[6] = 0;					/* status */
	__atomic_store_n(&r[5], 1, __ATOMIC_RELEASE);	/* go */
}

static void engine_wait(volatile uint8_t *bar0, unsigned e)
{
	volatile uint32_t *st = (volatile uint32_t *)(bar0 + ENG(e) + 0x18);
	time_t end = time(NULL) + 20;

	while (!(__atomic_load_n(st, __ATOMIC_ACQUIRE) & 2)) {
		assert_true(time(NULL) <= end);		/* a hang, not a time */
		th_nap();
	}
	assert_int_equal(*st & 4, 0);
}

static void test_dma_engines_share_one_link(void **state)
{
	struct smartio *h;
	char fabric[64], path[256];
	unsigned a, acc;
	uint64_t io, size, mem, t0, rate = sio_link_rate(1, 1);
	volatile uint8_t *bar0;
	unsigned e;

	(void)state;
	h = th_open("node a id=0 ram=64M\nnode b id=1 ram=64M\n"
		    "adapter a ntb0 peers=b gen=1 width=1\n"
		    "adapter b ntb0 peers=a gen=1 width=1\n"
		    "device b acc0 bdf=0000:01:00.0 vendor=0x1234 "
		    "device=0x11e8 class=0x120000 model=dma bar0=1M "
		    "bar2=16M,64,prefetch\n", NULL, fabric, sizeof(fabric));
	a = th_node(h, "a");
	acc = th_dev(h, "acc0");
	assert_int_equal(smartio_lend(h, acc, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, acc, a), 0);
	assert_int_equal(smartio_segment_create(h, a, "buf"), 0);
	assert_int_equal(smartio_segment_set_size(h, a, "buf", 4u << 20), 0);
	assert_int_equal(smartio_segment_dma_map(h, a, "buf", acc, &io), 0);
	assert_int_equal(smartio_resolve_bar(h, a, acc, 0, path, sizeof(path),
					     &size), 0);
	bar0 = th_map_file(path, size);
	mem = *(volatile uint64_t *)(bar0 + 0x10);	/* BAR 2, bus address */
	/* Unmeasured: the first touch of every page costs the model time. */
	for (e = 0; e < 4; e++)
		engine_go(bar0, e, io + (e << 20), mem + (e << 20), 1u << 20);
	for (e = 0; e < 4; e++)
		engine_wait(bar0, e);

	t0 = now_ns();
	engine_go(bar0, 0, io, mem, 1u << 20);
	engine_wait(bar0, 0);
	assert_true(now_ns() - t0 >= ENGINE_SETUP_NS + xfer_ns(1u << 20, rate));

	t0 = now_ns();
	for (e = 0; e < 4; e++)
		engine_go(bar0, e, io + (e << 20), mem + (e << 20), 1u << 20);
	for (e = 0; e < 4; e++)
		engine_wait(bar0, e);
	assert_true(now_ns() - t0 >= xfer_ns(4u << 20, rate));
	munmap((void *)bar0, size);
	smartio_close(h);
}

static void expect_unpaced(struct fx *fx)
{
	struct sim_fabric *f = sio_lib_fabric(fx->h);
	static uint8_t buf[1u << 20];
	uint64_t done = 1;

	assert_int_equal(sim_dma_start(f, fx->acc1, fx->io1, buf, sizeof(buf),
				       0, &done), 0);
	assert_int_equal(done, 0);
	assert_int_equal(smartio_dma(fx->h, fx->acc1, fx->io1, buf,
				     sizeof(buf), 1), 0);
	assert_int_equal(dev_busy(fx, fx->acc1, 0), 0);	/* no link taken */
	assert_int_equal(dev_busy(fx, fx->acc1, 1), 0);
}

static void test_pace_off_is_not_paced(void **state)
{
	struct fx *fx = open_fx(TOPO("gen=1 width=1 window=256M luts=64 pace=off"));
	struct sim_fabric *f;
	static uint8_t buf[4096];
	uint64_t done = 0;

	(void)state;
	expect_unpaced(fx);
	close_fx(fx);

	/* The environment decides for this process, either way. */
	setenv("SMARTIO_PACE", "off", 1);
	fx = open_fx(TOPO("gen=1 width=1 window=256M luts=64"));
	expect_unpaced(fx);
	close_fx(fx);
	setenv("SMARTIO_PACE", "on", 1);
	fx = open_fx(TOPO("window=256M luts=64 pace=off"));
	f = sio_lib_fabric(fx->h);
	assert_int_equal(sim_dma_start(f, fx->acc0, fx->io0, buf, sizeof(buf),
				       1, &done), 0);
	assert_true(done != 0);
	close_fx(fx);
	unsetenv("SMARTIO_PACE");
}

/*
 * Three cascaded switches (one of them Gen2 x4), nodes on each with
 * adapters of their own speeds, one of them on two switches and one with
 * its link down: the speeds one search of the switches gives a multicast
 * write's members are those sio_path_speed gives each alone.
 */
#define MANY_TOPO                                                         \
	"fabric\n"                                                        \
	"switch s0 ports=8\n"                                             \
	"switch s1 ports=8 gen=2 width=4\n"                               \
	"switch s2 ports=8 latency=300\n"                                 \
	"cascade s0:7 s1:7\n"                                             \
	"cascade s1:6 s2:6\n"                                             \
	"node n0 id=0\nnode n1 id=1\nnode n2 id=2\nnode n3 id=3\n"       \
	"node n4 id=4\nnode n5 id=5\n"                                    \
	"adapter n0 ntb0 switch=s0:0\n"                                   \
	"adapter n1 ntb0 switch=s0:1 gen=2\n"                             \
	"adapter n2 ntb0 switch=s1:0 latency=500\n"                       \
	"adapter n3 ntb0 switch=s2:0 width=4\n"                           \
	"adapter n3 ntb1 switch=s0:2 gen=1\n"                             \
	"adapter n4 ntb0 switch=s2:1\n"                                   \
	"adapter n5 ntb0 switch=s2:2\n"

static void test_one_search_gives_each_member_its_speed(void **state)
{
	struct smartio *h;
	struct sim_fabric *f;
	struct sio_path_speed one, many[6];
	char fabric[64];
	u32 to[6] = { 0, 1, 2, 3, 4, 5 }, from, i, paths = 0;
	u64 ok;

	(void)state;
	h = th_open(MANY_TOPO, NULL, fabric, sizeof(fabric));
	f = sio_lib_fabric(h);
	assert_int_equal(smartio_link_set(h, th_node(h, "n5"), 0, 0), 0);
	for (from = 0; from < 6; from++) {
		ok = sio_path_speed_many(f->reg, from, 0, to, 6, many);
		for (i = 0; i < 6; i++) {
			int err = sio_path_speed(f->reg, from, 0, to[i], &one);

			assert_int_equal(!err, (int)(ok >> i & 1));
			if (err)
				continue;
			paths++;
			assert_int_equal(many[i].rate, one.rate);
			assert_int_equal(many[i].latency_ns, one.latency_ns);
			assert_int_equal(many[i].hops, one.hops);
			assert_int_equal(many[i].far_adapter, one.far_adapter);
		}
	}
	/* Each of n0..n4 reaches the other four; n5 is down. */
	assert_int_equal(paths, 5 * 4);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_takes_gen_width_latency_and_pace),
		cmocka_unit_test(test_parser_refuses_bad_link_values),
		cmocka_unit_test(test_path_rate_is_its_slowest_link),
		cmocka_unit_test(test_one_search_gives_each_member_its_speed),
		cmocka_unit_test(test_paced_dma_takes_at_least_size_over_rate),
		cmocka_unit_test(test_transactions_share_the_link),
		cmocka_unit_test(test_reads_over_more_hops_complete_later),
		cmocka_unit_test(test_dma_engines_share_one_link),
		cmocka_unit_test(test_pace_off_is_not_paced),
	};

	unsetenv("SMARTIO_PACE");	/* the fabric decides, unless a test says */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
