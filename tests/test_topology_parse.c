/* smartio.conf(5): valid files parse field by field, every rule rejects
 * with the line and token, and the shipped default equals the built-in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology_parse.h"

static int parse(const char *text, struct sio_topology *t, char *err)
{
	return sio_topo_parse(text, strlen(text), t, err, 200);
}

static void test_full_file_parses_field_by_field(void **state)
{
	const char *text =
		"# two hosts back to back\n"
		"fabric luts=64 requesters=16 reserved=2 window=1G\n"
		"node a id=7 ram=512M\n"
		"node b id=0x10\n"
		"adapter a ntb0 peers=b window=2G\n"
		"adapter b ntb0 peers=a luts=128 requesters=32\n"
		"device a nvme3 bdf=0000:0a:1f.7 vendor=0x1b36 device=0x0010 "
		"class=0x010802 revision=2 config=256 model=nvme bar0=16K,64 bar2=1M,prefetch\n";
	struct sio_topology t;
	char err[200];

	(void)state;
	assert_int_equal(parse(text, &t, err), 0);
	assert_int_equal(t.nnodes, 2);
	assert_string_equal(t.nodes[0].name, "a");
	assert_int_equal(t.nodes[0].id, 7);
	assert_true(t.nodes[0].ram == 512ull << 20);
	assert_int_equal(t.nodes[1].id, 16);
	assert_true(t.nodes[1].ram == 1ull << 30);
	assert_int_equal(t.nadapters, 2);
	assert_true(t.adapters[0].window == 2ull << 30);
	assert_int_equal(t.adapters[0].luts, 64);
	assert_int_equal(t.adapters[0].requesters, 16);
	assert_true(t.adapters[0].peers == 2);
	assert_int_equal(t.adapters[1].luts, 128);
	assert_true(t.adapters[1].window == 1ull << 30);
	assert_int_equal(t.ndevices, 1);
	assert_string_equal(t.devices[0].bdf, "0000:0a:1f.7");
	assert_int_equal(t.devices[0].class_code, 0x010802);
	assert_int_equal(t.devices[0].subsys_vendor, 0x1b36);
	assert_int_equal(t.devices[0].config_size, 256);
	assert_int_equal(t.devices[0].model, SIO_MODEL_NVME);
	assert_int_equal(t.devices[0].bar[0].size, 16384);
	assert_int_equal(t.devices[0].bar[0].flags, SIO_BAR_MEM64);
	assert_int_equal(t.devices[0].bar[2].flags, SIO_BAR_PREFETCH);
	sio_topo_free(&t);
}

static void test_shipped_default_equals_builtin(void **state)
{
	struct sio_topology file, builtin;
	char path[512], err[200];
	const char *src = getenv("SRCDIR");

	(void)state;
	snprintf(path, sizeof(path), "%s/contrib/topology/default.conf",
		 src ? src : ".");
	assert_int_equal(sio_topo_load(path, &file, err, sizeof(err)), 0);
	assert_int_equal(sio_topo_default(&builtin), 0);
	assert_int_equal(file.nnodes, 4);
	assert_int_equal(file.ndevices, builtin.ndevices);
	assert_memory_equal(file.nodes, builtin.nodes,
			    file.nnodes * sizeof(*file.nodes));
	assert_memory_equal(file.adapters, builtin.adapters,
			    file.nadapters * sizeof(*file.adapters));
	assert_memory_equal(file.devices, builtin.devices,
			    file.ndevices * sizeof(*file.devices));
	sio_topo_free(&file);
	sio_topo_free(&builtin);
}

struct bad {
	const char *text;
	const char *want;	/* substring of the message */
};

#define N2 "node a id=0\nnode b id=1\nadapter a n peers=b\nadapter b n peers=a\n"
#define DEV "device a nvme0 bdf=0000:01:00.0 vendor=1 device=2 class=3"

static void test_each_rule_rejects_with_line_and_token(void **state)
{
	static const struct bad cases[] = {
		{ "bogus x\n", "line 1: unknown keyword 'bogus'" },
		{ "node A id=0\n", "line 1: bad node name 'A'" },
		{ "node a id=0\nnode a id=1\n", "line 2: duplicate node 'a'" },
		{ "node a id=0\nnode b id=0\n", "line 2: duplicate id 0" },
		{ "node a\n", "needs id=" },
		{ "node a id=12x\n", "bad option 'id=12x'" },
		{ "node a id=0 ram=10\n", "ram '10' below 1M" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=c\nadapter b n peers=a\n",
		  "line 3: unknown peer 'c'" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=a\nadapter b n peers=a\n",
		  "lists its own node" },
		{ "node a id=0\nnode b id=1\nadapter a n\n", "needs peers=" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b window=3M\n",
		  "window must be a power of two" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b luts=3\n", "luts" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b window=1M luts=512\n",
		  "window/luts" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b requesters=65\n",
		  "requesters" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b requesters=2 reserved=2\n",
		  "reserved" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b\nadapter a n peers=b\n",
		  "line 4: duplicate adapter 'n'" },
		{ "node a id=0\nnode b id=1\nadapter a n peers=b\n", "node 'b' has no adapter" },
		{ N2 "adapter a n2 peers=b\nfabric luts=8\n", "before any adapter" },
		{ N2 "device a disk0 bdf=0000:01:00.0 vendor=1 device=2 class=3\n",
		  "bad device name 'disk0'" },
		{ N2 "device a nvme01 bdf=0000:01:00.0 vendor=1 device=2 class=3\n",
		  "bad device name" },
		{ N2 DEV "\n" DEV "\n", "line 6: duplicate device 'nvme0'" },
		{ N2 "device a nvme0 bdf=0000:01:40.0 vendor=1 device=2 class=3\n",
		  "bad bdf '0000:01:40.0'" },
		{ N2 DEV " bar0=5000\n", "bar0 size must be a power of two" },
		{ N2 DEV " bar5=16K,64\n", "64-bit bar5" },
		{ N2 DEV " bar0=16K,64 bar1=16K\n", "bar1 given twice" },
		{ N2 DEV " bar0=16K,fast\n", "bad bar flag 'fast'" },
		{ N2 DEV " config=512\n", "config=512" },
		{ N2 DEV " vendor=0x10000\n", "vendor=0x10000" },
		{ N2 DEV " model=gpu\n", "unknown model 'gpu'" },
		{ N2 "device a nvme0 vendor=1 device=2 class=3\n", "needs bdf=" },
		{ N2 "device z nvme0 bdf=0000:01:00.0\n", "unknown node 'z'" },
		{ "", "no node defined" },
	};
	struct sio_topology t;
	char err[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (parse(cases[i].text, &t, err) != -EINVAL ||
		    !strstr(err, cases[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i, err,
				 cases[i].want);
		assert_int_equal(t.nnodes, 0);
		assert_null(t.nodes);
	}
}

static void test_missing_file_is_enoent(void **state)
{
	struct sio_topology t;
	char err[200];

	(void)state;
	assert_int_equal(sio_topo_load("/nonexistent/x.conf", &t, err, sizeof(err)),
			 -ENOENT);
}

static void test_generated_cluster_has_mpiov_scale(void **state)
{
	struct sio_topology t;
	unsigned i;

	(void)state;
	assert_int_equal(sio_topo_generate(&t, 60, 2048), 0);
	assert_int_equal(t.nnodes, 60);
	assert_int_equal(t.ndevices, 122880);
	assert_string_equal(t.devices[122879].name, "nic122879");
	for (i = 1; i < t.ndevices; i++)
		if (t.devices[i].node == t.devices[i - 1].node)
			assert_string_not_equal(t.devices[i].bdf,
						t.devices[i - 1].bdf);
	sio_topo_free(&t);
	assert_int_equal(sio_topo_generate(&t, 65, 1), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file_parses_field_by_field),
		cmocka_unit_test(test_shipped_default_equals_builtin),
		cmocka_unit_test(test_each_rule_rejects_with_line_and_token),
		cmocka_unit_test(test_missing_file_is_enoent),
		cmocka_unit_test(test_generated_cluster_has_mpiov_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
