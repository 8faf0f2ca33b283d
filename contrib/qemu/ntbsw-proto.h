/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smartio NTB switch: what the switch process and the QEMU device model
 * (smartio-ntb-port) share.  Two things cross between them:
 *
 *  - the switch state, one memfd created by the switch and mapped by every
 *    port's QEMU: per port, the registers other ports must read or set
 *    without a round trip (presence, link enable, doorbell status and mask,
 *    scratchpads, the inbound look-up table, the blocked counters);
 *  - messages on each port's unix socket, relayed by the switch: hello,
 *    peer RAM (with the peer's guest RAM fd), link/LUT/doorbell notices,
 *    and forwarded reads and writes for targets that are not peer RAM;
 *  - pipes of their own between each two ports, which the switch hands
 *    both when they meet, one each way for data and one each way for
 *    interrupts: the forwarded accesses and the notices for one peer go
 *    on its data pipe, one process hop fewer than through the switch (a
 *    doorbell of a borrowed device takes one); its MSI writes go on the
 *    interrupt pipe, which a thread of the receiving QEMU reads and
 *    raises at once, while the main loop reads the data pipe itself.
 *    Pipes, not socket pairs: a message to a sleeping reader costs 3.6
 *    us instead of 4.9 on the machine this was measured on, and a
 *    borrowed NVMe's 4 KiB read sends three.
 *
 * The register map guests see is in man/smartio-ntb-port.7.
 */
#ifndef NTBSW_PROTO_H
#define NTBSW_PROTO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ntb_sioswitch_regs.h"

struct ntbsw_lut {
	uint64_t target;	/* address in the receiving port's space */
	uint32_t ctrl;		/* NTBSW_LUT_EN */
	uint32_t rid_allow;	/* bit p: requester id p (source port) */
};

/*
 * How a port's own NTB function's DMA is translated in its guest, which
 * is how an access arriving through a peer's window must be translated
 * (the receiving port publishes it, ntbsw-iommu.c).  All zero: identity,
 * what a port without a vIOMMU, with translation off or with its
 * function passed through (iommu=pt) has, and what RAM aliases assume.
 */
#define NTBSW_DMA_IDENTITY	0u
#define NTBSW_DMA_VTD		1u	/* VT-d legacy mode: walk these tables */
#define NTBSW_DMA_OPAQUE	2u	/* translated, tables unknown: forward */
/* inval_gen moves on each of the port's invalidations: peers may cache */
#define NTBSW_DMA_F_GEN		0x01u

struct ntbsw_dma_xlat {
	uint32_t mode;		/* NTBSW_DMA_*, written last */
	uint16_t sid;		/* the function's bus << 8 | devfn */
	uint8_t aw_bits;	/* the IOMMU's address width (39 or 48) */
	uint8_t flags;		/* NTBSW_DMA_F_* */
	uint64_t root;		/* VT-d root table, guest-physical */
	/*
	 * Bumped by the port before its vIOMMU performs any register write
	 * (an invalidation, a new root table, translation on or off) and
	 * whenever mode, root or sid change: what a peer cached of this
	 * port's tables under an older value is stale (ntbsw-iommu.c).
	 */
	uint64_t inval_gen;
};

struct ntbsw_port_state {
	uint32_t present;	/* set by the switch while connected */
	uint32_t link_en;	/* bit p: this port accepts a link with p */
	uint64_t ram_size;	/* guest RAM reachable by RAM aliases */
	uint64_t db_status;	/* doorbell bits rung by peers */
	uint64_t db_mask;
	uint32_t spad[NTBSW_NR_SPAD];
	uint64_t blocked_noentry;	/* hit no enabled entry */
	uint64_t blocked_rid;		/* requester not allowed */
	uint64_t last_blocked;		/* (src << 56) | offset in window */
	/* inbound LUT, indexed [source port][window][entry] */
	struct ntbsw_lut lut[NTBSW_MAX_PORTS][NTBSW_NR_MW][NTBSW_NR_LUT];
	struct ntbsw_dma_xlat dma;	/* this port's function's DMA */
	uint8_t pad[256 - sizeof(struct ntbsw_dma_xlat)];
};

struct ntbsw_state {
	uint32_t magic;
	uint32_t nports;
	uint64_t mw_size;	/* bytes per outbound window 0 (BAR2) */
	uint64_t mw1_size;	/* bytes per outbound window 1 (BAR4) */
	struct ntbsw_port_state port[NTBSW_MAX_PORTS];
};

/* A window size: a power of two, NTBSW_NR_LUT pages to 4 GiB. */
static inline int ntbsw_wsize_ok(uint64_t v)
{
	return v >= NTBSW_NR_LUT * 4096ULL && !(v & (v - 1)) &&
	       v <= (1ULL << 32);
}

enum ntbsw_msg_type {
	NTBSW_HELLO = 1,	/* port -> switch: arg0 = port, arg1 = RAM size; fd */
	NTBSW_WELCOME,		/* switch -> port: fd = state memfd */
	NTBSW_PEER_RAM,		/* switch -> port: src = peer, arg1 = size; fd */
	NTBSW_PORT_DOWN,	/* switch -> all: src = departed port */
	NTBSW_NOTIFY,		/* port -> port(s): arg0 = NTBSW_NOTE_* bits */
	NTBSW_FWD_WRITE,	/* arg0 = address, arg1 = length, data */
	NTBSW_FWD_READ,		/* arg0 = address, arg1 = length, tag */
	NTBSW_FWD_RESP,		/* tag, data; arg1 = 0 ok, else failed */
	NTBSW_REFUSED,		/* switch: the port number is taken/invalid */
	NTBSW_PEER_LINK,	/* switch -> port: src = peer; fd = an end
				 * of a pipe to or from that peer alone (its
				 * requester id); arg0 = NTBSW_LINK_* */
};

/* The pipes between two ports: accesses and notices, MSI writes. */
#define NTBSW_LINK_DATA_TX	0u	/* write end, to the peer */
#define NTBSW_LINK_DATA_RX	1u	/* read end, from the peer */
#define NTBSW_LINK_IRQ_TX	2u
#define NTBSW_LINK_IRQ_RX	3u

#define NTBSW_NOTE_DB	0x1u	/* your doorbell status changed */
#define NTBSW_NOTE_LINK	0x2u	/* a link enable changed */
#define NTBSW_NOTE_LUT	0x4u	/* the sender's LUT changed */
#define NTBSW_NOTE_ERR	0x8u	/* your LUT blocked an access */
#define NTBSW_NOTE_DMA	0x10u	/* the sender's DMA translation changed */

#define NTBSW_DST_ALL	0xffu

/*
 * On a read: answer through the switch, not on the pair's own pipe.
 * Set by a reader that waits holding QEMU's big lock: the data pipe is
 * read only under that lock.
 */
#define NTBSW_F_ANSWER_VIA_SWITCH 0x1u
/*
 * On an MSI write on the interrupt pipe: the sender wrote on its data pipe
 * to us since its last MSI, so the receiver reads that pipe first (a
 * device's writes land before its interrupt).  Without it the receiver
 * raises the interrupt at once: at depth 1 a lent NVMe's data and
 * completions go through RAM aliases and nothing else comes first.
 */
#define NTBSW_F_DATA_FIRST 0x2u

struct ntbsw_msg {
	uint8_t type;
	uint8_t src;
	uint8_t dst;
	uint8_t flags;		/* NTBSW_F_* */
	uint32_t tag;
	uint64_t arg0;
	uint64_t arg1;
	uint8_t data[8];
};

/*
 * The one copy of the socket code the switch, the QEMU port and the switch
 * test share.  Each port's socket is SOCK_SEQPACKET, so one message is one
 * sendmsg/recvmsg; a file descriptor travels beside it as SCM_RIGHTS.
 */

/*
 * Sends m, with pass_fd attached unless it is -1; 0 when it all went.
 * flags: MSG_DONTWAIT or 0; -1 with errno EAGAIN when the receiver's queue
 * is full under MSG_DONTWAIT.
 */
static inline int ntbsw_send_msg_flags(int sock, const struct ntbsw_msg *m,
				       int pass_fd, int flags)
{
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (pass_fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*m) ? 0 : -1;
}

static inline int ntbsw_send_msg(int sock, const struct ntbsw_msg *m,
				 int pass_fd)
{
	return ntbsw_send_msg_flags(sock, m, pass_fd, 0);
}

/*
 * Receives one message, its fd (if any) in *got_fd, else -1 there.  -1 on
 * EOF, an error, or a message of the wrong size; a descriptor that came
 * with a bad message is closed, so the caller may simply drop the peer.
 */
static inline int ntbsw_recv_msg(int sock, struct ntbsw_msg *m, int *got_fd)
{
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;

	*got_fd = -1;
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(got_fd, CMSG_DATA(c), sizeof(int));
	if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & MSG_TRUNC)) {
		if (*got_fd >= 0)
			close(*got_fd);
		*got_fd = -1;
		return -1;
	}
	return 0;
}

/*
 * A message on a pipe between two ports: one write of a whole message,
 * never torn (it is below PIPE_BUF), never blocking when the write end is
 * O_NONBLOCK (-1 with errno EAGAIN when full).
 */
static inline int ntbsw_pipe_write(int fd, const struct ntbsw_msg *m)
{
	ssize_t n;

	do {
		n = write(fd, m, sizeof(*m));
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*m) ? 0 : -1;
}

/*
 * Reads up to max whole messages from a pipe in one read: their count,
 * or -1 as ntbsw_pipe_read.  Each message was one write below PIPE_BUF,
 * so the pipe holds whole messages only and a read returns a multiple of
 * their size; fewer than max means the pipe was empty after them, which
 * spares the reader the read that would answer EAGAIN.
 */
static inline int ntbsw_pipe_read_many(int fd, struct ntbsw_msg *m,
				       unsigned int max)
{
	ssize_t n;

	do {
		n = read(fd, m, max * sizeof(*m));
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		errno = ECONNRESET;
	else if (n > 0 && n % sizeof(*m))
		errno = EPROTO;
	return n > 0 && !(n % sizeof(*m)) ? (int)(n / sizeof(*m)) : -1;
}

/*
 * Reads one message from a pipe: -1 on EOF (errno ECONNRESET), an error
 * (EAGAIN when the read end is O_NONBLOCK and empty), or a torn message
 * (EPROTO; only whole messages are written).
 */
static inline int ntbsw_pipe_read(int fd, struct ntbsw_msg *m)
{
	ssize_t n;

	do {
		n = read(fd, m, sizeof(*m));
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		errno = ECONNRESET;
	else if (n > 0 && n != (ssize_t)sizeof(*m))
		errno = EPROTO;
	return n == (ssize_t)sizeof(*m) ? 0 : -1;
}

#endif
