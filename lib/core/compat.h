/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one place where the portable core meets its environment's headers.
 * The core is compiled into smartio.ko and into the user-space simulator;
 * everything it needs beyond this file comes through struct sio_platform_ops.
 */
#ifndef SIO_COMPAT_H
#define SIO_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/stddef.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <errno.h>
#include <string.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#endif

/* Freestanding string helpers: the compilers turn these into builtins. */
#define sio_memcpy(d, s, n) __builtin_memcpy((d), (s), (n))
#define sio_memset(d, c, n) __builtin_memset((d), (c), (n))
#define sio_memcmp(a, b, n) __builtin_memcmp((a), (b), (n))

static inline size_t sio_strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

static inline int sio_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Copies at most size-1 bytes and always terminates; returns source length. */
static inline size_t sio_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = sio_strnlen(src, (size_t)-1);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		sio_memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

#define SIO_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SIO_ALIGN_UP(x, a) ((((x) + (a) - 1) / (a)) * (a))
#define SIO_DIV_ROUND_UP(x, a) (((x) + (a) - 1) / (a))

#endif /* SIO_COMPAT_H */
