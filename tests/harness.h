/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared helpers for the C tests: a private simulated fabric per test. */
#ifndef SIO_TEST_HARNESS_H
#define SIO_TEST_HARNESS_H

#include <stdint.h>
#include "smartio.h"

/* A fabric name unique to this process and call. */
const char *th_fabric_name(char *buf, size_t len);
/* Writes topology text to a temporary file; returns its path (static). */
const char *th_topology_file(const char *text);
/* Creates a fabric from text (NULL = built-in default), serving node
 * (NULL = all nodes). Fails the test on error. */
struct smartio *th_open(const char *topo_text, const char *node,
			char *fabric, size_t fabric_len);
struct smartio *th_join(const char *fabric, const char *node);
unsigned th_node(struct smartio *h, const char *name);
unsigned th_dev(struct smartio *h, const char *name);
/* Used LUT / requester entries summed over every adapter of node (both
 * requester tables, the CPUs' reserved entries counted once). */
unsigned th_luts_used(struct smartio *h, unsigned node);
unsigned th_reqs_used(struct smartio *h, unsigned node);
/* Whether an event line with this kind and object appeared after *cursor. */
int th_saw_event(struct smartio *h, uint64_t *cursor, const char *kind,
		 const char *object);

/*
 * Three nodes on one NTB each: four NVMe functions on host0, a GPU and a
 * NIC on host2, host1 with none (the lending tests' cluster).
 */
#define TH_SMALL_TOPO \
	"fabric luts=16 requesters=8 reserved=2 window=256M\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"node host2 id=2 ram=64M\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"adapter host2 ntb0 peers=all\n" \
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host0 nvme1 bdf=0000:02:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host0 nvme2 bdf=0000:03:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host0 nvme3 bdf=0000:04:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host2 gpu0 bdf=0000:05:00.0 vendor=0x10de device=0x1eb8 class=0x030200 bar0=16M bar1=256M,64,prefetch\n" \
	"device host2 nic0 bdf=0000:06:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=128K\n"

/* path (a BAR or segment file) mapped shared, read-write; asserts. */
void *th_map_file(const char *path, uint64_t size);
/* A short sleep (0.2 ms) between polls of a device model. */
void th_nap(void);

#endif
