/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smartio-ntb-port: one port of a software NTB switch, as a PCIe function
 * of a QEMU guest (a device type added to the stock qemu-system-x86_64 by
 * LD_PRELOAD of smartio-ntb.so).  Register map and usage:
 * man/smartio-ntb-port.7.  The switch process is smartio-ntb-switch.
 *
 * Data path.  An access at offset x of the outbound window (BAR2 for
 * window 0, BAR4 for window 1) slot of peer P is translated by P's inbound
 * LUT entry for (this port, window, x / entry size), kept in the switch
 * state every port maps.  When the entry targets P's RAM the slot holds a
 * RAM alias of P's guest RAM (shared memory): the CPU and this guest's
 * devices reach it with no message.  Any other target is forwarded to P's
 * QEMU and performed there as a bus-master access of P's NTB function:
 * writes posted, in order on one pipe; reads wait for the answer (a vCPU
 * drops the big lock while it waits).  A dead peer answers all-ones.
 * PCIe keeps a device's posted writes in order; a RAM alias would let its
 * next write overtake a forwarded one (a completion entry landing before
 * the data it announces in a peer device's memory), so a device's write
 * forwarded to anything but the interrupt range waits until the peer has
 * performed it (a zero-length read, answered without an access).
 */
#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/thread.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "sysemu/hostmem.h"
#include "sysemu/cpus.h"
#include "sysemu/reset.h"
#include "exec/memory.h"
#include "qom/object.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <link.h>

#include "ntbsw-proto.h"

#define TYPE_NTBSW_PORT "smartio-ntb-port"
OBJECT_DECLARE_SIMPLE_TYPE(NtbswPort, NTBSW_PORT)

#define NTBSW_MSI_BASE	0xfee00000ULL	/* the interrupt range */
#define NTBSW_MSI_SIZE	0x100000ULL
#define NTBSW_PENDING	16	/* outstanding forwarded reads */
#define NTBSW_READ_TIMEOUT_MS 1000

struct ntbsw_pending {
	bool busy, done, ok;
	uint8_t dst;
	uint64_t data;
};

struct ntbsw_peer {
	MemoryRegion ram;		/* the peer's guest RAM (shared fd) */
	bool have_ram;
	void *ram_ptr;
	uint64_t ram_size;
	MemoryRegion *alias[NTBSW_NR_MW][NTBSW_NR_LUT];
	uint64_t alias_target[NTBSW_NR_MW][NTBSW_NR_LUT];
	uint64_t alias_len[NTBSW_NR_MW][NTBSW_NR_LUT];
	int tx_fd;	/* data pipe to the peer (send_lock), -1: none */
	int irq_fd;	/* interrupt pipe to the peer (send_lock) */
	int rx_fd;	/* data pipe from the peer (big lock) */
};

struct NtbswPort {
	PCIDevice parent_obj;

	char *switch_path;
	uint32_t port;
	HostMemoryBackend *memdev;

	int sock;
	QemuMutex send_lock;
	struct ntbsw_state *st;
	size_t st_len;
	uint32_t nports;
	/* per window: outbound window per peer, LUT entry, BAR */
	uint64_t mw_size[NTBSW_NR_MW], ent_size[NTBSW_NR_MW];
	uint64_t bar_size[NTBSW_NR_MW];
	uint32_t slots;

	MemoryRegion bar0;
	MemoryRegion win[NTBSW_NR_MW];		/* BAR2, BAR4 containers */
	MemoryRegion win_io[NTBSW_NR_MW];	/* forwarding background */
	struct ntbsw_peer peer[NTBSW_MAX_PORTS];

	uint32_t link_status, link_event, err_status;
	uint64_t slow;		/* outbound accesses by callback, not alias */

	QemuThread rx_thread;
	QemuMutex q_lock;
	GQueue *rxq;			/* struct rx_item, for the main loop */
	QEMUBH *bh;

	QemuMutex p_lock;
	QemuCond p_cond;
	struct ntbsw_pending pend[NTBSW_PENDING];
	uint32_t peer_down_gen;
};

struct rx_item {
	struct ntbsw_msg m;
	int fd;
};

#define ME(s) (&(s)->st->port[(s)->port])

/* ---- version check ---------------------------------------------------- */

/*
 * The object was compiled against one Debian qemu source package and
 * links against that binary's exported symbols: structure layouts must
 * match exactly, so refuse to run in any other qemu-system-x86_64 build.
 */
static int ntbsw_buildid_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	char *out = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const unsigned char *desc;
			size_t nlen = (n->n_namesz + 3) & ~3u;
			size_t dlen = (n->n_descsz + 3) & ~3u;
			unsigned int k;

			desc = (const unsigned char *)p + sizeof(*n) + nlen;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4) &&
			    n->n_descsz <= 64) {
				for (k = 0; k < n->n_descsz; k++)
					sprintf(out + 2 * k, "%02x", desc[k]);
				return 1;
			}
			p += sizeof(*n) + nlen + dlen;
		}
	}
	return 1;	/* only the main program (first entry) */
}

static void __attribute__((constructor)) ntbsw_check_version(void)
{
	char id[160] = "";

	dl_iterate_phdr(ntbsw_buildid_cb, id);
	if (strcmp(id, NTBSW_QEMU_BUILDID) != 0) {
		fprintf(stderr,
			"smartio-ntb.so: built for qemu-system-x86_64 %s "
			"(Debian qemu %s, build-id %s), but this program has "
			"build-id %s; rebuild it: make -C contrib/qemu\n",
			QEMU_VERSION, NTBSW_QEMU_PKG, NTBSW_QEMU_BUILDID,
			id[0] ? id : "(none)");
		exit(1);
	}
}

/* ---- messages ----------------------------------------------------------- */

/* An address in the interrupt range: a write there is an MSI. */
static bool ntbsw_is_msi(uint64_t t)
{
	return t >= NTBSW_MSI_BASE && t < NTBSW_MSI_BASE + NTBSW_MSI_SIZE;
}

/*
 * Sending.  No thread ever blocks in a send holding a lock: each message
 * goes out without waiting (MSG_DONTWAIT, or a pipe's O_NONBLOCK) under
 * send_lock, and a sender that finds the receiver's queue full waits for
 * room outside it.  A vCPU drops the big lock to wait; a thread that keeps
 * it (the main loop) drains its own data pipes into the queue meanwhile,
 * since those are read only under that lock and the peer may be waiting
 * the same way for room in them.  An MSI write goes on the interrupt pipe
 * while it has room, else on the data pipe, where no one waits for the big
 * lock to read it.
 */

/* A vCPU in an access, holding the big lock it may drop to wait. */
static bool ntbsw_vcpu_locked(void)
{
	return qemu_in_vcpu_thread() && qemu_mutex_iothread_locked();
}

/*
 * Where m goes (send_lock held): the switch's socket, or straight to its
 * one destination when the switch gave us pipes to that peer; everything
 * but MSIs for one peer then goes on one pipe, in order.
 */
static int ntbsw_sock_for(NtbswPort *s, struct ntbsw_msg *m, bool via_switch,
			  bool irq_ok)
{
	struct ntbsw_peer *pe;

	if (via_switch || m->dst >= s->nports || m->dst == s->port)
		return s->sock;
	pe = &s->peer[m->dst];
	if (irq_ok && pe->irq_fd >= 0 && m->type == NTBSW_FWD_WRITE &&
	    ntbsw_is_msi(m->arg0))
		return pe->irq_fd;
	return pe->tx_fd >= 0 ? pe->tx_fd : s->sock;
}

static bool ntbsw_read_link(NtbswPort *s, unsigned int p, int fd,
			    bool handle);
static void ntbsw_link_watch(NtbswPort *s, unsigned int p, int fd);

/*
 * Waits up to 100 ms for room on sock; with the big lock held, reads
 * (into the queue) what peers sent us meanwhile on the data pipes.
 */
static void ntbsw_wait_room(NtbswPort *s, int sock, bool locked)
{
	struct pollfd pfd[NTBSW_MAX_PORTS + 1];
	unsigned int n = 0, p, who[NTBSW_MAX_PORTS + 1];

	pfd[n++] = (struct pollfd){ .fd = sock, .events = POLLOUT };
	for (p = 0; locked && p < s->nports; p++) {
		if (s->peer[p].rx_fd < 0)
			continue;
		who[n] = p;
		pfd[n++] = (struct pollfd){ .fd = s->peer[p].rx_fd,
					    .events = POLLIN };
	}
	if (poll(pfd, n, 100) <= 0)
		return;
	for (p = 1; p < n; p++)
		if (pfd[p].revents & POLLIN)
			ntbsw_read_link(s, who[p], pfd[p].fd, false);
}

static int ntbsw_send_on(NtbswPort *s, struct ntbsw_msg *m, int fd,
			 bool via_switch)
{
	bool locked = qemu_mutex_iothread_locked();
	bool vcpu = ntbsw_vcpu_locked(), irq_ok = true;
	int rc, sock, err;

	m->src = s->port;
	for (;;) {
		qemu_mutex_lock(&s->send_lock);
		sock = fd >= 0 ? s->sock : ntbsw_sock_for(s, m, via_switch,
							    irq_ok);
		if (sock == s->sock)
			rc = ntbsw_send_msg_flags(sock, m, fd, MSG_DONTWAIT);
		else
			rc = ntbsw_pipe_write(sock, m);
		err = errno;
		if (rc && (err == EAGAIN || err == EWOULDBLOCK) &&
		    fd < 0 && m->dst < s->nports &&
		    sock == s->peer[m->dst].irq_fd) {
			irq_ok = false;		/* full: the data pipe */
			qemu_mutex_unlock(&s->send_lock);
			continue;
		}
		qemu_mutex_unlock(&s->send_lock);
		if (!rc || (err != EAGAIN && err != EWOULDBLOCK))
			break;
		/*
		 * The peer's queue is full.  A vCPU waits without the big
		 * lock; its next access waits for this one: order holds.
		 */
		if (vcpu && locked) {
			qemu_mutex_unlock_iothread();
			locked = false;
		}
		ntbsw_wait_room(s, sock, locked);
	}
	if (vcpu && !locked)
		qemu_mutex_lock_iothread();
	errno = err;
	return rc;
}

static int ntbsw_send(NtbswPort *s, struct ntbsw_msg *m, int fd)
{
	return ntbsw_send_on(s, m, fd, false);
}

/* Our ends of the pipes between ports never block (ntbsw_send_on). */
static void ntbsw_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * Closes *fd, one of our pipes to a peer (send_lock held: no one is
 * writing to it).  A sender waiting for room on it polls it at most
 * 100 ms more, then picks again.
 */
static void ntbsw_close_tx(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Forgets the pipes to peer p (it left).  The pipes from it end with its
 * QEMU, and their readers close them.
 */
static void ntbsw_drop_link(NtbswPort *s, unsigned int p)
{
	qemu_mutex_lock(&s->send_lock);
	ntbsw_close_tx(&s->peer[p].tx_fd);
	ntbsw_close_tx(&s->peer[p].irq_fd);
	qemu_mutex_unlock(&s->send_lock);
}

/*
 * A notice to every peer goes to each one separately, on the way this
 * port's other messages to that peer take.  Relayed by the switch as one
 * broadcast, a link notice could arrive after a doorbell sent on the
 * peer's pipe just after it; ntb_perf, among others, drops a doorbell
 * from a peer whose link it does not yet see up, and then waits forever
 * for the command that doorbell announced.
 */
static void ntbsw_notify(NtbswPort *s, unsigned int dst, uint64_t note)
{
	struct ntbsw_msg m = { .type = NTBSW_NOTIFY, .dst = dst, .arg0 = note };
	unsigned int q;

	if (dst != NTBSW_DST_ALL) {
		ntbsw_send(s, &m, -1);
		return;
	}
	for (q = 0; q < s->nports; q++) {
		if (q == s->port)
			continue;
		m.dst = q;
		ntbsw_send(s, &m, -1);
	}
}

/* ---- link state and RAM aliases ---------------------------------------- */

static bool ntbsw_link_up(NtbswPort *s, unsigned int p)
{
	struct ntbsw_port_state *me = ME(s), *ps;

	if (p >= s->nports || p == s->port)
		return false;
	ps = &s->st->port[p];
	return qatomic_read(&me->present) && qatomic_read(&ps->present) &&
	       (qatomic_read(&me->link_en) & BIT(p)) &&
	       (qatomic_read(&ps->link_en) & BIT(s->port));
}

static void ntbsw_irq(NtbswPort *s, unsigned int vec)
{
	PCIDevice *d = PCI_DEVICE(s);

	if (msix_enabled(d))
		msix_notify(d, vec);
}

/* How much of its entry of window w a LUT entry covers (CTRL's pages). */
static uint64_t ntbsw_lut_len(NtbswPort *s, unsigned int w,
			      struct ntbsw_lut *l)
{
	uint64_t pages = qatomic_read(&l->ctrl) >> NTBSW_LUT_PAGES_SHIFT;

	return pages && pages * 4096 < s->ent_size[w] ? pages * 4096
						       : s->ent_size[w];
}

/* Whether entry (p, w, e) may be a RAM alias, its target and length. */
static bool ntbsw_alias_want(NtbswPort *s, unsigned int p, unsigned int w,
			     unsigned int e, uint64_t *target, uint64_t *len)
{
	struct ntbsw_peer *pe = &s->peer[p];
	struct ntbsw_lut *l = &s->st->port[p].lut[s->port][w][e];
	uint64_t t = qatomic_read(&l->target);

	*len = ntbsw_lut_len(s, w, l);
	if (!pe->have_ram || !ntbsw_link_up(s, p) ||
	    !(qatomic_read(&l->ctrl) & NTBSW_LUT_EN) ||
	    !(qatomic_read(&l->rid_allow) & BIT(s->port)) ||
	    (t & (qemu_real_host_page_size() - 1)) ||
	    t + *len > pe->ram_size || t + *len < t)
		return false;
	*target = t;
	return true;
}

/* Rebuild the RAM aliases of peer p's slots from its LUT (big lock held). */
static void ntbsw_remap_peer(NtbswPort *s, unsigned int p)
{
	struct ntbsw_peer *pe = &s->peer[p];
	unsigned int w, e;

	memory_region_transaction_begin();
	for (w = 0; w < NTBSW_NR_MW; w++) {
		for (e = 0; e < NTBSW_NR_LUT; e++) {
			MemoryRegion *a = pe->alias[w][e];
			uint64_t t, len;
			bool want = ntbsw_alias_want(s, p, w, e, &t, &len);

			/* An alias of another length is made anew. */
			if (a && want && pe->alias_len[w][e] != len) {
				memory_region_del_subregion(&s->win[w], a);
				object_unparent(OBJECT(a));
				pe->alias[w][e] = a = NULL;
			}
			if (!a) {
				if (!want)
					continue;
				a = g_new0(MemoryRegion, 1);
				memory_region_init_alias(a, OBJECT(s),
							 "ntb-peer-ram", &pe->ram,
							 t, len);
				memory_region_add_subregion_overlap(&s->win[w],
					p * s->mw_size[w] + e * s->ent_size[w],
					a, 1);
				pe->alias[w][e] = a;
				pe->alias_target[w][e] = t;
				pe->alias_len[w][e] = len;
				continue;
			}
			if (!want) {
				memory_region_set_enabled(a, false);
				continue;
			}
			if (pe->alias_target[w][e] != t) {
				memory_region_set_alias_offset(a, t);
				pe->alias_target[w][e] = t;
			}
			memory_region_set_enabled(a, true);
		}
	}
	memory_region_transaction_commit();
}

/* Drop peer p's RAM and every alias of it (the peer left or rebooted). */
static void ntbsw_drop_peer_ram(NtbswPort *s, unsigned int p)
{
	struct ntbsw_peer *pe = &s->peer[p];
	unsigned int w, e;

	if (!pe->have_ram)
		return;
	memory_region_transaction_begin();
	for (w = 0; w < NTBSW_NR_MW; w++) {
		for (e = 0; e < NTBSW_NR_LUT; e++) {
			MemoryRegion *a = pe->alias[w][e];

			if (!a)
				continue;
			memory_region_del_subregion(&s->win[w], a);
			/* Storage stays: the flat view may still hold it. */
			object_unparent(OBJECT(a));
			pe->alias[w][e] = NULL;
		}
	}
	memory_region_transaction_commit();
	object_unparent(OBJECT(&pe->ram));
	pe->have_ram = false;
	pe->ram_ptr = NULL;
}

static void ntbsw_update_links(NtbswPort *s)
{
	uint32_t now = 0, changed;
	unsigned int p;

	for (p = 0; p < s->nports; p++)
		if (ntbsw_link_up(s, p))
			now |= BIT(p);
	changed = now ^ s->link_status;
	s->link_status = now;
	for (p = 0; p < s->nports; p++)
		if (p != s->port)
			ntbsw_remap_peer(s, p);
	if (changed) {
		s->link_event |= changed;
		ntbsw_irq(s, NTBSW_VEC_LINK);
	}
	/* Reads waiting on a peer whose link fell get all-ones now. */
	qemu_mutex_lock(&s->p_lock);
	for (p = 0; p < NTBSW_PENDING; p++) {
		struct ntbsw_pending *pd = &s->pend[p];

		if (pd->busy && !pd->done && (changed & ~now & BIT(pd->dst))) {
			pd->done = true;
			pd->ok = false;
		}
	}
	qemu_cond_broadcast(&s->p_cond);
	qemu_mutex_unlock(&s->p_lock);
}

/* ---- blocked transactions ----------------------------------------------- */

/* Count a blocked access in the receiving port p and tell it. */
static void ntbsw_block(NtbswPort *s, unsigned int p, bool rid, uint64_t off)
{
	struct ntbsw_port_state *ps = &s->st->port[p];

	if (rid)
		qatomic_fetch_add(&ps->blocked_rid, 1);
	else
		qatomic_fetch_add(&ps->blocked_noentry, 1);
	qatomic_set(&ps->last_blocked, ((uint64_t)s->port << 56) | off);
	ntbsw_notify(s, p, NTBSW_NOTE_ERR);
}

/* ---- outbound windows --------------------------------------------------- */

/*
 * Translate window w offset addr: the peer, its address, and whether it is
 * the peer's RAM (*ram set).  False: nowhere (dropped; all-ones).
 */
static bool ntbsw_translate(NtbswPort *s, unsigned int w, hwaddr addr,
			    unsigned int size, unsigned int *pp,
			    uint64_t *target, void **ram)
{
	unsigned int p = addr / s->mw_size[w];
	uint64_t off = addr % s->mw_size[w];
	unsigned int e = off / s->ent_size[w];
	struct ntbsw_lut *l;
	uint64_t t;

	*ram = NULL;
	if (p >= s->nports || !ntbsw_link_up(s, p))
		return false;
	l = &s->st->port[p].lut[s->port][w][e];
	if (!(qatomic_read(&l->ctrl) & NTBSW_LUT_EN)) {
		ntbsw_block(s, p, false, ((uint64_t)w << 48) | off);
		return false;
	}
	if (!(qatomic_read(&l->rid_allow) & BIT(s->port))) {
		ntbsw_block(s, p, true, ((uint64_t)w << 48) | off);
		return false;
	}
	/* Past the entry's length: no entry covers it. */
	if (off % s->ent_size[w] + size > ntbsw_lut_len(s, w, l)) {
		ntbsw_block(s, p, false, ((uint64_t)w << 48) | off);
		return false;
	}
	t = qatomic_read(&l->target) + off % s->ent_size[w];
	*pp = p;
	*target = t;
	if (s->peer[p].have_ram && t + size <= s->peer[p].ram_size &&
	    t + size > t)
		*ram = (uint8_t *)s->peer[p].ram_ptr + t;
	return true;
}

static uint64_t ntbsw_fwd_read(NtbswPort *s, unsigned int p, uint64_t addr,
			       unsigned int size)
{
	struct ntbsw_msg m = { .type = NTBSW_FWD_READ, .dst = p,
			       .arg0 = addr, .arg1 = size };
	struct ntbsw_pending *pd = NULL;
	bool unlocked = false;
	uint64_t v = ~0ULL;
	int64_t deadline;
	unsigned int i;

	qemu_mutex_lock(&s->p_lock);
	for (i = 0; i < NTBSW_PENDING; i++) {
		if (!s->pend[i].busy) {
			pd = &s->pend[i];
			break;
		}
	}
	if (!pd) {
		qemu_mutex_unlock(&s->p_lock);
		return v;
	}
	*pd = (struct ntbsw_pending){ .busy = true, .dst = p };
	qemu_mutex_unlock(&s->p_lock);

	m.tag = i;
	/*
	 * A vCPU waits without the big lock so the main loop (and the peer's
	 * requests to us) go on.  Other callers keep it, and have the answer
	 * sent through the switch: the data pipe from the peer is read only
	 * under that lock.
	 */
	unlocked = ntbsw_vcpu_locked();
	if (!unlocked)
		m.flags = NTBSW_F_ANSWER_VIA_SWITCH;
	if (ntbsw_send(s, &m, -1) == 0) {
		if (unlocked)
			qemu_mutex_unlock_iothread();
		deadline = g_get_monotonic_time() +
			   NTBSW_READ_TIMEOUT_MS * 1000;
		qemu_mutex_lock(&s->p_lock);
		while (!pd->done) {
			int64_t left = deadline - g_get_monotonic_time();

			if (left <= 0)
				break;
			qemu_cond_timedwait(&s->p_cond, &s->p_lock,
					    left / 1000 + 1);
		}
		if (pd->done && pd->ok)
			v = pd->data;
		qemu_mutex_unlock(&s->p_lock);
		if (unlocked)
			qemu_mutex_lock_iothread();
	}
	qemu_mutex_lock(&s->p_lock);
	pd->busy = false;
	qemu_mutex_unlock(&s->p_lock);
	if (size < 8)
		v &= (1ULL << (size * 8)) - 1;
	return v;
}

static uint64_t ntbsw_win_read(void *opaque, hwaddr addr, unsigned int size,
			       unsigned int w)
{
	NtbswPort *s = opaque;
	uint64_t t, v = 0;
	unsigned int p;
	void *ram;

	qatomic_inc(&s->slow);
	if (!ntbsw_translate(s, w, addr, size, &p, &t, &ram))
		return size == 8 ? ~0ULL : (1ULL << (size * 8)) - 1;
	if (ram) {
		memcpy(&v, ram, size);
		return le64_to_cpu(v);
	}
	return ntbsw_fwd_read(s, p, t, size);
}

static void ntbsw_win_write(void *opaque, hwaddr addr, uint64_t val,
			    unsigned int size, unsigned int w)
{
	NtbswPort *s = opaque;
	struct ntbsw_msg m = { .type = NTBSW_FWD_WRITE };
	unsigned int p;
	uint64_t t;
	void *ram;

	qatomic_inc(&s->slow);
	if (!ntbsw_translate(s, w, addr, size, &p, &t, &ram))
		return;
	val = cpu_to_le64(val);
	if (ram) {
		memcpy(ram, &val, size);
		return;
	}
	m.dst = p;
	m.arg0 = t;
	m.arg1 = size;
	memcpy(m.data, &val, size);
	if (ntbsw_send(s, &m, -1) == 0 && !qemu_in_vcpu_thread() &&
	    !ntbsw_is_msi(t))
		ntbsw_fwd_read(s, p, t, 0);	/* the peer performed it */
}

static uint64_t ntbsw_win0_read(void *o, hwaddr a, unsigned int sz)
{
	return ntbsw_win_read(o, a, sz, 0);
}

static uint64_t ntbsw_win1_read(void *o, hwaddr a, unsigned int sz)
{
	return ntbsw_win_read(o, a, sz, 1);
}

static void ntbsw_win0_write(void *o, hwaddr a, uint64_t v, unsigned int sz)
{
	ntbsw_win_write(o, a, v, sz, 0);
}

static void ntbsw_win1_write(void *o, hwaddr a, uint64_t v, unsigned int sz)
{
	ntbsw_win_write(o, a, v, sz, 1);
}

static const MemoryRegionOps ntbsw_win_ops[NTBSW_NR_MW] = {
	{
		.read = ntbsw_win0_read,
		.write = ntbsw_win0_write,
		.endianness = DEVICE_LITTLE_ENDIAN,
		.valid = { .min_access_size = 1, .max_access_size = 8 },
		.impl = { .min_access_size = 1, .max_access_size = 8 },
	}, {
		.read = ntbsw_win1_read,
		.write = ntbsw_win1_write,
		.endianness = DEVICE_LITTLE_ENDIAN,
		.valid = { .min_access_size = 1, .max_access_size = 8 },
		.impl = { .min_access_size = 1, .max_access_size = 8 },
	},
};

/* ---- BAR0 registers ----------------------------------------------------- */

static uint64_t ntbsw_reg64(NtbswPort *s, hwaddr a, bool *ok)
{
	struct ntbsw_port_state *me = ME(s);

	*ok = true;
	switch (a) {
	case NTBSW_REG_MW_SIZE:
		return s->mw_size[0];
	case NTBSW_REG_ENT_SIZE:
		return s->ent_size[0];
	case NTBSW_REG_MW1_SIZE:
		return s->mw_size[1];
	case NTBSW_REG_ENT1_SIZE:
		return s->ent_size[1];
	case NTBSW_REG_DB_STATUS:
		return qatomic_read(&me->db_status);
	case NTBSW_REG_DB_MASK:
		return qatomic_read(&me->db_mask);
	case NTBSW_REG_DB_VALID:
		return ~0ULL;
	case NTBSW_REG_BLOCKED_NOENTRY:
		return qatomic_read(&me->blocked_noentry);
	case NTBSW_REG_BLOCKED_RID:
		return qatomic_read(&me->blocked_rid);
	case NTBSW_REG_LAST_BLOCKED:
		return qatomic_read(&me->last_blocked);
	case NTBSW_REG_SLOW_ACCESSES:
		return qatomic_read(&s->slow);
	}
	*ok = false;
	return 0;
}

static uint32_t ntbsw_reg32(NtbswPort *s, hwaddr a)
{
	struct ntbsw_port_state *me = ME(s);

	switch (a) {
	case NTBSW_REG_ID:
		return NTBSW_MAGIC;
	case NTBSW_REG_VERSION:
		return NTBSW_VERSION;
	case NTBSW_REG_PORT:
		return s->port;
	case NTBSW_REG_PORT_COUNT:
		return s->nports;
	case NTBSW_REG_NR_MW:
		return NTBSW_NR_MW;
	case NTBSW_REG_NR_LUT:
		return NTBSW_NR_LUT;
	case NTBSW_REG_NR_SPAD:
		return NTBSW_NR_SPAD;
	case NTBSW_REG_LINK_EN:
		return qatomic_read(&me->link_en);
	case NTBSW_REG_LINK_STATUS:
		return s->link_status;
	case NTBSW_REG_LINK_EVENT:
		return s->link_event;
	case NTBSW_REG_PRESENT: {
		uint32_t v = 0;
		unsigned int p;

		for (p = 0; p < s->nports; p++)
			if (qatomic_read(&s->st->port[p].present))
				v |= BIT(p);
		return v;
	}
	case NTBSW_REG_ERR_STATUS:
		return s->err_status;
	}
	if (a >= NTBSW_REG_SPAD &&
	    a < NTBSW_REG_SPAD + 4 * NTBSW_NR_SPAD)
		return qatomic_read(&me->spad[(a - NTBSW_REG_SPAD) / 4]);
	if (a >= NTBSW_REG_PEER_SPAD &&
	    a < NTBSW_REG_PEER_SPAD + NTBSW_PEER_SPAD_STRIDE * NTBSW_MAX_PORTS) {
		unsigned int p = (a - NTBSW_REG_PEER_SPAD) /
				 NTBSW_PEER_SPAD_STRIDE;
		unsigned int i = (a - NTBSW_REG_PEER_SPAD) %
				 NTBSW_PEER_SPAD_STRIDE / 4;

		if (i >= NTBSW_NR_SPAD || !ntbsw_link_up(s, p))
			return ~0u;
		return qatomic_read(&s->st->port[p].spad[i]);
	}
	if (a >= NTBSW_REG_LUT && a < NTBSW_REG_LUT + NTBSW_LUT_BYTES) {
		struct ntbsw_lut *l = &me->lut[0][0][0] +
				      (a - NTBSW_REG_LUT) / 16;

		switch (a % 16) {
		case 0:
			return qatomic_read(&l->target);
		case 4:
			return qatomic_read(&l->target) >> 32;
		case 8:
			return qatomic_read(&l->ctrl);
		default:
			return qatomic_read(&l->rid_allow);
		}
	}
	return 0;
}

static uint64_t ntbsw_bar0_read(void *opaque, hwaddr a, unsigned int size)
{
	NtbswPort *s = opaque;
	bool ok;
	uint64_t v = ntbsw_reg64(s, a & ~7ULL, &ok);

	if (ok)
		return size == 8 ? v : (uint32_t)(v >> ((a & 4) * 8));
	if (size == 8)
		return ntbsw_reg32(s, a) |
		       ((uint64_t)ntbsw_reg32(s, a + 4) << 32);
	return ntbsw_reg32(s, a);
}

/* Set doorbell bits of port p (dropped without a link, as on a dead link). */
static void ntbsw_ring_port(NtbswPort *s, unsigned int p, uint64_t bits)
{
	if (!bits || !ntbsw_link_up(s, p))
		return;
	qatomic_or(&s->st->port[p].db_status, bits);
	ntbsw_notify(s, p, NTBSW_NOTE_DB);
}

/* DB_RING: bit p rings bit p of port p. */
static void ntbsw_ring(NtbswPort *s, uint64_t bits)
{
	unsigned int p;

	for (p = 0; p < s->nports; p++)
		if (bits & BIT_ULL(p))
			ntbsw_ring_port(s, p, BIT_ULL(p));
}

static void ntbsw_db_check(NtbswPort *s)
{
	struct ntbsw_port_state *me = ME(s);

	if (qatomic_read(&me->db_status) & ~qatomic_read(&me->db_mask))
		ntbsw_irq(s, NTBSW_VEC_DB);
}

static void ntbsw_lut_write(NtbswPort *s, hwaddr a, uint32_t v)
{
	struct ntbsw_lut *l = &ME(s)->lut[0][0][0] + (a - NTBSW_REG_LUT) / 16;

	switch (a % 16) {
	case 0:
		qatomic_set(&l->target,
			    (qatomic_read(&l->target) & ~0xffffffffULL) | v);
		break;
	case 4:
		qatomic_set(&l->target, (qatomic_read(&l->target) &
					 0xffffffffULL) | ((uint64_t)v << 32));
		break;
	case 8:
		qatomic_set(&l->ctrl, v & (NTBSW_LUT_EN | NTBSW_LUT_PAGES_MASK));
		break;
	default:
		qatomic_set(&l->rid_allow, v);
		break;
	}
	/* Every writer of a window onto us rebuilds its aliases. */
	ntbsw_notify(s, NTBSW_DST_ALL, NTBSW_NOTE_LUT);
}

static void ntbsw_bar0_write32(NtbswPort *s, hwaddr a, uint32_t v)
{
	struct ntbsw_port_state *me = ME(s);

	switch (a) {
	case NTBSW_REG_LINK_EN:
		qatomic_set(&me->link_en, v & MAKE_64BIT_MASK(0, s->nports) &
			    ~BIT(s->port));
		ntbsw_notify(s, NTBSW_DST_ALL, NTBSW_NOTE_LINK);
		ntbsw_update_links(s);
		return;
	case NTBSW_REG_LINK_EVENT:
		s->link_event &= ~v;
		return;
	case NTBSW_REG_ERR_STATUS:
		s->err_status &= ~v;
		return;
	}
	if (a >= NTBSW_REG_SPAD && a < NTBSW_REG_SPAD + 4 * NTBSW_NR_SPAD) {
		qatomic_set(&me->spad[(a - NTBSW_REG_SPAD) / 4], v);
		return;
	}
	if (a >= NTBSW_REG_PEER_SPAD &&
	    a < NTBSW_REG_PEER_SPAD + NTBSW_PEER_SPAD_STRIDE * NTBSW_MAX_PORTS) {
		unsigned int p = (a - NTBSW_REG_PEER_SPAD) /
				 NTBSW_PEER_SPAD_STRIDE;
		unsigned int i = (a - NTBSW_REG_PEER_SPAD) %
				 NTBSW_PEER_SPAD_STRIDE / 4;

		if (i < NTBSW_NR_SPAD && ntbsw_link_up(s, p))
			qatomic_set(&s->st->port[p].spad[i], v);
		return;
	}
	if (a >= NTBSW_REG_LUT && a < NTBSW_REG_LUT + NTBSW_LUT_BYTES)
		ntbsw_lut_write(s, a, v);
}

static void ntbsw_bar0_write(void *opaque, hwaddr a, uint64_t v,
			     unsigned int size)
{
	NtbswPort *s = opaque;
	struct ntbsw_port_state *me = ME(s);
	hwaddr a8 = a & ~7ULL;
	uint64_t m = size == 8 ? ~0ULL : 0xffffffffULL << ((a & 4) * 8);

	if (size == 4)
		v <<= (a & 4) * 8;
	switch (a8) {
	case NTBSW_REG_DB_STATUS:
		qatomic_and(&me->db_status, ~(v & m));
		return;
	case NTBSW_REG_DB_MASK:
		qatomic_set(&me->db_mask,
			    (qatomic_read(&me->db_mask) & ~m) | (v & m));
		ntbsw_db_check(s);
		return;
	case NTBSW_REG_DB_RING:
		ntbsw_ring(s, v & m);
		return;
	}
	if (a8 >= NTBSW_REG_PEER_DB &&
	    a8 < NTBSW_REG_PEER_DB + 8 * NTBSW_MAX_PORTS) {
		ntbsw_ring_port(s, (a8 - NTBSW_REG_PEER_DB) / 8, v & m);
		return;
	}
	if (size == 8) {
		ntbsw_bar0_write32(s, a, v);
		ntbsw_bar0_write32(s, a + 4, v >> 32);
	} else {
		ntbsw_bar0_write32(s, a, v >> ((a & 4) * 8));
	}
}

static const MemoryRegionOps ntbsw_bar0_ops = {
	.read = ntbsw_bar0_read,
	.write = ntbsw_bar0_write,
	.endianness = DEVICE_LITTLE_ENDIAN,
	.valid = { .min_access_size = 4, .max_access_size = 8 },
	.impl = { .min_access_size = 4, .max_access_size = 8 },
};

/* ---- messages from the switch ------------------------------------------- */

static void ntbsw_peer_ram(NtbswPort *s, unsigned int p, uint64_t size,
			   int fd)
{
	struct ntbsw_peer *pe = &s->peer[p];
	Error *err = NULL;
	char name[32];

	ntbsw_drop_peer_ram(s, p);
	snprintf(name, sizeof(name), "ntb-peer%u-ram", p);
	memory_region_init_ram_from_fd(&pe->ram, OBJECT(s), name, size,
				       RAM_SHARED, fd, 0, &err);
	if (err) {
		error_report_err(err);
		close(fd);
		return;
	}
	pe->ram_ptr = memory_region_get_ram_ptr(&pe->ram);
	pe->ram_size = size;
	pe->have_ram = true;
}

static void ntbsw_do_fwd(NtbswPort *s, struct ntbsw_msg *m)
{
	PCIDevice *d = PCI_DEVICE(s);
	unsigned int len = m->arg1;
	struct ntbsw_msg r = { .type = NTBSW_FWD_RESP, .dst = m->src,
			       .tag = m->tag };
	bool via_switch = m->flags & NTBSW_F_ANSWER_VIA_SWITCH;
	MemTxResult res;

	if (len > 8 || (len == 0 && m->type == NTBSW_FWD_WRITE))
		return;
	if (len == 0) {
		/* A flush: every write before it on this pipe is done. */
		ntbsw_send_on(s, &r, -1, via_switch);
		return;
	}
	if (m->type == NTBSW_FWD_WRITE) {
		/* As a bus master of this function: the IOMMU applies. */
		pci_dma_write(d, m->arg0, m->data, len);
		return;
	}
	res = pci_dma_read(d, m->arg0, r.data, len);
	r.arg1 = res != MEMTX_OK;
	ntbsw_send_on(s, &r, -1, via_switch);
}

static void ntbsw_handle(NtbswPort *s, struct rx_item *it)
{
	struct ntbsw_msg *m = &it->m;

	switch (m->type) {
	case NTBSW_PEER_RAM:
		if (m->src < s->nports && m->src != s->port && it->fd >= 0) {
			ntbsw_peer_ram(s, m->src, m->arg1, it->fd);
			it->fd = -1;
		}
		ntbsw_update_links(s);
		break;
	case NTBSW_PORT_DOWN:
		if (m->src < s->nports && m->src != s->port)
			ntbsw_drop_peer_ram(s, m->src);
		ntbsw_update_links(s);
		break;
	case NTBSW_NOTIFY:
		if (m->arg0 & NTBSW_NOTE_DB)
			ntbsw_db_check(s);
		if (m->arg0 & (NTBSW_NOTE_LINK | NTBSW_NOTE_LUT))
			ntbsw_update_links(s);
		if (m->arg0 & NTBSW_NOTE_ERR) {
			s->err_status |= NTBSW_ERR_BLOCKED;
			ntbsw_irq(s, NTBSW_VEC_ERR);
		}
		break;
	case NTBSW_FWD_WRITE:
	case NTBSW_FWD_READ:
		ntbsw_do_fwd(s, m);
		break;
	case NTBSW_PEER_LINK:
		ntbsw_link_watch(s, m->src, it->fd);
		it->fd = -1;
		break;
	}
	if (it->fd >= 0)
		close(it->fd);
}

static void ntbsw_bh(void *opaque)
{
	NtbswPort *s = opaque;
	struct rx_item *it;

	for (;;) {
		qemu_mutex_lock(&s->q_lock);
		it = g_queue_pop_head(s->rxq);
		qemu_mutex_unlock(&s->q_lock);
		if (!it)
			break;
		ntbsw_handle(s, it);
		g_free(it);
	}
}

/* An answer to a forwarded read wakes its waiter. */
static void ntbsw_answer(NtbswPort *s, struct ntbsw_msg *m)
{
	struct ntbsw_pending *pd;

	qemu_mutex_lock(&s->p_lock);
	pd = m->tag < NTBSW_PENDING ? &s->pend[m->tag] : NULL;
	if (pd && pd->busy && pd->dst == m->src) {
		pd->done = true;
		pd->ok = m->arg1 == 0;
		memcpy(&pd->data, m->data, 8);
		pd->data = le64_to_cpu(pd->data);
		qemu_cond_broadcast(&s->p_cond);
	}
	qemu_mutex_unlock(&s->p_lock);
}

/* A message for the main loop, behind whatever waits there already. */
static void ntbsw_enqueue(NtbswPort *s, struct ntbsw_msg *m, int fd)
{
	struct rx_item *it = g_new0(struct rx_item, 1);

	it->m = *m;
	it->fd = fd;
	qemu_mutex_lock(&s->q_lock);
	g_queue_push_tail(s->rxq, it);
	qemu_mutex_unlock(&s->q_lock);
	qemu_bh_schedule(s->bh);
}

static bool ntbsw_queued(NtbswPort *s)
{
	bool queued;

	qemu_mutex_lock(&s->q_lock);
	queued = !g_queue_is_empty(s->rxq);
	qemu_mutex_unlock(&s->q_lock);
	return queued;
}

/*
 * A message the switch's socket brought (read by its thread): an answer
 * to a read wakes its waiter at once, the rest goes to the main loop in
 * arrival order.
 */
static void ntbsw_rx_one(NtbswPort *s, struct ntbsw_msg *m, int fd)
{
	if (m->type == NTBSW_FWD_RESP) {
		ntbsw_answer(s, m);
		if (fd >= 0)
			close(fd);
		return;
	}
	ntbsw_enqueue(s, m, fd);
}

/*
 * Reads what peer p's data pipe fd holds, big lock held (the only way it
 * is read).  Each message is handled here when `handle` (the caller is at
 * the top of its thread, not inside a device) and nothing waits in the
 * queue before it, else queued.  False on EOF or an error: the pipe's
 * handler closes it.
 */
static bool ntbsw_read_link(NtbswPort *s, unsigned int p, int fd,
			    bool handle)
{
	struct ntbsw_msg m;
	unsigned int i;

	for (i = 0; i < 64; i++) {
		if (ntbsw_pipe_read(fd, &m) < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		m.src = p;
		if (m.type == NTBSW_FWD_RESP) {
			ntbsw_answer(s, &m);
		} else if (m.type == NTBSW_FWD_WRITE ||
			   m.type == NTBSW_FWD_READ ||
			   m.type == NTBSW_NOTIFY) {
			if (handle && !ntbsw_queued(s)) {
				struct rx_item it = { .m = m, .fd = -1 };

				ntbsw_handle(s, &it);
			} else {
				ntbsw_enqueue(s, &m, -1);
			}
		}
	}
	return true;
}

/* A pipe from one peer, for the one who reads it. */
struct ntbsw_link {
	NtbswPort *s;
	unsigned int peer;
	int fd;
};

static struct ntbsw_link *ntbsw_link_new(NtbswPort *s, unsigned int p,
					 int fd)
{
	struct ntbsw_link *l = g_new0(struct ntbsw_link, 1);

	l->s = s;
	l->peer = p;
	l->fd = fd;
	return l;
}

/*
 * The data pipe from a peer is read by the main loop itself: a doorbell
 * of a borrowed device reaches it with one wake-up, not two (a reader
 * thread's and then the main loop's: 7-10 us per I/O).
 */

static void ntbsw_link_readable(void *opaque)
{
	struct ntbsw_link *l = opaque;
	NtbswPort *s = l->s;

	if (ntbsw_read_link(s, l->peer, l->fd, true))
		return;
	qemu_set_fd_handler(l->fd, NULL, NULL, NULL);
	if (s->peer[l->peer].rx_fd == l->fd)
		s->peer[l->peer].rx_fd = -1;
	close(l->fd);
	g_free(l);
}

/* The main loop takes over a data pipe the switch's thread was given. */
static void ntbsw_link_watch(NtbswPort *s, unsigned int p, int fd)
{
	struct ntbsw_link *l = ntbsw_link_new(s, p, fd);

	ntbsw_nonblock(fd);
	/* A pipe from the peer's former QEMU ends; its handler closes it. */
	s->peer[p].rx_fd = fd;
	qemu_set_fd_handler(fd, ntbsw_link_readable, NULL, l);
}

/*
 * An interrupt from a peer (its device's MSI write into our interrupt
 * range) is raised by the thread that read it, under the big lock, not
 * by the main loop: waking the main loop first cost a borrowed NVMe in a
 * TCG guest about 20 us per I/O (tests/bench/ntb_lend.sh).  What the peer
 * sent before it on the data pipe is read first, and it keeps its place
 * behind anything still queued for the main loop: a device's writes land
 * before its interrupt.  No one holding the lock waits for this thread:
 * the lock's holders never wait for room on an interrupt pipe.
 */
static void ntbsw_raise_now(NtbswPort *s, struct ntbsw_msg *m)
{
	int fd;

	qemu_mutex_lock_iothread();
	fd = s->peer[m->src].rx_fd;
	if (fd >= 0)
		ntbsw_read_link(s, m->src, fd, true);
	if (ntbsw_queued(s))
		ntbsw_enqueue(s, m, -1);
	else
		ntbsw_do_fwd(s, m);
	qemu_mutex_unlock_iothread();
}

/*
 * Reads the interrupt pipe from one peer until it ends (the peer's QEMU
 * left).  Only MSI writes come this way.
 */
static void *ntbsw_irq_thread(void *opaque)
{
	struct ntbsw_link *l = opaque;
	struct ntbsw_msg m;

	while (ntbsw_pipe_read(l->fd, &m) == 0) {
		m.src = l->peer;
		if (m.type == NTBSW_FWD_WRITE && ntbsw_is_msi(m.arg0))
			ntbsw_raise_now(l->s, &m);
	}
	close(l->fd);
	g_free(l);
	return NULL;
}

/*
 * The switch gave us fd, an end of a pipe to or from peer m->src (kind:
 * NTBSW_LINK_*).  Sends use a write end from now on; a data pipe from the
 * peer goes to the main loop, in order behind what the switch sent before
 * it; an interrupt pipe from it gets a thread.
 */
static void ntbsw_peer_link(NtbswPort *s, struct ntbsw_msg *m, int fd)
{
	struct ntbsw_peer *pe = &s->peer[m->src];
	QemuThread t;
	int *tx;

	switch (m->arg0) {
	case NTBSW_LINK_DATA_TX:
	case NTBSW_LINK_IRQ_TX:
		tx = m->arg0 == NTBSW_LINK_DATA_TX ? &pe->tx_fd : &pe->irq_fd;
		ntbsw_nonblock(fd);
		qemu_mutex_lock(&s->send_lock);
		ntbsw_close_tx(tx);
		*tx = fd;
		qemu_mutex_unlock(&s->send_lock);
		break;
	case NTBSW_LINK_DATA_RX:
		ntbsw_enqueue(s, m, fd);	/* ntbsw_handle watches it */
		break;
	default:
		qemu_thread_create(&t, "ntb-port-irq", ntbsw_irq_thread,
				   ntbsw_link_new(s, m->src, fd),
				   QEMU_THREAD_DETACHED);
	}
}

static void *ntbsw_rx_thread(void *opaque)
{
	NtbswPort *s = opaque;
	struct ntbsw_msg m;
	unsigned int i;
	int fd;

	while (ntbsw_recv_msg(s->sock, &m, &fd) == 0) {
		/*
		 * Pipes to peers change here, in the order the switch sent
		 * them: a peer that left and came back gets its new pipes
		 * after the old ones are gone.
		 */
		if (m.type == NTBSW_PEER_LINK) {
			if (m.src < s->nports && m.src != s->port && fd >= 0 &&
			    m.arg0 <= NTBSW_LINK_IRQ_RX)
				ntbsw_peer_link(s, &m, fd);
			else if (fd >= 0)
				close(fd);
			continue;
		}
		if (m.type == NTBSW_PORT_DOWN && m.src < s->nports &&
		    m.src != s->port)
			ntbsw_drop_link(s, m.src);
		ntbsw_rx_one(s, &m, fd);
	}
	/* The switch is gone: every link is down, every wait ends. */
	error_report("smartio-ntb-port %u: switch connection lost", s->port);
	qatomic_set(&ME(s)->present, 0);
	qemu_mutex_lock(&s->p_lock);
	for (i = 0; i < NTBSW_PENDING; i++)
		s->pend[i].done = true;
	qemu_cond_broadcast(&s->p_cond);
	qemu_mutex_unlock(&s->p_lock);
	m = (struct ntbsw_msg){ .type = NTBSW_NOTIFY,
				.arg0 = NTBSW_NOTE_LINK };
	ntbsw_enqueue(s, &m, -1);
	return NULL;
}

/* ---- realize / reset ---------------------------------------------------- */

static int ntbsw_connect(NtbswPort *s, int ram_fd, uint64_t ram_size,
			 Error **errp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ntbsw_msg m = { .type = NTBSW_HELLO, .dst = NTBSW_DST_ALL,
			       .arg0 = s->port, .arg1 = ram_size };
	struct stat sb;
	unsigned int w;
	int fd;

	if (strlen(s->switch_path) >= sizeof(sa.sun_path)) {
		error_setg(errp, "switch path too long");
		return -1;
	}
	strcpy(sa.sun_path, s->switch_path);
	s->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->sock < 0 ||
	    connect(s->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		error_setg_errno(errp, errno, "cannot reach the switch at %s",
				 s->switch_path);
		return -1;
	}
	if (ntbsw_send(s, &m, ram_fd) < 0 || ntbsw_recv_msg(s->sock, &m, &fd)) {
		error_setg(errp, "switch at %s closed the connection",
			   s->switch_path);
		return -1;
	}
	if (m.type != NTBSW_WELCOME || fd < 0) {
		error_setg(errp, "switch refused port %u (taken or >= its "
			   "port count)", s->port);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fstat(fd, &sb) < 0 || sb.st_size < (off_t)sizeof(*s->st)) {
		error_setg(errp, "switch state too small");
		close(fd);
		return -1;
	}
	s->st_len = sizeof(*s->st);
	s->st = mmap(NULL, s->st_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, 0);
	close(fd);
	if (s->st == MAP_FAILED || s->st->magic != NTBSW_MAGIC ||
	    s->st->nports < 2 || s->st->nports > NTBSW_MAX_PORTS ||
	    !ntbsw_wsize_ok(s->st->mw_size) ||
	    !ntbsw_wsize_ok(s->st->mw1_size)) {
		error_setg(errp, "switch state is not a smartio NTB switch's");
		s->st = NULL;
		return -1;
	}
	s->nports = s->st->nports;
	s->mw_size[0] = s->st->mw_size;
	s->mw_size[1] = s->st->mw1_size;
	for (w = 0; w < NTBSW_NR_MW; w++)
		s->ent_size[w] = s->mw_size[w] / NTBSW_NR_LUT;
	return 0;
}

static void ntbsw_realize(PCIDevice *d, Error **errp)
{
	NtbswPort *s = NTBSW_PORT(d);
	MemoryRegion *ram;
	unsigned int w;
	uint8_t bar_flags = PCI_BASE_ADDRESS_SPACE_MEMORY |
			    PCI_BASE_ADDRESS_MEM_TYPE_64 |
			    PCI_BASE_ADDRESS_MEM_PREFETCH;

	if (!s->switch_path || !s->memdev) {
		error_setg(errp, "smartio-ntb-port needs switch= and memdev=");
		return;
	}
	if (s->port >= NTBSW_MAX_PORTS) {
		error_setg(errp, "port must be < %d", NTBSW_MAX_PORTS);
		return;
	}
	ram = host_memory_backend_get_memory(s->memdev);
	if (memory_region_get_fd(ram) < 0 ||
	    !object_property_get_bool(OBJECT(s->memdev), "share", NULL)) {
		error_setg(errp, "memdev must be a memory-backend-file or "
			   "-memfd with share=on (peers map the guest's RAM)");
		return;
	}
	qemu_mutex_init(&s->send_lock);
	qemu_mutex_init(&s->q_lock);
	qemu_mutex_init(&s->p_lock);
	qemu_cond_init(&s->p_cond);
	s->rxq = g_queue_new();
	if (ntbsw_connect(s, memory_region_get_fd(ram),
			  memory_region_size(ram), errp) < 0) {
		if (s->sock >= 0)
			close(s->sock);
		s->sock = -1;
		return;
	}
	s->slots = pow2ceil(s->nports);
	for (w = 0; w < NTBSW_NR_MW; w++)
		s->bar_size[w] = s->slots * s->mw_size[w];

	pci_config_set_interrupt_pin(d->config, 1);
	memory_region_init_io(&s->bar0, OBJECT(s), &ntbsw_bar0_ops, s,
			      "ntb-regs", NTBSW_BAR0_SIZE);
	pci_register_bar(d, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->bar0);
	for (w = 0; w < NTBSW_NR_MW; w++) {
		memory_region_init(&s->win[w], OBJECT(s), "ntb-window",
				   s->bar_size[w]);
		memory_region_init_io(&s->win_io[w], OBJECT(s),
				      &ntbsw_win_ops[w], s, "ntb-window-fwd",
				      s->bar_size[w]);
		memory_region_add_subregion_overlap(&s->win[w], 0,
						    &s->win_io[w], 0);
		pci_register_bar(d, 2 + 2 * w, bar_flags, &s->win[w]);
	}
	if (msix_init_exclusive_bar(d, NTBSW_NR_VEC, 1, errp))
		return;
	for (w = 0; w < NTBSW_NR_VEC; w++)
		msix_vector_use(d, w);
	if (pcie_endpoint_cap_init(d, 0xe0) < 0) {
		error_setg(errp, "cannot add the PCIe capability");
		return;
	}
	s->bh = qemu_bh_new(ntbsw_bh, s);
	qemu_thread_create(&s->rx_thread, "ntb-port-rx", ntbsw_rx_thread, s,
			   QEMU_THREAD_DETACHED);
}

/* A guest reset forgets this port's side: links, doorbells, spads, LUT. */
static void ntbsw_reset(DeviceState *dev)
{
	NtbswPort *s = NTBSW_PORT(dev);
	struct ntbsw_port_state *me;

	if (!s->st)
		return;
	me = ME(s);
	qatomic_set(&me->link_en, 0);
	qatomic_set(&me->db_status, 0);
	qatomic_set(&me->db_mask, ~0ULL);
	memset(me->spad, 0, sizeof(me->spad));
	memset(me->lut, 0, sizeof(me->lut));
	s->link_event = 0;
	s->err_status = 0;
	ntbsw_notify(s, NTBSW_DST_ALL, NTBSW_NOTE_LINK | NTBSW_NOTE_LUT);
	ntbsw_update_links(s);
	s->link_event = 0;
}

static Property ntbsw_props[] = {
	DEFINE_PROP_STRING("switch", NtbswPort, switch_path),
	DEFINE_PROP_UINT32("port", NtbswPort, port, 0),
	DEFINE_PROP_LINK("memdev", NtbswPort, memdev, TYPE_MEMORY_BACKEND,
			 HostMemoryBackend *),
	DEFINE_PROP_END_OF_LIST(),
};

static void ntbsw_instance_init(Object *obj)
{
	NtbswPort *s = NTBSW_PORT(obj);
	unsigned int p;

	s->sock = -1;
	for (p = 0; p < NTBSW_MAX_PORTS; p++) {
		s->peer[p].tx_fd = -1;
		s->peer[p].irq_fd = -1;
		s->peer[p].rx_fd = -1;
	}
}

static void ntbsw_class_init(ObjectClass *klass, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(klass);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

	/*
	 * A second guard beside the build-id: the layout of the parent type
	 * (known here, once every type is registered) must be ours.
	 */
	if (object_type_get_instance_size(TYPE_PCI_DEVICE) !=
	    sizeof(PCIDevice)) {
		error_report("smartio-ntb.so: PCIDevice layout differs from "
			     "this qemu; rebuild: make -C contrib/qemu");
		exit(1);
	}

	k->realize = ntbsw_realize;
	k->vendor_id = NTBSW_PCI_VENDOR;
	k->device_id = NTBSW_PCI_DEVICE;
	k->class_id = PCI_CLASS_BRIDGE_OTHER;
	k->revision = NTBSW_VERSION;
	dc->reset = ntbsw_reset;
	dc->desc = "smartio NTB switch port";
	dc->user_creatable = true;
	/* A peer's RAM and a switch connection cannot migrate. */
	dc->hotpluggable = false;
	device_class_set_props(dc, ntbsw_props);
	set_bit(DEVICE_CATEGORY_BRIDGE, dc->categories);
}

static const TypeInfo ntbsw_info = {
	.name = TYPE_NTBSW_PORT,
	.parent = TYPE_PCI_DEVICE,
	.instance_size = sizeof(NtbswPort),
	.instance_init = ntbsw_instance_init,
	.class_init = ntbsw_class_init,
	.interfaces = (InterfaceInfo[]) {
		{ INTERFACE_PCIE_DEVICE },
		{ }
	},
};

static void ntbsw_register(void)
{
	type_register_static(&ntbsw_info);
}

type_init(ntbsw_register)
