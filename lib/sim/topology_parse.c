// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parser for smartio.conf(5).  Line oriented:
 *   fabric  luts=N requesters=N reserved=N window=SIZE
 *   node    NAME id=N [ram=SIZE]
 *   adapter NODE NAME peers=NODE,NODE|all [window=] [luts=] [requesters=] [reserved=]
 *   device  NODE NAME bdf=... vendor=... device=... class=... [bar<N>=SIZE[,64][,prefetch]] ...
 * Everything is checked; the first error is reported with its line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology_parse.h"

/* Marks the upper half of a 64-bit BAR while a device line is parsed. */
#define BAR_TAKEN 0x80000000u

struct defaults {
	u64 window;
	u32 luts, requesters, reserved;
};

struct parser {
	struct sio_topology *t;
	struct defaults def;
	int line;
	int saw_adapter;
	char *err;
	size_t errlen;
	/* peers lists resolved at the end, when every node is known */
	char (*peers)[512];
	int *peer_line;
};

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->errlen, "line %d: ", p->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

/* Decimal or 0x hex, optional k/K/M/G suffix when sizes are allowed. */
static int parse_num(const char *s, int size_suffix, u64 *out)
{
	u64 v = 0, mul = 1;
	int base = 10, digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v > (~0ull - (u64)d) / (u64)base)
			return -ERANGE;
		v = v * (u64)base + (u64)d;
		digits++;
	}
	if (!digits)
		return -EINVAL;
	if (*s && size_suffix && !s[1]) {
		switch (*s) {
		case 'k': case 'K': mul = 1ull << 10; break;
		case 'M': mul = 1ull << 20; break;
		case 'G': mul = 1ull << 30; break;
		case 'T': mul = 1ull << 40; break;
		default: return -EINVAL;
		}
		s++;
	}
	if (*s)
		return -EINVAL;
	if (v > ~0ull / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

static int name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n >= SIO_TOPO_NAME)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static int dev_name_ok(const char *s)
{
	static const char *const classes[] = { "nvme", "gpu", "nic", "acc" };
	size_t i, n;

	if (strlen(s) >= SIO_TOPO_NAME)
		return 0;
	for (i = 0; i < 4; i++) {
		n = strlen(classes[i]);
		if (!strncmp(s, classes[i], n) && s[n]) {
			const char *q = s + n;

			if (*q == '0' && q[1])
				return 0;
			for (; *q; q++)
				if (*q < '0' || *q > '9')
					return 0;
			return 1;
		}
	}
	return 0;
}

static int find_node(const struct sio_topology *t, const char *name)
{
	u32 i;

	for (i = 0; i < t->nnodes; i++)
		if (!strcmp(t->nodes[i].name, name))
			return (int)i;
	return -1;
}

static void *grow(void *arr, u32 count, size_t elem)
{
	/* Grows by doubling at powers of two; new elements are zeroed. */
	if (count && (count & (count - 1)))
		return arr;
	arr = realloc(arr, (count ? count * 2 : 4) * elem);
	if (arr)
		memset((char *)arr + count * elem, 0, (count ? count : 4) * elem);
	return arr;
}

/* "key=value" or "key" as written, after kv() split it. */
static int bad_opt(struct parser *p, const char *key, const char *val)
{
	return fail(p, "bad option '%s%s%s'", key, val ? "=" : "", val ? val : "");
}

/* key=value split; returns value or NULL. */
static char *kv(char *tok, const char **key)
{
	char *eq = strchr(tok, '=');

	if (!eq)
		return NULL;
	*eq = '\0';
	*key = tok;
	return eq + 1;
}

static int p_fabric(struct parser *p, char **tok, int n)
{
	int i;

	if (p->saw_adapter)
		return fail(p, "'fabric' must come before any adapter");
	for (i = 1; i < n; i++) {
		const char *key;
		char *val = kv(tok[i], &key);
		u64 v;

		if (!val || parse_num(val, 1, &v))
			return bad_opt(p, tok[i], val);
		if (!strcmp(key, "window"))
			p->def.window = v;
		else if (!strcmp(key, "luts"))
			p->def.luts = (u32)v;
		else if (!strcmp(key, "requesters"))
			p->def.requesters = (u32)v;
		else if (!strcmp(key, "reserved"))
			p->def.reserved = (u32)v;
		else
			return fail(p, "unknown fabric option '%s'", key);
	}
	return 0;
}

static int p_node(struct parser *p, char **tok, int n)
{
	struct sio_topology *t = p->t;
	struct sio_topo_node *nd;
	int i, have_id = 0;
	u32 j;

	if (n < 2 || !name_ok(tok[1]))
		return fail(p, "bad node name '%s'", n < 2 ? "" : tok[1]);
	if (find_node(t, tok[1]) >= 0)
		return fail(p, "duplicate node '%s'", tok[1]);
	if (t->nnodes == SIO_MAX_NODES)
		return fail(p, "more than %d nodes", SIO_MAX_NODES);
	t->nodes = grow(t->nodes, t->nnodes, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	nd = &t->nodes[t->nnodes];
	memset(nd, 0, sizeof(*nd));
	snprintf(nd->name, sizeof(nd->name), "%s", tok[1]);
	nd->ram = 1ull << 30;
	for (i = 2; i < n; i++) {
		const char *key;
		char *val = kv(tok[i], &key);
		u64 v;

		if (!val || parse_num(val, 1, &v))
			return bad_opt(p, tok[i], val);
		if (!strcmp(key, "id")) {
			if (v > 0xffffffffull)
				return fail(p, "id '%s' out of range", val);
			nd->id = (u32)v;
			have_id = 1;
		} else if (!strcmp(key, "ram")) {
			if (v < (1ull << 20))
				return fail(p, "ram '%s' below 1M", val);
			nd->ram = v;
		} else {
			return fail(p, "unknown node option '%s'", key);
		}
	}
	if (!have_id)
		return fail(p, "node '%s' needs id=", tok[1]);
	for (j = 0; j < t->nnodes; j++)
		if (t->nodes[j].id == nd->id)
			return fail(p, "duplicate id %u", nd->id);
	t->nnodes++;
	return 0;
}

static int p_adapter(struct parser *p, char **tok, int n)
{
	struct sio_topology *t = p->t;
	struct sio_topo_adapter *a;
	int node, i, have_peers = 0;
	u32 j, count = 0;

	if (n < 3)
		return fail(p, "adapter needs a node and a name");
	node = find_node(t, tok[1]);
	if (node < 0)
		return fail(p, "unknown node '%s'", tok[1]);
	if (!name_ok(tok[2]))
		return fail(p, "bad adapter name '%s'", tok[2]);
	for (j = 0; j < t->nadapters; j++) {
		if (t->adapters[j].node != (u32)node)
			continue;
		count++;
		if (!strcmp(t->adapters[j].name, tok[2]))
			return fail(p, "duplicate adapter '%s'", tok[2]);
	}
	if (count == SIO_MAX_ADAPTERS)
		return fail(p, "more than %d adapters on '%s'", SIO_MAX_ADAPTERS,
			    tok[1]);
	t->adapters = grow(t->adapters, t->nadapters, sizeof(*t->adapters));
	p->peers = grow(p->peers, t->nadapters, sizeof(*p->peers));
	p->peer_line = grow(p->peer_line, t->nadapters, sizeof(*p->peer_line));
	if (!t->adapters || !p->peers || !p->peer_line)
		return -ENOMEM;
	a = &t->adapters[t->nadapters];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", tok[2]);
	a->node = (u32)node;
	a->window = p->def.window;
	a->luts = p->def.luts;
	a->requesters = p->def.requesters;
	a->reserved = p->def.reserved;
	for (i = 3; i < n; i++) {
		const char *key;
		char *val = kv(tok[i], &key);
		u64 v;

		if (!val)
			return bad_opt(p, tok[i], val);
		if (!strcmp(key, "peers")) {
			if (!*val || strlen(val) >= sizeof(p->peers[0]))
				return fail(p, "bad peers list '%s'", val);
			snprintf(p->peers[t->nadapters], sizeof(p->peers[0]), "%s",
				 val);
			have_peers = 1;
			continue;
		}
		if (parse_num(val, 1, &v))
			return fail(p, "bad value '%s'", val);
		if (!strcmp(key, "window"))
			a->window = v;
		else if (!strcmp(key, "luts"))
			a->luts = v > 0xffffffffull ? 0 : (u32)v;
		else if (!strcmp(key, "requesters"))
			a->requesters = v > 0xffffffffull ? 0 : (u32)v;
		else if (!strcmp(key, "reserved"))
			a->reserved = v > 0xffffffffull ? ~0u : (u32)v;
		else
			return fail(p, "unknown adapter option '%s'", key);
	}
	if (!have_peers)
		return fail(p, "adapter '%s' needs peers=", tok[2]);
	if (!is_pow2(a->window) || a->window < (1ull << 20))
		return fail(p, "window must be a power of two >= 1M");
	if (!is_pow2(a->luts) || a->luts > 4096 || a->window / a->luts < 4096)
		return fail(p, "luts must be a power of two, at most 4096, "
			    "with window/luts >= 4096");
	if (a->requesters < 1 || a->requesters > 64 ||
	    a->reserved >= a->requesters)
		return fail(p, "requesters must be 1..64 and reserved below it");
	p->peer_line[t->nadapters] = p->line;
	t->nadapters++;
	p->saw_adapter = 1;
	return 0;
}

static int parse_bar(struct parser *p, struct sio_topo_device *d, u32 idx,
		     char *val)
{
	char *save = NULL, *part = strtok_r(val, ",", &save);
	u64 size;

	if (!part || parse_num(part, 1, &size))
		return fail(p, "bad size '%s' for bar%u", val, idx);
	if (!is_pow2(size) || size < 4096 || size > (1ull << 40))
		return fail(p, "bar%u size must be a power of two 4K..1T", idx);
	if (d->bar[idx].size || (d->bar[idx].flags & BAR_TAKEN))
		return fail(p, "bar%u given twice or taken by a 64-bit bar", idx);
	d->bar[idx].size = size;
	while ((part = strtok_r(NULL, ",", &save))) {
		if (!strcmp(part, "64"))
			d->bar[idx].flags |= SIO_BAR_MEM64;
		else if (!strcmp(part, "prefetch"))
			d->bar[idx].flags |= SIO_BAR_PREFETCH;
		else
			return fail(p, "bad bar flag '%s'", part);
	}
	if (d->bar[idx].flags & SIO_BAR_MEM64) {
		if (idx >= SIO_MAX_BARS - 1 || d->bar[idx + 1].size)
			return fail(p, "64-bit bar%u needs bar%u free", idx,
				    idx + 1);
		d->bar[idx + 1].flags |= BAR_TAKEN;
	}
	return 0;
}

static int bdf_ok(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;

	return strlen(s) == 12 &&
	       sscanf(s, "%4x:%2x:%2x.%1u%c", &dom, &bus, &dev, &fn, &tail) == 4 &&
	       s[4] == ':' && s[7] == ':' && s[10] == '.' && dev < 32 && fn < 8;
}

static int p_device(struct parser *p, char **tok, int n)
{
	struct sio_topology *t = p->t;
	struct sio_topo_device *d;
	int node, i, got = 0;
	u32 j;

	if (n < 3)
		return fail(p, "device needs a node and a name");
	node = find_node(t, tok[1]);
	if (node < 0)
		return fail(p, "unknown node '%s'", tok[1]);
	if (!dev_name_ok(tok[2]))
		return fail(p, "bad device name '%s' (want nvme|gpu|nic|acc<n>)",
			    tok[2]);
	for (j = 0; j < t->ndevices; j++)
		if (!strcmp(t->devices[j].name, tok[2]))
			return fail(p, "duplicate device '%s'", tok[2]);
	t->devices = grow(t->devices, t->ndevices, sizeof(*t->devices));
	if (!t->devices)
		return -ENOMEM;
	d = &t->devices[t->ndevices];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", tok[2]);
	d->node = (u32)node;
	d->config_size = 4096;
	d->revision = 1;
	for (i = 3; i < n; i++) {
		const char *key;
		char *val = kv(tok[i], &key);
		u64 v = 0;

		if (!val)
			return bad_opt(p, tok[i], val);
		if (!strcmp(key, "bdf")) {
			if (!bdf_ok(val))
				return fail(p, "bad bdf '%s'", val);
			for (j = 0; j < t->ndevices; j++)
				if (t->devices[j].node == (u32)node &&
				    !strcmp(t->devices[j].bdf, val))
					return fail(p, "duplicate bdf '%s'", val);
			snprintf(d->bdf, sizeof(d->bdf), "%s", val);
			got |= 1;
			continue;
		}
		if (!strcmp(key, "model")) {
			if (!strcmp(val, "generic"))
				d->model = SIO_MODEL_GENERIC;
			else if (!strcmp(val, "nvme"))
				d->model = SIO_MODEL_NVME;
			else if (!strcmp(val, "dma"))
				d->model = SIO_MODEL_DMA;
			else
				return fail(p, "unknown model '%s'", val);
			continue;
		}
		if (!strncmp(key, "bar", 3) && key[3] >= '0' && key[3] <= '5' &&
		    !key[4]) {
			int err = parse_bar(p, d, (u32)(key[3] - '0'), val);

			if (err)
				return err;
			continue;
		}
		if (parse_num(val, 0, &v))
			return fail(p, "bad value '%s'", val);
		if (!strcmp(key, "vendor") && v <= 0xffff) {
			d->vendor = (u16)v;
			got |= 2;
		} else if (!strcmp(key, "device") && v <= 0xffff) {
			d->device = (u16)v;
			got |= 4;
		} else if (!strcmp(key, "class") && v <= 0xffffff) {
			d->class_code = (u32)v;
			got |= 8;
		} else if (!strcmp(key, "subsystem_vendor") && v <= 0xffff) {
			d->subsys_vendor = (u16)v;
		} else if (!strcmp(key, "subsystem_device") && v <= 0xffff) {
			d->subsys_device = (u16)v;
		} else if (!strcmp(key, "revision") && v <= 0xff) {
			d->revision = (u8)v;
		} else if (!strcmp(key, "config") && (v == 256 || v == 4096)) {
			d->config_size = (u32)v;
		} else {
			return fail(p, "bad or out-of-range option '%s=%s'", key,
				    val);
		}
	}
	if (got != 15)
		return fail(p, "device '%s' needs bdf=, vendor=, device=, class=",
			    tok[2]);
	for (j = 0; j < SIO_MAX_BARS; j++)
		d->bar[j].flags &= ~BAR_TAKEN;
	if (!d->subsys_vendor)
		d->subsys_vendor = d->vendor;
	if (!d->subsys_device)
		d->subsys_device = d->device;
	t->ndevices++;
	return 0;
}

static int resolve_peers(struct parser *p)
{
	struct sio_topology *t = p->t;
	u32 a;

	for (a = 0; a < t->nadapters; a++) {
		struct sio_topo_adapter *ad = &t->adapters[a];
		char *save = NULL, *name;

		p->line = p->peer_line[a];
		if (!strcmp(p->peers[a], "all")) {
			ad->peers = (t->nnodes == 64 ? ~0ull :
				     (1ull << t->nnodes) - 1) & ~(1ull << ad->node);
		} else {
			for (name = strtok_r(p->peers[a], ",", &save); name;
			     name = strtok_r(NULL, ",", &save)) {
				int n = find_node(t, name);

				if (n < 0)
					return fail(p, "unknown peer '%s'", name);
				if ((u32)n == ad->node)
					return fail(p, "adapter '%s' lists its own node",
						    ad->name);
				ad->peers |= 1ull << n;
			}
		}
		if (!ad->peers)
			return fail(p, "adapter '%s' reaches no node", ad->name);
	}
	return 0;
}

static int finish(struct parser *p)
{
	struct sio_topology *t = p->t;
	u32 n, a;

	if (!t->nnodes)
		return fail(p, "no node defined");
	for (n = 0; t->nnodes > 1 && n < t->nnodes; n++) {
		for (a = 0; a < t->nadapters; a++)
			if (t->adapters[a].node == n)
				break;
		if (a == t->nadapters)
			return fail(p, "node '%s' has no adapter", t->nodes[n].name);
	}
	return resolve_peers(p);
}

void sio_topo_free(struct sio_topology *t)
{
	free(t->nodes);
	free(t->adapters);
	free(t->devices);
	memset(t, 0, sizeof(*t));
}

int sio_topo_parse(const char *text, size_t len, struct sio_topology *out,
		   char *err, size_t errlen)
{
	struct parser p = { 0 };
	char *buf = malloc(len + 1), *line, *save = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	buf[len] = '\0';
	p.t = out;
	p.err = err;
	p.errlen = errlen;
	p.def.window = 4ull << 30;
	p.def.luts = 256;
	p.def.requesters = 32;
	p.def.reserved = 2;
	if (strlen(buf) != len) {
		rc = fail(&p, "NUL byte in topology");
		goto out;
	}
	for (line = buf; line && !rc; p.line++) {
		char *next = strchr(line, '\n'), *tok[64], *hash;
		int n = 0;

		if (next)
			*next++ = '\0';
		p.line = p.line ? p.line : 1;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (tok[n] = strtok_r(line, " \t\r", &save); tok[n] && n < 63;
		     tok[n] = strtok_r(NULL, " \t\r", &save))
			n++;
		if (n == 63)
			rc = fail(&p, "too many fields");
		else if (n == 0)
			;
		else if (!strcmp(tok[0], "fabric"))
			rc = p_fabric(&p, tok, n);
		else if (!strcmp(tok[0], "node"))
			rc = p_node(&p, tok, n);
		else if (!strcmp(tok[0], "adapter"))
			rc = p_adapter(&p, tok, n);
		else if (!strcmp(tok[0], "device"))
			rc = p_device(&p, tok, n);
		else
			rc = fail(&p, "unknown keyword '%s'", tok[0]);
		line = next;
		if (!rc && !next)
			break;
	}
	if (!rc)
		rc = finish(&p);
out:
	free(buf);
	free(p.peers);
	free(p.peer_line);
	if (rc)
		sio_topo_free(out);
	return rc;
}

int sio_topo_load(const char *path, struct sio_topology *out, char *err,
		  size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, len = 0, n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return rc;
	}
	do {
		if (len + 4096 > cap) {
			char *t = realloc(text, cap = cap * 2 + 8192);

			if (!t || cap > (16u << 20)) {
				free(t ? t : text);
				fclose(f);
				snprintf(err, errlen, "file too large");
				return t ? -E2BIG : -ENOMEM;
			}
			text = t;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	rc = sio_topo_parse(text ? text : "", len, out, err, errlen);
	free(text);
	return rc;
}

static const char default_topology[] =
	"# The built-in cluster: four hosts on one NTB switch.\n"
	"fabric luts=256 requesters=32 reserved=2 window=4G\n"
	"node host0 id=0 ram=1G\n"
	"node host1 id=1 ram=1G\n"
	"node host2 id=2 ram=1G\n"
	"node host3 id=3 ram=1G\n"
	"adapter host0 ntb0 peers=all\n"
	"adapter host1 ntb0 peers=all\n"
	"adapter host2 ntb0 peers=all\n"
	"adapter host3 ntb0 peers=all\n"
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 class=0x010802 revision=0x02 config=4096 model=nvme bar0=16K,64\n"
	"device host0 nic0 bdf=0000:02:00.0 vendor=0x8086 device=0x10d3 class=0x020000 config=256 bar0=128K bar2=16K\n"
	"device host1 nvme1 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 class=0x010802 revision=0x02 config=4096 model=nvme bar0=16K,64\n"
	"device host1 gpu0 bdf=0000:02:00.0 vendor=0x10de device=0x1eb8 class=0x030200 config=4096 bar0=16M bar1=256M,64,prefetch\n"
	"device host2 acc0 bdf=0000:01:00.0 vendor=0x1234 device=0x11e8 class=0x120000 config=4096 model=dma bar0=1M bar2=64M,64,prefetch\n"
	"device host2 nvme2 bdf=0000:02:00.0 vendor=0x1b36 device=0x0010 class=0x010802 revision=0x02 config=4096 model=nvme bar0=16K,64\n"
	"device host3 acc1 bdf=0000:01:00.0 vendor=0x1234 device=0x11e8 class=0x120000 config=4096 model=dma bar0=1M bar2=64M,64,prefetch\n"
	"device host3 nic1 bdf=0000:02:00.0 vendor=0x8086 device=0x10d3 class=0x020000 config=256 bar0=128K bar2=16K\n";

int sio_topo_default(struct sio_topology *out)
{
	char err[128];

	return sio_topo_parse(default_topology, sizeof(default_topology) - 1,
			      out, err, sizeof(err));
}

int sio_topo_generate(struct sio_topology *out, unsigned nodes,
		      unsigned functions_per_node)
{
	struct sio_topology *t = out;
	unsigned n, f, k = 0;

	memset(t, 0, sizeof(*t));
	if (!nodes || nodes > SIO_MAX_NODES || functions_per_node > 65536)
		return -E2BIG;
	t->nodes = calloc(nodes, sizeof(*t->nodes));
	t->adapters = calloc(nodes, sizeof(*t->adapters));
	t->devices = calloc((size_t)nodes * functions_per_node + 1,
			    sizeof(*t->devices));
	if (!t->nodes || !t->adapters || !t->devices) {
		sio_topo_free(t);
		return -ENOMEM;
	}
	t->nnodes = t->nadapters = nodes;
	for (n = 0; n < nodes; n++) {
		struct sio_topo_adapter *a = &t->adapters[n];

		snprintf(t->nodes[n].name, SIO_TOPO_NAME, "host%u", n);
		t->nodes[n].id = n;
		t->nodes[n].ram = 1ull << 30;
		snprintf(a->name, SIO_TOPO_NAME, "ntb0");
		a->node = n;
		a->peers = (nodes == 64 ? ~0ull : (1ull << nodes) - 1) &
			   ~(1ull << n);
		a->window = 4ull << 30;
		a->luts = 256;
		a->requesters = 32;
		a->reserved = 2;
		for (f = 0; f < functions_per_node; f++, k++) {
			struct sio_topo_device *d = &t->devices[k];

			snprintf(d->name, SIO_TOPO_NAME, "nic%u", k);
			/* 2048 functions: 8 per device on 256 bus/dev slots. */
			snprintf(d->bdf, sizeof(d->bdf), "0000:%02x:%02x.%u",
				 (f >> 8) & 0xff, (f >> 3) & 0x1f, f & 7);
			d->node = n;
			d->vendor = d->subsys_vendor = 0x8086;
			d->device = d->subsys_device = 0x10d3;
			d->class_code = 0x020000;
			d->revision = 1;
			d->config_size = 256;
			d->bar[0].size = 16384;
		}
	}
	t->ndevices = k;
	return 0;
}
