/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A cluster description: the nodes, their NTB adapters and the PCI functions
 * installed in them.  The simulator builds its fabric from one (parsed from a
 * smartio.conf(5) file or the built-in default); the kernel core fills one
 * from the hardware it discovers.  Plain data, no pointers to follow beyond
 * the three arrays.
 */
#ifndef SIO_TOPOLOGY_H
#define SIO_TOPOLOGY_H

#include "compat.h"

#define SIO_MAX_NODES 64	/* node masks are u64 */
#define SIO_MAX_ADAPTERS 4	/* per node */
#define SIO_MAX_BARS 6
#define SIO_TOPO_NAME 32
#define SIO_MAX_SWITCHES 16	/* cluster switches */
#define SIO_MAX_SWITCH_PORTS 24	/* per switch (Dolphin MXS824) */
#define SIO_MAX_HOPS 8		/* switches on one path */

enum sio_dev_model {
	SIO_MODEL_GENERIC,	/* config space and BARs, DMA on request */
	SIO_MODEL_NVME,		/* NVMe controller model */
	SIO_MODEL_DMA,		/* DMA accelerator model (ffLink style) */
};

#define SIO_BAR_MEM64 0x1u
#define SIO_BAR_PREFETCH 0x2u

struct sio_topo_bar {
	u64 size;	/* 0 = BAR not implemented; else a power of two >= 4096 */
	u32 flags;	/* SIO_BAR_* */
};

struct sio_topo_node {
	char name[SIO_TOPO_NAME];
	u32 id;		/* fabric node id, unique */
	u64 ram;	/* bytes of RAM that segments can be allocated from */
};

struct sio_topo_adapter {
	char name[SIO_TOPO_NAME];	/* "ntb0" */
	u32 node;	/* index into nodes[] */
	u64 peers;	/* mask of node indexes reachable through it */
	u64 window;	/* NTB window (BAR) size, power of two */
	u32 luts;	/* look-up table entries; window / luts is one slot */
	u32 requesters;	/* requester-id entries, at most 64 */
	u32 reserved;	/* of which reserved for CPUs */
	/*
	 * Cabled to a switch port: 1 + index into switches[], 0 = none
	 * (peers then lists what a direct cable reaches).
	 */
	u32 sw;
	u32 port;
};

/*
 * A cluster switch (SmartIO section 3): ports, each with its own requester
 * tables, cabled to an adapter or (a cascade) to a port of another switch.
 */
struct sio_topo_switch {
	char name[SIO_TOPO_NAME];
	u32 ports;
	u32 requesters, reserved;	/* per port and table, as adapters */
	u8 peer_sw[SIO_MAX_SWITCH_PORTS];	/* cascade: 1 + index, 0 none */
	u8 peer_port[SIO_MAX_SWITCH_PORTS];
};

struct sio_topo_device {
	char name[SIO_TOPO_NAME];	/* <class><n>: nvme0, gpu1, nic0, acc0 */
	u32 node;	/* index into nodes[] */
	char bdf[16];	/* "0000:03:00.0" */
	u16 vendor, device, subsys_vendor, subsys_device;
	u32 class_code;	/* 24 bits */
	u8 revision;
	u32 config_size;	/* 256 or 4096 */
	u32 model;	/* enum sio_dev_model */
	struct sio_topo_bar bar[SIO_MAX_BARS];
};

struct sio_topology {
	u32 nnodes, nadapters, ndevices, nswitches;
	struct sio_topo_node *nodes;
	struct sio_topo_adapter *adapters;
	struct sio_topo_device *devices;
	struct sio_topo_switch *switches;	/* NULL when nswitches is 0 */
};

/* The mask of nodes 0..n-1; n may be SIO_MAX_NODES, where 1ull << n is
 * undefined behaviour, so that case is spelled out once here. */
static inline u64 sio_all_nodes(u32 n)
{
	return n >= SIO_MAX_NODES ? ~0ull : (1ull << n) - 1;
}

#endif /* SIO_TOPOLOGY_H */
