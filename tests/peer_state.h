/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state of a registry that a refused peer message must leave as it
 * was: everything but the event ring (a refusal is reported there), the
 * nodes' refused counters (and counted there) and when each node was last
 * heard from (the simulated nodes' own heartbeats move it meanwhile).  Shared by
 * tests/test_peer_trust.c and the NTB-peer fuzzer.
 */
#ifndef SIO_TEST_PEER_STATE_H
#define SIO_TEST_PEER_STATE_H

#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* A copy of r with the parts a refusal may change cleared; free() it. */
static inline unsigned char *peer_state(struct sio_registry *r)
{
	unsigned char *s = malloc(r->total_size);
	struct sio_registry *c = (struct sio_registry *)s;
	unsigned i;

	if (!s)
		abort();
	memcpy(s, r, r->total_size);
	c->event_seq = 0;
	memset(s + r->events_off, 0, SIO_EVENT_RING * sizeof(struct sio_event));
	for (i = 0; i < r->nnodes; i++) {
		sio_node(c, i)->refused = 0;
		/* Moved by the fabric's own heartbeats at any time. */
		sio_node(c, i)->heard_ns = 0;
		sio_node(c, i)->beat_seq = 0;
	}
	return s;
}

static inline int peer_state_same(struct sio_registry *r,
				  const unsigned char *before)
{
	unsigned char *now = peer_state(r);
	int same = !memcmp(now, before, r->total_size);

	free(now);
	return same;
}

#endif
