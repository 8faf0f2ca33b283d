// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Node-to-node messages handled by the core, sent as raw protocol messages
 * through sio_core_dispatch on a real simulated fabric: HEARTBEAT and the
 * failure detector built on it, EVENT from another node, the owner's half
 * of a segment attachment (SEG_CONNECT / SEG_DISCONNECT) and the lender's
 * half of a segment's device window (MAP_SEG_WINDOW / UNMAP_SEG_WINDOW),
 * and the owner's segment table asked for (SEG_TABLE_GET).
 * Each bad message gets its errno and changes nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "smartio_internal.h"

struct reply {
	u8 buf[1024];
	struct sio_parsed p;
};

/* Builds nothing itself: finishes m and dispatches it as node self. */
static int dispatch(struct smartio *h, unsigned self, struct sio_msg *m,
		    struct reply *out)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	static struct reply scratch;
	int len = sio_msg_finish(m), n;

	if (!out)
		out = &scratch;
	assert_true(len > 0);
	sim_lock(f);
	n = sio_core_dispatch(&f->core, self, m->buf, (u32)len, out->buf,
			      sizeof(out->buf));
	sim_unlock(f);
	assert_true(n > 0);
	assert_int_equal(sio_msg_parse(out->buf, (u32)n, &out->p), 0);
	assert_true(out->p.present[SIO_A_ERRNO]);
	return sio_nla_s32(&out->p.tb[SIO_A_ERRNO]);
}

static int heartbeat(struct smartio *h, unsigned self, int with_node,
		     unsigned node, int with_seq, uint64_t seq)
{
	u8 buf[256];
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_HEARTBEAT, SIO_F_REQUEST, 1);
	if (with_node)
		sio_msg_put_u32(&m, SIO_A_NODE, node);
	if (with_seq)
		sio_msg_put_u64(&m, SIO_A_SEQ, seq);
	sio_msg_put_u64(&m, SIO_A_TIME, 1);
	return dispatch(h, self, &m, NULL);
}

static int node_state(struct smartio *h, unsigned node)
{
	struct smartio_node_info ni;

	assert_int_equal(smartio_node_info(h, node, &ni), 0);
	return ni.state;
}

/* Only host0 is served: the others stay down until heard from. */
static void test_heartbeat_brings_a_node_up_and_silence_takes_it_down(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	struct sim_fabric *f = sio_lib_fabric(h);
	uint64_t cur = smartio_event_cursor(h), seq;
	u32 lost;

	(void)state;
	assert_int_equal(node_state(h, host1), SMARTIO_NODE_DOWN);
	/* Malformed beats: errno, nothing changes. */
	assert_int_equal(heartbeat(h, host0, 1, host1, 0, 0), -EINVAL);
	assert_int_equal(heartbeat(h, host0, 0, 0, 1, 7), -EINVAL);
	assert_int_equal(heartbeat(h, host0, 1, 99, 1, 7), -ENOENT);
	assert_int_equal(heartbeat(h, host0, 1, host0, 1, 7), -EINVAL);
	assert_int_equal(node_state(h, host1), SMARTIO_NODE_DOWN);
	assert_false(th_saw_event(h, &cur, "node-up", "nodes/host1"));

	seq = 5;
	assert_int_equal(heartbeat(h, host0, 1, host1, 1, seq), 0);
	assert_int_equal(node_state(h, host1), SMARTIO_NODE_UP);
	assert_true(th_saw_event(h, &cur, "node-up", "nodes/host1"));
	/* A replayed or older beat is not news. */
	assert_int_equal(heartbeat(h, host0, 1, host1, 1, seq), -EALREADY);
	assert_int_equal(heartbeat(h, host0, 1, host1, 1, seq - 1), -EALREADY);
	assert_int_equal(heartbeat(h, host0, 1, host1, 1, seq + 1), 0);

	/* Heard within the timeout: stays up; silent past it: down. */
	sim_lock(f);
	lost = sio_core_check_heartbeats(&f->core, host0, 60ull * 1000000000ull);
	sim_unlock(f);
	assert_int_equal(lost, 0);
	usleep(2000);
	sim_lock(f);
	lost = sio_core_check_heartbeats(&f->core, host0, 1000);
	sim_unlock(f);
	assert_int_equal(lost, 1);
	assert_int_equal(node_state(h, host1), SMARTIO_NODE_DOWN);
	assert_int_equal(node_state(h, host0), SMARTIO_NODE_UP);
	assert_true(th_saw_event(h, &cur, "node-down", "nodes/host1"));
	/* Heard again: back up. */
	assert_int_equal(heartbeat(h, host0, 1, host1, 1, seq + 2), 0);
	assert_int_equal(node_state(h, host1), SMARTIO_NODE_UP);
	smartio_close(h);
}

static int event_msg(struct smartio *h, unsigned self, int kind,
		     const char *text, uint32_t src_id)
{
	u8 buf[512];
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_EVENT, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_SRC, src_id);
	sio_msg_put_u64(&m, SIO_A_SEQ, 77);
	sio_msg_put_u64(&m, SIO_A_TIME, 1763800000120033441ull);
	if (kind >= 0)
		sio_msg_put_u32(&m, SIO_A_KIND, (u32)kind);
	if (text)
		sio_msg_put_bin(&m, SIO_A_DATA, text, (u32)strlen(text));
	return dispatch(h, self, &m, NULL);
}

static void test_event_from_another_node_lands_in_the_ring(void **state)
{
	char fabric[64], line[256];
	struct smartio *h = th_open(NULL, "host0", fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0");
	struct smartio_node_info n0, n1;
	uint64_t cur = smartio_event_cursor(h), before;
	char long_obj[80];

	(void)state;
	assert_int_equal(smartio_node_info(h, host0, &n0), 0);
	assert_int_equal(smartio_node_info(h, th_node(h, "host1"), &n1), 0);
	memset(long_obj, 'a', sizeof(long_obj) - 1);
	long_obj[sizeof(long_obj) - 1] = '\0';
	before = smartio_event_cursor(h);
	assert_int_equal(event_msg(h, host0, 999, "dev/nvme0", n1.id), -EINVAL);
	assert_int_equal(event_msg(h, host0, -1, "dev/nvme0", n1.id), -EINVAL);
	assert_int_equal(event_msg(h, host0, 3, NULL, n1.id), -EINVAL);
	assert_int_equal(event_msg(h, host0, 3, "", n1.id), -EINVAL);
	assert_int_equal(event_msg(h, host0, 3, "dev/nvme0\tnode=x", n1.id),
			 -EINVAL);
	assert_int_equal(event_msg(h, host0, 3, "dev/nvme0 node=\n", n1.id),
			 -EINVAL);
	assert_int_equal(event_msg(h, host0, 3, long_obj, n1.id), -EINVAL);
	assert_int_equal(event_msg(h, host0, 3, "dev/nvme0 node=host3", n0.id),
			 -ELOOP);
	assert_int_equal(smartio_event_cursor(h), before);

	assert_int_equal(event_msg(h, host0, 3, "dev/nvme0 node=host3", n1.id),
			 0);
	assert_true(smartio_event_read(h, &cur, line, sizeof(line)) > 0);
	assert_non_null(strstr(line,
			       " 1763800000.120033441 borrow dev/nvme0 node=host3"));
	smartio_close(h);
}

static int seg_msg(struct smartio *h, unsigned self, u8 cmd, unsigned owner,
		   const char *name, unsigned peer, struct reply *out)
{
	u8 buf[256];
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), cmd, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_NODE, owner);
	sio_msg_put_str(&m, SIO_A_NAME, name);
	sio_msg_put_u32(&m, SIO_A_PEER, peer);
	return dispatch(h, self, &m, out);
}

static uint64_t attached(struct smartio *h, unsigned owner, const char *name)
{
	struct smartio_segment_info si;
	int i = smartio_segment_find(h, owner, name);

	assert_true(i >= 0);
	assert_int_equal(smartio_segment_at(h, (unsigned)i, &si), 1);
	return si.attached;
}

static void test_segment_connect_is_decided_by_the_owner(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	unsigned l1 = th_luts_used(h, host1);
	uint64_t cur;
	struct reply rep;

	(void)state;
	assert_int_equal(smartio_segment_create(h, host0, "s"), 0);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_CONNECT, host0, "s",
				 host1, NULL), -EINVAL);	/* not sized */
	assert_int_equal(smartio_segment_set_size(h, host0, "s", 1 << 20), 0);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_CONNECT, host0, "s",
				 host1, NULL), -EACCES);	/* not available */
	assert_int_equal(smartio_segment_set_available(h, host0, "s", 1), 0);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_CONNECT, host0, "nope",
				 host1, NULL), -ENOENT);
	/* host1 claiming that the owner itself connects: not its to claim. */
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_CONNECT, host0, "s",
				 host0, NULL), -EPERM);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_CONNECT, host0, "s",
				 42, NULL), -ENOENT);
	assert_int_equal(attached(h, host0, "s"), 0);

	/* The owner's half alone: recorded, answered with address and size. */
	cur = smartio_event_cursor(h);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_CONNECT, host0, "s",
				 host1, &rep), 0);
	assert_true(rep.p.present[SIO_A_ADDR] && rep.p.present[SIO_A_SIZE]);
	assert_int_equal(sio_nla_u64(&rep.p.tb[SIO_A_SIZE]), 1 << 20);
	assert_int_equal(attached(h, host0, "s"), 1ull << host1);
	assert_true(th_saw_event(h, &cur, "segment-attach", "seg/host0.s"));
	assert_int_equal(smartio_segment_set_available(h, host0, "s", 0), -EBUSY);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_DISCONNECT, host0, "s",
				 host1, NULL), 0);
	assert_int_equal(seg_msg(h, host1, SIO_CMD_SEG_DISCONNECT, host0, "s",
				 host1, NULL), -ENOENT);
	assert_int_equal(attached(h, host0, "s"), 0);
	assert_int_equal(th_luts_used(h, host1), l1);	/* no LUT was touched */

	/* The whole conversation through the API: peer maps, owner records. */
	assert_int_equal(smartio_segment_attach(h, host0, "s", host1), 0);
	assert_int_equal(attached(h, host0, "s"), 1ull << host1);
	assert_true(th_luts_used(h, host1) > l1);
	assert_int_equal(smartio_segment_detach(h, host0, "s", host1), 0);
	assert_int_equal(attached(h, host0, "s"), 0);
	assert_int_equal(th_luts_used(h, host1), l1);
	assert_int_equal(smartio_segment_destroy(h, host0, "s"), 0);
	smartio_close(h);
}

/* The owner answers SEG_TABLE_GET with its table: every segment it owns. */
static void test_segment_table_is_given_to_who_asks(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	struct sio_nla seg, f;
	struct reply rep;
	struct sio_msg m;
	u8 buf[256];
	u32 pos = 0, nsegs = 0;

	(void)state;
	assert_int_equal(smartio_segment_create(h, host1, "ring"), 0);
	assert_int_equal(smartio_segment_set_size(h, host1, "ring", 1 << 16), 0);
	assert_int_equal(smartio_segment_create(h, host0, "other"), 0);
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE_GET, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_NODE, host0);
	assert_int_equal(dispatch(h, host1, &m, &rep), 0);
	assert_true(rep.p.present[SIO_A_NODE]);
	assert_int_equal(sio_nla_u32(&rep.p.tb[SIO_A_NODE]), host1);
	while (sio_nla_next(rep.p.attrs, rep.p.attrs_len, &pos, &seg)) {
		if (seg.type != SIO_A_SEG)
			continue;
		nsegs++;	/* host1's only: not host0's "other" */
		assert_int_equal(sio_nla_find(&seg, SIO_A_NAME, &f), 0);
		assert_string_equal(sio_nla_str(&f), "ring");
		assert_int_equal(sio_nla_find(&seg, SIO_A_SIZE, &f), 0);
		assert_int_equal(sio_nla_u64(&f), 1 << 16);
	}
	assert_int_equal(nsegs, 1);
	/* Asking oneself, or as a node that does not exist: refused. */
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE_GET, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_NODE, host1);
	assert_int_equal(dispatch(h, host1, &m, NULL), -EINVAL);
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE_GET, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_NODE, 42);
	assert_int_equal(dispatch(h, host1, &m, NULL), -ENOENT);
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE_GET, SIO_F_REQUEST, 1);
	assert_int_equal(dispatch(h, host1, &m, NULL), -EINVAL);
	assert_int_equal(smartio_segment_destroy(h, host1, "ring"), 0);
	assert_int_equal(smartio_segment_destroy(h, host0, "other"), 0);
	smartio_close(h);
}

static int window_msg(struct smartio *h, unsigned self, u8 cmd, uint32_t fdid,
		      unsigned owner, uint64_t iova, uint64_t size)
{
	u8 buf[256];
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), cmd, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_DEV, fdid);
	sio_msg_put_u32(&m, SIO_A_NODE, owner);
	sio_msg_put_u64(&m, SIO_A_IOVA, iova);
	if (size)
		sio_msg_put_u64(&m, SIO_A_SIZE, size);
	return dispatch(h, self, &m, NULL);
}

/* nvme1 is on host1 and not borrowed; host0's segment is mapped for it. */
static void test_segment_window_is_programmed_by_the_lender(void **state)
{
	char fabric[64], msg[8] = "window", back[8];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	unsigned nvme1 = th_dev(h, "nvme1");
	unsigned l1 = th_luts_used(h, host1), l0 = th_luts_used(h, host0);
	struct smartio_device_info di;
	struct sim_fabric *f = sio_lib_fabric(h);
	struct sio_segdma *m = NULL;
	uint64_t ioaddr = 0, iova;
	char path[256];
	uint64_t size;
	u32 i;
	int fd;

	(void)state;
	assert_int_equal(smartio_device_info(h, nvme1, &di), 0);
	assert_int_equal(smartio_segment_create(h, host0, "w"), 0);
	assert_int_equal(smartio_segment_set_size(h, host0, "w", 1 << 20), 0);
	/* No record on the owner: the lender refuses. */
	assert_int_equal(window_msg(h, host0, SIO_CMD_MAP_SEG_WINDOW, di.fdid,
				    host0, 1ull << 32, 1 << 20), -ENOENT);
	assert_int_equal(smartio_segment_dma_map(h, host0, "w", nvme1, &ioaddr),
				 0);
	assert_int_equal(th_luts_used(h, host1), l1 + 1);	/* lender's slot */
	assert_int_equal(th_luts_used(h, host0), l0);
	for (i = 0; i < f->reg->max_segdma; i++)
		if (sio_segdma_at(f->reg, i)->used)
			m = sio_segdma_at(f->reg, i);
	assert_non_null(m);
	assert_int_equal(m->kind, SIO_SEGDMA_WINDOW);
	iova = m->iova;
	/* Mapping twice, a wrong size, a wrong address: refused, unchanged. */
	assert_int_equal(window_msg(h, host0, SIO_CMD_MAP_SEG_WINDOW, di.fdid,
				    host0, iova, 1 << 20), -EBUSY);
	assert_int_equal(window_msg(h, host0, SIO_CMD_UNMAP_SEG_WINDOW, di.fdid,
				    host0, iova + 4096, 0), -ENOENT);
	assert_int_equal(window_msg(h, host0, SIO_CMD_MAP_SEG_WINDOW, di.fdid,
				    host0, iova, 0), -EINVAL);
	assert_int_equal(th_luts_used(h, host1), l1 + 1);
	/* The device reaches the segment through the lender's window. */
	assert_int_equal(smartio_dma(h, nvme1, ioaddr + 64, msg, sizeof(msg), 1),
			 0);
	assert_int_equal(smartio_resolve_segment(h, host0, host0, "w", path,
						 sizeof(path), &size), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, sizeof(back), 64), (ssize_t)sizeof(back));
	close(fd);
	assert_memory_equal(back, msg, sizeof(msg));
	assert_int_equal(smartio_segment_dma_unmap(h, host0, "w", nvme1), 0);
	assert_int_equal(th_luts_used(h, host1), l1);
	assert_int_equal(smartio_dma(h, nvme1, ioaddr + 64, msg, sizeof(msg), 1),
			 -EFAULT);
	assert_int_equal(smartio_segment_destroy(h, host0, "w"), 0);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heartbeat_brings_a_node_up_and_silence_takes_it_down),
		cmocka_unit_test(test_event_from_another_node_lands_in_the_ring),
		cmocka_unit_test(test_segment_connect_is_decided_by_the_owner),
		cmocka_unit_test(test_segment_table_is_given_to_who_asks),
		cmocka_unit_test(test_segment_window_is_programmed_by_the_lender),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
