/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsmartio: the public C API of smartio (see libsmartio(3)).
 *
 * A handle is one process's view of a cluster: the embedded simulated
 * fabric (created or joined by name) or, later, the kernel core.  The handle
 * serves one or more nodes ("self" is the first of them).  Every function
 * returns 0 (or a count / index >= 0) on success and a negative errno on
 * failure, with the meanings of the table in smartio(7):
 *   EINVAL malformed value; ENOENT unknown node; ENXIO device gone or unknown;
 *   EACCES lend policy / not the lender / not a borrower; EBUSY in use;
 *   EHOSTDOWN lender or borrower down; ENOSPC no LUT, requester or window
 *   space on the path; EHOSTUNREACH no adapter reaches the node.
 */
#ifndef SMARTIO_H
#define SMARTIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SMARTIO_NAME_MAX 32
#define SMARTIO_MAX_BARS 6
#define SMARTIO_PATH_MAX 256

struct smartio;

struct smartio_open_opts {
	const char *fabric;	/* fabric name; NULL = "default" */
	const char *topology;	/* topology file when creating; NULL = built-in */
	const char *node;	/* node to serve; NULL = every node (embedded cluster) */
	const char *shm_dir;	/* where backing files live; NULL = /dev/shm */
	int create;		/* 1: create (fail if a live fabric exists),
				 * 0: join an existing one, -1: join or create */
	char *errbuf;		/* if set, receives a one-line reason on failure
				 * (e.g. "topo.conf:3: unknown key 'foo'") */
	size_t errlen;
	const char *group;	/* simulated fabric shared with this group (name
				 * or number); NULL = its owner's alone */
};

int smartio_open(struct smartio **h, const struct smartio_open_opts *opts);
/* Gives up the served nodes (they go down) and, if last, removes the fabric. */
void smartio_close(struct smartio *h);
/*
 * Parses a topology file (smartio.conf(5)) without creating anything: 0,
 * or -errno with "file: line N: reason" in errbuf.  nodes and devices
 * (either may be NULL) receive the counts the file declares.
 */
int smartio_topology_check(const char *path, unsigned *nodes,
			   unsigned *devices, char *errbuf, size_t errlen);
/* The fabric's directory (backing files); stable while the handle lives. */
const char *smartio_fabric_dir(const struct smartio *h);

/* --- enumeration ----------------------------------------------------- */
enum smartio_node_state { SMARTIO_NODE_DOWN, SMARTIO_NODE_UP };
enum smartio_mode { SMARTIO_EXCLUSIVE, SMARTIO_SHARED };
enum smartio_policy { SMARTIO_LEND_NONE, SMARTIO_LEND_ALL, SMARTIO_LEND_LIST };
enum smartio_dev_state { SMARTIO_DEV_LOCAL, SMARTIO_DEV_AVAILABLE,
			 SMARTIO_DEV_BORROWED };

struct smartio_node_info {
	char name[SMARTIO_NAME_MAX];
	uint32_t id;
	int state;		/* enum smartio_node_state */
	unsigned nadapters;
	uint32_t generation;	/* bumps each time the node comes up */
};

struct smartio_adapter_info {
	char name[SMARTIO_NAME_MAX];
	int link_up;
	uint64_t peers;		/* node index mask */
	unsigned luts_used, luts_total;
	/* Requester tables, reserved entries counted as used: outgoing
	 * (this node's CPUs and lent devices), incoming (other nodes' CPUs
	 * and the devices this node borrows). */
	unsigned req_used, req_total;
	uint64_t window;
	unsigned req_in_used, req_in_total;
	unsigned req_reserved;	/* of each table, for the CPUs */
	int sw;			/* switch index it is cabled to, -1 none */
	unsigned port;		/* that switch's port */
};

/* A cluster switch: its ports and their requester tables. */
#define SMARTIO_MAX_SWITCH_PORTS 24
enum smartio_port_kind { SMARTIO_PORT_FREE, SMARTIO_PORT_ADAPTER,
			 SMARTIO_PORT_CASCADE };

struct smartio_port_info {
	int kind;		/* enum smartio_port_kind */
	unsigned node, adapter;	/* ADAPTER: what the cable reaches */
	unsigned peer_switch, peer_port;	/* CASCADE */
	/* Requester tables, reserved entries counted as used. */
	unsigned req_used, req_total, req_in_used, req_in_total;
};

struct smartio_switch_info {
	char name[SMARTIO_NAME_MAX];
	unsigned nports;
	struct smartio_port_info port[SMARTIO_MAX_SWITCH_PORTS];
};

struct smartio_bar_info {
	uint64_t addr;		/* lender-local, 0 = not implemented */
	uint64_t size;
	uint32_t flags;		/* 1 = 64-bit, 2 = prefetchable */
};

struct smartio_dev_stats {
	uint64_t borrows, returns, reclaims, denied;
	uint64_t cfg_reads, cfg_writes, dma_ops, dma_faults, msi;
	uint64_t driver_errors;	/* rule breaches a device model saw */
};

struct smartio_device_info {
	char name[SMARTIO_NAME_MAX];
	char bdf[16];
	uint32_t fdid;
	unsigned node;		/* lender node index */
	uint16_t vendor, device, subsys_vendor, subsys_device;
	uint32_t class_code;
	uint8_t revision;
	unsigned config_size;
	int mode;		/* enum smartio_mode */
	int policy;		/* enum smartio_policy */
	uint64_t lend_mask;	/* for SMARTIO_LEND_LIST */
	uint64_t borrowers;	/* node index mask */
	int state;		/* enum smartio_dev_state */
	int gone;		/* lender down */
	struct smartio_bar_info bar[SMARTIO_MAX_BARS];
	struct smartio_dev_stats stats;
};

struct smartio_dma_window {
	unsigned node;		/* borrower */
	uint64_t iova;		/* borrower IOVA the window leads to */
	uint64_t size;
	uint64_t ioaddr;	/* the window as the device addresses it */
};

struct smartio_segment_info {
	char name[SMARTIO_NAME_MAX];
	unsigned owner;
	int sized;
	uint64_t size;
	int available;
	uint64_t attached;	/* node index mask */
};

unsigned smartio_node_count(struct smartio *h);
unsigned smartio_device_count(struct smartio *h);
/* Index of the first served node. */
unsigned smartio_self(struct smartio *h);
int smartio_node_find(struct smartio *h, const char *name);
int smartio_device_find(struct smartio *h, const char *name);
int smartio_node_info(struct smartio *h, unsigned node,
		      struct smartio_node_info *out);
unsigned smartio_switch_count(struct smartio *h);
int smartio_switch_info(struct smartio *h, unsigned sw,
			struct smartio_switch_info *out);
/* Switches on the path from node over its adapter to node `to` (0 for a
 * direct cable), or -EHOSTUNREACH. */
int smartio_path_hops(struct smartio *h, unsigned node, unsigned adapter,
		      unsigned to);
/* The speed of that path: the payload rate of its slowest link (bytes per
 * second) and the latency its chips add one way (ns); -EHOSTUNREACH. */
int smartio_path_speed(struct smartio *h, unsigned node, unsigned adapter,
		       unsigned to, uint64_t *rate, unsigned *latency_ns);
int smartio_adapter_info(struct smartio *h, unsigned node, unsigned adapter,
			 struct smartio_adapter_info *out);
/*
 * Simulator only (fault injection, SmartIO section 6.3): takes the link of
 * node's adapter down (up 0) or up (1).  Borrows that used it move to
 * another path or, with none left, end.  -ENOENT no such node, -ENODEV no
 * such adapter, -EINVAL up not 0 or 1, -EOPNOTSUPP over smartio.ko.
 */
int smartio_link_set(struct smartio *h, unsigned node, unsigned adapter,
		     int up);
int smartio_device_info(struct smartio *h, unsigned dev,
			struct smartio_device_info *out);
/* Fills up to max windows; returns how many exist. */
int smartio_dma_windows(struct smartio *h, unsigned dev,
			struct smartio_dma_window *out, unsigned max);
/* Segments: index i in [0, max); returns 1 and fills out if used, else 0. */
unsigned smartio_segment_slots(struct smartio *h);
int smartio_segment_at(struct smartio *h, unsigned i,
		       struct smartio_segment_info *out);
int smartio_segment_find(struct smartio *h, unsigned owner, const char *name);
/* Device-side address of segment (owner, name) mapped for dev, or -ENOENT. */
int smartio_segment_dma_addr(struct smartio *h, unsigned owner,
			     const char *name, unsigned dev, uint64_t *ioaddr);

/* --- lending ----------------------------------------------------------- */
int smartio_lend(struct smartio *h, unsigned dev, int policy, uint64_t mask);
int smartio_borrow(struct smartio *h, unsigned dev, unsigned node);
/* The same with a DMA window of window bytes (a power of two, at least
 * 4096) or SMARTIO_DMA_WINDOW_RAM (all of node's RAM); 0 = the default. */
#define SMARTIO_DMA_WINDOW_RAM UINT64_MAX
int smartio_borrow_window(struct smartio *h, unsigned dev, unsigned node,
			  uint64_t window);
int smartio_return(struct smartio *h, unsigned dev, unsigned node);
/* `asker` must be the lender, else -EACCES. */
int smartio_reclaim(struct smartio *h, unsigned dev, unsigned asker);
int smartio_set_mode(struct smartio *h, unsigned dev, int mode);
/* Config space as node `who`; reads return bytes read. */
int smartio_config_read(struct smartio *h, unsigned dev, unsigned who,
			uint32_t off, void *buf, uint32_t len);
int smartio_config_write(struct smartio *h, unsigned dev, unsigned who,
			 uint32_t off, const void *buf, uint32_t len);

/* --- SR-IOV (MPIOV section III) ----------------------------------------- */
struct smartio_sriov_info {
	unsigned total;		/* a PF's VFs (TotalVFs); 0: no SR-IOV */
	unsigned num;		/* a PF's VFs enabled now (NumVFs) */
	int pf;			/* a VF's PF (device index); -1 for others */
};

int smartio_sriov_info(struct smartio *h, unsigned dev,
		       struct smartio_sriov_info *out);
/* The PF's lender enables its first numvfs VFs, each a device of its own
 * (0 disables them): -ERANGE above TotalVFs, -EBUSY to change a nonzero
 * count to another or to disable VFs in use, -EOPNOTSUPP without SR-IOV. */
int smartio_sriov_set(struct smartio *h, unsigned dev, unsigned numvfs);

/* --- multicast groups (SmartIO section 6.5) ----------------------------- */
struct smartio_mcast_info {
	char name[32];
	unsigned sw;		/* the switch whose multicast range holds it */
	uint64_t size;
	uint64_t members;	/* node mask */
	unsigned mapped;	/* devices mapped to write into it */
	uint64_t writes;	/* writes into it the switch replicated */
	uint64_t delivered;	/* copies of them that reached a member */
};

/* Groups the switches hold in all (free or not); -ENOENT for a free one. */
unsigned smartio_mcast_count(struct smartio *h);
int smartio_mcast_info(struct smartio *h, unsigned group,
		       struct smartio_mcast_info *out);
int smartio_mcast_lookup(struct smartio *h, const char *name);
/* A group of size bytes (whole pages, at most 1 GiB) on switch sw: its
 * index, or -EEXIST, -ENOSPC (all of sw's groups taken), -EOPNOTSUPP (sw
 * has no multicast). */
int smartio_mcast_create(struct smartio *h, const char *name, unsigned sw,
			 uint64_t size);
/* Both -EBUSY while it has members or mapped devices. */
int smartio_mcast_destroy(struct smartio *h, unsigned group);
int smartio_mcast_set_size(struct smartio *h, unsigned group, uint64_t size);
/* node subscribes with its segment, or with a BAR of a device of its own
 * (the overlay BAR), at least the group's size: -EXDEV when node is not
 * cabled to the group's switch, -EEXIST when it is a member already. */
int smartio_mcast_join_segment(struct smartio *h, unsigned group,
			       unsigned node, const char *segment);
int smartio_mcast_join_bar(struct smartio *h, unsigned group, unsigned node,
			   unsigned dev, unsigned bar);
int smartio_mcast_leave(struct smartio *h, unsigned group, unsigned node);
/* The address device dev writes to reach every member; user is its lender
 * or a borrower (-EACCES otherwise). */
int smartio_mcast_map(struct smartio *h, unsigned group, unsigned dev,
		      unsigned user, uint64_t *ioaddr);
int smartio_mcast_unmap(struct smartio *h, unsigned group, unsigned dev,
			unsigned user);
/* The address device dev writes into the group at, or -ENOENT. */
int smartio_mcast_dma_addr(struct smartio *h, unsigned group, unsigned dev,
			   uint64_t *ioaddr);

/* --- segments ---------------------------------------------------------- */
int smartio_segment_create(struct smartio *h, unsigned owner, const char *name);
int smartio_segment_set_size(struct smartio *h, unsigned owner,
			     const char *name, uint64_t size);
int smartio_segment_destroy(struct smartio *h, unsigned owner,
			    const char *name);
int smartio_segment_set_available(struct smartio *h, unsigned owner,
				  const char *name, int available);
int smartio_segment_attach(struct smartio *h, unsigned owner,
			   const char *name, unsigned node);
int smartio_segment_detach(struct smartio *h, unsigned owner,
			   const char *name, unsigned node);
int smartio_segment_dma_map(struct smartio *h, unsigned owner,
			    const char *name, unsigned dev, uint64_t *ioaddr);
int smartio_segment_dma_unmap(struct smartio *h, unsigned owner,
			      const char *name, unsigned dev);

/* --- mmap targets ------------------------------------------------------
 * Walks the translation chain from `viewer`'s CPU (own RAM/BAR, or NTB
 * window -> LUT -> remote address) to the backing file that holds the
 * bytes.  -EACCES / -ENXIO when the viewer has no mapping of it.
 */
int smartio_resolve_bar(struct smartio *h, unsigned viewer, unsigned dev,
			unsigned bar, char *path, size_t pathlen,
			uint64_t *size);
int smartio_resolve_segment(struct smartio *h, unsigned viewer,
			    unsigned owner, const char *name, char *path,
			    size_t pathlen, uint64_t *size);

/* --- data path (simulated devices and tests) ----------------------------
 * A DMA issued by device dev to device-side address addr, through the
 * lender's IOMMU or NTB window, LUT, the target's IOMMU, to memory.
 * Returns 0 or -EFAULT when blocked (counted and reported as dma-fault).
 */
int smartio_dma(struct smartio *h, unsigned dev, uint64_t addr, void *buf,
		size_t len, int write);
/* Transactions the fabric blocked at node (no mapping, wrong requester). */
uint64_t smartio_blocked(struct smartio *h, unsigned node);

/* --- peer-to-peer ---------------------------------------------------------
 * Maps every BAR of device `peer` for device `dev` along the shortest path
 * (an IOMMU mapping when both have one lender, else LUT slots on dev's
 * lender), as node `asker`, which must be the lender or a borrower of both
 * (-EACCES).  -EEXIST when already mapped.  The mapping goes when unmapped,
 * when asker returns either device or goes down, or a lender goes down.
 */
int smartio_peer_map(struct smartio *h, unsigned dev, unsigned peer,
		     unsigned asker);
int smartio_peer_unmap(struct smartio *h, unsigned dev, unsigned peer,
		       unsigned asker);
/* Where dev reaches BAR bar of peer; -ENOENT when not mapped. */
int smartio_peer_addr(struct smartio *h, unsigned dev, unsigned peer,
		      unsigned bar, uint64_t *addr);
/* The devices mapped for dev (up to max, ascending); returns how many. */
int smartio_peers(struct smartio *h, unsigned dev, unsigned *peers,
		  unsigned max);

/* --- interrupts -----------------------------------------------------------
 * A device's MSI or MSI-X vectors as the core routed them when the lender
 * or a borrower enabled them in configuration space: vector vec (0..n-1)
 * of the device is delivered to `node` by a write of `data` to `addr`
 * (the device-side address of that node's interrupt range).
 */
struct smartio_msi_vector {
	unsigned vec;
	unsigned node;
	uint64_t addr;
	uint32_t data;		/* the node's interrupt vector */
	int msix;		/* 1 for MSI-X, 0 for MSI */
};

/* Fills up to max vectors; returns how many are routed. */
int smartio_msi_vectors(struct smartio *h, unsigned dev,
			struct smartio_msi_vector *out, unsigned max);
/* Interrupts delivered so far on device vector vec (at the node it is
 * routed to); -ENOENT when the vector is not routed. */
int smartio_irq_count(struct smartio *h, unsigned dev, unsigned vec,
		      uint64_t *count);

/* --- events -------------------------------------------------------------
 * Cursor starts at smartio_event_cursor() (only new events) or 0 (the
 * oldest still in the ring).  Reads the next line (no newline) into buf;
 * returns its length, 0 when nothing new, a "lost n=<count>" line when
 * the reader fell behind the ring.
 */
uint64_t smartio_event_cursor(struct smartio *h);
int smartio_event_read(struct smartio *h, uint64_t *cursor, char *buf,
		       size_t len);
/* Blocks until an event after cursor exists or timeout_ms passes (-1 = forever).
 * Returns 1 if there is something to read, 0 on timeout. */
int smartio_event_wait(struct smartio *h, uint64_t cursor, int timeout_ms);
/* A counter that changes whenever cluster state changes (for caches). */
uint64_t smartio_change_count(struct smartio *h);
int smartio_change_wait(struct smartio *h, uint64_t seen, int timeout_ms);

const char *smartio_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* SMARTIO_H */
