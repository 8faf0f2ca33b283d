/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsmartio's kernel transport: the core's protocol messages to and from
 * smartio.ko over its generic netlink family "smartio" (libnl-genl-3).
 */
#ifndef SIO_KTRANS_H
#define SIO_KTRANS_H

#include <stdint.h>

struct sio_ktrans;

/* 0, -ENOENT when the family is not registered, -EOPNOTSUPP without libnl. */
int sio_ktrans_open(struct sio_ktrans **k);
void sio_ktrans_close(struct sio_ktrans *k);
/* One request (a whole protocol message); the reply's length or -errno. */
int sio_ktrans_call(struct sio_ktrans *k, const void *req, uint32_t len,
		    void *reply, uint32_t cap);
/*
 * A consistent copy of the kernel's registry (no change in between), kept
 * in the transport: *reg points at it until the next refresh or close.
 * The copy is read again only when the kernel's generation moved, so an
 * unchanged registry costs one small request.
 */
int sio_ktrans_registry(struct sio_ktrans *k, void **reg);
/* The kernel's registry generation (bumped by every change): one request. */
int sio_ktrans_generation(struct sio_ktrans *k, uint64_t *gen);

#endif
