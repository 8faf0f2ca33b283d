// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The cluster-wide event ring and the core's tiny string formatting. */
#include "core_int.h"

static const char *const kind_names[SIO_EV_COUNT] = {
	[SIO_EV_NODE_UP] = "node-up",
	[SIO_EV_NODE_DOWN] = "node-down",
	[SIO_EV_LEND] = "lend",
	[SIO_EV_BORROW] = "borrow",
	[SIO_EV_RETURN] = "return",
	[SIO_EV_RECLAIM] = "reclaim",
	[SIO_EV_SEGMENT_CREATE] = "segment-create",
	[SIO_EV_SEGMENT_DESTROY] = "segment-destroy",
	[SIO_EV_SEGMENT_ATTACH] = "segment-attach",
	[SIO_EV_SEGMENT_DETACH] = "segment-detach",
	[SIO_EV_DMA_FAULT] = "dma-fault",
	[SIO_EV_LINK_UP] = "link-up",
	[SIO_EV_LINK_DOWN] = "link-down",
	[SIO_EV_MODE] = "mode",
	[SIO_EV_SEGMENT_DMA_MAP] = "segment-dma-map",
	[SIO_EV_SEGMENT_DMA_UNMAP] = "segment-dma-unmap",
	[SIO_EV_MSI] = "msi",
	[SIO_EV_PEER_REFUSED] = "peer-refused",
	[SIO_EV_FAILOVER] = "failover",
	[SIO_EV_SRIOV] = "sriov",
	[SIO_EV_MULTICAST] = "multicast",
	[SIO_EV_SEGMENT_EXPORT] = "segment-export",
	[SIO_EV_SEGMENT_WITHDRAW] = "segment-withdraw",
};

const char *sio_event_kind_name(u32 kind)
{
	return kind < SIO_EV_COUNT ? kind_names[kind] : "unknown";
}

static void event_append(struct sio_core *c, u32 kind, u64 time_ns,
			 const char *object, const char *args)
{
	struct sio_registry *r = c->reg;
	struct sio_event *ev;
	u64 seq = r->event_seq + 1;

	ev = sio_event_at(r, seq);
	ev->seq = 0;	/* readers skip a slot being rewritten */
	ev->time_ns = time_ns;
	ev->kind = kind;
	sio_strlcpy(ev->object, object, sizeof(ev->object));
	sio_strlcpy(ev->args, args ? args : "", sizeof(ev->args));
	__atomic_store_n(&ev->seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&r->event_seq, seq, __ATOMIC_RELEASE);
	if (c->ops->notify)
		c->ops->notify(c->plat);
}

void sio_event_emit(struct sio_core *c, u32 kind, const char *object,
		    const char *args)
{
	event_append(c, kind, c->ops->now_ns(c->plat), object, args);
}

static int name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
	       ch == '.' || ch == '/';
}

/*
 * EVENT: another node's event, so that this node's ring shows the whole
 * cluster (a transport whose nodes do not share one registry broadcasts
 * them).  The text must be one event line's tail: an object of name
 * characters, then optionally a space and printable "key=value" args.
 */
int sio_h_event(struct sio_core *c, u32 self, const struct sio_parsed *p,
		struct sio_msg *rep)
{
	char obj[SIO_EVENT_OBJ], args[SIO_EVENT_ARGS];
	const struct sio_nla *d = &p->tb[SIO_A_DATA];
	u32 kind, i, n = 0;

	(void)rep;
	if (p->present[SIO_A_SRC] &&
	    sio_nla_u32(&p->tb[SIO_A_SRC]) == sio_node(c->reg, self)->id)
		return -ELOOP;	/* our own event came back */
	kind = sio_nla_u32(&p->tb[SIO_A_KIND]);
	if (kind >= SIO_EV_COUNT)
		return -EINVAL;
	for (i = 0; i < d->len && name_char((char)d->data[i]); i++) {
		if (n + 1 >= sizeof(obj))
			return -EINVAL;
		obj[n++] = (char)d->data[i];
	}
	obj[n] = '\0';
	if (!n)
		return -EINVAL;
	n = 0;
	if (i < d->len) {
		if (d->data[i++] != ' ')
			return -EINVAL;
		for (; i < d->len; i++) {
			char ch = (char)d->data[i];

			if (ch < ' ' || ch > '~' || n + 1 >= sizeof(args))
				return -EINVAL;
			args[n++] = ch;
		}
	}
	args[n] = '\0';
	event_append(c, kind, sio_nla_u64(&p->tb[SIO_A_TIME]), obj, args);
	return 0;
}

void sio_event_about(struct sio_core *c, u32 kind, const char *prefix,
		     const char *name, const char *sub, const char *key,
		     const char *val)
{
	char obj[SIO_EVENT_OBJ], args[SIO_EVENT_ARGS];
	struct sio_strbuf sb;

	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, prefix);
	sio_sb_str(&sb, name);
	if (sub) {
		sio_sb_str(&sb, ".");
		sio_sb_str(&sb, sub);
	}
	sio_sb_init(&sb, args, sizeof(args));
	if (key) {
		sio_sb_str(&sb, key);
		sio_sb_str(&sb, "=");
		sio_sb_str(&sb, val);
	}
	sio_event_emit(c, kind, obj, args);
}

void sio_sb_init(struct sio_strbuf *sb, char *buf, u32 cap)
{
	sb->buf = buf;
	sb->cap = cap;
	sb->len = 0;
	if (cap)
		buf[0] = '\0';
}

static void sb_putc(struct sio_strbuf *sb, char ch)
{
	if (sb->len + 1 < sb->cap) {
		sb->buf[sb->len++] = ch;
		sb->buf[sb->len] = '\0';
	}
}

void sio_sb_str(struct sio_strbuf *sb, const char *s)
{
	while (*s)
		sb_putc(sb, *s++);
}

static void sb_num(struct sio_strbuf *sb, u64 v, u32 base)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		sb_putc(sb, tmp[--n]);
}

void sio_sb_u64(struct sio_strbuf *sb, u64 v)
{
	sb_num(sb, v, 10);
}

void sio_sb_hex(struct sio_strbuf *sb, u64 v)
{
	sio_sb_str(sb, "0x");
	sb_num(sb, v, 16);
}
