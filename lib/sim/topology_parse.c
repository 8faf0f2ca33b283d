// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * smartio.conf(5), the topology file of the simulated fabric.  One statement
 * per line, '#' starts a comment, fields are separated by blanks:
 *
 *   fabric  [window=SIZE] [luts=N] [requesters=N] [reserved=N] [share=N]
 *           [gen=1..5] [width=1|2|4|8|16] [pace=on|off]
 *   node    NAME id=N [ram=SIZE]
 *   switch  NAME [ports=N] [requesters=N] [reserved=N]
 *           [gen=1..5] [width=1|2|4|8|16] [latency=NS] [multicast=N]
 *   cascade SWITCH:PORT SWITCH:PORT
 *   adapter NODE NAME peers=NODE[,NODE...]|all|switch=SWITCH:PORT
 *           [window=SIZE] [luts=N] [requesters=N] [reserved=N] [share=N]
 *           [gen=1..5] [width=1|2|4|8|16] [latency=NS]
 *   device  NODE NAME bdf=dddd:bb:dd.f vendor=N device=N class=N
 *           [subsystem_vendor=N] [subsystem_device=N] [revision=N]
 *           [config=256|4096] [model=generic|nvme|dma]
 *           [bar<N>=SIZE[,64][,prefetch]]...
 *
 * Every rule is checked; the first violation ends the parse with
 * "line N: <what is wrong>: '<offending token>'".  Keep the man page
 * (man/smartio.conf.5) in step with this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numparse.h"
#include "topology_parse.h"

#define MAX_FIELDS 32		/* a valid line has at most 19 */

#define DEF_WINDOW (4ull << 30)
#define DEF_LUTS 256u
#define DEF_REQUESTERS 32u	/* Dolphin PXH830: 32 requester entries, */
#define DEF_RESERVED 2u		/* 2 of them reserved for the CPUs */
#define DEF_RAM (1ull << 30)
#define MIN_WINDOW (1ull << 20)
#define MAX_WINDOW (1ull << 40)	/* SIO_WINDOW_STRIDE: windows do not overlap */
#define MAX_LUTS 4096u
#define MIN_SLOT 4096u		/* window / luts */
#define MAX_REQUESTERS 64u
#define MIN_RAM (1ull << 20)
#define MAX_RAM (252ull << 30)	/* SIO_RAM_MAX: RAM ends where BARs begin */
#define RAM_ALIGN 4096u
#define MIN_BAR 4096ull
#define MAX_BAR (1ull << 40)
#define GEN_MAX_FUNCTIONS (255u * 256u)	/* buses 01..ff, 32 slots x 8 */
#define DEF_PORTS 24u		/* Dolphin MXS824 */
#define MIN_PORTS 2u

struct ntb_params {
	u64 window;
	u32 luts, requesters, reserved, share;
	u32 gen, width, latency;	/* the link (topology.h), 0 = default */
};

/* An adapter's peers= token, resolved once every node is known. */
struct pending_peers {
	const char *tok;
	unsigned line;
};

/* Open-addressing set of device indexes (stored + 1; 0 is an empty slot). */
struct hset {
	u32 *slot;
	u32 cap, used;
	u32 (*hash)(const struct sio_topo_device *d);
	int (*eq)(const struct sio_topo_device *a,
		  const struct sio_topo_device *b);
};

struct parser {
	struct sio_topology *t;
	u32 cap_nodes, cap_adapters, cap_devices;
	unsigned line;
	char *err;
	size_t errlen;
	int have_fabric;
	struct ntb_params def;
	unsigned node_line[SIO_MAX_NODES];
	struct pending_peers peers[SIO_MAX_NODES * SIO_MAX_ADAPTERS];
	u32 port_used[SIO_MAX_SWITCHES];	/* cabled ports, a bit each */
	unsigned switch_line[SIO_MAX_SWITCHES];
	struct hset names;	/* device names, cluster-wide */
	struct hset bdfs;	/* (node, bdf) */
};

__attribute__((format(printf, 3, 4)))
static int fail(struct parser *p, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->err || !p->errlen)
		return rc;
	n = snprintf(p->err, p->errlen, "line %u: ", p->line);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int nomem(struct parser *p)
{
	return fail(p, -ENOMEM, "out of memory");
}

static int is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

/* A number (or size) from [s, s + len), part of token tok, at most max. */
static int get_num(struct parser *p, const char *tok, const char *s,
		   size_t len, int size, u64 max, u64 *out)
{
	int rc = sio_parse_u64(s, len, size, out);

	if (rc == -EINVAL)
		return fail(p, -EINVAL, "bad %s: '%s'", size ? "size" : "number",
			    tok);
	if (rc || *out > max)
		return fail(p, -EINVAL, "value out of range (at most %llu): '%s'",
			    (unsigned long long)max, tok);
	return 0;
}

/* Node and adapter names: [a-z0-9_-]{1,31}, over [s, s + len). */
static int name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= SIO_TOPO_NAME)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/* Device names: <class><n>, class nvme|gpu|nic|acc, n decimal, no leading
 * zero, at most 31 characters in all. */
static int dev_name_ok(const char *s)
{
	static const char *const classes[] = { "nvme", "gpu", "nic", "acc" };
	size_t i, c, len = strlen(s);

	if (len >= SIO_TOPO_NAME)
		return 0;
	for (c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		size_t k = strlen(classes[c]);

		if (strncmp(s, classes[c], k) != 0)
			continue;
		if (len == k || (s[k] == '0' && len > k + 1))
			return 0;
		for (i = k; i < len; i++)
			if (s[i] < '0' || s[i] > '9')
				return 0;
		return 1;
	}
	return 0;
}

/* dddd:bb:dd.f with hex domain, bus and device (< 0x20) and function 0..7;
 * copied to out (13 bytes) in lower case. */
static int bdf_parse(const char *s, char *out)
{
	size_t i;

	if (strlen(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.')
		return 0;
	for (i = 0; i < 12; i++) {
		if (i == 4 || i == 7 || i == 10)
			out[i] = s[i];
		else if (sio_digit_value(s[i]) < 16)
			out[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 'a'
							     : s[i]);
		else
			return 0;
	}
	out[12] = '\0';
	return sio_digit_value(s[8]) < 2 && s[11] >= '0' && s[11] <= '7';
}

static int find_node(const struct sio_topology *t, const char *s, size_t len)
{
	u32 i;

	for (i = 0; i < t->nnodes; i++)
		if (strlen(t->nodes[i].name) == len &&
		    !memcmp(t->nodes[i].name, s, len))
			return (int)i;
	return -1;
}

/* Room for one more element: returns arr, moved if need be, or NULL (arr
 * then stays valid and *cap unchanged). */
static void *grow(void *arr, u32 *cap, u32 count, size_t elem)
{
	u32 ncap;
	void *n;

	if (count < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 8;
	n = realloc(arr, (size_t)ncap * elem);
	if (n)
		*cap = ncap;
	return n;
}

/* --- device sets ---------------------------------------------------------- */

static u32 fnv(u32 h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (u8)*s) * 16777619u;
	return h;
}

static u32 name_hash(const struct sio_topo_device *d)
{
	return fnv(2166136261u, d->name);
}

static int name_eq(const struct sio_topo_device *a,
		   const struct sio_topo_device *b)
{
	return !strcmp(a->name, b->name);
}

static u32 bdf_hash(const struct sio_topo_device *d)
{
	return fnv((2166136261u ^ d->node) * 16777619u, d->bdf);
}

static int bdf_eq(const struct sio_topo_device *a,
		  const struct sio_topo_device *b)
{
	return a->node == b->node && !strcmp(a->bdf, b->bdf);
}

/* Is a device equal to key among devs? */
static int hset_has(const struct hset *h, const struct sio_topo_device *devs,
		    const struct sio_topo_device *key)
{
	u32 i;

	if (!h->cap)
		return 0;
	for (i = h->hash(key) & (h->cap - 1); h->slot[i]; i = (i + 1) & (h->cap - 1))
		if (h->eq(&devs[h->slot[i] - 1], key))
			return 1;
	return 0;
}

static void hset_put(struct hset *h, const struct sio_topo_device *devs,
		     u32 idx)
{
	u32 i = h->hash(&devs[idx]) & (h->cap - 1);

	while (h->slot[i])
		i = (i + 1) & (h->cap - 1);
	h->slot[i] = idx + 1;
	h->used++;
}

static int hset_add(struct hset *h, const struct sio_topo_device *devs,
		    u32 idx)
{
	if ((h->used + 1) * 2 > h->cap) {
		struct hset n = *h;
		u32 i;

		n.cap = h->cap ? h->cap * 2 : 64;
		n.used = 0;
		n.slot = calloc(n.cap, sizeof(*n.slot));
		if (!n.slot)
			return -ENOMEM;
		for (i = 0; i < h->cap; i++)
			if (h->slot[i])
				hset_put(&n, devs, h->slot[i] - 1);
		free(h->slot);
		*h = n;
	}
	hset_put(h, devs, idx);
	return 0;
}

/* --- key=value options ---------------------------------------------------- */

#define MAX_KEYS 24

struct opts {
	const char *tok[MAX_KEYS];	/* the whole token, NULL if absent */
	const char *val[MAX_KEYS];	/* after the '=' */
};

/* Splits tok[first..n) into the keys of a NULL-terminated list. */
static int split_opts(struct parser *p, char **tok, int n, int first,
		      const char *what, const char *const *keys,
		      struct opts *o)
{
	int i, k;

	memset(o, 0, sizeof(*o));
	for (i = first; i < n; i++) {
		const char *eq = strchr(tok[i], '=');
		size_t klen;

		if (!eq || eq == tok[i])
			return fail(p, -EINVAL, "expected key=value: '%s'", tok[i]);
		klen = (size_t)(eq - tok[i]);
		for (k = 0; keys[k]; k++)
			if (strlen(keys[k]) == klen && !memcmp(keys[k], tok[i], klen))
				break;
		if (!keys[k])
			return fail(p, -EINVAL, "unknown %s option: '%s'", what,
				    tok[i]);
		if (o->tok[k])
			return fail(p, -EINVAL, "%s given twice: '%s'", keys[k],
				    tok[i]);
		o->tok[k] = tok[i];
		o->val[k] = eq + 1;
	}
	return 0;
}

/*
 * Option indexes: the order of the key lists below.  fabric and adapter
 * share theirs; "" holds the place of a key the statement does not take
 * (no option has an empty key).
 */
enum {
	K_WINDOW, K_LUTS, K_REQUESTERS, K_RESERVED, K_GEN, K_WIDTH, K_PEERS,
	K_SWITCH, K_LATENCY, K_PACE, K_SHARE
};
static const char *const fabric_keys[] = {
	"window", "luts", "requesters", "reserved", "gen", "width", "", "",
	"", "pace", "share", NULL
};
static const char *const adapter_keys[] = {
	"window", "luts", "requesters", "reserved", "gen", "width", "peers",
	"switch", "latency", "", "share", NULL
};

enum { K_PORTS, K_SW_REQUESTERS, K_SW_RESERVED, K_SW_GEN, K_SW_WIDTH,
       K_SW_LATENCY, K_SW_MULTICAST };
static const char *const switch_keys[] = {
	"ports", "requesters", "reserved", "gen", "width", "latency",
	"multicast", NULL
};

enum { K_ID, K_RAM };
static const char *const node_keys[] = { "id", "ram", NULL };

enum {
	K_BDF, K_VENDOR, K_DEVICE, K_CLASS, K_SVENDOR, K_SDEVICE, K_REVISION,
	K_CONFIG, K_MODEL, K_BAR0,
	K_SRIOV = K_BAR0 + SIO_MAX_BARS, K_VFDEVICE, K_VFBAR0
};
static const char *const device_keys[] = {
	"bdf", "vendor", "device", "class", "subsystem_vendor",
	"subsystem_device", "revision", "config", "model",
	"bar0", "bar1", "bar2", "bar3", "bar4", "bar5",
	"sriov", "vfdevice",
	"vfbar0", "vfbar1", "vfbar2", "vfbar3", "vfbar4", "vfbar5", NULL
};

static int opt_num(struct parser *p, const struct opts *o, int k, int size,
		   u64 max, u64 *out)
{
	return get_num(p, o->tok[k], o->val[k], strlen(o->val[k]), size, max,
		       out);
}

/*
 * A link's gen= (1 to 5), width= (1, 2, 4, 8 or 16 lanes) and its chip's
 * latency= (ns), at option indexes kg, kw and kl of o (kl < 0: not taken);
 * each one given overrides *gen, *width, *lat.
 */
static int link_params(struct parser *p, const struct opts *o, int kg,
		       int kw, int kl, u32 *gen, u32 *width, u32 *lat)
{
	u64 v;

	if (o->tok[kg]) {
		if (sio_parse_u64(o->val[kg], strlen(o->val[kg]), 0, &v) ||
		    v < 1 || v > SIO_LINK_GEN_MAX)
			return fail(p, -EINVAL, "gen must be from 1 to %d: '%s'",
				    SIO_LINK_GEN_MAX, o->tok[kg]);
		*gen = (u32)v;
	}
	if (o->tok[kw]) {
		if (sio_parse_u64(o->val[kw], strlen(o->val[kw]), 0, &v) ||
		    !sio_link_speed_ok(SIO_LINK_GEN, v > 64 ? 0 : (u32)v))
			return fail(p, -EINVAL,
				    "width must be 1, 2, 4, 8 or 16 lanes: '%s'",
				    o->tok[kw]);
		*width = (u32)v;
	}
	if (kl >= 0 && o->tok[kl]) {
		if (sio_parse_u64(o->val[kl], strlen(o->val[kl]), 0, &v) ||
		    v < 1 || v > SIO_LATENCY_MAX_NS)
			return fail(p, -EINVAL,
				    "latency must be from 1 to %d ns: '%s'",
				    SIO_LATENCY_MAX_NS, o->tok[kl]);
		*lat = (u32)v;
	}
	return 0;
}

/* window, luts, requesters, reserved given in o override *np; checks all. */
static int ntb_params(struct parser *p, const struct opts *o,
		      struct ntb_params *np)
{
	u64 v;
	int rc;

	if (o->tok[K_WINDOW]) {
		rc = opt_num(p, o, K_WINDOW, 1, UINT64_MAX, &v);
		if (rc)
			return rc;
		if (!is_pow2(v) || v < MIN_WINDOW || v > MAX_WINDOW)
			return fail(p, -EINVAL,
				    "window must be a power of two from 1M to 1T: '%s'",
				    o->tok[K_WINDOW]);
		np->window = v;
	}
	if (o->tok[K_LUTS]) {
		rc = opt_num(p, o, K_LUTS, 0, UINT64_MAX, &v);
		if (rc)
			return rc;
		if (!is_pow2(v) || v > MAX_LUTS)
			return fail(p, -EINVAL,
				    "luts must be a power of two from 1 to 4096: '%s'",
				    o->tok[K_LUTS]);
		np->luts = (u32)v;
	}
	if (o->tok[K_REQUESTERS]) {
		rc = opt_num(p, o, K_REQUESTERS, 0, UINT64_MAX, &v);
		if (rc)
			return rc;
		if (v < 1 || v > MAX_REQUESTERS)
			return fail(p, -EINVAL,
				    "requesters must be from 1 to 64: '%s'",
				    o->tok[K_REQUESTERS]);
		np->requesters = (u32)v;
	}
	if (o->tok[K_RESERVED]) {
		rc = opt_num(p, o, K_RESERVED, 0, UINT64_MAX, &v);
		if (rc)
			return rc;
		np->reserved = v > MAX_REQUESTERS ? MAX_REQUESTERS : (u32)v;
	}
	if (o->tok[K_SHARE]) {
		rc = opt_num(p, o, K_SHARE, 0, MAX_LUTS, &v);
		if (rc)
			return rc;
		np->share = (u32)v;
	}
	rc = link_params(p, o, K_GEN, K_WIDTH,
			 K_LATENCY, &np->gen, &np->width,
			 &np->latency);
	if (rc)
		return rc;
	if (np->window / np->luts < MIN_SLOT)
		return fail(p, -EINVAL,
			    "window/luts must be at least 4096 (window %llu, %u luts): '%s'",
			    (unsigned long long)np->window, np->luts,
			    o->tok[K_LUTS] ? o->tok[K_LUTS] : o->tok[K_WINDOW]);
	if (np->reserved >= np->requesters)
		return fail(p, -EINVAL,
			    "reserved must be below requesters (%u): '%s'",
			    np->requesters,
			    o->tok[K_RESERVED] ? o->tok[K_RESERVED]
					       : o->tok[K_REQUESTERS]);
	if (np->share > np->luts)
		return fail(p, -EINVAL,
			    "share must be at most luts (%u): '%s'", np->luts,
			    o->tok[K_SHARE] ? o->tok[K_SHARE] : o->tok[K_LUTS]);
	return 0;
}

/* --- statements ----------------------------------------------------------- */

static int p_fabric(struct parser *p, char **tok, int n)
{
	struct ntb_params np = p->def;
	struct opts o;
	int rc;

	if (p->have_fabric)
		return fail(p, -EINVAL, "fabric given twice: '%s'", tok[0]);
	if (p->t->nadapters)
		return fail(p, -EINVAL, "fabric must come before any adapter: '%s'",
			    tok[0]);
	rc = split_opts(p, tok, n, 1, "fabric", fabric_keys, &o);
	if (!rc)
		rc = ntb_params(p, &o, &np);
	if (rc)
		return rc;
	if (o.tok[K_PACE]) {
		if (strcmp(o.val[K_PACE], "on") && strcmp(o.val[K_PACE], "off"))
			return fail(p, -EINVAL, "pace must be on or off: '%s'",
				    o.tok[K_PACE]);
		p->t->no_pace = !strcmp(o.val[K_PACE], "off");
	}
	p->def = np;
	p->have_fabric = 1;
	return 0;
}

static int p_node(struct parser *p, char **tok, int n)
{
	struct sio_topology *t = p->t;
	struct sio_topo_node *nd;
	struct opts o;
	u64 id, ram = DEF_RAM;
	u32 i;
	int rc;

	if (n < 2)
		return fail(p, -EINVAL, "node needs a name: '%s'", tok[0]);
	if (!name_ok(tok[1], strlen(tok[1])))
		return fail(p, -EINVAL,
			    "bad node name (a-z 0-9 _ -, at most 31): '%s'", tok[1]);
	if (!strcmp(tok[1], "all"))
		return fail(p, -EINVAL, "node name reserved for peers=all: '%s'",
			    tok[1]);
	if (find_node(t, tok[1], strlen(tok[1])) >= 0)
		return fail(p, -EINVAL, "duplicate node '%s'", tok[1]);
	if (t->nnodes == SIO_MAX_NODES)
		return fail(p, -E2BIG, "more than %d nodes: '%s'", SIO_MAX_NODES,
			    tok[1]);
	rc = split_opts(p, tok, n, 2, "node", node_keys, &o);
	if (rc)
		return rc;
	if (!o.tok[K_ID])
		return fail(p, -EINVAL, "node needs id=: '%s'", tok[1]);
	rc = opt_num(p, &o, K_ID, 0, UINT32_MAX, &id);
	if (rc)
		return rc;
	for (i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id == id)
			return fail(p, -EINVAL, "duplicate id (node '%s'): '%s'",
				    t->nodes[i].name, o.tok[K_ID]);
	if (o.tok[K_RAM]) {
		rc = opt_num(p, &o, K_RAM, 1, UINT64_MAX, &ram);
		if (rc)
			return rc;
		if (ram < MIN_RAM || ram > MAX_RAM || ram % RAM_ALIGN)
			return fail(p, -EINVAL,
				    "ram must be a multiple of 4K from 1M to 252G: '%s'",
				    o.tok[K_RAM]);
	}
	nd = grow(t->nodes, &p->cap_nodes, t->nnodes, sizeof(*nd));
	if (!nd)
		return nomem(p);
	t->nodes = nd;
	nd = &t->nodes[t->nnodes];
	memset(nd, 0, sizeof(*nd));
	memcpy(nd->name, tok[1], strlen(tok[1]));
	nd->id = (u32)id;
	nd->ram = ram;
	p->node_line[t->nnodes++] = p->line;
	return 0;
}

/* Syntax of peers=: "all" or a comma list of node names; resolved later. */
static int peers_syntax(struct parser *p, const char *tok, const char *val)
{
	const char *s = val;

	if (!*val)
		return fail(p, -EINVAL, "empty peers list: '%s'", tok);
	if (!strcmp(val, "all"))
		return 0;
	for (;;) {
		const char *c = strchr(s, ',');
		size_t len = c ? (size_t)(c - s) : strlen(s);

		if (!len)
			return fail(p, -EINVAL, "empty name in peers list: '%s'", tok);
		if (len == 3 && !memcmp(s, "all", 3))
			return fail(p, -EINVAL, "'all' must stand alone: '%s'", tok);
		if (!name_ok(s, len))
			return fail(p, -EINVAL, "bad node name '%.*s' in '%s'",
				    (int)len, s, tok);
		if (!c)
			return 0;
		s = c + 1;
	}
}

/* Multicast groups the switches parsed so far hold. */
static u32 mcast_groups(const struct sio_topology *t)
{
	u32 i, n = 0;

	for (i = 0; i < t->nswitches; i++)
		n += t->switches[i].multicast;
	return n;
}

static int find_switch(const struct sio_topology *t, const char *s,
		       size_t len)
{
	u32 i;

	for (i = 0; i < t->nswitches; i++)
		if (strlen(t->switches[i].name) == len &&
		    !memcmp(t->switches[i].name, s, len))
			return (int)i;
	return -1;
}

/* SWITCH:PORT of token tok: a defined switch and a free port of it. */
static int switch_port(struct parser *p, const char *tok, const char *val,
		       u32 *sw, u32 *port)
{
	const char *colon = strchr(val, ':');
	u64 v;
	int i, rc;

	if (!colon)
		return fail(p, -EINVAL, "expected SWITCH:PORT: '%s'", tok);
	i = find_switch(p->t, val, (size_t)(colon - val));
	if (i < 0)
		return fail(p, -EINVAL, "unknown switch (define it first): '%s'",
			    tok);
	rc = get_num(p, tok, colon + 1, strlen(colon + 1), 0,
		     p->t->switches[i].ports - 1, &v);
	if (rc)
		return rc;
	if (p->port_used[i] >> v & 1)
		return fail(p, -EINVAL, "switch port already cabled: '%s'", tok);
	*sw = (u32)i;
	*port = (u32)v;
	return 0;
}

static int p_switch(struct parser *p, char **tok, int n)
{
	struct sio_topology *t = p->t;
	struct sio_topo_switch *sw;
	struct opts o;
	u64 v;
	int rc;

	if (n < 2)
		return fail(p, -EINVAL, "switch needs a name: '%s'", tok[0]);
	if (!name_ok(tok[1], strlen(tok[1])))
		return fail(p, -EINVAL,
			    "bad switch name (a-z 0-9 _ -, at most 31): '%s'",
			    tok[1]);
	if (find_switch(t, tok[1], strlen(tok[1])) >= 0)
		return fail(p, -EINVAL, "duplicate switch '%s'", tok[1]);
	if (t->nswitches == SIO_MAX_SWITCHES)
		return fail(p, -E2BIG, "more than %d switches: '%s'",
			    SIO_MAX_SWITCHES, tok[1]);
	rc = split_opts(p, tok, n, 2, "switch", switch_keys, &o);
	if (rc)
		return rc;
	if (!t->switches) {
		t->switches = calloc(SIO_MAX_SWITCHES, sizeof(*t->switches));
		if (!t->switches)
			return nomem(p);
	}
	sw = &t->switches[t->nswitches];
	memset(sw, 0, sizeof(*sw));
	sw->ports = DEF_PORTS;
	sw->requesters = p->def.requesters;
	sw->reserved = p->def.reserved;
	sw->gen = p->def.gen;
	sw->width = p->def.width;
	rc = link_params(p, &o, K_SW_GEN, K_SW_WIDTH, K_SW_LATENCY, &sw->gen,
			 &sw->width, &sw->latency_ns);
	if (rc)
		return rc;
	if (o.tok[K_SW_MULTICAST]) {
		rc = opt_num(p, &o, K_SW_MULTICAST, 0, UINT64_MAX, &v);
		if (rc)
			return rc;
		if (v > SIO_MAX_MCAST - mcast_groups(t))
			return fail(p, -E2BIG,
				    "more than %d multicast groups in all: '%s'",
				    SIO_MAX_MCAST, o.tok[K_SW_MULTICAST]);
		sw->multicast = (u32)v;
	}
	if (o.tok[K_PORTS]) {
		rc = opt_num(p, &o, K_PORTS, 0, UINT64_MAX, &v);
		if (rc)
			return rc;
		if (v < MIN_PORTS || v > SIO_MAX_SWITCH_PORTS)
			return fail(p, -EINVAL, "ports must be from 2 to %d: '%s'",
				    SIO_MAX_SWITCH_PORTS, o.tok[K_PORTS]);
		sw->ports = (u32)v;
	}
	if (o.tok[K_SW_REQUESTERS]) {
		rc = opt_num(p, &o, K_SW_REQUESTERS, 0, UINT64_MAX, &v);
		if (rc)
			return rc;
		if (v < 1 || v > MAX_REQUESTERS)
			return fail(p, -EINVAL,
				    "requesters must be from 1 to 64: '%s'",
				    o.tok[K_SW_REQUESTERS]);
		sw->requesters = (u32)v;
	}
	if (o.tok[K_SW_RESERVED]) {
		rc = opt_num(p, &o, K_SW_RESERVED, 0, MAX_REQUESTERS, &v);
		if (rc)
			return rc;
		sw->reserved = (u32)v;
	}
	if (sw->reserved >= sw->requesters) {
		const char *bad = o.tok[K_SW_RESERVED];

		if (!bad)
			bad = o.tok[K_SW_REQUESTERS] ? o.tok[K_SW_REQUESTERS]
						     : tok[1];
		return fail(p, -EINVAL,
			    "reserved must be below requesters (%u): '%s'",
			    sw->requesters, bad);
	}
	memcpy(sw->name, tok[1], strlen(tok[1]));
	p->switch_line[t->nswitches] = p->line;
	t->nswitches++;
	return 0;
}

static int p_cascade(struct parser *p, char **tok, int n)
{
	struct sio_topo_switch *a, *b;
	u32 sa, pa, sb, pb;
	int rc;

	if (n != 3)
		return fail(p, -EINVAL,
			    "cascade needs two SWITCH:PORT ends: '%s'",
			    tok[n - 1]);
	rc = switch_port(p, tok[1], tok[1], &sa, &pa);
	if (!rc)
		rc = switch_port(p, tok[2], tok[2], &sb, &pb);
	if (rc)
		return rc;
	if (sa == sb)
		return fail(p, -EINVAL, "cascade joins a switch to itself: '%s'",
			    tok[2]);
	a = &p->t->switches[sa];
	b = &p->t->switches[sb];
	a->peer_sw[pa] = (u8)(sb + 1);
	a->peer_port[pa] = (u8)pb;
	b->peer_sw[pb] = (u8)(sa + 1);
	b->peer_port[pb] = (u8)pa;
	p->port_used[sa] |= 1u << pa;
	p->port_used[sb] |= 1u << pb;
	return 0;
}

static int p_adapter(struct parser *p, char **tok, int n)
{
	struct sio_topology *t = p->t;
	struct sio_topo_adapter *a;
	struct ntb_params np = p->def;
	struct opts o;
	u32 i, count = 0, sw = 0, port = 0;
	int node, rc;

	if (n < 3)
		return fail(p, -EINVAL, "adapter needs a node and a name: '%s'",
			    tok[n - 1]);
	node = find_node(t, tok[1], strlen(tok[1]));
	if (node < 0)
		return fail(p, -EINVAL, "unknown node (define it first): '%s'",
			    tok[1]);
	if (!name_ok(tok[2], strlen(tok[2])))
		return fail(p, -EINVAL,
			    "bad adapter name (a-z 0-9 _ -, at most 31): '%s'",
			    tok[2]);
	for (i = 0; i < t->nadapters; i++) {
		if (t->adapters[i].node != (u32)node)
			continue;
		if (!strcmp(t->adapters[i].name, tok[2]))
			return fail(p, -EINVAL, "duplicate adapter '%s' on node '%s'",
				    tok[2], tok[1]);
		count++;
	}
	if (count == SIO_MAX_ADAPTERS)
		return fail(p, -E2BIG, "more than %d adapters on node '%s': '%s'",
			    SIO_MAX_ADAPTERS, tok[1], tok[2]);
	rc = split_opts(p, tok, n, 3, "adapter", adapter_keys, &o);
	if (rc)
		return rc;
	if (!o.tok[K_PEERS] && !o.tok[K_SWITCH])
		return fail(p, -EINVAL, "adapter needs peers=: '%s'", tok[2]);
	if (o.tok[K_PEERS] && o.tok[K_SWITCH])
		return fail(p, -EINVAL, "adapter takes peers= or switch=, not both: '%s'",
			    o.tok[K_SWITCH]);
	if (o.tok[K_PEERS])
		rc = peers_syntax(p, o.tok[K_PEERS], o.val[K_PEERS]);
	else
		rc = switch_port(p, o.tok[K_SWITCH], o.val[K_SWITCH], &sw, &port);
	if (!rc)
		rc = ntb_params(p, &o, &np);
	if (rc)
		return rc;
	a = grow(t->adapters, &p->cap_adapters, t->nadapters, sizeof(*a));
	if (!a)
		return nomem(p);
	t->adapters = a;
	a = &t->adapters[t->nadapters];
	memset(a, 0, sizeof(*a));
	memcpy(a->name, tok[2], strlen(tok[2]));
	a->node = (u32)node;
	a->window = np.window;
	a->luts = np.luts;
	a->requesters = np.requesters;
	a->reserved = np.reserved;
	a->share = np.share;
	a->gen = np.gen;
	a->width = np.width;
	a->latency_ns = np.latency;
	if (o.tok[K_SWITCH]) {
		a->sw = sw + 1;
		a->port = port;
		p->port_used[sw] |= 1u << port;
	}
	p->peers[t->nadapters].tok = o.tok[K_PEERS];
	p->peers[t->nadapters].line = p->line;
	t->nadapters++;
	return 0;
}

/* bar<idx>=SIZE[,64][,prefetch] */
static int parse_bar(struct parser *p, const char *tok, const char *val,
		     struct sio_topo_bar *bar)
{
	const char *s = val, *c = strchr(s, ',');
	size_t len = c ? (size_t)(c - s) : strlen(s);
	int rc;

	rc = get_num(p, tok, s, len, 1, UINT64_MAX, &bar->size);
	if (rc)
		return rc;
	if (!is_pow2(bar->size) || bar->size < MIN_BAR || bar->size > MAX_BAR)
		return fail(p, -EINVAL,
			    "BAR size must be a power of two from 4K to 1024G: '%s'",
			    tok);
	while (c) {
		u32 flag;

		s = c + 1;
		c = strchr(s, ',');
		len = c ? (size_t)(c - s) : strlen(s);
		if (len == 2 && !memcmp(s, "64", 2))
			flag = SIO_BAR_MEM64;
		else if (len == 8 && !memcmp(s, "prefetch", 8))
			flag = SIO_BAR_PREFETCH;
		else
			return fail(p, -EINVAL, "unknown BAR flag '%.*s' in '%s'",
				    (int)len, s, tok);
		if (bar->flags & flag)
			return fail(p, -EINVAL, "BAR flag '%.*s' given twice: '%s'",
				    (int)len, s, tok);
		bar->flags |= flag;
	}
	return 0;
}

/* bar0..bar5 (or vfbar0..vfbar5) of o from key first on, into bar[]. */
static int parse_bars(struct parser *p, const struct opts *o, int first,
		      struct sio_topo_bar *bar)
{
	u32 b;
	int rc;

	for (b = 0; b < SIO_MAX_BARS; b++) {
		if (!o->tok[first + b])
			continue;
		rc = parse_bar(p, o->tok[first + b], o->val[first + b], &bar[b]);
		if (rc)
			return rc;
	}
	for (b = 0; b < SIO_MAX_BARS; b++) {
		if (!(bar[b].flags & SIO_BAR_MEM64))
			continue;
		if (b + 1 == SIO_MAX_BARS)
			return fail(p, -EINVAL,
				    "a 64-bit BAR takes the next one too, bar%u is the last: '%s'",
				    b, o->tok[first + b]);
		if (o->tok[first + b + 1])
			return fail(p, -EINVAL,
				    "bar%u is the upper half of 64-bit bar%u: '%s'",
				    b + 1, b, o->tok[first + b + 1]);
	}
	return 0;
}

/* What sriov=, vfdevice= and vfbar<N>= ask for. */
struct vf_spec {
	u32 count;
	u64 device;		/* ~0: the PF's */
	struct sio_topo_bar bar[SIO_MAX_BARS];
};

static int parse_sriov(struct parser *p, const struct opts *o, u32 config,
		       struct vf_spec *vf)
{
	u64 count = 0;
	int rc, k;

	memset(vf, 0, sizeof(*vf));
	vf->device = ~0ull;
	if (!o->tok[K_SRIOV]) {
		for (k = K_VFDEVICE; k < K_VFBAR0 + SIO_MAX_BARS; k++)
			if (o->tok[k])
				return fail(p, -EINVAL,
					    "%s= without sriov=: '%s'",
					    device_keys[k], o->tok[k]);
		return 0;
	}
	rc = opt_num(p, o, K_SRIOV, 0, SIO_SRIOV_MAX_VFS, &count);
	if (rc)
		return rc;
	if (!count)
		return fail(p, -EINVAL, "sriov= wants 1 to %u VFs: '%s'",
			    SIO_SRIOV_MAX_VFS, o->tok[K_SRIOV]);
	if (config != 4096)
		return fail(p, -EINVAL,
			    "sriov= needs config=4096 (the SR-IOV capability is an extended one): '%s'",
			    o->tok[K_SRIOV]);
	vf->count = (u32)count;
	if (o->tok[K_VFDEVICE]) {
		rc = opt_num(p, o, K_VFDEVICE, 0, 0xffff, &vf->device);
		if (rc)
			return rc;
	}
	rc = parse_bars(p, o, K_VFBAR0, vf->bar);
	if (rc)
		return rc;
	for (k = 0; k < SIO_MAX_BARS; k++)
		if (vf->bar[k].size)
			return 0;
	vf->bar[0].size = 16 << 10;	/* no vfbar<N>=: one 16K BAR */
	return 0;
}

/*
 * The VFs of devices[pf], right after it: <pf>v<k>, routing id PF + 1 + k
 * (First VF Offset 1, VF Stride 1), absent until sriov_numvfs enables them.
 */
static int add_vfs(struct parser *p, u32 pf, const struct vf_spec *vf)
{
	struct sio_topology *t = p->t;
	char name[SIO_TOPO_NAME], bdf[16];
	u32 k, rid;

	memcpy(name, t->devices[pf].name, sizeof(name));
	memcpy(bdf, t->devices[pf].bdf, sizeof(bdf));
	/* dddd:bb:dd.f, checked by bdf_parse; the parser stands alone (the
	 * topology fuzzer links no core), so not sio_bdf_to_rid() */
	rid = (u32)(sio_digit_value(bdf[5]) << 12 | sio_digit_value(bdf[6]) << 8 |
		    (sio_digit_value(bdf[8]) * 16 + sio_digit_value(bdf[9])) << 3 |
		    sio_digit_value(bdf[11]));
	for (k = 0; k < vf->count; k++) {
		struct sio_topo_device *d, *f;
		u32 r = rid + 1 + k;

		if (t->ndevices == SIO_TOPO_MAX_DEVICES)
			return fail(p, -E2BIG, "more than %u devices with the VFs of '%s'",
				    SIO_TOPO_MAX_DEVICES, name);
		if (r > 0xffff)
			return fail(p, -EINVAL,
				    "VF %u of '%s' would need a routing id past bus ff",
				    k, name);
		d = grow(t->devices, &p->cap_devices, t->ndevices, sizeof(*d));
		if (!d)
			return nomem(p);
		t->devices = d;
		f = &t->devices[pf];
		d = &t->devices[t->ndevices];
		*d = *f;
		if (snprintf(d->name, sizeof(d->name), "%sv%u", name, k) >=
		    (int)sizeof(d->name))
			return fail(p, -EINVAL, "VF names of '%s' are too long",
				    name);
		snprintf(d->bdf, sizeof(d->bdf), "%.4s:%02x:%02x.%x", bdf,
			 r >> 8, (r >> 3) & 0x1f, r & 7);
		if (vf->device != ~0ull)
			d->device = (u16)vf->device;
		d->model = SIO_MODEL_GENERIC;
		memcpy(d->bar, vf->bar, sizeof(d->bar));
		d->sriov_total = 0;
		d->vf = 1;
		d->pf = pf;
		if (hset_has(&p->names, t->devices, d) ||
		    hset_has(&p->bdfs, t->devices, d))
			return fail(p, -EINVAL,
				    "VF %u of '%s' (%s, %s) clashes with another device",
				    k, name, d->name, d->bdf);
		if (hset_add(&p->names, t->devices, t->ndevices) ||
		    hset_add(&p->bdfs, t->devices, t->ndevices))
			return nomem(p);
		t->ndevices++;
	}
	return 0;
}

/* A device's config= (256 or 4096, default 4096) and model= options. */
static int device_config_model(struct parser *p, struct opts *o, u64 *config,
			       u32 *model)
{
	static const char *const models[] = {
		[SIO_MODEL_GENERIC] = "generic",
		[SIO_MODEL_NVME] = "nvme",
		[SIO_MODEL_DMA] = "dma",
	};
	const u32 nmodels = sizeof(models) / sizeof(models[0]);
	int rc;

	*config = 4096;
	*model = SIO_MODEL_GENERIC;
	if (o->tok[K_CONFIG]) {
		rc = opt_num(p, o, K_CONFIG, 0, UINT64_MAX, config);
		if (rc)
			return rc;
		if (*config != 256 && *config != 4096)
			return fail(p, -EINVAL, "config must be 256 or 4096: '%s'",
				    o->tok[K_CONFIG]);
	}
	if (!o->tok[K_MODEL])
		return 0;
	for (*model = 0; *model < nmodels; (*model)++)
		if (!strcmp(o->val[K_MODEL], models[*model]))
			return 0;
	return fail(p, -EINVAL, "unknown model (generic, nvme or dma): '%s'",
		    o->tok[K_MODEL]);
}

static int p_device(struct parser *p, char **tok, int n)
{
	static const struct { int key; u64 max; } ids[] = {
		{ K_VENDOR, 0xffff }, { K_DEVICE, 0xffff }, { K_CLASS, 0xffffff },
		{ K_SVENDOR, 0xffff }, { K_SDEVICE, 0xffff }, { K_REVISION, 0xff },
	};
	struct sio_topology *t = p->t;
	struct sio_topo_device *d;
	struct vf_spec vf;
	struct opts o;
	u64 v[6] = { 0 }, config;
	u32 model;
	int node, rc, k;
	size_t i;

	if (n < 3)
		return fail(p, -EINVAL, "device needs a node and a name: '%s'",
			    tok[n - 1]);
	node = find_node(t, tok[1], strlen(tok[1]));
	if (node < 0)
		return fail(p, -EINVAL, "unknown node (define it first): '%s'",
			    tok[1]);
	if (!dev_name_ok(tok[2]))
		return fail(p, -EINVAL,
			    "bad device name (nvme, gpu, nic or acc and a number): '%s'",
			    tok[2]);
	if (t->ndevices == SIO_TOPO_MAX_DEVICES)
		return fail(p, -E2BIG, "more than %u devices: '%s'",
			    SIO_TOPO_MAX_DEVICES, tok[2]);
	/* The new device is built in place, past the end until accepted. */
	d = grow(t->devices, &p->cap_devices, t->ndevices, sizeof(*d));
	if (!d)
		return nomem(p);
	t->devices = d;
	d = &t->devices[t->ndevices];
	memset(d, 0, sizeof(*d));
	memcpy(d->name, tok[2], strlen(tok[2]));
	d->node = (u32)node;
	if (hset_has(&p->names, t->devices, d))
		return fail(p, -EINVAL, "duplicate device '%s'", tok[2]);
	rc = split_opts(p, tok, n, 3, "device", device_keys, &o);
	if (rc)
		return rc;
	for (k = K_BDF; k <= K_CLASS; k++)
		if (!o.tok[k])
			return fail(p, -EINVAL, "device needs %s=: '%s'",
				    device_keys[k], tok[2]);
	if (!bdf_parse(o.val[K_BDF], d->bdf))
		return fail(p, -EINVAL,
			    "bad PCI address (dddd:bb:dd.f, device below 0x20, function below 8): '%s'",
			    o.tok[K_BDF]);
	if (hset_has(&p->bdfs, t->devices, d))
		return fail(p, -EINVAL, "duplicate bdf on node '%s': '%s'",
			    tok[1], o.tok[K_BDF]);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (!o.tok[ids[i].key])
			continue;
		rc = opt_num(p, &o, ids[i].key, 0, ids[i].max, &v[i]);
		if (rc)
			return rc;
	}
	rc = device_config_model(p, &o, &config, &model);
	if (rc)
		return rc;
	rc = parse_bars(p, &o, K_BAR0, d->bar);
	if (!rc)
		rc = parse_sriov(p, &o, (u32)config, &vf);
	if (rc)
		return rc;
	d->vendor = (u16)v[0];
	d->device = (u16)v[1];
	d->class_code = (u32)v[2];
	d->subsys_vendor = o.tok[K_SVENDOR] ? (u16)v[3] : d->vendor;
	d->subsys_device = o.tok[K_SDEVICE] ? (u16)v[4] : d->device;
	d->revision = o.tok[K_REVISION] ? (u8)v[5] : 1;
	d->config_size = (u32)config;
	d->model = model;
	d->sriov_total = (u16)vf.count;
	if (hset_add(&p->names, t->devices, t->ndevices) ||
	    hset_add(&p->bdfs, t->devices, t->ndevices))
		return nomem(p);
	t->ndevices++;
	return vf.count ? add_vfs(p, t->ndevices - 1, &vf) : 0;
}

static int parse_line(struct parser *p, char *s)
{
	char *tok[MAX_FIELDS], *save = NULL, *hash = strchr(s, '#'), *w;
	int n = 0;

	if (hash)
		*hash = '\0';
	for (w = strtok_r(s, " \t\r\v\f", &save); w;
	     w = strtok_r(NULL, " \t\r\v\f", &save)) {
		if (n == MAX_FIELDS)
			return fail(p, -EINVAL, "too many fields (more than %d): '%s'",
				    MAX_FIELDS, w);
		tok[n++] = w;
	}
	if (!n)
		return 0;
	if (!strcmp(tok[0], "fabric"))
		return p_fabric(p, tok, n);
	if (!strcmp(tok[0], "node"))
		return p_node(p, tok, n);
	if (!strcmp(tok[0], "adapter"))
		return p_adapter(p, tok, n);
	if (!strcmp(tok[0], "switch"))
		return p_switch(p, tok, n);
	if (!strcmp(tok[0], "cascade"))
		return p_cascade(p, tok, n);
	if (!strcmp(tok[0], "device"))
		return p_device(p, tok, n);
	return fail(p, -EINVAL, "unknown keyword '%s'", tok[0]);
}

/* Switches in hops from switch `from` over cascades; 0 = not reached. */
static void switch_depths(const struct sio_topology *t, u32 from, u32 *depth)
{
	u32 queue[SIO_MAX_SWITCHES], head = 0, tail = 0, s, q;

	memset(depth, 0, SIO_MAX_SWITCHES * sizeof(*depth));
	depth[from] = 1;
	queue[tail++] = from;
	while (head < tail) {
		s = queue[head++];
		for (q = 0; q < t->switches[s].ports; q++) {
			u32 far = t->switches[s].peer_sw[q];

			if (far && !depth[far - 1]) {
				depth[far - 1] = depth[s] + 1;
				queue[tail++] = far - 1;
			}
		}
	}
}

/* The nodes a switch-cabled adapter reaches: every other node cabled to
 * a switch connected to its own. */
static u64 switch_peers(struct parser *p, const struct sio_topo_adapter *a)
{
	const struct sio_topology *t = p->t;
	u32 depth[SIO_MAX_SWITCHES], i;
	u64 peers = 0;

	switch_depths(t, a->sw - 1, depth);
	for (i = 0; i < t->nadapters; i++) {
		const struct sio_topo_adapter *b = &t->adapters[i];

		if (b->sw && depth[b->sw - 1] && b->node != a->node)
			peers |= 1ull << b->node;
	}
	return peers;
}

/* A path through more switches than the core follows would be lost. */
static int check_hops(struct parser *p)
{
	const struct sio_topology *t = p->t;
	u32 depth[SIO_MAX_SWITCHES], s, q;

	for (s = 0; s < t->nswitches; s++) {
		switch_depths(t, s, depth);
		for (q = 0; q < t->nswitches; q++) {
			if (depth[q] <= SIO_MAX_HOPS)
				continue;
			p->line = p->switch_line[q];
			return fail(p, -EINVAL,
				    "switch '%s' is %u switches away from '%s' (at most %d on a path): '%s'",
				    t->switches[q].name, depth[q],
				    t->switches[s].name, SIO_MAX_HOPS,
				    t->switches[q].name);
		}
	}
	return 0;
}

static int resolve_peers(struct parser *p)
{
	struct sio_topology *t = p->t;
	u32 i;

	for (i = 0; i < t->nadapters; i++) {
		struct sio_topo_adapter *a = &t->adapters[i];
		const char *tok = p->peers[i].tok, *s;

		p->line = p->peers[i].line;
		if (!tok) {
			a->peers = switch_peers(p, a);
			if (!a->peers)
				return fail(p, -EINVAL,
					    "adapter '%s' reaches no other node through its switch",
					    a->name);
			continue;
		}
		s = strchr(tok, '=') + 1;
		if (!strcmp(s, "all")) {
			a->peers = sio_all_nodes(t->nnodes) &
				   ~(1ull << a->node);
		} else {
			for (;;) {
				const char *c = strchr(s, ',');
				size_t len = c ? (size_t)(c - s) : strlen(s);
				int node = find_node(t, s, len);

				if (node < 0)
					return fail(p, -EINVAL,
						    "unknown peer '%.*s': '%s'",
						    (int)len, s, tok);
				if ((u32)node == a->node)
					return fail(p, -EINVAL,
						    "adapter lists its own node '%.*s': '%s'",
						    (int)len, s, tok);
				if (a->peers & (1ull << node))
					return fail(p, -EINVAL,
						    "peer '%.*s' listed twice: '%s'",
						    (int)len, s, tok);
				a->peers |= 1ull << node;
				if (!c)
					break;
				s = c + 1;
			}
		}
		if (!a->peers)
			return fail(p, -EINVAL,
				    "adapter '%s' reaches no other node: '%s'",
				    a->name, tok);
	}
	return 0;
}

static int finish(struct parser *p)
{
	struct sio_topology *t = p->t;
	u32 nd, a;
	int rc;

	if (!t->nnodes)
		return fail(p, -EINVAL, "no node defined");
	rc = check_hops(p);
	if (!rc)
		rc = resolve_peers(p);
	if (rc)
		return rc;
	for (nd = 0; t->nnodes > 1 && nd < t->nnodes; nd++) {
		for (a = 0; a < t->nadapters; a++)
			if (t->adapters[a].node == nd)
				break;
		if (a == t->nadapters) {
			p->line = p->node_line[nd];
			return fail(p, -EINVAL,
				    "node has no adapter (%u nodes): '%s'",
				    t->nnodes, t->nodes[nd].name);
		}
	}
	return 0;
}

void sio_topo_free(struct sio_topology *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->adapters);
	free(t->devices);
	free(t->switches);
	memset(t, 0, sizeof(*t));
}

int sio_topo_parse(const char *text, size_t len, struct sio_topology *out,
		   char *err, size_t errlen)
{
	struct parser *p;
	const char *nul;
	char *buf, *s;
	int rc = 0, last_empty = 0;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->t = out;
	p->err = err;
	p->errlen = errlen;
	p->def.window = DEF_WINDOW;
	p->def.luts = DEF_LUTS;
	p->def.requesters = DEF_REQUESTERS;
	p->def.reserved = DEF_RESERVED;
	p->names.hash = name_hash;
	p->names.eq = name_eq;
	p->bdfs.hash = bdf_hash;
	p->bdfs.eq = bdf_eq;
	if (!text)
		len = 0;
	nul = len ? memchr(text, '\0', len) : NULL;
	if (nul) {
		for (p->line = 1; text < nul; text++)
			p->line += *text == '\n';
		rc = fail(p, -EINVAL, "NUL byte in the text");
		goto out;
	}
	buf = malloc(len + 1);
	if (!buf) {
		rc = nomem(p);
		goto out;
	}
	if (len)
		memcpy(buf, text, len);
	buf[len] = '\0';
	for (s = buf;;) {
		char *nl = strchr(s, '\n');

		if (nl)
			*nl = '\0';
		p->line++;
		/* End-of-file checks name the last line, not the empty one
		 * after a final newline. */
		last_empty = !nl && !*s && p->line > 1;
		rc = parse_line(p, s);
		if (rc || !nl)
			break;
		s = nl + 1;
	}
	if (!rc) {
		p->line -= last_empty;
		rc = finish(p);
	}
	free(buf);
out:
	free(p->names.slot);
	free(p->bdfs.slot);
	free(p);
	if (rc)
		sio_topo_free(out);
	return rc;
}

int sio_topo_load(const char *path, struct sio_topology *out, char *err,
		  size_t errlen)
{
	char *text = NULL;
	size_t cap = 0, len = 0;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto io_error;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nt;

			if (cap > SIO_TOPO_MAX_FILE) {
				close(fd);
				free(text);
				if (err && errlen)
					snprintf(err, errlen, "file larger than %uM",
						 SIO_TOPO_MAX_FILE >> 20);
				return -E2BIG;
			}
			cap = cap ? cap * 2 : 16384;
			if (cap > SIO_TOPO_MAX_FILE + 1)
				cap = SIO_TOPO_MAX_FILE + 1;	/* one byte too many */
			nt = realloc(text, cap);
			if (!nt) {
				close(fd);
				free(text);
				if (err && errlen)
					snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			text = nt;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errno;
			close(fd);
			free(text);
			errno = rc;
			goto io_error;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	rc = sio_topo_parse(text, len, out, err, errlen);
	free(text);
	return rc;

io_error:
	rc = errno;
	if (err && errlen)
		snprintf(err, errlen, "%s", strerror(rc));
	return -rc;
}

/* --- the built-in default, also contrib/topology/default.conf ----------- */

struct default_dev {
	const char *name;
	u32 node, bus;
	u16 vendor, device;
	u32 class_code;
	u8 revision;
	u32 config_size, model;
	struct sio_topo_bar bar[SIO_MAX_BARS];
};

#define KiB(x) ((u64)(x) << 10)
#define MiB(x) ((u64)(x) << 20)
#define NVME 0x1b36, 0x0010, 0x010802, 0x02, 4096, SIO_MODEL_NVME, \
	{ [0] = { KiB(256), SIO_BAR_MEM64 } }
#define NIC 0x8086, 0x10d3, 0x020000, 0x01, 256, SIO_MODEL_GENERIC, \
	{ [0] = { KiB(128), 0 }, [2] = { KiB(16), 0 } }
#define GPU 0x10de, 0x1eb8, 0x030200, 0x01, 4096, SIO_MODEL_GENERIC, \
	{ [0] = { MiB(16), 0 }, [1] = { MiB(256), SIO_BAR_MEM64 | SIO_BAR_PREFETCH } }
#define ACC 0x1234, 0x11e8, 0x120000, 0x01, 4096, SIO_MODEL_DMA, \
	{ [0] = { MiB(1), 0 }, [2] = { MiB(64), SIO_BAR_MEM64 | SIO_BAR_PREFETCH } }

static const struct default_dev default_devs[] = {
	{ "nvme0", 0, 1, NVME },
	{ "nic0", 0, 2, NIC },
	{ "nvme1", 1, 1, NVME },
	{ "gpu0", 1, 2, GPU },
	{ "acc0", 2, 1, ACC },
	{ "nvme2", 2, 2, NVME },
	{ "acc1", 3, 1, ACC },
	{ "nic1", 3, 2, NIC },
};

#define DEFAULT_NODES 4u
#define NDEFAULT_DEVS (sizeof(default_devs) / sizeof(default_devs[0]))

int sio_topo_default(struct sio_topology *out)
{
	u32 i;

	memset(out, 0, sizeof(*out));
	out->nodes = calloc(DEFAULT_NODES, sizeof(*out->nodes));
	out->adapters = calloc(DEFAULT_NODES, sizeof(*out->adapters));
	out->devices = calloc(NDEFAULT_DEVS, sizeof(*out->devices));
	if (!out->nodes || !out->adapters || !out->devices) {
		sio_topo_free(out);
		return -ENOMEM;
	}
	out->nnodes = out->nadapters = DEFAULT_NODES;
	out->ndevices = NDEFAULT_DEVS;
	for (i = 0; i < DEFAULT_NODES; i++) {
		struct sio_topo_adapter *a = &out->adapters[i];

		snprintf(out->nodes[i].name, SIO_TOPO_NAME, "host%u", i);
		out->nodes[i].id = i;
		out->nodes[i].ram = DEF_RAM;
		snprintf(a->name, SIO_TOPO_NAME, "ntb0");
		a->node = i;
		a->peers = ((1ull << DEFAULT_NODES) - 1) & ~(1ull << i);
		a->window = DEF_WINDOW;
		a->luts = DEF_LUTS;
		a->requesters = DEF_REQUESTERS;
		a->reserved = DEF_RESERVED;
	}
	for (i = 0; i < NDEFAULT_DEVS; i++) {
		const struct default_dev *s = &default_devs[i];
		struct sio_topo_device *d = &out->devices[i];

		snprintf(d->name, SIO_TOPO_NAME, "%s", s->name);
		d->node = s->node;
		snprintf(d->bdf, sizeof(d->bdf), "0000:%02x:00.0", s->bus);
		d->vendor = d->subsys_vendor = s->vendor;
		d->device = d->subsys_device = s->device;
		d->class_code = s->class_code;
		d->revision = s->revision;
		d->config_size = s->config_size;
		d->model = s->model;
		memcpy(d->bar, s->bar, sizeof(d->bar));
	}
	return 0;
}

/* --- generated clusters for scale benchmarks ------------------------------ */

int sio_topo_generate(struct sio_topology *out, unsigned nodes,
		      unsigned functions_per_node)
{
	u32 n, f, k = 0;
	u64 total = (u64)nodes * functions_per_node;

	memset(out, 0, sizeof(*out));
	if (!nodes)
		return -EINVAL;
	if (nodes > SIO_MAX_NODES || functions_per_node > GEN_MAX_FUNCTIONS ||
	    total > SIO_TOPO_MAX_DEVICES)
		return -E2BIG;
	/* A single node needs no adapter, and an adapter needs a peer. */
	out->nadapters = nodes > 1 ? nodes : 0;
	out->nodes = calloc(nodes, sizeof(*out->nodes));
	out->adapters = out->nadapters ? calloc(nodes, sizeof(*out->adapters))
				       : NULL;
	out->devices = total ? calloc((size_t)total, sizeof(*out->devices))
			     : NULL;
	if (!out->nodes || (out->nadapters && !out->adapters) ||
	    (total && !out->devices)) {
		sio_topo_free(out);
		return -ENOMEM;
	}
	out->nnodes = nodes;
	out->ndevices = (u32)total;
	for (n = 0; n < nodes; n++) {
		snprintf(out->nodes[n].name, SIO_TOPO_NAME, "gen%u", n);
		out->nodes[n].id = n;
		out->nodes[n].ram = DEF_RAM;
		if (out->nadapters) {
			struct sio_topo_adapter *a = &out->adapters[n];

			snprintf(a->name, SIO_TOPO_NAME, "ntb0");
			a->node = n;
			a->peers = sio_all_nodes(nodes) & ~(1ull << n);
			a->window = DEF_WINDOW;
			a->luts = DEF_LUTS;
			a->requesters = DEF_REQUESTERS;
			a->reserved = DEF_RESERVED;
		}
		for (f = 0; f < functions_per_node; f++, k++) {
			struct sio_topo_device *d = &out->devices[k];

			snprintf(d->name, SIO_TOPO_NAME, "nic%u", k);
			d->node = n;
			/* 256 functions a bus (32 slots x 8), buses 01..ff
			 * (f < GEN_MAX_FUNCTIONS); the u8 casts tell the
			 * compiler so, else -O1 warns of a truncated bdf. */
			snprintf(d->bdf, sizeof(d->bdf), "0000:%02x:%02x.%u",
				 (u8)(1 + f / 256), (u8)(f / 8 % 32), (u8)(f % 8));
			d->vendor = d->subsys_vendor = 0x8086;
			d->device = d->subsys_device = 0x10d3;
			d->class_code = 0x020000;
			d->revision = 1;
			d->config_size = 256;
			d->model = SIO_MODEL_GENERIC;
			d->bar[0].size = KiB(16);
		}
	}
	return 0;
}
