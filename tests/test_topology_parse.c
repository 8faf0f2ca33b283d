// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smartio.conf(5): a full file parses field by field, the shipped default
 * file equals the built-in default, every validation rule rejects with the
 * line number and the offending token, sizes and suffixes, file loading, and
 * the generator for scale benchmarks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology_parse.h"

#define ERRLEN 256

static int parse(const char *text, struct sio_topology *t, char *err)
{
	return sio_topo_parse(text, strlen(text), t, err, ERRLEN);
}

static void assert_empty(const struct sio_topology *t)
{
	assert_int_equal(t->nnodes, 0);
	assert_int_equal(t->nadapters, 0);
	assert_int_equal(t->ndevices, 0);
	assert_null(t->nodes);
	assert_null(t->adapters);
	assert_null(t->devices);
}

/* Field by field, so that a failure names the field. */
static void assert_topo_equal(const struct sio_topology *a,
			      const struct sio_topology *b)
{
	u32 i, k;

	assert_int_equal(a->nnodes, b->nnodes);
	assert_int_equal(a->nadapters, b->nadapters);
	assert_int_equal(a->ndevices, b->ndevices);
	for (i = 0; i < a->nnodes; i++) {
		assert_string_equal(a->nodes[i].name, b->nodes[i].name);
		assert_int_equal(a->nodes[i].id, b->nodes[i].id);
		assert_true(a->nodes[i].ram == b->nodes[i].ram);
	}
	for (i = 0; i < a->nadapters; i++) {
		const struct sio_topo_adapter *x = &a->adapters[i], *y = &b->adapters[i];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->node, y->node);
		assert_true(x->peers == y->peers);
		assert_true(x->window == y->window);
		assert_int_equal(x->luts, y->luts);
		assert_int_equal(x->requesters, y->requesters);
		assert_int_equal(x->reserved, y->reserved);
	}
	for (i = 0; i < a->ndevices; i++) {
		const struct sio_topo_device *x = &a->devices[i], *y = &b->devices[i];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->node, y->node);
		assert_string_equal(x->bdf, y->bdf);
		assert_int_equal(x->vendor, y->vendor);
		assert_int_equal(x->device, y->device);
		assert_int_equal(x->subsys_vendor, y->subsys_vendor);
		assert_int_equal(x->subsys_device, y->subsys_device);
		assert_int_equal(x->class_code, y->class_code);
		assert_int_equal(x->revision, y->revision);
		assert_int_equal(x->config_size, y->config_size);
		assert_int_equal(x->model, y->model);
		for (k = 0; k < SIO_MAX_BARS; k++) {
			assert_true(x->bar[k].size == y->bar[k].size);
			assert_int_equal(x->bar[k].flags, y->bar[k].flags);
		}
	}
	/* Names are zero-padded on both sides: whole records compare too. */
	assert_memory_equal(a->nodes, b->nodes, a->nnodes * sizeof(*a->nodes));
	assert_memory_equal(a->adapters, b->adapters,
			    a->nadapters * sizeof(*a->adapters));
	assert_memory_equal(a->devices, b->devices,
			    a->ndevices * sizeof(*a->devices));
}

/* --- a full valid file ---------------------------------------------------- */

static void test_full_file_parses_field_by_field(void **state)
{
	const char *text =
		"# every keyword and option\n"
		"fabric window=1G luts=64 requesters=16 reserved=1   # defaults\n"
		"\n"
		"node alpha id=7 ram=512M\n"
		"\tnode  beta-2\tid=0x10   \r\n"
		"node gamma_3 id=4294967295 ram=0x40000000\n"
		"adapter alpha ntb0 peers=beta-2,gamma_3 window=2G luts=128 share=8\n"
		"adapter alpha ntb1 peers=delta requesters=64 reserved=0\n"
		"adapter beta-2 ntb0 peers=all\n"
		"adapter gamma_3 x peers=alpha,beta-2 window=0x100000 luts=256 requesters=1 reserved=0\n"
		"node delta id=0\n"
		"adapter delta ntb0 peers=alpha\n"
		"device alpha nvme3 bdf=0000:0A:1f.7 vendor=0x1b36 device=0x0010 "
		"class=0x010802 subsystem_vendor=0x1af4 subsystem_device=4369 "
		"revision=2 config=256 model=nvme bar0=16K,64 bar2=1M,prefetch,64 "
		"bar4=4096\n"
		"device beta-2 gpu12 bdf=ffff:ff:1f.0 vendor=4318 device=0X1EB8 "
		"class=0x030200 bar5=1024G,prefetch\n"
		"device gamma_3 acc0 bdf=0000:01:00.0 vendor=0 device=0 class=0 "
		"subsystem_vendor=0 model=dma\n"
		"device gamma_3 nic0 bdf=0001:01:00.0 vendor=0x8086 device=0x10d3 "
		"class=0x020000 model=generic revision=0xff config=4096\n"
		"device delta nvme10 bdf=0000:01:00.0 vendor=1 device=2 class=3 # tail\n";
	struct sio_topology t;
	const struct sio_topo_device *d;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse(text, &t, err), 0);
	assert_string_equal(err, "");

	assert_int_equal(t.nnodes, 4);
	assert_string_equal(t.nodes[0].name, "alpha");
	assert_int_equal(t.nodes[0].id, 7);
	assert_true(t.nodes[0].ram == 512ull << 20);
	assert_string_equal(t.nodes[1].name, "beta-2");
	assert_int_equal(t.nodes[1].id, 16);
	assert_true(t.nodes[1].ram == 1ull << 30);
	assert_string_equal(t.nodes[2].name, "gamma_3");
	assert_int_equal(t.nodes[2].id, 0xffffffffu);
	assert_true(t.nodes[2].ram == 1ull << 30);
	assert_string_equal(t.nodes[3].name, "delta");
	assert_int_equal(t.nodes[3].id, 0);

	assert_int_equal(t.nadapters, 5);
	/* alpha ntb0: own window and luts, fabric requesters */
	assert_string_equal(t.adapters[0].name, "ntb0");
	assert_int_equal(t.adapters[0].node, 0);
	assert_true(t.adapters[0].peers == ((1u << 1) | (1u << 2)));
	assert_true(t.adapters[0].window == 2ull << 30);
	assert_int_equal(t.adapters[0].luts, 128);
	assert_int_equal(t.adapters[0].requesters, 16);
	assert_int_equal(t.adapters[0].reserved, 1);
	assert_int_equal(t.adapters[0].share, 8);
	assert_int_equal(t.adapters[1].share, 0);
	/* alpha ntb1: a peer defined after it; fabric window and luts */
	assert_string_equal(t.adapters[1].name, "ntb1");
	assert_int_equal(t.adapters[1].node, 0);
	assert_true(t.adapters[1].peers == 1u << 3);
	assert_true(t.adapters[1].window == 1ull << 30);
	assert_int_equal(t.adapters[1].luts, 64);
	assert_int_equal(t.adapters[1].requesters, 64);
	assert_int_equal(t.adapters[1].reserved, 0);
	/* beta-2 ntb0: all = every other node, including delta (defined later) */
	assert_int_equal(t.adapters[2].node, 1);
	assert_true(t.adapters[2].peers == (0xfu & ~(1u << 1)));
	assert_true(t.adapters[2].window == 1ull << 30);
	assert_int_equal(t.adapters[2].luts, 64);
	assert_int_equal(t.adapters[2].requesters, 16);
	assert_int_equal(t.adapters[2].reserved, 1);
	/* gamma_3 x: the smallest window with 256 luts of 4 KiB */
	assert_string_equal(t.adapters[3].name, "x");
	assert_int_equal(t.adapters[3].node, 2);
	assert_true(t.adapters[3].peers == 3);
	assert_true(t.adapters[3].window == 1ull << 20);
	assert_int_equal(t.adapters[3].luts, 256);
	assert_int_equal(t.adapters[3].requesters, 1);
	assert_int_equal(t.adapters[3].reserved, 0);
	assert_int_equal(t.adapters[4].node, 3);
	assert_true(t.adapters[4].peers == 1);

	assert_int_equal(t.ndevices, 5);
	d = &t.devices[0];
	assert_string_equal(d->name, "nvme3");
	assert_int_equal(d->node, 0);
	assert_string_equal(d->bdf, "0000:0a:1f.7");	/* stored in lower case */
	assert_int_equal(d->vendor, 0x1b36);
	assert_int_equal(d->device, 0x0010);
	assert_int_equal(d->class_code, 0x010802);
	assert_int_equal(d->subsys_vendor, 0x1af4);
	assert_int_equal(d->subsys_device, 4369);
	assert_int_equal(d->revision, 2);
	assert_int_equal(d->config_size, 256);
	assert_int_equal(d->model, SIO_MODEL_NVME);
	assert_true(d->bar[0].size == 16384);
	assert_int_equal(d->bar[0].flags, SIO_BAR_MEM64);
	assert_true(d->bar[1].size == 0);
	assert_int_equal(d->bar[1].flags, 0);
	assert_true(d->bar[2].size == 1u << 20);
	assert_int_equal(d->bar[2].flags, SIO_BAR_MEM64 | SIO_BAR_PREFETCH);
	assert_true(d->bar[3].size == 0);
	assert_true(d->bar[4].size == 4096);
	assert_int_equal(d->bar[4].flags, 0);
	assert_true(d->bar[5].size == 0);

	d = &t.devices[1];
	assert_string_equal(d->name, "gpu12");
	assert_int_equal(d->node, 1);
	assert_string_equal(d->bdf, "ffff:ff:1f.0");
	assert_int_equal(d->vendor, 0x10de);
	assert_int_equal(d->device, 0x1eb8);
	assert_int_equal(d->subsys_vendor, 0x10de);	/* defaults */
	assert_int_equal(d->subsys_device, 0x1eb8);
	assert_int_equal(d->revision, 1);
	assert_int_equal(d->config_size, 4096);
	assert_int_equal(d->model, SIO_MODEL_GENERIC);
	assert_true(d->bar[5].size == 1ull << 40);
	assert_int_equal(d->bar[5].flags, SIO_BAR_PREFETCH);

	d = &t.devices[2];
	assert_string_equal(d->name, "acc0");
	assert_int_equal(d->node, 2);
	assert_int_equal(d->vendor, 0);
	assert_int_equal(d->subsys_vendor, 0);	/* given, even if zero */
	assert_int_equal(d->subsys_device, 0);
	assert_int_equal(d->model, SIO_MODEL_DMA);

	d = &t.devices[3];
	assert_string_equal(d->name, "nic0");
	assert_string_equal(d->bdf, "0001:01:00.0");
	assert_int_equal(d->revision, 0xff);
	assert_int_equal(d->model, SIO_MODEL_GENERIC);

	d = &t.devices[4];
	assert_string_equal(d->name, "nvme10");
	assert_int_equal(d->node, 3);
	assert_string_equal(d->bdf, "0000:01:00.0");	/* per node */
	sio_topo_free(&t);
	assert_empty(&t);
	sio_topo_free(&t);	/* twice is harmless */
	sio_topo_free(NULL);
}

static void test_one_node_needs_no_adapter(void **state)
{
	struct sio_topology t;
	char err[ERRLEN];

	(void)state;
	assert_int_equal(parse("node solo id=3\n"
			       "device solo nvme0 bdf=0000:01:00.0 vendor=1 device=2 class=3",
			       &t, err), 0);
	assert_int_equal(t.nnodes, 1);
	assert_int_equal(t.nadapters, 0);
	assert_int_equal(t.ndevices, 1);
	sio_topo_free(&t);
}

static void test_limits_are_reached_exactly(void **state)
{
	/* 64 nodes, 4 adapters on one of them, 31-character names: all
	 * accepted; one node more is too many. */
	char *text = malloc(65536), *s = text;
	struct sio_topology t;
	char err[ERRLEN];
	int i;

	(void)state;
	for (i = 0; i < SIO_MAX_NODES; i++)
		s += sprintf(s, "node n%d id=%d\nadapter n%d a peers=all\n", i,
			     i * 1000, i);
	for (i = 1; i < SIO_MAX_ADAPTERS; i++)
		s += sprintf(s, "adapter n0 b%d peers=n%d\n", i, i);
	s += sprintf(s, "node abcdefghijklmnopqrstuvwxyz01234 id=99999\n");
	assert_int_equal(parse(text, &t, err), -E2BIG);
	assert_non_null(strstr(err, "line 132: more than 64 nodes: "
				    "'abcdefghijklmnopqrstuvwxyz01234'"));
	assert_empty(&t);
	s -= strlen("node abcdefghijklmnopqrstuvwxyz01234 id=99999\n");
	*s = '\0';
	assert_int_equal(parse(text, &t, err), 0);
	assert_int_equal(t.nnodes, 64);
	assert_int_equal(t.nadapters, 67);
	assert_true(t.adapters[0].peers == ~1ull);
	assert_true(t.adapters[63].peers == ~(1ull << 63));
	assert_string_equal(t.adapters[66].name, "b3");
	assert_true(t.adapters[66].peers == 1ull << 3);
	sio_topo_free(&t);

	strcpy(text, "node a_23456789012345678901234567890 id=1 # 31 chars\n"
		     "device a_23456789012345678901234567890 "
		     "nvme123456789012345678901234567 bdf=0000:00:00.0 "
		     "vendor=1 device=1 class=1\n");
	assert_int_equal(parse(text, &t, err), 0);
	assert_string_equal(t.devices[0].name, "nvme123456789012345678901234567");
	sio_topo_free(&t);
	free(text);
}

/* --- the default ---------------------------------------------------------- */

static void test_default_is_as_specified(void **state)
{
	static const struct {
		const char *name;
		u32 node;
		const char *bdf;
		u16 vendor, device;
		u32 class_code, rev, config, model;
		u64 bar[SIO_MAX_BARS];
		u32 flags[SIO_MAX_BARS];
	} want[] = {
		{ "nvme0", 0, "0000:01:00.0", 0x1b36, 0x0010, 0x010802, 2, 4096,
		  SIO_MODEL_NVME, { 256 << 10 }, { SIO_BAR_MEM64 } },
		{ "nic0", 0, "0000:02:00.0", 0x8086, 0x10d3, 0x020000, 1, 256,
		  SIO_MODEL_GENERIC, { 128 << 10, 0, 16 << 10 }, { 0 } },
		{ "nvme1", 1, "0000:01:00.0", 0x1b36, 0x0010, 0x010802, 2, 4096,
		  SIO_MODEL_NVME, { 256 << 10 }, { SIO_BAR_MEM64 } },
		{ "gpu0", 1, "0000:02:00.0", 0x10de, 0x1eb8, 0x030200, 1, 4096,
		  SIO_MODEL_GENERIC, { 16 << 20, 256 << 20 },
		  { 0, SIO_BAR_MEM64 | SIO_BAR_PREFETCH } },
		{ "acc0", 2, "0000:01:00.0", 0x1234, 0x11e8, 0x120000, 1, 4096,
		  SIO_MODEL_DMA, { 1 << 20, 0, 64 << 20 },
		  { 0, 0, SIO_BAR_MEM64 | SIO_BAR_PREFETCH } },
		{ "nvme2", 2, "0000:02:00.0", 0x1b36, 0x0010, 0x010802, 2, 4096,
		  SIO_MODEL_NVME, { 256 << 10 }, { SIO_BAR_MEM64 } },
		{ "acc1", 3, "0000:01:00.0", 0x1234, 0x11e8, 0x120000, 1, 4096,
		  SIO_MODEL_DMA, { 1 << 20, 0, 64 << 20 },
		  { 0, 0, SIO_BAR_MEM64 | SIO_BAR_PREFETCH } },
		{ "nic1", 3, "0000:02:00.0", 0x8086, 0x10d3, 0x020000, 1, 256,
		  SIO_MODEL_GENERIC, { 128 << 10, 0, 16 << 10 }, { 0 } },
	};
	struct sio_topology t;
	char name[8];
	u32 i, b;

	(void)state;
	assert_int_equal(sio_topo_default(&t), 0);
	assert_int_equal(t.nnodes, 4);
	assert_int_equal(t.nadapters, 4);
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "host%u", i);
		assert_string_equal(t.nodes[i].name, name);
		assert_int_equal(t.nodes[i].id, i);
		assert_true(t.nodes[i].ram == 1ull << 30);
		assert_string_equal(t.adapters[i].name, "ntb0");
		assert_int_equal(t.adapters[i].node, i);
		assert_true(t.adapters[i].peers == (0xfu & ~(1u << i)));
		assert_true(t.adapters[i].window == 4ull << 30);
		assert_int_equal(t.adapters[i].luts, 256);
		assert_int_equal(t.adapters[i].requesters, 32);
		assert_int_equal(t.adapters[i].reserved, 2);
	}
	assert_int_equal(t.ndevices, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < t.ndevices; i++) {
		const struct sio_topo_device *d = &t.devices[i];

		assert_string_equal(d->name, want[i].name);
		assert_int_equal(d->node, want[i].node);
		assert_string_equal(d->bdf, want[i].bdf);
		assert_int_equal(d->vendor, want[i].vendor);
		assert_int_equal(d->device, want[i].device);
		assert_int_equal(d->subsys_vendor, want[i].vendor);
		assert_int_equal(d->subsys_device, want[i].device);
		assert_int_equal(d->class_code, want[i].class_code);
		assert_int_equal(d->revision, want[i].rev);
		assert_int_equal(d->config_size, want[i].config);
		assert_int_equal(d->model, want[i].model);
		for (b = 0; b < SIO_MAX_BARS; b++) {
			assert_true(d->bar[b].size == want[i].bar[b]);
			assert_int_equal(d->bar[b].flags, want[i].flags[b]);
		}
	}
	sio_topo_free(&t);
}

static void test_shipped_default_equals_builtin(void **state)
{
	struct sio_topology file, builtin;
	char path[4096], err[ERRLEN];
	const char *src = getenv("SRCDIR");

	(void)state;
	snprintf(path, sizeof(path), "%s/contrib/topology/default.conf",
		 src && *src ? src : ".");
	if (sio_topo_load(path, &file, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	assert_int_equal(sio_topo_default(&builtin), 0);
	assert_topo_equal(&file, &builtin);
	sio_topo_free(&file);
	sio_topo_free(&builtin);
}

/* The literal displays under EXAMPLES of smartio.conf(5): the first is the
 * default cluster, every one parses. */
static void test_man_page_examples_parse(void **state)
{
	struct sio_topology t, builtin;
	char path[4096], err[ERRLEN], line[1024], *text;
	const char *src = getenv("SRCDIR");
	size_t len = 0;
	int in_examples = 0, in_display = 0, displays = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/man/smartio.conf.5",
		 src && *src ? src : ".");
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	text = malloc(65536);
	assert_int_equal(sio_topo_default(&builtin), 0);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, ".Sh ", 4)) {
			in_examples = !strcmp(line, ".Sh EXAMPLES\n");
		} else if (in_examples && !strncmp(line, ".Bd -literal", 12)) {
			in_display = 1;
			len = 0;
		} else if (in_display && !strcmp(line, ".Ed\n")) {
			in_display = 0;
			if (sio_topo_parse(text, len, &t, err, sizeof(err)))
				fail_msg("%s display %d: %s", path, displays, err);
			if (displays++ == 0)
				assert_topo_equal(&t, &builtin);
			sio_topo_free(&t);
		} else if (in_display) {
			assert_null(strchr(line, '\\'));	/* no roff escapes */
			assert_true(len + strlen(line) < 65536);
			memcpy(text + len, line, strlen(line));
			len += strlen(line);
		}
	}
	fclose(f);
	free(text);
	sio_topo_free(&builtin);
	assert_true(displays >= 2);
}

/* --- every rule rejected with line and token ------------------------------ */

struct bad {
	const char *text;
	int rc;
	unsigned line;
	const char *want;	/* substring of the message, naming the token */
};

/* Two connected nodes, so that device lines only need their own fields. */
#define N2 "node a id=0\nnode b id=1\nadapter a n peers=b\nadapter b n peers=a\n"
#define DEV "device a nvme0 bdf=0000:01:00.0 vendor=1 device=2 class=3"
#define L5 N2 DEV	/* the device line is line 5 */

static const struct bad bad_cases[] = {
	/* lines, keywords, fields */
	{ "bogus x\n", -EINVAL, 1, "unknown keyword 'bogus'" },
	{ "# c\n\n  Node a id=0\n", -EINVAL, 3, "unknown keyword 'Node'" },
	{ "node a id=0 a=1 a=2 a=3 a=4 a=5 a=6 a=7 a=8 a=9 a=10 a=11 a=12 a=13 "
	  "a=14 a=15 a=16 a=17 a=18 a=19 a=20 a=21 a=22 a=23 a=24 a=25 a=26 "
	  "a=27 a=28 a=29 a=30\n", -EINVAL, 1, "too many fields (more than 32): 'a=30'" },
	{ "", -EINVAL, 1, "no node defined" },
	{ "# only\n\n# comments\n", -EINVAL, 3, "no node defined" },
	{ "node a id=0\nnode b id=1\0\n", -EINVAL, 2, "NUL byte" },
	/* node */
	{ "node\n", -EINVAL, 1, "node needs a name: 'node'" },
	{ "node A id=0\n", -EINVAL, 1, "bad node name (a-z 0-9 _ -, at most 31): 'A'" },
	{ "node a.b id=0\n", -EINVAL, 1, "bad node name (a-z 0-9 _ -, at most 31): 'a.b'" },
	{ "node abcdefghijklmnopqrstuvwxyz012345 id=0\n", -EINVAL, 1,
	  "bad node name (a-z 0-9 _ -, at most 31): 'abcdefghijklmnopqrstuvwxyz012345'" },
	{ "node all id=0\n", -EINVAL, 1, "node name reserved for peers=all: 'all'" },
	{ "node a id=0\nnode a id=1\n", -EINVAL, 2, "duplicate node 'a'" },
	{ "node a id=5\nnode b id=0x5\n", -EINVAL, 2, "duplicate id (node 'a'): 'id=0x5'" },
	{ "node a\n", -EINVAL, 1, "node needs id=: 'a'" },
	{ "node a ram=1G\n", -EINVAL, 1, "node needs id=: 'a'" },
	{ "node a id=4294967296\n", -EINVAL, 1, "value out of range (at most 4294967295): 'id=4294967296'" },
	{ "node a id=12x\n", -EINVAL, 1, "bad number: 'id=12x'" },
	{ "node a id=-1\n", -EINVAL, 1, "bad number: 'id=-1'" },
	{ "node a id=+1\n", -EINVAL, 1, "bad number: 'id=+1'" },
	{ "node a id=1K\n", -EINVAL, 1, "bad number: 'id=1K'" },
	{ "node a id=\n", -EINVAL, 1, "bad number: 'id='" },
	{ "node a id=0x\n", -EINVAL, 1, "bad number: 'id=0x'" },
	{ "node a id=0 ram=512K\n", -EINVAL, 1, "ram must be a multiple of 4K from 1M to 252G: 'ram=512K'" },
	{ "node a id=0 ram=1048577\n", -EINVAL, 1, "ram must be a multiple of 4K from 1M to 252G: 'ram=1048577'" },
	{ "node a id=0 ram=253G\n", -EINVAL, 1, "ram must be a multiple of 4K from 1M to 252G: 'ram=253G'" },
	{ "fabric window=2048G\n", -EINVAL, 1, "window must be a power of two from 1M to 1T: 'window=2048G'" },
	{ "node a id=0 ram=1m\n", -EINVAL, 1, "bad size: 'ram=1m'" },
	{ "node a id=0 cpus=4\n", -EINVAL, 1, "unknown node option: 'cpus=4'" },
	{ "node a id=0 b\n", -EINVAL, 1, "expected key=value: 'b'" },
	{ "node a id=0 =3\n", -EINVAL, 1, "expected key=value: '=3'" },
	{ "node a id=0 id=1\n", -EINVAL, 1, "id given twice: 'id=1'" },
	/* fabric */
	{ "fabric luts=8\nfabric luts=8\n", -EINVAL, 2, "fabric given twice: 'fabric'" },
	{ N2 "fabric luts=8\n", -EINVAL, 5, "fabric must come before any adapter: 'fabric'" },
	{ "fabric window=3M\n", -EINVAL, 1, "window must be a power of two from 1M to 1T: 'window=3M'" },
	{ "fabric luts=2 luts=4\n", -EINVAL, 1, "luts given twice: 'luts=4'" },
	{ "fabric window=1M luts=512\n", -EINVAL, 1, "window/luts must be at least 4096 (window 1048576, 512 luts): 'luts=512'" },
	{ "fabric window=1M\nnode a id=0\nadapter a n peers=all luts=512\n", -EINVAL, 3,
	  "window/luts must be at least 4096 (window 1048576, 512 luts): 'luts=512'" },
	{ "fabric reserved=32\n", -EINVAL, 1, "reserved must be below requesters (32): 'reserved=32'" },
	/* Issue 12, defect 8: one node's share of an adapter's table. */
	{ "fabric luts=8 share=16\n", -EINVAL, 1, "share must be at most luts (8): 'share=16'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=4 share=5\n", -EINVAL, 3,
	  "share must be at most luts (4): 'share=5'" },
	{ "fabric requesters=2\n", -EINVAL, 1, "reserved must be below requesters (2): 'requesters=2'" },
	{ "fabric peers=all\n", -EINVAL, 1, "unknown fabric option: 'peers=all'" },
	/* adapter */
	{ "adapter a n peers=b\nnode a id=0\n", -EINVAL, 1, "unknown node (define it first): 'a'" },
	{ "node a id=0\nadapter a\n", -EINVAL, 2, "adapter needs a node and a name: 'a'" },
	{ "node a id=0\nnode b id=1\nadapter a N peers=b\n", -EINVAL, 3,
	  "bad adapter name (a-z 0-9 _ -, at most 31): 'N'" },
	{ N2 "adapter a n peers=b\n", -EINVAL, 5, "duplicate adapter 'n' on node 'a'" },
	{ N2 "adapter a n2 peers=b\nadapter a n3 peers=b\nadapter a n4 peers=b\n"
	  "adapter a n5 peers=b\n", -E2BIG, 8, "more than 4 adapters on node 'a': 'n5'" },
	{ "node a id=0\nnode b id=1\nadapter a n\n", -EINVAL, 3, "adapter needs peers=: 'n'" },
	{ "node a id=0\nnode b id=1\nadapter a n window=1G\n", -EINVAL, 3, "adapter needs peers=: 'n'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=\n", -EINVAL, 3, "empty peers list: 'peers='" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b,\n", -EINVAL, 3, "empty name in peers list: 'peers=b,'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=,b\n", -EINVAL, 3, "empty name in peers list: 'peers=,b'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=all,b\n", -EINVAL, 3, "'all' must stand alone: 'peers=all,b'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=B\n", -EINVAL, 3, "bad node name 'B' in 'peers=B'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b,c\nadapter b n peers=a\n# more\n",
	  -EINVAL, 3, "unknown peer 'c': 'peers=b,c'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b\nadapter b n peers=a,b\n",
	  -EINVAL, 4, "adapter lists its own node 'b': 'peers=a,b'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b,b\nadapter b n peers=a\n",
	  -EINVAL, 3, "peer 'b' listed twice: 'peers=b,b'" },
	{ "node a id=0\nadapter a n peers=all\n", -EINVAL, 2,
	  "adapter 'n' reaches no other node: 'peers=all'" },
	{ "node a id=0\nadapter a n peers=a\n", -EINVAL, 2,
	  "adapter lists its own node 'a': 'peers=a'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b window=3M\n", -EINVAL, 3,
	  "window must be a power of two from 1M to 1T: 'window=3M'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b window=512K\n", -EINVAL, 3,
	  "window must be a power of two from 1M to 1T: 'window=512K'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b window=0\n", -EINVAL, 3,
	  "window must be a power of two from 1M to 1T: 'window=0'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=3\n", -EINVAL, 3,
	  "luts must be a power of two from 1 to 4096: 'luts=3'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=0\n", -EINVAL, 3,
	  "luts must be a power of two from 1 to 4096: 'luts=0'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=8192 window=1T\n", -EINVAL, 3,
	  "bad size: 'window=1T'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=8192 window=1024G\n", -EINVAL, 3,
	  "luts must be a power of two from 1 to 4096: 'luts=8192'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b window=1M luts=512\n", -EINVAL, 3,
	  "window/luts must be at least 4096 (window 1048576, 512 luts): 'luts=512'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=4096 window=8M\n", -EINVAL, 3,
	  "window/luts must be at least 4096 (window 8388608, 4096 luts): 'luts=4096'" },
	{ "fabric luts=4096\nnode a id=0\nnode b id=1\nadapter a n peers=b window=8M\n", -EINVAL, 4,
	  "window/luts must be at least 4096 (window 8388608, 4096 luts): 'window=8M'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b requesters=0\n", -EINVAL, 3,
	  "requesters must be from 1 to 64: 'requesters=0'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b requesters=65\n", -EINVAL, 3,
	  "requesters must be from 1 to 64: 'requesters=65'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b requesters=2 reserved=2\n", -EINVAL, 3,
	  "reserved must be below requesters (2): 'reserved=2'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b reserved=99999999999\n", -EINVAL, 3,
	  "reserved must be below requesters (32): 'reserved=99999999999'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b requesters=1\n", -EINVAL, 3,
	  "reserved must be below requesters (1): 'requesters=1'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b ram=1G\n", -EINVAL, 3,
	  "unknown adapter option: 'ram=1G'" },
	{ "node a id=0\nnode b id=1\nadapter a n peers=b\n", -EINVAL, 2, "node has no adapter (2 nodes): 'b'" },
	/* device */
	{ N2 "device z nvme0 bdf=0000:01:00.0\n", -EINVAL, 5, "unknown node (define it first): 'z'" },
	{ N2 "device a\n", -EINVAL, 5, "device needs a node and a name: 'a'" },
	{ N2 "device a disk0 bdf=0000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad device name (nvme, gpu, nic or acc and a number): 'disk0'" },
	{ N2 "device a nvme01 bdf=0000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad device name (nvme, gpu, nic or acc and a number): 'nvme01'" },
	{ N2 "device a nvme bdf=0000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad device name (nvme, gpu, nic or acc and a number): 'nvme'" },
	{ N2 "device a gpu-1 bdf=0000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad device name (nvme, gpu, nic or acc and a number): 'gpu-1'" },
	{ N2 "device a NIC1 bdf=0000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad device name (nvme, gpu, nic or acc and a number): 'NIC1'" },
	{ N2 "device a fn0 bdf=0000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad device name (nvme, gpu, nic or acc and a number): 'fn0'" },
	{ N2 "device a acc12345678901234567890123456789 bdf=0000:01:00.0 vendor=1 device=2 class=3\n",
	  -EINVAL, 5, "bad device name (nvme, gpu, nic or acc and a number): 'acc12345678901234567890123456789'" },
	{ N2 DEV "\n" "device b nvme0 bdf=0000:02:00.0 vendor=1 device=2 class=3\n", -EINVAL, 6,
	  "duplicate device 'nvme0'" },
	{ N2 "device a nvme0 vendor=1 device=2 class=3\n", -EINVAL, 5, "device needs bdf=: 'nvme0'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 device=2 class=3\n", -EINVAL, 5, "device needs vendor=: 'nvme0'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 vendor=1 class=3\n", -EINVAL, 5, "device needs device=: 'nvme0'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 vendor=1 device=2\n", -EINVAL, 5, "device needs class=: 'nvme0'" },
	{ N2 "device a nvme0 bdf=0000:01:20.0 vendor=1 device=2 class=3\n", -EINVAL, 5,
	  "bad PCI address (dddd:bb:dd.f, device below 0x20, function below 8): 'bdf=0000:01:20.0'" },
	{ N2 "device a nvme0 bdf=0000:01:00.8 vendor=1 device=2 class=3\n", -EINVAL, 5, "'bdf=0000:01:00.8'" },
	{ N2 "device a nvme0 bdf=000:01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5, "'bdf=000:01:00.0'" },
	{ N2 "device a nvme0 bdf=0000-01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5, "'bdf=0000-01:00.0'" },
	{ N2 "device a nvme0 bdf=0000:0g:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5, "'bdf=0000:0g:00.0'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0x vendor=1 device=2 class=3\n", -EINVAL, 5, "'bdf=0000:01:00.0x'" },
	{ N2 "device a nvme0 bdf=01:00.0 vendor=1 device=2 class=3\n", -EINVAL, 5, "'bdf=01:00.0'" },
	{ N2 "device a nvme0 bdf=0000:0a:00.0 vendor=1 device=2 class=3\n"
	  "device a nvme1 bdf=0000:0A:00.0 vendor=1 device=2 class=3\n", -EINVAL, 6,
	  "duplicate bdf on node 'a': 'bdf=0000:0A:00.0'" },
	{ L5 " vendor=4\n", -EINVAL, 5, "vendor given twice: 'vendor=4'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 vendor=0x10000 device=2 class=3\n", -EINVAL, 5,
	  "value out of range (at most 65535): 'vendor=0x10000'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 vendor=1 device=65536 class=3\n", -EINVAL, 5,
	  "value out of range (at most 65535): 'device=65536'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 vendor=1 device=2 class=0x1000000\n", -EINVAL, 5,
	  "value out of range (at most 16777215): 'class=0x1000000'" },
	{ N2 "device a nvme0 bdf=0000:01:00.0 vendor=0x1b36z device=2 class=3\n", -EINVAL, 5,
	  "bad number: 'vendor=0x1b36z'" },
	{ L5 " subsystem_vendor=0x10000\n", -EINVAL, 5, "value out of range (at most 65535): 'subsystem_vendor=0x10000'" },
	{ L5 " subsystem_device=x\n", -EINVAL, 5, "bad number: 'subsystem_device=x'" },
	{ L5 " revision=256\n", -EINVAL, 5, "value out of range (at most 255): 'revision=256'" },
	{ L5 " config=512\n", -EINVAL, 5, "config must be 256 or 4096: 'config=512'" },
	{ L5 " config=4K\n", -EINVAL, 5, "bad number: 'config=4K'" },
	{ L5 " model=gpu\n", -EINVAL, 5, "unknown model (generic, nvme or dma): 'model=gpu'" },
	{ L5 " bar0=5000\n", -EINVAL, 5, "BAR size must be a power of two from 4K to 1024G: 'bar0=5000'" },
	{ L5 " bar1=2K\n", -EINVAL, 5, "BAR size must be a power of two from 4K to 1024G: 'bar1=2K'" },
	{ L5 " bar2=2048G\n", -EINVAL, 5, "BAR size must be a power of two from 4K to 1024G: 'bar2=2048G'" },
	{ L5 " bar3=0\n", -EINVAL, 5, "BAR size must be a power of two from 4K to 1024G: 'bar3=0'" },
	{ L5 " bar0=16Q\n", -EINVAL, 5, "bad size: 'bar0=16Q'" },
	{ L5 " bar0=,64\n", -EINVAL, 5, "bad size: 'bar0=,64'" },
	{ L5 " bar0=16K,fast\n", -EINVAL, 5, "unknown BAR flag 'fast' in 'bar0=16K,fast'" },
	{ L5 " bar0=16K,\n", -EINVAL, 5, "unknown BAR flag '' in 'bar0=16K,'" },
	{ L5 " bar0=16K,64,64\n", -EINVAL, 5, "BAR flag '64' given twice: 'bar0=16K,64,64'" },
	{ L5 " bar0=16K,32\n", -EINVAL, 5, "unknown BAR flag '32' in 'bar0=16K,32'" },
	{ L5 " bar0=16K bar0=16K\n", -EINVAL, 5, "bar0 given twice: 'bar0=16K'" },
	{ L5 " bar5=16K,64\n", -EINVAL, 5, "a 64-bit BAR takes the next one too, bar5 is the last: 'bar5=16K,64'" },
	{ L5 " bar0=16K,64 bar1=16K\n", -EINVAL, 5, "bar1 is the upper half of 64-bit bar0: 'bar1=16K'" },
	{ L5 " bar3=8K bar2=1M,prefetch,64\n", -EINVAL, 5, "bar3 is the upper half of 64-bit bar2: 'bar3=8K'" },
	{ L5 " bar4=16K,64 bar5=16K,64\n", -EINVAL, 5, "bar5 is the upper half of 64-bit bar4: 'bar5=16K,64'" },
	{ L5 " bar6=16K\n", -EINVAL, 5, "unknown device option: 'bar6=16K'" },
	{ L5 " bar01=16K\n", -EINVAL, 5, "unknown device option: 'bar01=16K'" },
	{ L5 " irq=5\n", -EINVAL, 5, "unknown device option: 'irq=5'" },
	/* Issue 17: switches, cascades and adapters cabled to them. */
	{ "switch s ports=1\n", -EINVAL, 1, "ports must be from 2 to 24: 'ports=1'" },
	{ "switch s ports=25\n", -EINVAL, 1, "ports must be from 2 to 24: 'ports=25'" },
	{ "switch s ports=x\n", -EINVAL, 1, "bad number: 'ports=x'" },
	{ "switch s\nswitch s\n", -EINVAL, 2, "duplicate switch 's'" },
	{ "switch S\n", -EINVAL, 1, "bad switch name (a-z 0-9 _ -, at most 31): 'S'" },
	{ "switch\n", -EINVAL, 1, "switch needs a name: 'switch'" },
	{ "switch s requesters=4 reserved=4\n", -EINVAL, 1, "reserved must be below requesters (4): 'reserved=4'" },
	{ "switch s requesters=65\n", -EINVAL, 1, "requesters must be from 1 to 64: 'requesters=65'" },
	{ "switch s luts=4\n", -EINVAL, 1, "unknown switch option: 'luts=4'" },
	{ "switch s ports=4\ncascade s:0 s:1\n", -EINVAL, 2, "cascade joins a switch to itself: 's:1'" },
	{ "switch s ports=4\nswitch t ports=4\ncascade s:0 t:4\n", -EINVAL, 3, "value out of range (at most 3): 't:4'" },
	{ "switch s ports=4\nswitch t ports=4\ncascade s:0 t:0\ncascade s:0 t:1\n", -EINVAL, 4, "switch port already cabled: 's:0'" },
	{ "cascade s:0 t:0\n", -EINVAL, 1, "unknown switch (define it first): 's:0'" },
	{ "switch s ports=4\ncascade s:0\n", -EINVAL, 2, "cascade needs two SWITCH:PORT ends: 's:0'" },
	{ "switch s ports=4\nswitch t\ncascade s:-1 t:0\n", -EINVAL, 3, "bad number: 's:-1'" },
	{ "switch s ports=4\nnode a id=0\nadapter a n switch=s\n", -EINVAL, 3, "expected SWITCH:PORT: 'switch=s'" },
	{ "switch s ports=4\nnode a id=0\nnode b id=1\nadapter a n switch=s:0\nadapter b n switch=s:0\n", -EINVAL, 5, "switch port already cabled: 'switch=s:0'" },
	{ "switch s ports=4\nnode a id=0\nnode b id=1\nadapter a n switch=s:0 peers=b\n", -EINVAL, 4, "adapter takes peers= or switch=, not both: 'switch=s:0'" },
	{ "switch s ports=4\nnode a id=0\nnode b id=1\nadapter a n switch=s:0\nadapter b n peers=a\n", -EINVAL, 4, "adapter 'n' reaches no other node through its switch" },
	{ "switch s0\nswitch s1\nswitch s2\nswitch s3\nswitch s4\nswitch s5\nswitch s6\nswitch s7\nswitch s8\n"
	  "cascade s0:0 s1:0\ncascade s1:1 s2:0\ncascade s2:1 s3:0\ncascade s3:1 s4:0\ncascade s4:1 s5:0\n"
	  "cascade s5:1 s6:0\ncascade s6:1 s7:0\ncascade s7:1 s8:0\nnode a id=0\n", -EINVAL, 9,
	  "switch 's8' is 9 switches away from 's0' (at most 8 on a path): 's8'" },
	{ "switch s0\nswitch s1\nswitch s2\nswitch s3\nswitch s4\nswitch s5\nswitch s6\nswitch s7\nswitch s8\n"
	  "switch s9\nswitch s10\nswitch s11\nswitch s12\nswitch s13\nswitch s14\nswitch s15\nswitch s16\n", -E2BIG, 17,
	  "more than 16 switches: 's16'" },
};

static void test_each_rule_rejects_with_line_and_token(void **state)
{
	struct sio_topology t;
	char err[ERRLEN], prefix[32];
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad *c = &bad_cases[i];
		int rc;

		/* The NUL case needs its real length. */
		len = strlen(c->text);
		if (strstr(c->want, "NUL"))
			len += 2;
		memset(&t, 0x5a, sizeof(t));
		strcpy(err, "unset");
		rc = sio_topo_parse(c->text, len, &t, err, sizeof(err));
		snprintf(prefix, sizeof(prefix), "line %u: ", c->line);
		if (rc != c->rc || strncmp(err, prefix, strlen(prefix)) != 0 ||
		    !strstr(err, c->want))
			fail_msg("case %zu: got %d '%s', want %d '%s%s'", i, rc,
				 err, c->rc, prefix, c->want);
		assert_empty(&t);
	}
}

static void test_too_many_nodes_is_e2big(void **state)
{
	char *text = malloc(65 * 64), *s = text;
	struct sio_topology t;
	char err[ERRLEN];
	int i;

	(void)state;
	for (i = 0; i <= SIO_MAX_NODES; i++)
		s += sprintf(s, "node n%d id=%d\n", i, i);
	assert_int_equal(parse(text, &t, err), -E2BIG);
	assert_string_equal(err, "line 65: more than 64 nodes: 'n64'");
	assert_empty(&t);
	free(text);
}

static void test_error_buffer_handling(void **state)
{
	struct sio_topology t;
	char small[12];

	(void)state;
	/* No buffer at all */
	assert_int_equal(sio_topo_parse("bogus\n", 6, &t, NULL, 0), -EINVAL);
	assert_empty(&t);
	/* Truncated, still terminated */
	memset(small, 'x', sizeof(small));
	assert_int_equal(sio_topo_parse("\n\nbogus\n", 8, &t, small, sizeof(small)),
			 -EINVAL);
	assert_string_equal(small, "line 3: unk");
	/* Only len bytes are read */
	assert_int_equal(sio_topo_parse("node a id=0\ngarbage", 12, &t, NULL, 0), 0);
	assert_int_equal(t.nnodes, 1);
	sio_topo_free(&t);
	assert_int_equal(sio_topo_parse(NULL, 0, &t, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "line 1: no ");
}

/* --- sizes and numbers ---------------------------------------------------- */

static void test_sizes_and_suffixes(void **state)
{
	static const struct {
		const char *text;
		unsigned long long value;	/* 0: rejected */
	} sizes[] = {
		{ "1M", 1ull << 20 },
		{ "1024K", 1ull << 20 },
		{ "1024k", 1ull << 20 },
		{ "1048576", 1ull << 20 },
		{ "0x100000", 1ull << 20 },
		{ "0X100000", 1ull << 20 },
		{ "0x10M", 16ull << 20 },
		{ "0xaK", 0 },		/* 10K: below 1M */
		{ "0x400k", 1ull << 20 },
		{ "3M", 3ull << 20 },
		{ "2G", 2ull << 30 },
		{ "0002G", 2ull << 30 },
		{ "4294967296", 4ull << 30 },
		{ "252G", 252ull << 30 },	/* the largest ram */
		{ "0x3f00000000", 252ull << 30 },
		{ "1m", 0 }, { "1g", 0 }, { "1T", 0 }, { "1MB", 0 }, { "1MK", 0 },
		{ "1.5G", 0 }, { "M", 0 }, { "0x", 0 }, { "0xM", 0 }, { "-1M", 0 },
		{ "+1M", 0 }, { "", 0 }, { "0b1", 0 }, { "1e6", 0 },
		{ "17179869184G", 0 }, { "18446744073709551616", 0 },
		{ "0x10000000000000000", 0 }, { "99999999999999999999999", 0 },
	};
	struct sio_topology t;
	char text[128], err[ERRLEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int rc;

		snprintf(text, sizeof(text), "node a id=0 ram=%s", sizes[i].text);
		rc = parse(text, &t, err);
		if (sizes[i].value) {
			if (rc)
				fail_msg("'%s': %s", sizes[i].text, err);
			assert_true(t.nodes[0].ram == sizes[i].value);
			sio_topo_free(&t);
		} else {
			if (rc != -EINVAL || !strstr(err, "line 1: ") ||
			    !strstr(err, "'ram=") ||
			    !strstr(err, sizes[i].text))
				fail_msg("'%s' accepted or badly reported: %d '%s'",
					 sizes[i].text, rc, err);
		}
	}
	/* A too large value names the limit. */
	assert_int_equal(parse("node a id=0 ram=18446744073709551616", &t, err),
			 -EINVAL);
	assert_string_equal(err, "line 1: value out of range (at most "
				 "18446744073709551615): 'ram=18446744073709551616'");
	/* BAR and window sizes use the same syntax. */
	assert_int_equal(parse("node a id=0\n"
			       "device a gpu0 bdf=0000:01:00.0 vendor=1 device=2 class=3 "
			       "bar0=4k bar1=0x2000 bar2=4096 bar3=1M bar4=1G bar5=0x4K",
			       &t, err), 0);
	assert_true(t.devices[0].bar[0].size == 4096);
	assert_true(t.devices[0].bar[1].size == 8192);
	assert_true(t.devices[0].bar[2].size == 4096);
	assert_true(t.devices[0].bar[3].size == 1ull << 20);
	assert_true(t.devices[0].bar[4].size == 1ull << 30);
	assert_true(t.devices[0].bar[5].size == 4096);
	sio_topo_free(&t);
	assert_int_equal(parse("fabric window=0x100000 luts=0x100\nnode a id=0\n",
			       &t, err), 0);
	sio_topo_free(&t);
	/* Plain numbers (ids, counts, PCI ids) take no suffix. */
	assert_int_equal(parse("fabric luts=1K\n", &t, err), -EINVAL);
	assert_string_equal(err, "line 1: bad number: 'luts=1K'");
}

/* --- loading files -------------------------------------------------------- */

static char *write_temp(const char *text, size_t len)
{
	char *path = strdup("/tmp/test_topology_parse.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_load(void **state)
{
	struct sio_topology t, u;
	char err[ERRLEN], *path, *big;
	const char *text = "node a id=0\nnode b id=1\nadapter a n peers=b\n"
			   "adapter b n peers=a\ndevice b nic7 bdf=0000:03:00.0 "
			   "vendor=0x8086 device=0x10d3 class=0x020000";
	size_t bigsz = SIO_TOPO_MAX_FILE + 1;

	(void)state;
	memset(&t, 0x5a, sizeof(t));
	assert_int_equal(sio_topo_load("/nonexistent/x.conf", &t, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, strerror(ENOENT));
	assert_empty(&t);
	assert_int_equal(sio_topo_load("/tmp", &t, err, sizeof(err)), -EISDIR);
	assert_empty(&t);

	path = write_temp(text, strlen(text));
	assert_int_equal(sio_topo_load(path, &t, err, sizeof(err)), 0);
	assert_int_equal(parse(text, &u, err), 0);
	assert_topo_equal(&t, &u);
	sio_topo_free(&t);
	sio_topo_free(&u);
	unlink(path);
	free(path);

	path = write_temp("node a id=0\n\nnode b id=x\n",
			  strlen("node a id=0\n\nnode b id=x\n"));
	assert_int_equal(sio_topo_load(path, &t, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 3: bad number: 'id=x'");
	assert_empty(&t);
	unlink(path);
	free(path);

	/* One byte above the limit: E2BIG; at the limit: parsed. */
	big = malloc(bigsz);
	memset(big, ' ', bigsz);
	memcpy(big, "node a id=0\n#", 13);
	path = write_temp(big, bigsz);
	assert_int_equal(sio_topo_load(path, &t, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "16M"));
	assert_empty(&t);
	assert_int_equal(truncate(path, (off_t)(bigsz - 1)), 0);
	assert_int_equal(sio_topo_load(path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nnodes, 1);
	sio_topo_free(&t);
	unlink(path);
	free(path);
	free(big);
}

/* --- generated clusters --------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Writes t as smartio.conf text, for a round trip through the parser. */
static char *to_text(const struct sio_topology *t, size_t *len)
{
	static const char *const models[] = { "generic", "nvme", "dma" };
	size_t cap = 4096 + (size_t)t->ndevices * 256 + t->nadapters * 2560 +
		     t->nnodes * 128;
	char *text = malloc(cap), *s = text;
	u32 i, b, k;

	for (i = 0; i < t->nnodes; i++)
		s += sprintf(s, "node %s id=%u ram=%llu\n", t->nodes[i].name,
			     t->nodes[i].id, (unsigned long long)t->nodes[i].ram);
	for (i = 0; i < t->nadapters; i++) {
		const struct sio_topo_adapter *a = &t->adapters[i];
		const char *sep = "";

		s += sprintf(s, "adapter %s %s peers=", t->nodes[a->node].name,
			     a->name);
		for (k = 0; k < t->nnodes; k++)
			if (a->peers & (1ull << k)) {
				s += sprintf(s, "%s%s", sep, t->nodes[k].name);
				sep = ",";
			}
		s += sprintf(s, " window=%llu luts=%u requesters=%u reserved=%u\n",
			     (unsigned long long)a->window, a->luts,
			     a->requesters, a->reserved);
	}
	for (i = 0; i < t->ndevices; i++) {
		const struct sio_topo_device *d = &t->devices[i];

		s += sprintf(s, "device %s %s bdf=%s vendor=0x%x device=0x%x "
			     "class=0x%06x subsystem_vendor=%u subsystem_device=%u "
			     "revision=%u config=%u model=%s",
			     t->nodes[d->node].name, d->name, d->bdf, d->vendor,
			     d->device, d->class_code, d->subsys_vendor,
			     d->subsys_device, d->revision, d->config_size,
			     models[d->model]);
		for (b = 0; b < SIO_MAX_BARS; b++)
			if (d->bar[b].size)
				s += sprintf(s, " bar%u=%lluK%s%s", b,
					     (unsigned long long)d->bar[b].size >> 10,
					     d->bar[b].flags & SIO_BAR_MEM64 ? ",64" : "",
					     d->bar[b].flags & SIO_BAR_PREFETCH ? ",prefetch" : "");
		*s++ = '\n';
	}
	*s = '\0';
	*len = (size_t)(s - text);
	return text;
}

static void test_generated_cluster_at_scale(void **state)
{
	struct sio_topology t;
	char **names, want[32];
	u32 i;

	(void)state;
	assert_int_equal(sio_topo_generate(&t, 60, 2048), 0);
	assert_int_equal(t.nnodes, 60);
	assert_int_equal(t.nadapters, 60);
	assert_int_equal(t.ndevices, 122880);
	for (i = 0; i < t.nnodes; i++) {
		snprintf(want, sizeof(want), "gen%u", i);
		assert_string_equal(t.nodes[i].name, want);
		assert_int_equal(t.nodes[i].id, i);
		assert_int_equal(t.adapters[i].node, i);
		assert_true(t.adapters[i].peers ==
			    (((1ull << 60) - 1) & ~(1ull << i)));
	}
	names = malloc(t.ndevices * sizeof(*names));
	for (i = 0; i < t.ndevices; i++) {
		const struct sio_topo_device *d = &t.devices[i];

		snprintf(want, sizeof(want), "nic%u", i);
		assert_string_equal(d->name, want);
		assert_int_equal(d->node, i / 2048);
		assert_int_equal(d->config_size, 256);
		assert_true(d->bar[0].size == 16384);
		assert_true(d->bar[1].size == 0);
		names[i] = t.devices[i].name;
	}
	qsort(names, t.ndevices, sizeof(*names), cmp_str);
	for (i = 1; i < t.ndevices; i++)
		if (!strcmp(names[i], names[i - 1]))
			fail_msg("duplicate name %s", names[i]);
	/* bdfs unique per node: devices of a node are contiguous */
	for (i = 0; i < t.ndevices; i++)
		names[i] = t.devices[i].bdf;
	for (i = 0; i < t.nnodes; i++) {
		u32 k;

		qsort(names + i * 2048, 2048, sizeof(*names), cmp_str);
		for (k = i * 2048 + 1; k < (i + 1) * 2048; k++)
			if (!strcmp(names[k], names[k - 1]))
				fail_msg("duplicate bdf %s on gen%u", names[k], i);
	}
	free(names);
	sio_topo_free(&t);

	assert_int_equal(sio_topo_generate(&t, 0, 1), -EINVAL);
	assert_empty(&t);
	assert_int_equal(sio_topo_generate(&t, 65, 1), -E2BIG);
	assert_empty(&t);
	assert_int_equal(sio_topo_generate(&t, 1, 65281), -E2BIG);
	assert_int_equal(sio_topo_generate(&t, 64, 65280), -E2BIG);
	assert_int_equal(sio_topo_generate(&t, 1, 0), 0);
	assert_int_equal(t.nnodes, 1);
	assert_int_equal(t.ndevices, 0);
	assert_int_equal(t.nadapters, 0);	/* one node needs none */
	assert_null(t.adapters);
	sio_topo_free(&t);
	assert_int_equal(sio_topo_generate(&t, 64, 1), 0);
	assert_true(t.adapters[0].peers == ~1ull);
	sio_topo_free(&t);
}

/* What the generator produces obeys every rule of the parser, and a large
 * file parses (the duplicate checks are hashed, not quadratic). */
static void test_generated_cluster_round_trips(void **state)
{
	struct sio_topology gen, parsed;
	char err[ERRLEN], *text;
	size_t len;

	(void)state;
	assert_int_equal(sio_topo_generate(&gen, 8, 65280 / 16), 0);
	text = to_text(&gen, &len);
	if (sio_topo_parse(text, len, &parsed, err, sizeof(err)))
		fail_msg("%s", err);
	assert_topo_equal(&parsed, &gen);
	sio_topo_free(&parsed);
	sio_topo_free(&gen);
	free(text);

	assert_int_equal(sio_topo_default(&gen), 0);
	text = to_text(&gen, &len);
	assert_int_equal(sio_topo_parse(text, len, &parsed, err, sizeof(err)), 0);
	assert_topo_equal(&parsed, &gen);
	sio_topo_free(&parsed);
	sio_topo_free(&gen);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file_parses_field_by_field),
		cmocka_unit_test(test_one_node_needs_no_adapter),
		cmocka_unit_test(test_limits_are_reached_exactly),
		cmocka_unit_test(test_default_is_as_specified),
		cmocka_unit_test(test_shipped_default_equals_builtin),
		cmocka_unit_test(test_man_page_examples_parse),
		cmocka_unit_test(test_each_rule_rejects_with_line_and_token),
		cmocka_unit_test(test_too_many_nodes_is_e2big),
		cmocka_unit_test(test_error_buffer_handling),
		cmocka_unit_test(test_sizes_and_suffixes),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_generated_cluster_at_scale),
		cmocka_unit_test(test_generated_cluster_round_trips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
