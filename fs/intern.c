// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Interned names.  Every file of a segment (and every peer directory)
 * carries the segment's (or peer's) name in its inode; pointing at one
 * shared copy instead of a 32-byte array in each keeps the inode table of
 * a large cluster small.  Names are never freed: they are few (the
 * distinct segment and device names the daemon ever saw).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

struct interned {
	struct interned *next;
	char s[];
};

static struct {
	pthread_mutex_t lock;
	struct interned *bucket[256];
} in = { .lock = PTHREAD_MUTEX_INITIALIZER };

const char *sfs_intern(const char *s)
{
	uint32_t h = 2166136261u;
	const char *p;
	struct interned *e;
	size_t len = strlen(s);

	for (p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	pthread_mutex_lock(&in.lock);
	for (e = in.bucket[h & 255]; e; e = e->next)
		if (!strcmp(e->s, s))
			break;
	if (!e) {
		e = malloc(sizeof(*e) + len + 1);
		if (e) {
			memcpy(e->s, s, len + 1);
			e->next = in.bucket[h & 255];
			in.bucket[h & 255] = e;
		}
	}
	pthread_mutex_unlock(&in.lock);
	return e ? e->s : NULL;
}

void sfs_intern_free(void)
{
	size_t i;

	for (i = 0; i < 256; i++)
		while (in.bucket[i]) {
			struct interned *e = in.bucket[i];

			in.bucket[i] = e->next;
			free(e);
		}
}
