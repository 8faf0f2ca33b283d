/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Every command of the wire protocol, one row each: adding a command is a
 * number in smartio_genl.h, a row here and a handler.
 *
 *   X(CMD, name, handler, route, origin, required, optional, genl)
 *
 * CMD       SIO_CMD_<CMD> of smartio_genl.h (the numbers are the ABI and
 *           stay written out there; a row per number is checked at build
 *           time in proto.c and by tests/test_cmd_table.c).
 * name      its name in events and logs (sio_cmd_name).
 * handler   what runs on the node that owns the request (dispatch.c);
 *           NULL only for replies, which are never dispatched.
 * route     the node that owns it (enum sio_cmd_route, below).
 * origin    who may send it from another node (enum sio_origin, below;
 *           origin.c).
 * required  attributes the dispatcher checks for before routing or
 *           running anything: a request without one is EINVAL.
 * optional  attributes it may carry besides.  smartio.ko's generic netlink
 *           policy of the command is required | optional, enforced
 *           strictly; the core leaves others to the handler.
 * genl      SIO_GENL_* flags of smartio.ko's operation (kmod/sio_genl.c),
 *           or SIO_GENL_NOT_OFFERED, said of every command smartio.ko
 *           does not offer (smartio(4) lists them).
 *
 * A(x) is the bit of attribute SIO_A_<x>.
 */
#ifndef SIO_CMDS_H
#define SIO_CMDS_H

#define A(x) (1u << SIO_A_##x)

/* clang-format off */
#define SIO_CMDS(X)							\
/* user -> core: namespace writes */					\
X(LEND, "lend", sio_h_lend, SIO_TO_LENDER, SIO_FROM_LOCAL_SEP,		\
	A(DEV) | A(FLAGS) | A(MASK), 0, SIO_GENL_ADMIN | SIO_GENL_PCI)	\
X(BORROW, "borrow", sio_h_borrow, SIO_TO_NODE, SIO_FROM_LOCAL_SEP,	\
	A(DEV) | A(NODE), A(SIZE),						\
	SIO_GENL_ADMIN | SIO_GENL_PCI | SIO_GENL_HOTPLUG)			\
X(RETURN, "return", sio_h_return, SIO_TO_NODE, SIO_FROM_LOCAL_SEP,	\
	A(DEV) | A(NODE), 0, SIO_GENL_ADMIN | SIO_GENL_HOTPLUG)		\
X(RECLAIM, "reclaim", sio_h_reclaim, SIO_TO_LENDER, SIO_FROM_ASKER_SEP, \
	A(DEV) | A(NODE), 0, SIO_GENL_ADMIN | SIO_GENL_HOTPLUG)		\
X(SET_MODE, "set-mode", sio_h_set_mode, SIO_TO_LENDER,			\
	SIO_FROM_LOCAL_SEP, A(DEV) | A(MODE), 0,				\
	SIO_GENL_ADMIN | SIO_GENL_PCI)					\
X(SEG_CREATE, "seg-create", sio_h_seg, SIO_TO_NODE, SIO_FROM_ANY,	\
	A(NODE) | A(NAME), 0, SIO_GENL_ADMIN)					\
X(SEG_SIZE, "seg-size", sio_h_seg, SIO_TO_NODE, SIO_FROM_ANY,		\
	A(NODE) | A(NAME) | A(SIZE), 0, SIO_GENL_ADMIN)			\
X(SEG_DESTROY, "seg-destroy", sio_h_seg, SIO_TO_NODE, SIO_FROM_ANY,	\
	A(NODE) | A(NAME), 0, SIO_GENL_ADMIN)					\
X(SEG_AVAILABLE, "seg-available", sio_h_seg, SIO_TO_NODE, SIO_FROM_ANY, \
	A(NODE) | A(NAME) | A(FLAGS), 0, SIO_GENL_ADMIN)			\
X(SEG_ATTACH, "seg-attach", sio_h_seg, SIO_TO_PEER, SIO_FROM_LOCAL_SEP, \
	A(NODE) | A(NAME) | A(PEER), 0, SIO_GENL_ADMIN)			\
X(SEG_DETACH, "seg-detach", sio_h_seg, SIO_TO_PEER, SIO_FROM_LOCAL_SEP, \
	A(NODE) | A(NAME) | A(PEER), 0, SIO_GENL_ADMIN)			\
X(SEG_DMA_MAP, "seg-dma-map", sio_h_seg, SIO_TO_NODE, SIO_FROM_ANY,	\
	A(NODE) | A(NAME) | A(DEV), 0, SIO_GENL_ADMIN | SIO_GENL_PCI)		\
X(SEG_DMA_UNMAP, "seg-dma-unmap", sio_h_seg, SIO_TO_NODE, SIO_FROM_ANY, \
	A(NODE) | A(NAME) | A(DEV), 0, SIO_GENL_ADMIN)			\
X(CFG_READ, "cfg-read", sio_h_cfg, SIO_TO_LENDER, SIO_FROM_ASKER_SEP,	\
	A(DEV) | A(NODE) | A(OFFSET) | A(SIZE), 0, SIO_GENL_CFG_HEADER)	\
X(CFG_WRITE, "cfg-write", sio_h_cfg, SIO_TO_LENDER, SIO_FROM_ASKER_SEP, \
	A(DEV) | A(NODE) | A(OFFSET) | A(DATA), 0,				\
	SIO_GENL_ADMIN | SIO_GENL_PCI)					\
/* core <-> core between nodes */					\
X(BORROW_REQ, "borrow-req", sio_h_borrow_req, SIO_TO_SELF,		\
	SIO_FROM_NODE, A(DEV) | A(NODE), A(IOVA) | A(SIZE),			\
	SIO_GENL_NOT_OFFERED)							\
X(BORROW_GRANT, "borrow-grant", NULL, SIO_REPLY, SIO_FROM_ANY, 0,	\
	A(ERRNO) | A(BAR) | A(RID) | A(ADDR) | A(IOVA) | A(SIZE),		\
	SIO_GENL_NOT_OFFERED)							\
X(BORROW_DENY, "borrow-deny", NULL, SIO_REPLY, SIO_FROM_ANY, 0,		\
	A(ERRNO), SIO_GENL_NOT_OFFERED)					\
X(MAP_DMA_WINDOW, "map-dma-window", sio_h_map_window, SIO_TO_SELF,	\
	SIO_FROM_NODE, A(DEV) | A(NODE) | A(IOVA) | A(SIZE), 0,		\
	SIO_GENL_NOT_OFFERED)							\
X(MAP_MSI_WINDOW, "map-msi-window", sio_h_map_window, SIO_TO_SELF,	\
	SIO_FROM_NODE, A(DEV) | A(NODE) | A(IOVA) | A(SIZE), 0,		\
	SIO_GENL_NOT_OFFERED)							\
X(RETURN_REQ, "return-req", sio_h_return_req, SIO_TO_SELF,		\
	SIO_FROM_NODE, A(DEV) | A(NODE), 0, SIO_GENL_NOT_OFFERED)		\
X(RECLAIM_REQ, "reclaim-req", sio_h_reclaim_req, SIO_TO_SELF,		\
	SIO_FROM_LENDER, A(DEV) | A(NODE), 0, SIO_GENL_NOT_OFFERED)		\
X(HEARTBEAT, "heartbeat", sio_h_heartbeat, SIO_TO_SELF, SIO_FROM_NODE,	\
	A(NODE) | A(SEQ) | A(TIME), 0, SIO_GENL_NOT_OFFERED)			\
X(EVENT, "event", sio_h_event, SIO_TO_SELF, SIO_FROM_ANY,		\
	A(SEQ) | A(TIME) | A(KIND) | A(DATA), 0, SIO_GENL_NOT_OFFERED)	\
X(SEG_CONNECT, "seg-connect", sio_h_seg_connect, SIO_TO_NODE,		\
	SIO_FROM_PEER, A(NODE) | A(NAME) | A(PEER), A(ADDR),			\
	SIO_GENL_NOT_OFFERED)							\
X(SEG_DISCONNECT, "seg-disconnect", sio_h_seg_connect, SIO_TO_NODE,	\
	SIO_FROM_PEER, A(NODE) | A(NAME) | A(PEER), 0, SIO_GENL_NOT_OFFERED)	\
X(MAP_SEG_WINDOW, "map-seg-window", sio_h_seg_window, SIO_TO_LENDER,	\
	SIO_FROM_NODE, A(DEV) | A(NODE) | A(IOVA) | A(SIZE), 0,		\
	SIO_GENL_NOT_OFFERED)							\
X(UNMAP_SEG_WINDOW, "unmap-seg-window", sio_h_seg_window,		\
	SIO_TO_LENDER, SIO_FROM_NODE, A(DEV) | A(NODE) | A(IOVA), 0,		\
	SIO_GENL_NOT_OFFERED)							\
/* user -> core (and asker -> lender with separate registries) */	\
X(PEER_MAP, "peer-map", sio_h_peer, SIO_TO_LENDER_SEP_SELF,		\
	SIO_FROM_ASKER_SEP, A(DEV) | A(NODE) | A(INDEX), 0,			\
	SIO_GENL_ADMIN | SIO_GENL_PCI)					\
X(PEER_UNMAP, "peer-unmap", sio_h_peer, SIO_TO_LENDER_SEP_SELF,		\
	SIO_FROM_ASKER_SEP, A(DEV) | A(NODE) | A(INDEX), 0, SIO_GENL_ADMIN)	\
X(PEER_EXPOSE, "peer-expose", sio_h_peer_expose, SIO_TO_LENDER,		\
	SIO_FROM_EXPOSER, A(DEV) | A(PEER) | A(RID) | A(INDEX),		\
	A(NODE) | A(IOVA), SIO_GENL_NOT_OFFERED)				\
X(PEER_UNEXPOSE, "peer-unexpose", sio_h_peer_expose, SIO_TO_LENDER,	\
	SIO_FROM_EXPOSER, A(DEV) | A(PEER) | A(RID) | A(IOVA), A(NODE),	\
	SIO_GENL_NOT_OFFERED)							\
X(REPLY, "reply", NULL, SIO_REPLY, SIO_FROM_ANY, 0, ~0u,		\
	SIO_GENL_NOT_OFFERED)							\
/* user -> smartio.ko: registry bytes for libsmartio's queries */	\
X(REG_READ, "reg-read", sio_h_reg_read, SIO_TO_SELF, SIO_FROM_LOCAL,	\
	A(OFFSET) | A(SIZE), 0, SIO_GENL_OPEN)				\
/* core <-> core when the nodes do not share one registry */		\
X(SEG_TABLE, "seg-table", sio_h_seg_table, SIO_TO_SELF, SIO_FROM_NODE,	\
	A(NODE), A(SEG), SIO_GENL_NOT_OFFERED)				\
X(SEG_TABLE_GET, "seg-table-get", sio_h_seg_table_get, SIO_TO_SELF,	\
	SIO_FROM_NODE, A(NODE), 0, SIO_GENL_NOT_OFFERED)			\
X(DEV_TABLE, "dev-table", sio_h_dev_table, SIO_TO_SELF, SIO_FROM_NODE, \
	A(NODE), A(DATA), SIO_GENL_NOT_OFFERED)				\
X(MAP_BAR_WINDOW, "map-bar-window", sio_h_map_bar_window, SIO_TO_SELF, \
	SIO_FROM_NODE, A(DEV) | A(NODE) | A(INDEX) | A(ADDR) | A(SIZE), 0,	\
	SIO_GENL_NOT_OFFERED)							\
/* user -> core: VFs (sriov.c) and multicast groups (mcast.c) */	\
X(SRIOV_SET, "sriov-set", sio_h_sriov, SIO_TO_LENDER,			\
	SIO_FROM_LOCAL_SEP, A(DEV) | A(SIZE), 0,				\
	SIO_GENL_ADMIN | SIO_GENL_PCI | SIO_GENL_HOTPLUG)			\
X(MCAST_CREATE, "mcast-create", sio_h_mcast, SIO_TO_SELF, SIO_FROM_ANY, \
	A(NAME) | A(INDEX) | A(SIZE), 0, SIO_GENL_NOT_OFFERED)		\
X(MCAST_DESTROY, "mcast-destroy", sio_h_mcast, SIO_TO_SELF,		\
	SIO_FROM_ANY, A(INDEX), 0, SIO_GENL_NOT_OFFERED)			\
X(MCAST_JOIN, "mcast-join", sio_h_mcast, SIO_TO_NODE, SIO_FROM_ANY,	\
	A(INDEX) | A(NODE), A(NAME) | A(DEV) | A(KIND),			\
	SIO_GENL_NOT_OFFERED)							\
X(MCAST_LEAVE, "mcast-leave", sio_h_mcast, SIO_TO_NODE, SIO_FROM_ANY,	\
	A(INDEX) | A(NODE), 0, SIO_GENL_NOT_OFFERED)				\
X(MCAST_MAP, "mcast-map", sio_h_mcast, SIO_TO_LENDER, SIO_FROM_ANY,	\
	A(INDEX) | A(DEV) | A(NODE), 0, SIO_GENL_NOT_OFFERED)			\
X(MCAST_UNMAP, "mcast-unmap", sio_h_mcast, SIO_TO_LENDER, SIO_FROM_ANY, \
	A(INDEX) | A(DEV) | A(NODE), 0, SIO_GENL_NOT_OFFERED)			\
X(MCAST_SIZE, "mcast-size", sio_h_mcast, SIO_TO_SELF, SIO_FROM_ANY,	\
	A(INDEX) | A(SIZE), 0, SIO_GENL_NOT_OFFERED)				\
/* borrower -> lender: an MSI-X table entry (msi.c) */			\
X(MSIX_ENTRY, "msix-entry", sio_h_msix_entry, SIO_TO_LENDER,		\
	SIO_FROM_NODE, A(DEV) | A(NODE) | A(INDEX) | A(DATA), 0,		\
	SIO_GENL_NOT_OFFERED)
/* clang-format on */

/* The node that owns a request (dispatch.c). */
enum sio_cmd_route {
	SIO_REPLY,		/* a reply: never dispatched */
	SIO_TO_SELF,		/* the node it was sent to */
	SIO_TO_LENDER,		/* the lender of SIO_A_DEV */
	SIO_TO_NODE,		/* the node SIO_A_NODE names */
	SIO_TO_PEER,		/* the node SIO_A_PEER names */
	/*
	 * The lender; with separate registries a local user's request is
	 * this node's conversation with both lenders (peer_sep.c).
	 */
	SIO_TO_LENDER_SEP_SELF,
};

/* Who may send a command from another node (origin.c says why). */
enum sio_origin {
	SIO_FROM_ANY,		/* SRC and DST checked, nothing more */
	SIO_FROM_LOCAL,		/* this node's users only */
	/* separate registries: this node's users only */
	SIO_FROM_LOCAL_SEP,
	/* separate registries: SIO_A_NODE (the asker) is the sender */
	SIO_FROM_ASKER_SEP,
	SIO_FROM_NODE,		/* SIO_A_NODE is the sender */
	/* SIO_A_NODE is this node and the sender is the device's lender */
	SIO_FROM_LENDER,
	SIO_FROM_PEER,		/* SIO_A_PEER is the sender */
	/* SIO_A_PEER is the sender (separate registries: SIO_A_NODE) */
	SIO_FROM_EXPOSER,
};

/* smartio.ko's generic netlink operation of a command (kmod/sio_genl.c). */
#define SIO_GENL_OPEN		0x01u	/* offered to every user */
#define SIO_GENL_ADMIN		0x02u	/* CAP_SYS_ADMIN */
#define SIO_GENL_PCI		0x04u	/* and not under LOCKDOWN_PCI_ACCESS */
#define SIO_GENL_HOTPLUG	0x08u	/* serialised with the shadow's hot-plug */
/* every user within the standard header, CAP_SYS_ADMIN beyond it */
#define SIO_GENL_CFG_HEADER	0x10u
#define SIO_GENL_NOT_OFFERED	0x80u	/* no operation: EOPNOTSUPP */

/* How many operations smartio.ko offers (its tables are that long). */
#define SIO_GENL_OFFERED(cmd, name, handler, route, origin, req, opt, genl) \
	(!((genl) & SIO_GENL_NOT_OFFERED)) +
#define SIO_GENL_NOPS (SIO_CMDS(SIO_GENL_OFFERED) 0)
/*
 * kmod/sio_genl.c's row of a command, { cmd, genl, attrs } as its struct
 * sio_genl_row holds them.  Here, beside the table, so that the kernel's
 * sources hold no macro that takes arguments it does not use (a
 * checkpatch warning since Linux 6.2).
 */
#define SIO_GENL_ROW(cmd, name, handler, route, origin, req, opt, genl) \
	{ SIO_CMD_##cmd, genl, (req) | (opt) },

#endif /* SIO_CMDS_H */
