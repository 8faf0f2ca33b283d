/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Little-endian loads and stores, the one copy for the wire codec, the
 * simulated hardware and the device models.  Byte-wise, so any alignment
 * and any host byte order work, and freestanding, so smartio.ko compiles
 * it too (the compilers fold each into one move on little-endian hosts).
 */
#ifndef SIO_LE_H
#define SIO_LE_H

#include "compat.h"

static inline u16 sio_get_le16(const void *p)
{
	const u8 *b = p;

	return (u16)(b[0] | b[1] << 8);
}

static inline u32 sio_get_le32(const void *p)
{
	const u8 *b = p;

	return (u32)sio_get_le16(b) | (u32)sio_get_le16(b + 2) << 16;
}

static inline u64 sio_get_le64(const void *p)
{
	const u8 *b = p;

	return (u64)sio_get_le32(b) | (u64)sio_get_le32(b + 4) << 32;
}

static inline void sio_put_le16(void *p, u16 v)
{
	u8 *b = p;

	b[0] = (u8)v;
	b[1] = (u8)(v >> 8);
}

static inline void sio_put_le32(void *p, u32 v)
{
	u8 *b = p;

	sio_put_le16(b, (u16)v);
	sio_put_le16(b + 2, (u16)(v >> 16));
}

static inline void sio_put_le64(void *p, u64 v)
{
	u8 *b = p;

	sio_put_le32(b, (u32)v);
	sio_put_le32(b + 4, (u32)(v >> 32));
}

#endif /* SIO_LE_H */
