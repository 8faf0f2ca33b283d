/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The machinery every NTB function on the smartio switch shares
 * (ntbsw-core.h): the switch connection, pipes to peers, peer RAM and its
 * aliases in the outbound windows, forwarded accesses, interrupts.
 *
 * Data path.  An access at offset x of an outbound window (BAR2 or BAR4)
 * is translated by the model (its LUT or window registers, kept in the
 * switch state every port maps).  When the target is a peer's RAM the
 * window holds a RAM alias of that peer's guest RAM (shared memory): the
 * CPU and this guest's devices reach it with no message.  When the peer
 * translates its function's DMA (its IOMMU), the target is an IOVA and
 * the window holds instead a region that walks the peer's IOMMU tables
 * (ntbsw-iommu.c); a page not mapped for the access is forwarded.  Any other
 * target is forwarded to the peer's QEMU and performed there as a
 * bus-master access of its NTB function: writes posted, in order on one
 * pipe; reads wait for the answer (a vCPU drops the big lock while it
 * waits).  A dead peer answers all-ones.  PCIe keeps a device's posted
 * writes in order; a RAM alias would let its next write overtake a
 * forwarded one (a completion entry landing before the data it announces
 * in a peer device's memory), so a device's write forwarded to anything
 * but the interrupt range waits until the peer has performed it (a
 * zero-length read, answered without an access).
 */
#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "sysemu/cpus.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <link.h>

#include "ntbsw-core.h"

/* Messages one read of a data pipe takes at most (32 bytes each). */
#define NTBSW_READ_BATCH 16

struct rx_item {
	struct ntbsw_msg m;
	int fd;
};

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
static int ntbsw_sock_for(struct ntbsw_core *s, struct ntbsw_msg *m, bool via_switch,
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

static bool ntbsw_read_link(struct ntbsw_core *s, unsigned int p, int fd,
			    bool handle);
static void ntbsw_link_watch(struct ntbsw_core *s, unsigned int p, int fd);

/*
 * Waits up to 100 ms for room on sock; with the big lock held, reads
 * (into the queue) what peers sent us meanwhile on the data pipes.
 */
static void ntbsw_wait_room(struct ntbsw_core *s, int sock, bool locked)
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

static int ntbsw_send_on(struct ntbsw_core *s, struct ntbsw_msg *m, int fd,
			 bool via_switch)
{
	bool locked = qemu_mutex_iothread_locked();
	bool vcpu = ntbsw_vcpu_locked(), irq_ok = true;
	int rc, sock, err;

	m->src = s->port;
	for (;;) {
		struct ntbsw_peer *pe = NULL;

		qemu_mutex_lock(&s->send_lock);
		sock = fd >= 0 ? s->sock : ntbsw_sock_for(s, m, via_switch,
							    irq_ok);
		if (sock != s->sock)
			pe = &s->peer[m->dst];
		m->flags &= ~NTBSW_F_DATA_FIRST;
		if (pe && sock == pe->irq_fd && pe->data_since_irq)
			m->flags |= NTBSW_F_DATA_FIRST;
		if (sock == s->sock)
			rc = ntbsw_send_msg_flags(sock, m, fd, MSG_DONTWAIT);
		else
			rc = ntbsw_pipe_write(sock, m);
		err = errno;
		if (!rc && pe)
			pe->data_since_irq = sock == pe->tx_fd;
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

int ntbsw_send(struct ntbsw_core *s, struct ntbsw_msg *m, int fd)
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
static void ntbsw_drop_link(struct ntbsw_core *s, unsigned int p)
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
void ntbsw_notify(struct ntbsw_core *s, unsigned int dst, uint64_t note)
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

void ntbsw_msix(struct ntbsw_core *s, unsigned int vec)
{
	PCIDevice *d = s->pci;

	if (msix_enabled(d))
		msix_notify(d, vec);
}

/* Removes alias slot i from its window (big lock held). */
static void ntbsw_alias_drop(struct ntbsw_core *s, unsigned int i)
{
	struct ntbsw_alias *a = &s->alias[i];

	if (!a->mr)
		return;
	memory_region_del_subregion(&s->win[a->win], a->mr);
	/* Storage stays: the flat view may still hold it. */
	object_unparent(OBJECT(a->mr));
	a->mr = NULL;
}

/*
 * Rebuilds the RAM aliases from the model's slots (big lock held): a slot
 * that leads into a present peer's RAM, page-aligned, is an alias; an
 * alias whose peer, window, place or length changed is made anew.
 */
void ntbsw_remap(struct ntbsw_core *s)
{
	unsigned int i, n = s->ops->nr_slots(s);

	memory_region_transaction_begin();
	for (i = 0; i < NTBSW_MAX_SLOTS; i++) {
		struct ntbsw_alias *a = &s->alias[i];
		struct ntbsw_slot w;
		struct ntbsw_peer *pe;
		bool want = i < n && s->ops->slot(s, i, &w), iommu = false;

		if (want) {
			pe = &s->peer[w.peer];
			want = w.peer < s->nports && pe->have_ram &&
			       w.win < NTBSW_NR_WIN && w.len &&
			       !(w.target & (qemu_real_host_page_size() - 1)) &&
			       w.target + w.len > w.target &&
			       w.bar_off + w.len <= s->win_size[w.win];
			/*
			 * A peer that translates its function's DMA gets an
			 * IOMMU region instead of an alias, wherever the IOVAs
			 * lie (above its RAM, as Linux allocates them, the
			 * window's callbacks moved every device access 8
			 * bytes at a time); its target is fixed at creation
			 * (a CPU's TLB holds what it translated until the
			 * flat view changes), so a new target makes it anew.
			 * An alias must stay within the peer's RAM.
			 */
			iommu = want && ntbsw_peer_translated(s, w.peer);
			want = want && (iommu || w.target + w.len <= pe->ram_size);
		}
		if (a->mr && want && (a->peer != w.peer || a->win != w.win ||
				      a->bar_off != w.bar_off ||
				      a->len != w.len || a->iommu != iommu ||
				      (iommu && a->target != w.target)))
			ntbsw_alias_drop(s, i);
		if (!a->mr) {
			if (!want)
				continue;
			if (iommu) {
				a->mr = ntbsw_iova_window(s, w.peer, w.win,
							  w.bar_off, w.target,
							  w.len);
			} else {
				a->mr = g_new0(MemoryRegion, 1);
				memory_region_init_alias(a->mr, OBJECT(s->pci),
							 "ntb-peer-ram",
							 &s->peer[w.peer].ram,
							 w.target, w.len);
			}
			memory_region_add_subregion_overlap(&s->win[w.win],
							    w.bar_off, a->mr,
							    1);
			a->iommu = iommu;
			a->peer = w.peer;
			a->win = w.win;
			a->bar_off = w.bar_off;
			a->target = w.target;
			a->len = w.len;
			continue;
		}
		if (!want) {
			memory_region_set_enabled(a->mr, false);
			continue;
		}
		if (a->target != w.target) {
			memory_region_set_alias_offset(a->mr, w.target);
			a->target = w.target;
		}
		memory_region_set_enabled(a->mr, true);
	}
	memory_region_transaction_commit();
}

/* Drop peer p's RAM and every alias of it (the peer left or rebooted). */
static void ntbsw_drop_peer_ram(struct ntbsw_core *s, unsigned int p)
{
	struct ntbsw_peer *pe = &s->peer[p];
	unsigned int i;

	if (!pe->have_ram)
		return;
	memory_region_transaction_begin();
	for (i = 0; i < NTBSW_MAX_SLOTS; i++)
		if (s->alias[i].mr && s->alias[i].peer == p)
			ntbsw_alias_drop(s, i);
	ntbsw_peer_as_drop(s, p);
	memory_region_transaction_commit();
	object_unparent(OBJECT(&pe->ram));
	pe->have_ram = false;
	pe->ram_ptr = NULL;
}

bool ntbsw_present(struct ntbsw_core *s, unsigned int p)
{
	return p < s->nports && qatomic_read(&s->st->port[p].present);
}

void ntbsw_fail_reads(struct ntbsw_core *s, uint32_t mask)
{
	unsigned int i;

	qemu_mutex_lock(&s->p_lock);
	for (i = 0; i < NTBSW_PENDING; i++) {
		struct ntbsw_pending *pd = &s->pend[i];

		if (pd->busy && !pd->done && (mask & BIT(pd->dst))) {
			pd->done = true;
			pd->ok = false;
		}
	}
	qemu_cond_broadcast(&s->p_cond);
	qemu_mutex_unlock(&s->p_lock);
}

/*
 * Translates an access the aliases did not serve: the peer, its address,
 * and a pointer into its RAM when it lands there (*ram), else NULL.  A
 * peer that translates its function's DMA is reached through its IOMMU's
 * tables: a page it did not map for the access is forwarded (*ram NULL),
 * and its vIOMMU refuses it there.
 */
static bool ntbsw_translate(struct ntbsw_core *s, unsigned int w, hwaddr addr,
			    unsigned int size, bool write, unsigned int *pp,
			    uint64_t *target, void **ram)
{
	struct ntbsw_peer *pe;
	uint64_t t;

	*ram = NULL;
	if (!s->ops->translate(s, w, addr, size, pp, target) ||
	    *pp >= s->nports)
		return false;
	pe = &s->peer[*pp];
	t = *target;
	if (pe->have_ram && ntbsw_peer_translated(s, *pp) &&
	    !ntbsw_peer_iova(s, *pp, t, size, write, &t))
		return true;
	if (pe->have_ram && t + size <= pe->ram_size && t + size > t)
		*ram = (uint8_t *)pe->ram_ptr + t;
	return true;
}

uint64_t ntbsw_fwd_read(struct ntbsw_core *s, unsigned int p, uint64_t addr,
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
	struct ntbsw_core *s = opaque;
	uint64_t t, v = 0;
	unsigned int p;
	void *ram;

	qatomic_inc(&s->slow);
	if (!ntbsw_translate(s, w, addr, size, false, &p, &t, &ram))
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
	struct ntbsw_core *s = opaque;
	unsigned int p;
	uint64_t t;
	void *ram;

	qatomic_inc(&s->slow);
	if (!ntbsw_translate(s, w, addr, size, true, &p, &t, &ram))
		return;
	if (ram) {
		val = cpu_to_le64(val);
		memcpy(ram, &val, size);
		return;
	}
	ntbsw_fwd_write(s, p, t, val, size);
}

void ntbsw_fwd_write(struct ntbsw_core *s, unsigned int p, uint64_t t,
		     uint64_t val, unsigned int size)
{
	struct ntbsw_msg m = { .type = NTBSW_FWD_WRITE };

	val = cpu_to_le64(val);
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

/*
 * A write that names its requester crosses only if the model lets it.
 * A device behind the requester-id gate (ntbsw-rid.c) was asked about
 * there already; this catches MSI writes of any other.
 */
static bool ntbsw_requester_ok(struct ntbsw_core *s, MemTxAttrs attrs)
{
	if (attrs.unspecified || !s->ops->requester_ok ||
	    s->ops->requester_ok(s, attrs.requester_id))
		return true;
	s->ops->requester_refused(s, attrs.requester_id, true);
	return false;
}

static MemTxResult ntbsw_win0_write(void *o, hwaddr a, uint64_t v,
				    unsigned int sz, MemTxAttrs attrs)
{
	if (ntbsw_requester_ok(o, attrs))
		ntbsw_win_write(o, a, v, sz, 0);
	return MEMTX_OK;	/* posted: a dropped write is not reported */
}

static MemTxResult ntbsw_win1_write(void *o, hwaddr a, uint64_t v,
				    unsigned int sz, MemTxAttrs attrs)
{
	if (ntbsw_requester_ok(o, attrs))
		ntbsw_win_write(o, a, v, sz, 1);
	return MEMTX_OK;
}

static const MemoryRegionOps ntbsw_win_ops[NTBSW_NR_WIN] = {
	{
		.read = ntbsw_win0_read,
		.write_with_attrs = ntbsw_win0_write,
		.endianness = DEVICE_LITTLE_ENDIAN,
		.valid = { .min_access_size = 1, .max_access_size = 8 },
		.impl = { .min_access_size = 1, .max_access_size = 8 },
	}, {
		.read = ntbsw_win1_read,
		.write_with_attrs = ntbsw_win1_write,
		.endianness = DEVICE_LITTLE_ENDIAN,
		.valid = { .min_access_size = 1, .max_access_size = 8 },
		.impl = { .min_access_size = 1, .max_access_size = 8 },
	},
};

/* ---- messages from the switch ------------------------------------------- */

static void ntbsw_peer_ram(struct ntbsw_core *s, unsigned int p, uint64_t size,
			   int fd)
{
	struct ntbsw_peer *pe = &s->peer[p];
	Error *err = NULL;
	char name[32];

	ntbsw_drop_peer_ram(s, p);
	snprintf(name, sizeof(name), "ntb-peer%u-ram", p);
	memory_region_init_ram_from_fd(&pe->ram, OBJECT(s->pci), name, size,
				       RAM_SHARED, fd, 0, &err);
	if (err) {
		error_report_err(err);
		close(fd);
		return;
	}
	pe->ram_ptr = memory_region_get_ram_ptr(&pe->ram);
	pe->ram_size = size;
	pe->have_ram = true;
	ntbsw_peer_as_init(s, p);
}

static void ntbsw_do_fwd(struct ntbsw_core *s, struct ntbsw_msg *m)
{
	PCIDevice *d = s->pci;
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

static void ntbsw_handle(struct ntbsw_core *s, struct rx_item *it)
{
	struct ntbsw_msg *m = &it->m;

	switch (m->type) {
	case NTBSW_PEER_RAM:
		if (m->src < s->nports && m->src != s->port && it->fd >= 0) {
			ntbsw_peer_ram(s, m->src, m->arg1, it->fd);
			it->fd = -1;
		}
		s->ops->peers_changed(s);
		break;
	case NTBSW_PORT_DOWN:
		if (m->src < s->nports && m->src != s->port)
			ntbsw_drop_peer_ram(s, m->src);
		s->ops->peers_changed(s);
		break;
	case NTBSW_NOTIFY:
		/* The peer's IOMMU took or left its function: new regions. */
		if (m->arg0 & NTBSW_NOTE_DMA)
			ntbsw_remap(s);
		s->ops->notify(s, m->src, m->arg0);
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
	struct ntbsw_core *s = opaque;
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
static void ntbsw_answer(struct ntbsw_core *s, struct ntbsw_msg *m)
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
static void ntbsw_enqueue(struct ntbsw_core *s, struct ntbsw_msg *m, int fd)
{
	struct rx_item *it = g_new0(struct rx_item, 1);

	it->m = *m;
	it->fd = fd;
	qemu_mutex_lock(&s->q_lock);
	g_queue_push_tail(s->rxq, it);
	qemu_mutex_unlock(&s->q_lock);
	qemu_bh_schedule(s->bh);
}

static bool ntbsw_queued(struct ntbsw_core *s)
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
static void ntbsw_rx_one(struct ntbsw_core *s, struct ntbsw_msg *m, int fd)
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
static bool ntbsw_read_link(struct ntbsw_core *s, unsigned int p, int fd,
			    bool handle)
{
	struct ntbsw_msg m[NTBSW_READ_BATCH];
	unsigned int round, i;
	int n = 0;

	for (round = 0; round < 4; round++) {
		n = ntbsw_pipe_read_many(fd, m, NTBSW_READ_BATCH);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		/*
		 * A lone message may be handled here; of several, a handler
		 * that waits for room reads this pipe again (ntbsw_wait_room)
		 * and queues what came after them, so they queue too, in
		 * order, for the main loop's next turn.
		 */
		for (i = 0; i < (unsigned int)n; i++) {
			m[i].src = p;
			if (m[i].type == NTBSW_FWD_RESP) {
				ntbsw_answer(s, &m[i]);
			} else if (m[i].type == NTBSW_FWD_WRITE ||
				   m[i].type == NTBSW_FWD_READ ||
				   m[i].type == NTBSW_NOTIFY) {
				if (handle && n == 1 && !ntbsw_queued(s)) {
					struct rx_item it = { .m = m[i],
							      .fd = -1 };

					ntbsw_handle(s, &it);
				} else {
					ntbsw_enqueue(s, &m[i], -1);
				}
			}
		}
		/* Fewer than asked for: the pipe was empty after them. */
		if (n < NTBSW_READ_BATCH)
			break;
	}
	return true;
}

/* A pipe from one peer, for the one who reads it. */
struct ntbsw_link {
	struct ntbsw_core *s;
	unsigned int peer;
	int fd;
};

static struct ntbsw_link *ntbsw_link_new(struct ntbsw_core *s, unsigned int p,
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
	struct ntbsw_core *s = l->s;

	if (ntbsw_read_link(s, l->peer, l->fd, true)) {
		/*
		 * Run the bottom halves the writes just made here scheduled (an
		 * NVMe's doorbell schedules its queue's) before leaving: this
		 * pipe is dispatched after the main loop checked its own
		 * context, which would run them only on its next turn, one
		 * more poll and lock round trip per doorbell than a vCPU's
		 * write costs, whose wake-up of the loop runs them at once.
		 */
		aio_bh_poll(qemu_get_aio_context());
		return;
	}
	qemu_set_fd_handler(l->fd, NULL, NULL, NULL);
	if (s->peer[l->peer].rx_fd == l->fd)
		s->peer[l->peer].rx_fd = -1;
	close(l->fd);
	g_free(l);
}

/* The main loop takes over a data pipe the switch's thread was given. */
static void ntbsw_link_watch(struct ntbsw_core *s, unsigned int p, int fd)
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
static void ntbsw_raise_now(struct ntbsw_core *s, struct ntbsw_msg *m)
{
	int fd;

	qemu_mutex_lock_iothread();
	fd = s->peer[m->src].rx_fd;
	if (fd >= 0 && (m->flags & NTBSW_F_DATA_FIRST))
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
static void ntbsw_peer_link(struct ntbsw_core *s, struct ntbsw_msg *m, int fd)
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
		pe->data_since_irq = true;	/* a new pair: read first */
		qemu_mutex_unlock(&s->send_lock);
		break;
	case NTBSW_LINK_DATA_RX:
		ntbsw_enqueue(s, m, fd);	/* ntbsw_handle watches it */
		break;
	default:
		qemu_thread_create(&t, "ntb-irq", ntbsw_irq_thread,
				   ntbsw_link_new(s, m->src, fd),
				   QEMU_THREAD_DETACHED);
	}
}

static void *ntbsw_rx_thread(void *opaque)
{
	struct ntbsw_core *s = opaque;
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
	error_report("%s %u: switch connection lost", s->name, s->port);
	qatomic_set(&NTBSW_ME(s)->present, 0);
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

static int ntbsw_connect(struct ntbsw_core *s, int ram_fd, uint64_t ram_size,
			 size_t min_state, Error **errp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ntbsw_msg m = { .type = NTBSW_HELLO, .dst = NTBSW_DST_ALL,
			       .arg0 = s->port, .arg1 = ram_size };
	struct stat sb;
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
	if (fstat(fd, &sb) < 0 || sb.st_size < (off_t)min_state) {
		error_setg(errp, "switch state too small for a %s (is the "
			   "switch of the right kind?)", s->name);
		close(fd);
		return -1;
	}
	s->st_len = min_state;
	s->st = mmap(NULL, s->st_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, 0);
	close(fd);
	if (s->st == MAP_FAILED || s->st->magic != NTBSW_MAGIC ||
	    s->st->nports < 2 || s->st->nports > NTBSW_MAX_PORTS) {
		error_setg(errp, "switch state is not a smartio NTB switch's");
		s->st = NULL;
		return -1;
	}
	s->nports = s->st->nports;
	return 0;
}

void ntbsw_core_init(struct ntbsw_core *s, PCIDevice *pci,
		     const struct ntbsw_core_ops *ops, const char *name)
{
	unsigned int p;

	s->pci = pci;
	s->ops = ops;
	s->name = name;
	s->sock = -1;
	for (p = 0; p < NTBSW_MAX_PORTS; p++) {
		s->peer[p].tx_fd = -1;
		s->peer[p].irq_fd = -1;
		s->peer[p].rx_fd = -1;
		qemu_spin_init(&s->peer[p].iotlb.lock);
	}
}

int ntbsw_core_connect(struct ntbsw_core *s, size_t min_state, Error **errp)
{
	MemoryRegion *ram;

	if (!s->switch_path || !s->memdev) {
		error_setg(errp, "%s needs switch= and memdev=", s->name);
		return -1;
	}
	if (s->port >= NTBSW_MAX_PORTS) {
		error_setg(errp, "port must be < %d", NTBSW_MAX_PORTS);
		return -1;
	}
	ram = host_memory_backend_get_memory(s->memdev);
	if (memory_region_get_fd(ram) < 0 ||
	    !object_property_get_bool(OBJECT(s->memdev), "share", NULL)) {
		error_setg(errp, "memdev must be a memory-backend-file or "
			   "-memfd with share=on (peers map the guest's RAM)");
		return -1;
	}
	qemu_mutex_init(&s->send_lock);
	qemu_mutex_init(&s->q_lock);
	qemu_mutex_init(&s->p_lock);
	qemu_cond_init(&s->p_cond);
	s->rxq = g_queue_new();
	if (ntbsw_connect(s, memory_region_get_fd(ram),
			  memory_region_size(ram), min_state, errp) < 0) {
		if (s->sock >= 0)
			close(s->sock);
		s->sock = -1;
		return -1;
	}
	return 0;
}

void ntbsw_core_start(struct ntbsw_core *s, const uint64_t *win_size)
{
	uint8_t bar_flags = PCI_BASE_ADDRESS_SPACE_MEMORY |
			    PCI_BASE_ADDRESS_MEM_TYPE_64 |
			    PCI_BASE_ADDRESS_MEM_PREFETCH;
	unsigned int w;

	for (w = 0; w < NTBSW_NR_WIN; w++) {
		s->win_size[w] = win_size[w];
		memory_region_init(&s->win[w], OBJECT(s->pci), "ntb-window",
				   win_size[w]);
		memory_region_init_io(&s->win_io[w], OBJECT(s->pci),
				      &ntbsw_win_ops[w], s, "ntb-window-fwd",
				      win_size[w]);
		memory_region_add_subregion_overlap(&s->win[w], 0,
						    &s->win_io[w], 0);
		pci_register_bar(s->pci, 2 + 2 * w, bar_flags, &s->win[w]);
		ntbsw_cpu_window(s, w, &ntbsw_win_ops[w]);
	}
	s->bh = qemu_bh_new(ntbsw_bh, s);
	ntbsw_dma_watch(s);
	qemu_thread_create(&s->rx_thread, "ntb-rx", ntbsw_rx_thread, s,
			   QEMU_THREAD_DETACHED);
}
