/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * smartio.conf(5): the topology file of the simulated fabric, the built-in
 * default cluster and a generator of large clusters for scale benchmarks.
 * Everything fills a struct sio_topology (lib/core/topology.h).
 */
#ifndef SIO_SIM_TOPOLOGY_PARSE_H
#define SIO_SIM_TOPOLOGY_PARSE_H

#include <stddef.h>
#include "topology.h"

/* Limits beyond those of topology.h; exceeding one gives -E2BIG. */
#define SIO_TOPO_MAX_DEVICES (1u << 20)	/* fdid keeps 20 bits of slot */
#define SIO_TOPO_MAX_FILE (16u << 20)	/* bytes sio_topo_load reads */

/*
 * Parses len bytes of smartio.conf(5) text.  Returns 0, or a negative errno
 * (-EINVAL for a syntax or semantic error, -E2BIG above a limit, -ENOMEM);
 * on error err (if not NULL) holds "line N: ..." naming the offending token
 * and *out is empty (all zero, nothing to free).  On success free *out with
 * sio_topo_free().
 */
int sio_topo_parse(const char *text, size_t len, struct sio_topology *out,
		   char *err, size_t errlen);

/* Reads and parses the file at path; as sio_topo_parse, plus the errno of a
 * failed open or read (err then holds strerror's text). */
int sio_topo_load(const char *path, struct sio_topology *out, char *err,
		  size_t errlen);

/* The built-in default cluster (contrib/topology/default.conf): host0..host3,
 * one ntb0 adapter each reaching all others, two devices per host. */
int sio_topo_default(struct sio_topology *out);

/*
 * For scale benchmarks: nodes gen0..gen<nodes-1> (ids 0.., 1G RAM), each with
 * one adapter ntb0 on a common switch (peers = every other node, 4G window,
 * 256 LUTs, 32 requesters, 2 reserved), and functions_per_node generic NIC
 * functions each, named nic0, nic1, ... cluster-wide (8086:10d3, class
 * 0x020000, 256-byte config space, one 16 KiB BAR0).  -EINVAL for 0 nodes,
 * -E2BIG above SIO_MAX_NODES nodes, 65280 functions per node or
 * SIO_TOPO_MAX_DEVICES functions in all, -ENOMEM.
 */
int sio_topo_generate(struct sio_topology *out, unsigned nodes,
		      unsigned functions_per_node);

/* Frees the arrays and zeroes *t; t may be NULL or already empty. */
void sio_topo_free(struct sio_topology *t);

#endif
