// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest's client of smartio.ko's generic netlink family (linked
 * statically, raw netlink sockets: the guest has no libnl of its own).
 *
 *   sio_genl [-u UID] call CMD [ATTR=VALUE ...]
 *	sends one request and prints "rc=N": 0, or the negative errno that
 *	generic netlink (policy, permission) or the core's reply gave.
 *	CMD is a name below or a number; ATTR is dev, node, peer, mode,
 *	flags, index (u32), off, size, mask (u64), name (string), data (hex
 *	bytes), or a number for a raw u32 attribute of that type.
 *   sio_genl [-u UID] fuzz SECONDS SEED [bars]
 *	sends random requests for SECONDS: every user command and some
 *	others, attributes of valid and invalid types, lengths, flags and
 *	nesting.  After each refused request the registry's generation must
 *	be unchanged (a refusal changes nothing), unless every change in
 *	between was an msi event of a borrower's driver (FUZZ-ASYNC).
 *	"bars" limits config writes to the emulated registers (BARs, ROM),
 *	for a root run that must not rewrite the lender's live device.
 *	Prints a summary line "FUZZ sent=N refused=N ok=N driver-msi=N
 *	changed-on-refusal=N"; exits 1 when a refusal changed the registry.
 *
 *   sio_genl not-offered
 *	prints the commands lib/core/cmds.h says smartio.ko does not offer.
 *
 * -u UID drops to that uid and gid (and no groups) before the socket is
 * opened, as an unprivileged user would send.  -n stays root but keeps
 * CAP_NET_ADMIN alone, as a network administrator without CAP_SYS_ADMIN.
 *
 * One fuzzed request in 32 carries a nonzero reserved byte in its genl
 * header; every such request must be refused (the family validates the
 * header of every command), else it counts as changed-on-refusal.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"
#include "smartio_genl.h"
#include "cmds.h"

/*
 * The ABI (lib/core/smartio_genl.h) and the command table (cmds.h): the
 * names, and the attributes each offered command takes (its policy in
 * kmod/sio_genl.c).
 */
#define C_NAME(cmd, name, handler, route, origin, req, opt, genl) \
	[SIO_CMD_##cmd] = name,
static const char *const cmd_names[SIO_CMD_MAX + 1] = { SIO_CMDS(C_NAME) };

#define C_ATTRS(cmd, name, handler, route, origin, req, opt, genl) \
	[SIO_CMD_##cmd] = (genl) & SIO_GENL_NOT_OFFERED ? 0 : (req) | (opt),
static const uint32_t user_attrs[SIO_CMD_MAX + 1] = { SIO_CMDS(C_ATTRS) };

static int attr_len(int a)
{
	switch (a) {
	case SIO_A_ADDR: case SIO_A_SIZE: case SIO_A_IOVA: case SIO_A_OFFSET: case SIO_A_MASK:
	case SIO_A_SEQ: case SIO_A_TIME:
		return 8;
	case SIO_A_NAME: case SIO_A_DATA: case SIO_A_BAR: case SIO_A_SEG:
		return -1;
	default:
		return 4;
	}
}

struct msg {
	unsigned char buf[16384];
	uint32_t len;
};

static int sock = -1;
static uint32_t last_attr;	/* offset of the last attribute put */
static const struct msg *inflight;	/* for the watchdog's report */

/*
 * A request unanswered for 90 s (the longest a return may drain is 30 s):
 * report it with where this process sleeps, and fail.
 */
static void watchdog(int sig)
{
	char line[160], wchan[64] = "?";
	const struct nlmsghdr *h = (const struct nlmsghdr *)inflight->buf;
	int fd = open("/proc/self/wchan", O_RDONLY), n, i;

	(void)sig;
	if (fd >= 0) {
		n = (int)read(fd, wchan, sizeof(wchan) - 1);
		wchan[n > 0 ? n : 0] = 0;
		close(fd);
	}
	n = snprintf(line, sizeof(line), "FUZZ-STUCK cmd=%u len=%u/%u wchan=%s:",
		     inflight->buf[NLMSG_HDRLEN], h->nlmsg_len, inflight->len,
		     wchan);
	(void)!write(1, line, (size_t)n);
	for (i = NLMSG_HDRLEN; i < (int)inflight->len && i < 120; i++) {
		n = snprintf(line, sizeof(line), " %02x", inflight->buf[i]);
		(void)!write(1, line, (size_t)n);
	}
	(void)!write(1, "\n", 1);
	_exit(3);
}
static uint16_t family;
static uint32_t seq = 1;

static void put_attr(struct msg *m, uint16_t type, const void *p,
		     uint32_t len)
{
	struct nlattr *a = (struct nlattr *)(m->buf + m->len);

	if (m->len + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(m->buf))
		return;
	last_attr = m->len;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(a + 1, p, len);
	memset((unsigned char *)(a + 1) + len, 0, NLA_ALIGN(len) - len);
	m->len += NLA_HDRLEN + NLA_ALIGN(len);
}

static void start(struct msg *m, uint16_t type, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(h + 1);

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST;
	h->nlmsg_seq = seq++;
	last_attr = 0;
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/*
 * Sends m and waits for its answer: 0 or a negative errno (an error ack,
 * or the reply's SIO_A_ERRNO).  With out, the reply's attributes are
 * left there (its length in *outlen).
 */
static int exchange(struct msg *m, unsigned char *out, uint32_t *outlen)
{
	static unsigned char rbuf[65536];
	struct nlmsghdr *h = (struct nlmsghdr *)m->buf;
	uint32_t want = h->nlmsg_seq;
	/*
	 * Netlink drops a message whose length lies without an answer: wait
	 * 1 s for those; a return may drain a shadow for 30 s.
	 */
	struct timeval tv = { .tv_sec = 60 };
	ssize_t n;

	if (!h->nlmsg_len)
		h->nlmsg_len = m->len;
	if (h->nlmsg_len != m->len)
		tv.tv_sec = 1;
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	inflight = m;
	alarm(90);
	if (send(sock, m->buf, m->len, 0) < 0) {
		alarm(0);
		return -errno;
	}
	for (;;) {
		struct nlmsghdr *r = (struct nlmsghdr *)rbuf;

		n = recv(sock, rbuf, sizeof(rbuf), 0);
		if (n < 0) {
			alarm(0);
			return -errno;
		}
		if (n < (ssize_t)NLMSG_HDRLEN || r->nlmsg_seq != want)
			continue;
		alarm(0);
		if (r->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(r);

			return e->error;
		}
		if (r->nlmsg_len > (uint32_t)n ||
		    r->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
			return -EBADMSG;
		{
			unsigned char *p = rbuf + NLMSG_HDRLEN + GENL_HDRLEN;
			uint32_t left = r->nlmsg_len - NLMSG_HDRLEN -
					GENL_HDRLEN;
			int err = -EPROTO;

			if (out) {
				memcpy(out, p, left);
				*outlen = left;
			}
			while (left >= NLA_HDRLEN) {
				struct nlattr *a = (struct nlattr *)p;

				if (a->nla_len < NLA_HDRLEN ||
				    a->nla_len > left)
					break;
				if (a->nla_type == SIO_A_ERRNO &&
				    a->nla_len == NLA_HDRLEN + 4)
					memcpy(&err, a + 1, 4);
				if ((uint32_t)NLA_ALIGN(a->nla_len) >= left)
					break;
				left -= NLA_ALIGN(a->nla_len);
				p += NLA_ALIGN(a->nla_len);
			}
			return err;
		}
	}
}

static int open_family(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	unsigned char out[4096];
	uint32_t len = 0, pos = 0;
	struct msg m;
	int rc;

	sock = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	start(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	put_attr(&m, CTRL_ATTR_FAMILY_NAME, "smartio", 8);
	rc = exchange(&m, out, &len);
	if (rc != -EPROTO && rc)	/* no SIO_A_ERRNO in ctrl's reply */
		return rc;
	while (pos + NLA_HDRLEN <= len) {
		struct nlattr *a = (struct nlattr *)(out + pos);

		if (a->nla_len < NLA_HDRLEN)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID) {
			memcpy(&family, a + 1, 2);
			return 0;
		}
		pos += (uint32_t)NLA_ALIGN(a->nla_len);
	}
	return -ENOENT;
}

/* The table's name ("set-mode"), with '_' for '-' as well, or a number. */
static int cmd_number(const char *s)
{
	const char *t, *u;
	int i;

	for (i = 1; i <= SIO_CMD_MAX; i++) {
		for (t = cmd_names[i], u = s; t && *t && *u; t++, u++)
			if (*t != *u && !(*t == '-' && *u == '_'))
				break;
		if (t && !*t && !*u)
			return i;
	}
	return atoi(s);
}

static int put_named(struct msg *m, const char *spec)
{
	static const struct { const char *n; int a; } names[] = {
		{ "dev", SIO_A_DEV }, { "node", SIO_A_NODE }, { "peer", SIO_A_PEER },
		{ "mode", SIO_A_MODE }, { "flags", SIO_A_FLAGS }, { "index", SIO_A_INDEX },
		{ "off", SIO_A_OFFSET }, { "size", SIO_A_SIZE }, { "mask", SIO_A_MASK },
		{ "name", SIO_A_NAME }, { "data", SIO_A_DATA }, { "src", SIO_A_SRC },
	};
	const char *eq = strchr(spec, '=');
	unsigned char bin[4096];
	int a = -1;
	size_t i, k;

	if (!eq)
		return -1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(spec, names[i].n, (size_t)(eq - spec)) &&
		    strlen(names[i].n) == (size_t)(eq - spec))
			a = names[i].a;
	if (a < 0)
		a = atoi(spec);
	eq++;
	if (a == SIO_A_NAME) {
		put_attr(m, (uint16_t)a, eq, (uint32_t)strlen(eq) + 1);
	} else if (a == SIO_A_DATA) {
		for (k = 0; eq[2 * k] && eq[2 * k + 1] && k < sizeof(bin); k++)
			sscanf(eq + 2 * k, "%2hhx", &bin[k]);
		put_attr(m, (uint16_t)a, bin, (uint32_t)k);
	} else if (attr_len(a) == 8) {
		uint64_t v = strtoull(eq, NULL, 0);

		put_attr(m, (uint16_t)a, &v, 8);
	} else {
		uint32_t v = (uint32_t)strtoul(eq, NULL, 0);

		put_attr(m, (uint16_t)a, &v, 4);
	}
	return 0;
}

/*
 * Registry bytes [off, off + size) into buf (REG_READ), and the generation
 * the same reply carries into *gen when gen is not NULL; 0 or -errno.
 */
static int reg_bytes(uint64_t off, uint64_t size, void *buf, int64_t *gen)
{
	static unsigned char out[65536];
	uint32_t len = 0, pos = 0;
	int have = 0, rc;
	struct msg m;

	start(&m, family, SIO_CMD_REG_READ, 1);
	put_attr(&m, SIO_A_OFFSET, &off, 8);
	put_attr(&m, SIO_A_SIZE, &size, 8);
	rc = exchange(&m, out, &len);
	if (rc)
		return rc;
	while (pos + NLA_HDRLEN <= len) {
		struct nlattr *a = (struct nlattr *)(out + pos);
		uint64_t seq;

		if (a->nla_len < NLA_HDRLEN)
			break;
		if (a->nla_type == SIO_A_DATA &&
		    a->nla_len == NLA_HDRLEN + size) {
			memcpy(buf, a + 1, size);
			have |= 1;
		}
		if (a->nla_type == SIO_A_SEQ && a->nla_len == NLA_HDRLEN + 8) {
			memcpy(&seq, a + 1, 8);
			if (gen)
				*gen = (int64_t)(seq & INT64_MAX);
			have |= 2;
		}
		pos += (uint32_t)NLA_ALIGN(a->nla_len);
	}
	return have == 3 ? 0 : -EPROTO;
}

/*
 * What a request may have changed: the registry's generation (every
 * change notifies once) and its last event's sequence number.
 */
struct regsnap {
	int64_t gen;
	uint64_t event_seq;
};

static int snapshot(struct regsnap *s)
{
	struct sio_registry r;
	int rc = reg_bytes(0, sizeof(r), &r, &s->gen);

	s->event_seq = rc ? 0 : r.event_seq;
	return rc;
}

/*
 * Whether the change from a to b is the borrower's driver at work and
 * no request's doing: the nvme driver of a shadow a borrow hot-added
 * sets up and moves its MSI-X vectors on its own, later, each time one
 * msi event.  Every notify in between was such an event (the events that
 * came are as many as the notifies, all msi), printed either way so that
 * a flagged refusal says what moved the generation.
 */
static int async_driver_change(const struct regsnap *a,
			       const struct regsnap *b)
{
	struct sio_registry r;
	struct sio_event ev;
	uint64_t seq;
	int all_msi = 1;

	if (b->event_seq - a->event_seq != (uint64_t)(b->gen - a->gen) ||
	    reg_bytes(0, sizeof(r), &r, NULL))
		all_msi = 0;
	for (seq = a->event_seq + 1; seq <= b->event_seq; seq++) {
		uint64_t at = r.events_off +
			      (seq % SIO_EVENT_RING) * sizeof(ev);

		if (seq > a->event_seq + 8 ||
		    reg_bytes(at, sizeof(ev), &ev, NULL))
			return 0;
		ev.object[sizeof(ev.object) - 1] = 0;
		ev.args[sizeof(ev.args) - 1] = 0;
		printf("FUZZ-EVENT seq=%llu kind=%u %s %s\n",
		       (unsigned long long)ev.seq, ev.kind, ev.object,
		       ev.args);
		if (ev.seq != seq || ev.kind != SIO_EV_MSI)
			all_msi = 0;
	}
	return all_msi;
}

/* Drops every capability but CAP_NET_ADMIN (uid stays 0). */
static int keep_net_admin_only(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	uint32_t bit = 1u << (CAP_NET_ADMIN % 32);

	memset(d, 0, sizeof(d));
	d[CAP_NET_ADMIN / 32].effective = bit;
	d[CAP_NET_ADMIN / 32].permitted = bit;
	return (int)syscall(SYS_capset, &h, d);
}

static uint64_t rnd_state;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 11);
}

/* Values that mean something to the core as often as random ones. */
static uint64_t value(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 0x100000, 0xfffff, 0x7fffffff, 0xffffffff,
		~0ull, 64, 4096, 4097, 0x10, 0x30, 1ull << 32,
	};

	if (rnd() % 2)
		return v[rnd() % (sizeof(v) / sizeof(v[0]))];
	return ((uint64_t)rnd() << 32) | rnd();
}

static void fuzz_attr(struct msg *m, int cmd)
{
	unsigned char p[80];
	/* cmd may be any number: past the table it takes nothing */
	uint32_t legal = cmd >= 0 && cmd <= SIO_CMD_MAX ? user_attrs[cmd] : 0;
	uint32_t len, i;
	uint16_t type;
	int a, l;

	if (legal && rnd() % 4) {
		do
			a = (int)(rnd() % (SIO_A_MAX + 1));
		while (!(legal >> a & 1));
	} else {
		a = (int)(rnd() % 40);	/* any type, unknown ones too */
	}
	type = (uint16_t)a;
	if (rnd() % 16 == 0)
		type |= NLA_F_NESTED;
	if (rnd() % 32 == 0)
		type |= NLA_F_NET_BYTEORDER;
	l = attr_len(a);
	if (a == SIO_A_NAME && rnd() % 4) {
		len = 1 + rnd() % 40;
		for (i = 0; i < len; i++)
			p[i] = (unsigned char)('a' + rnd() % 26);
		p[len - 1] = rnd() % 8 ? 0 : 'z';
	} else if (a == SIO_A_DATA && rnd() % 2) {
		len = 1 + rnd() % 8;
		for (i = 0; i < len; i++)
			p[i] = (unsigned char)rnd();
	} else if ((a == SIO_A_BAR || a == SIO_A_SEG || rnd() % 16 == 0) &&
		   rnd() % 2) {
		/* a nest of u32s, well-formed or not */
		uint32_t n = rnd() % 4, at = 0, v;

		for (i = 0; i < n && at + 8 <= sizeof(p); i++) {
			struct nlattr *in = (struct nlattr *)(p + at);

			in->nla_type = (uint16_t)(rnd() % 30);
			in->nla_len = (uint16_t)(rnd() % 8 ? 8 : rnd() % 64);
			v = (uint32_t)value();
			memcpy(in + 1, &v, 4);
			at += 8;
		}
		len = at;
		type |= NLA_F_NESTED;
	} else if (l > 0 && rnd() % 8) {
		uint64_t v = value();

		len = (uint32_t)l;
		memcpy(p, &v, len);
	} else {
		len = rnd() % sizeof(p);
		for (i = 0; i < len; i++)
			p[i] = (unsigned char)value();
	}
	put_attr(m, type, p, len);
}

static int user_cmd(void)
{
	int c;

	do
		c = 1 + (int)(rnd() % SIO_CMD_MAX);
	while (!user_attrs[c]);
	return c;
}

static int fuzz(int seconds, uint64_t seed, int bars)
{
	unsigned long sent = 0, refused = 0, ok = 0, bad = 0, driver = 0;
	time_t end = time(NULL) + seconds;
	struct msg m;

	rnd_state = seed ? seed : 1;
	signal(SIGALRM, watchdog);
	while (time(NULL) < end) {
		int cmd = rnd() % 8 ? user_cmd() : (int)(rnd() % 256);
		int n = (int)(rnd() % 7), i, rc, resv = 0;
		struct regsnap s0, s1;
		struct nlmsghdr *h;

		start(&m, family, (uint8_t)cmd, rnd() % 32 ? 1 : rnd() % 4);
		for (i = 0; i < n; i++)
			fuzz_attr(&m, cmd);
		if (bars && cmd == SIO_CMD_CFG_WRITE) {
			/*
			 * A config write of a live device: inside one BAR or
			 * the ROM dword, nothing past it (the power
			 * management and MSI-X registers stay the driver's).
			 */
			uint64_t off = 0x10 + 4 * (rnd() % 6);
			uint32_t dev = (uint32_t)value();
			uint32_t node = (uint32_t)value();
			uint32_t len = 1 + rnd() % 4, v = rnd();

			if (rnd() % 4 == 0)
				off = 0x30;
			off += rnd() % (5 - len);
			start(&m, family, SIO_CMD_CFG_WRITE, 1);
			put_attr(&m, SIO_A_DEV, &dev, 4);
			put_attr(&m, SIO_A_NODE, &node, 4);
			put_attr(&m, SIO_A_OFFSET, &off, 8);
			put_attr(&m, SIO_A_DATA, &v, len);
			if (rnd() % 4 == 0) {	/* and one the policy refuses */
				uint32_t t = SIO_A_SRC + rnd() % 40;

				if (t != SIO_A_DEV && t != SIO_A_NODE && t != SIO_A_OFFSET &&
				    t != SIO_A_DATA)
					put_attr(&m, (uint16_t)t, &v, 4);
			}
		}
		h = (struct nlmsghdr *)m.buf;
		h->nlmsg_len = m.len;
		if (rnd() % 32 == 0) {
			struct genlmsghdr *g = (struct genlmsghdr *)(h + 1);

			g->reserved = (uint16_t)(1 + rnd() % 0xffff);
			resv = 1;
		}
		if (rnd() % 16 == 0 && last_attr) {
			/*
			 * An attribute running past the message's end.  (A
			 * message whose own length lies is dropped by
			 * netlink unanswered: nothing of ours would run.)
			 */
			struct nlattr *a = (struct nlattr *)(m.buf + last_attr);

			a->nla_len = (uint16_t)(a->nla_len + 4 + rnd() % 64);
		}
		snapshot(&s0);
		rc = exchange(&m, NULL, NULL);
		snapshot(&s1);
		sent++;
		if (sent % 50000 == 0)
			fprintf(stderr, "FUZZ-PROGRESS sent=%lu refused=%lu\n",
				sent, refused);
		if (resv && !rc) {
			printf("FUZZ-RESERVED cmd=%d answered 0\n", cmd);
			bad++;
		}
		if (rc) {
			refused++;
			if (s0.gen != s1.gen) {
				int async = async_driver_change(&s0, &s1);

				printf("FUZZ-%s cmd=%d rc=%d gen %lld->%lld\n",
				       async ? "ASYNC" : "CHANGED", cmd, rc,
				       (long long)s0.gen, (long long)s1.gen);
				if (async)
					driver++;
				else
					bad++;
			}
		} else {
			ok++;
		}
	}
	printf("FUZZ sent=%lu refused=%lu ok=%lu driver-msi=%lu changed-on-refusal=%lu\n",
	       sent, refused, ok, driver, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct msg m;
	int i = 1, rc;

	if (argc > 2 && !strcmp(argv[1], "-u")) {
		uid_t uid = (uid_t)atoi(argv[2]);

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
			perror("sio_genl: dropping privileges");
			return 2;
		}
		i = 3;
	} else if (argc > 1 && !strcmp(argv[1], "not-offered")) {
		/* The commands the table says smartio.ko does not offer. */
		for (i = 1; i <= SIO_CMD_MAX; i++)
			if (!user_attrs[i])
				printf("%s\n", cmd_names[i]);
		return 0;
	} else if (argc > 1 && !strcmp(argv[1], "-n")) {
		if (keep_net_admin_only()) {
			perror("sio_genl: keeping CAP_NET_ADMIN only");
			return 2;
		}
		i = 2;
	}
	if (argc <= i + 1) {
		fprintf(stderr, "usage: sio_genl [-u UID | -n] call CMD [A=V ...] | fuzz SECONDS SEED [bars] | not-offered\n");
		return 2;
	}
	rc = open_family();
	if (rc) {
		fprintf(stderr, "sio_genl: no smartio family: %s\n",
			strerror(-rc));
		return 2;
	}
	if (!strcmp(argv[i], "fuzz"))
		return fuzz(atoi(argv[i + 1]),
			    argc > i + 2 ? strtoull(argv[i + 2], NULL, 0) : 1,
			    argc > i + 3 && !strcmp(argv[i + 3], "bars"));
	start(&m, family, (uint8_t)cmd_number(argv[i + 1]), 1);
	for (i += 2; i < argc; i++)
		if (put_named(&m, argv[i])) {
			fprintf(stderr, "sio_genl: bad attribute %s\n",
				argv[i]);
			return 2;
		}
	printf("rc=%d\n", exchange(&m, NULL, NULL));
	return 0;
}
