// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The cluster-wide event ring and the core's tiny string formatting. */
#include "core.h"

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
};

const char *sio_event_kind_name(u32 kind)
{
	return kind < SIO_EV_COUNT ? kind_names[kind] : "unknown";
}

void sio_event_emit(struct sio_core *c, u32 kind, const char *object,
		    const char *args)
{
	struct sio_registry *r = c->reg;
	struct sio_event *ev;
	u64 seq = r->event_seq + 1;

	ev = sio_event_at(r, seq);
	ev->seq = 0;	/* readers skip a slot being rewritten */
	ev->time_ns = c->ops->now_ns(c->plat);
	ev->kind = kind;
	sio_strlcpy(ev->object, object, sizeof(ev->object));
	sio_strlcpy(ev->args, args ? args : "", sizeof(ev->args));
	__atomic_store_n(&ev->seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&r->event_seq, seq, __ATOMIC_RELEASE);
	if (c->ops->notify)
		c->ops->notify(c->plat);
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
