/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one grammar for numbers and sizes: in topology files
 * (smartio.conf(5), which documents it) and in the values written to
 * /smartio (smartio(7)).  A number is decimal, or 0x/0X and hex digits,
 * with no sign; a size is a number optionally followed by one of k K
 * (2^10), M (2^20), G (2^30).  Nothing else is accepted: no blanks, no
 * other suffix, no fraction.
 *
 * Header-only: smartiofs links only libsmartio's public symbols, and the
 * parser must be the same code there and in the library.
 */
#ifndef SIO_NUMPARSE_H
#define SIO_NUMPARSE_H

#include "compat.h"

static inline unsigned int sio_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (unsigned int)(c - 'A' + 10);
	return 99;
}

/*
 * [s, s + len) as a number, or with size set as a size.  0, -EINVAL
 * (syntax) or -ERANGE (above 2^64 - 1).
 */
static inline int sio_parse_u64(const char *s, size_t len, int size, u64 *out)
{
	u64 v = 0, mul = 1;
	unsigned int base = 10;
	size_t i = 0;

	if (size && len) {
		switch (s[len - 1]) {
		case 'k': case 'K': mul = 1ull << 10; len--; break;
		case 'M': mul = 1ull << 20; len--; break;
		case 'G': mul = 1ull << 30; len--; break;
		default: break;
		}
	}
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned int d = sio_digit_value(s[i]);

		if (d >= base)
			return -EINVAL;
		if (v > ((u64)-1 - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (v > (u64)-1 / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

#endif
