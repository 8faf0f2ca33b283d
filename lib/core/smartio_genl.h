/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * smartio's generic netlink ABI: what user space (libsmartio, or any
 * program speaking to smartio.ko with libnl-genl) and the kernel agree on.
 * Nothing here changes meaning once released: a command or attribute is
 * only ever added, with the next free number, and a changed layout bumps
 * SIO_GENL_VERSION.  The numbers are written out so that a reordering
 * cannot renumber them silently.
 *
 * Family SIO_GENL_NAME, version SIO_GENL_VERSION.  Requests and replies
 * carry the attributes below; which ones each command takes, who may send
 * it and whether smartio.ko offers it is lib/core/cmds.h's table, and
 * smartio(4) documents the offered operations and REG_READ's data.
 *
 * The same messages travel between nodes (node-to-node commands), which
 * is why the numbering has commands smartio.ko does not offer.
 */
#ifndef SMARTIO_GENL_H
#define SMARTIO_GENL_H

#define SIO_GENL_NAME "smartio"
#define SIO_GENL_VERSION 1

enum sio_cmd {
	SIO_CMD_UNSPEC = 0,
	/* user -> core: namespace writes */
	SIO_CMD_LEND = 1,		/* DEV, MASK (0 = none, ~0 = all) */
	SIO_CMD_BORROW = 2,		/* DEV, NODE (the borrower), [SIZE] */
	SIO_CMD_RETURN = 3,		/* DEV, NODE */
	SIO_CMD_RECLAIM = 4,	/* DEV, NODE (who asks; must be lender) */
	SIO_CMD_SET_MODE = 5,	/* DEV, MODE */
	SIO_CMD_SEG_CREATE = 6,	/* NODE, NAME */
	SIO_CMD_SEG_SIZE = 7,	/* NODE, NAME, SIZE */
	SIO_CMD_SEG_DESTROY = 8,	/* NODE, NAME */
	SIO_CMD_SEG_AVAILABLE = 9,	/* NODE, NAME, FLAGS (0|1) */
	SIO_CMD_SEG_ATTACH = 10,	/* NODE (owner), NAME, PEER (who maps) */
	SIO_CMD_SEG_DETACH = 11,	/* NODE, NAME, PEER */
	SIO_CMD_SEG_DMA_MAP = 12,	/* NODE, NAME, DEV */
	SIO_CMD_SEG_DMA_UNMAP = 13,	/* NODE, NAME, DEV */
	SIO_CMD_CFG_READ = 14,	/* DEV, NODE (who reads), OFFSET, SIZE */
	SIO_CMD_CFG_WRITE = 15,	/* DEV, NODE (who writes), OFFSET, DATA */
	/* core <-> core between nodes */
	SIO_CMD_BORROW_REQ = 16,	/* DEV, NODE (borrower), IOVA, SIZE */
	SIO_CMD_BORROW_GRANT = 17,	/* DEV, NODE, BAR* (nested), RID */
	SIO_CMD_BORROW_DENY = 18,	/* DEV, NODE, ERRNO */
	SIO_CMD_MAP_DMA_WINDOW = 19,	/* DEV, NODE, IOVA, SIZE -> reply ADDR */
	SIO_CMD_MAP_MSI_WINDOW = 20,	/* DEV, NODE, IOVA, SIZE -> reply ADDR */
	SIO_CMD_RETURN_REQ = 21,	/* DEV, NODE */
	SIO_CMD_RECLAIM_REQ = 22,	/* DEV, NODE (the borrower being revoked) */
	SIO_CMD_HEARTBEAT = 23,	/* NODE, SEQ, TIME */
	SIO_CMD_EVENT = 24,		/* SEQ, TIME, KIND, DATA ("<object>[ <args>]") */
	SIO_CMD_SEG_CONNECT = 25,	/* NODE (owner), NAME, PEER -> reply ADDR, SIZE */
	SIO_CMD_SEG_DISCONNECT = 26,	/* NODE (owner), NAME, PEER */
	SIO_CMD_MAP_SEG_WINDOW = 27,	/* DEV, NODE (owner), IOVA, SIZE -> reply ADDR */
	SIO_CMD_UNMAP_SEG_WINDOW = 28, /* DEV, NODE (owner), IOVA */
	SIO_CMD_PEER_MAP = 29,	/* DEV, NODE (who asks), INDEX (peer's fdid) */
	SIO_CMD_PEER_UNMAP = 30,	/* DEV, NODE (who asks), INDEX (peer's fdid) */
	SIO_CMD_PEER_EXPOSE = 31,	/* DEV (peer), PEER (its user's lender), RID,
				 * INDEX (BAR) -> reply ADDR (iova) */
	SIO_CMD_PEER_UNEXPOSE = 32,	/* DEV (peer), PEER, RID, IOVA */
	SIO_CMD_REPLY = 33,		/* ERRNO, and whatever the request returns */
	/* user -> smartio.ko: registry bytes for libsmartio's queries */
	SIO_CMD_REG_READ = 34,	/* OFFSET, SIZE -> reply DATA, SEQ */
	/* core <-> core when the nodes do not share one registry */
	SIO_CMD_SEG_TABLE = 35,	/* NODE (owner), SEG* (nested) */
	SIO_CMD_SEG_TABLE_GET = 36,	/* NODE (who asks) -> reply NODE (owner), SEG* */
	/*
	 * NODE (the lender), DATA* (one struct sio_dev_wire per device,
	 * lib/core/dev_table.c): its devices' records for the others' copies.
	 */
	SIO_CMD_DEV_TABLE = 37,
	/*
	 * Borrower -> lender: DEV, NODE (borrower), INDEX (BAR), ADDR (the
	 * borrower's window address of it), SIZE: translate it inbound.
	 */
	SIO_CMD_MAP_BAR_WINDOW = 38,
	/* user -> core: DEV (a PF), SIZE (NumVFs): its VFs enabled (sriov.c) */
	SIO_CMD_SRIOV_SET = 39,
	/* user -> core: multicast groups (mcast.c, which lists attributes) */
	SIO_CMD_MCAST_CREATE = 40,
	SIO_CMD_MCAST_DESTROY = 41,
	SIO_CMD_MCAST_JOIN = 42,
	SIO_CMD_MCAST_LEAVE = 43,
	SIO_CMD_MCAST_MAP = 44,
	SIO_CMD_MCAST_UNMAP = 45,
	SIO_CMD_MCAST_SIZE = 46,
	/*
	 * Borrower -> lender: DEV, NODE (the borrower), INDEX (MSI-X table
	 * entry), DATA (the entry as the device takes it: address, data,
	 * vector control; 16 bytes, little endian).  The lender writes it
	 * only when the address is in the borrower's MSI window (msi.c).
	 */
	SIO_CMD_MSIX_ENTRY = 47,
	__SIO_CMD_MAX,
};
#define SIO_CMD_MAX (__SIO_CMD_MAX - 1)

enum sio_attr {
	SIO_A_UNSPEC = 0,
	SIO_A_SRC = 1,	/* u32: fabric node id of the sender */
	SIO_A_DST = 2,	/* u32: fabric node id of the receiver */
	SIO_A_NODE = 3,	/* u32: node index (borrower, owner, asker) */
	SIO_A_PEER = 4,	/* u32: second node index */
	SIO_A_DEV = 5,	/* u32: fabric device id */
	SIO_A_MODE = 6,	/* u32: enum sio_mode */
	SIO_A_ERRNO = 7,	/* s32: 0 or a negative errno */
	SIO_A_ADDR = 8,	/* u64 */
	SIO_A_SIZE = 9,	/* u64 */
	SIO_A_IOVA = 10,	/* u64 */
	SIO_A_OFFSET = 11,	/* u64 */
	SIO_A_MASK = 12,	/* u64: node bitmask */
	SIO_A_FLAGS = 13,	/* u32 */
	SIO_A_RID = 14,	/* u32: PCIe requester id */
	SIO_A_SEQ = 15,	/* u64 */
	SIO_A_TIME = 16,	/* u64: nanoseconds */
	SIO_A_KIND = 17,	/* u32 */
	SIO_A_INDEX = 18,	/* u32 */
	SIO_A_NAME = 19,	/* NUL-terminated string, at most SIO_NAME_MAX bytes incl. NUL */
	SIO_A_DATA = 20,	/* binary, at most 4096 bytes */
	SIO_A_BAR = 21,	/* nested: INDEX, ADDR, SIZE, FLAGS, IOVA; may
			 * repeat */
	SIO_A_SEG = 22,	/* nested: NAME, INDEX (generation), SIZE, ADDR,
			 * OFFSET (backing), FLAGS (available), MASK
			 * (attached); may repeat */
	__SIO_A_MAX,
};
#define SIO_A_MAX (__SIO_A_MAX - 1)
#define SIO_NAME_MAX 32
#define SIO_DATA_MAX 4096

#endif /* SMARTIO_GENL_H */
