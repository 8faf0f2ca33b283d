// SPDX-License-Identifier: GPL-2.0-or-later
/* A growable text buffer for rendering attribute files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

void sb_init(struct sbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
}

void sb_free(struct sbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

void sb_reset(struct sbuf *sb)
{
	sb->len = 0;
	sb->oom = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

static int sb_grow(struct sbuf *sb, size_t need)
{
	size_t cap = sb->cap ? sb->cap : 256;
	char *p;

	if (sb->oom)
		return -1;
	if (sb->len + need + 1 <= sb->cap)
		return 0;
	while (cap < sb->len + need + 1)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

void sb_putn(struct sbuf *sb, const void *p, size_t n)
{
	if (sb_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct sbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char tmp[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		sb_putn(sb, tmp, (size_t)n);
		return;
	}
	if (sb_grow(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}
