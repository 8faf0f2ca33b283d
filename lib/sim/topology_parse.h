/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* smartio.conf(5): the topology file of the simulated fabric. */
#ifndef SIO_SIM_TOPOLOGY_PARSE_H
#define SIO_SIM_TOPOLOGY_PARSE_H

#include <stddef.h>
#include "topology.h"

/* 0 or a negative errno; on error err holds "line N: ..." and *out is empty. */
int sio_topo_parse(const char *text, size_t len, struct sio_topology *out,
		   char *err, size_t errlen);
int sio_topo_load(const char *path, struct sio_topology *out, char *err,
		  size_t errlen);
/* The built-in default cluster: 4 nodes, a few devices on each. */
int sio_topo_default(struct sio_topology *out);
/* N nodes on one switch, F small functions each (scale benchmarks). */
int sio_topo_generate(struct sio_topology *out, unsigned nodes,
		      unsigned functions_per_node);
void sio_topo_free(struct sio_topology *t);

#endif
