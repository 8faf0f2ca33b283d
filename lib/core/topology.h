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
#define SIO_MAX_MCAST 64	/* multicast groups of all switches */
#define SIO_MAX_HOPS 8		/* switches on one path */

/*
 * The speed of a PCIe link (SmartIO section 7.1.5, ffLink section 8.2):
 * its generation (1 to 5) and lanes, Gen3 x8 by default (7.3 GB/s of
 * payload), and what one chip on a path adds to a transaction: 132 ns
 * for the PEX8733 of a Dolphin PXH830 adapter (its worst case), 170 ns
 * for the PM8536 of an MXS824 switch (measured).  0 in a topology means
 * these defaults.
 */
#define SIO_LINK_GEN 3
#define SIO_LINK_GEN_MAX 5
#define SIO_LINK_WIDTH 8
#define SIO_LINK_WIDTH_MAX 16
#define SIO_ADAPTER_LATENCY_NS 132
#define SIO_SWITCH_LATENCY_NS 170
#define SIO_LATENCY_MAX_NS 50000

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
	 * Look-up-table entries of this adapter any one other node may hold
	 * (the windows of its borrows, segment and peer mappings made for
	 * it); 0: no limit.
	 */
	u32 share;
	/*
	 * Cabled to a switch port: 1 + index into switches[], 0 = none
	 * (peers then lists what a direct cable reaches).
	 */
	u32 sw;
	u32 port;
	u32 gen, width;		/* its link; 0 = SIO_LINK_GEN, SIO_LINK_WIDTH */
	u32 latency_ns;		/* its chip; 0 = SIO_ADAPTER_LATENCY_NS */
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
	u32 gen, width;		/* its ports' links; 0 = the defaults */
	u32 latency_ns;		/* its chip; 0 = SIO_SWITCH_LATENCY_NS */
	u32 multicast;		/* multicast groups it holds, 0 none */
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
	/*
	 * A slot for a device of another machine, whose record comes with
	 * its device table (smartio.ko over an NTB): present 0 until then.
	 */
	u8 absent;
	/*
	 * SR-IOV (MPIOV section III): a physical function's virtual functions
	 * follow it in devices[], absent from the cluster until its
	 * sriov_numvfs enables them; each knows its PF.
	 */
	u8 vf;			/* 1: a virtual function of devices[pf] */
	u16 sriov_total;	/* a PF's VFs (TotalVFs); 0 for none */
	u32 pf;
};

#define SIO_SRIOV_MAX_VFS 255	/* per PF: routing ids PF + 1 .. PF + 255 */

struct sio_topology {
	u32 nnodes, nadapters, ndevices, nswitches;
	struct sio_topo_node *nodes;
	struct sio_topo_adapter *adapters;
	struct sio_topo_device *devices;
	struct sio_topo_switch *switches;	/* NULL when nswitches is 0 */
	/* The simulator paces device DMA by its path's speed unless set. */
	u32 no_pace;
};

/* The mask of nodes 0..n-1; n may be SIO_MAX_NODES, where 1ull << n is
 * undefined behaviour, so that case is spelled out once here. */
static inline u64 sio_all_nodes(u32 n)
{
	return n >= SIO_MAX_NODES ? ~0ull : (1ull << n) - 1;
}

/* A generation from 1 to 5 and a width of 1, 2, 4, 8 or 16 lanes. */
static inline int sio_link_speed_ok(u32 gen, u32 width)
{
	return gen >= 1 && gen <= SIO_LINK_GEN_MAX && width >= 1 &&
	       width <= SIO_LINK_WIDTH_MAX && !(width & (width - 1));
}

/*
 * Payload bytes per second of a link, as ffLink section 8.2 reckons it:
 * the lanes' transfer rate, less the line code (8b/10b up to Gen2,
 * 128b/130b from Gen3) and the framing of every 256-byte TLP (4 bytes of
 * STP, 12 of header, 4 of LCRC: 256/276).  Gen3 x8: 7.306 GB/s.
 */
static inline u64 sio_link_rate(u32 gen, u32 width)
{
	static const u64 per_lane[SIO_LINK_GEN_MAX + 1] = {
		0, 231884057ull, 463768115ull, 913266443ull,
		1826532887ull, 3653065774ull,
	};

	return sio_link_speed_ok(gen, width) ? per_lane[gen] * width : 0;
}

#endif /* SIO_TOPOLOGY_H */
