/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * insn-count.so: a TCG plugin that counts the guest instructions a
 * QEMU's vCPUs execute, split into the guest kernel's and user space's
 * by the address of each translation block (a canonical higher-half
 * address is the kernel's on x86-64 Linux), so that make bench can say
 * how much guest work an I/O path costs apart from what emulating it
 * costs (issue 35, tests/bench/ntb_lend.sh).
 *
 *   -plugin insn-count.so,ctl=FIFO,out=FILE
 *
 * Each line written to the FIFO appends "LINE <kernel> <user>" to FILE,
 * the counts so far; so does the end of the run ("exit ...").  The
 * counts are summed inline by the translated code, without a callback
 * per block, and read racily by the snapshot: a figure may miss the
 * instructions of the blocks running at that moment, nothing more.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t insns[2];	/* [0] user space, [1] the kernel */
static char *ctl_path, *out_path;
static GMutex out_lock;

static void snapshot(const char *name)
{
	FILE *f;

	g_mutex_lock(&out_lock);
	f = fopen(out_path, "a");
	if (f) {
		fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", name,
			__atomic_load_n(&insns[1], __ATOMIC_RELAXED),
			__atomic_load_n(&insns[0], __ATOMIC_RELAXED));
		fclose(f);
	}
	g_mutex_unlock(&out_lock);
}

/* Reads snapshot names from the FIFO, a writer at a time, until exit. */
static gpointer ctl_thread(gpointer unused)
{
	char line[128];

	for (;;) {
		FILE *f = fopen(ctl_path, "r");

		if (!f) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, " \n")] = '\0';
			if (line[0])
				snapshot(line);
		}
		fclose(f);
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	bool kernel = qemu_plugin_tb_vaddr(tb) >= 0xffff800000000000ULL;

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &insns[kernel],
						 qemu_plugin_tb_n_insns(tb));
}

static void on_exit_cb(qemu_plugin_id_t id, void *unused)
{
	snapshot("exit");
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (g_str_has_prefix(argv[i], "ctl="))
			ctl_path = g_strdup(argv[i] + 4);
		else if (g_str_has_prefix(argv[i], "out="))
			out_path = g_strdup(argv[i] + 4);
		else {
			fprintf(stderr, "insn-count: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "insn-count: out=FILE is required\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	if (ctl_path)
		g_thread_new("insn-count", ctl_thread, NULL);
	return 0;
}
