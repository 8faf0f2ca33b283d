// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The static part of the cluster: node names, device names and their fixed
 * properties (lender, BDF, ids, BARs).  Loaded at startup; device names
 * are found through a hash table so that lookups stay O(1) on clusters with
 * many thousands of devices.
 *
 * Over smartio.ko's NTB fabric another machine's devices are known only
 * once its device table arrived: their slots are absent at startup, and
 * names_refresh() names them when they appear.  A slot is named once and
 * keeps its name (absent again, it is not listed); readers take no lock,
 * so a new entry is written whole before the hash and the node's list
 * publish it (release stores, acquire loads).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

static struct {
	unsigned nnodes, ndevs;
	struct sfs_nodeinfo *nodes;
	struct sfs_dev *devs;
	unsigned *hash;		/* dev index + 1, 0 = empty */
	size_t hsize;		/* power of two */
	struct smartio *h;
	pthread_mutex_t refresh;	/* one writer at a time */
} nm = { .refresh = PTHREAD_MUTEX_INITIALIZER };

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

/* Device i (its info written) joins the hash and its node's list. */
static void publish(unsigned i)
{
	struct smartio_device_info *d = &nm.devs[i].info;
	struct smartio_sriov_info si;
	struct sfs_nodeinfo *ni;
	size_t slot;

	nm.devs[i].vf = !smartio_sriov_info(nm.h, i, &si) && si.pf >= 0;

	d->name[SMARTIO_NAME_MAX - 1] = '\0';
	for (slot = fnv(d->name) & (nm.hsize - 1); nm.hash[slot];
	     slot = (slot + 1) & (nm.hsize - 1))
		;
	__atomic_store_n(&nm.hash[slot], i + 1, __ATOMIC_RELEASE);
	if (d->node >= nm.nnodes)
		return;
	ni = &nm.nodes[d->node];
	ni->devs[ni->ndevs] = i;
	__atomic_store_n(&ni->ndevs, ni->ndevs + 1, __ATOMIC_RELEASE);
}

int names_refresh(void)
{
	struct smartio_device_info di;
	unsigned i, named = 0;

	if (!nm.h)
		return 0;
	pthread_mutex_lock(&nm.refresh);
	for (i = 0; i < nm.ndevs; i++) {
		if (nm.devs[i].info.name[0] ||
		    smartio_device_info(nm.h, i, &di) || !di.name[0] ||
		    names_dev(di.name) >= 0)
			continue;
		nm.devs[i].info = di;
		publish(i);
		named++;
	}
	pthread_mutex_unlock(&nm.refresh);
	return (int)named;
}

int names_load(struct smartio *h)
{
	unsigned i, n;
	int rc;

	nm.nnodes = smartio_node_count(h);
	nm.ndevs = smartio_device_count(h);
	nm.nodes = calloc(nm.nnodes ? nm.nnodes : 1, sizeof(*nm.nodes));
	nm.devs = calloc(nm.ndevs ? nm.ndevs : 1, sizeof(*nm.devs));
	for (nm.hsize = 16; nm.hsize < 2 * (size_t)nm.ndevs; nm.hsize *= 2)
		;
	nm.hash = calloc(nm.hsize, sizeof(*nm.hash));
	if (!nm.nodes || !nm.devs || !nm.hash)
		return -ENOMEM;
	for (i = 0; i < nm.nnodes; i++) {
		struct smartio_node_info ni;

		rc = smartio_node_info(h, i, &ni);
		if (rc)
			return rc;
		memcpy(nm.nodes[i].name, ni.name, sizeof(ni.name));
		nm.nodes[i].name[SMARTIO_NAME_MAX - 1] = '\0';
		nm.nodes[i].nadapters = ni.nadapters;
		nm.nodes[i].adapters = calloc(ni.nadapters + 1,
					      sizeof(*nm.nodes[i].adapters));
		if (!nm.nodes[i].adapters)
			return -ENOMEM;
		for (n = 0; n < ni.nadapters; n++) {
			struct smartio_adapter_info ai;

			rc = smartio_adapter_info(h, i, n, &ai);
			if (rc)
				return rc;
			memcpy(nm.nodes[i].adapters[n], ai.name, sizeof(ai.name));
			nm.nodes[i].adapters[n][SMARTIO_NAME_MAX - 1] = '\0';
		}
	}
	for (i = 0; i < nm.ndevs; i++) {
		rc = smartio_device_info(h, i, &nm.devs[i].info);
		if (rc == -ENXIO) {
			nm.devs[i].info.name[0] = '\0';	/* absent slot */
			continue;
		}
		if (rc)
			return rc;
		if (nm.devs[i].info.node < nm.nnodes)
			nm.nodes[nm.devs[i].info.node].ndevs++;
	}
	/* Room for every slot: absent ones may join a node's list later. */
	for (n = 0; n < nm.nnodes; n++) {
		nm.nodes[n].devs = calloc(nm.ndevs + 1, sizeof(unsigned));
		if (!nm.nodes[n].devs)
			return -ENOMEM;
		nm.nodes[n].ndevs = 0;
	}
	nm.h = h;	/* publish() asks it; nothing runs concurrently yet */
	for (i = 0; i < nm.ndevs; i++)
		if (nm.devs[i].info.name[0])
			publish(i);
	return 0;
}

void names_free(void)
{
	unsigned n;

	for (n = 0; nm.nodes && n < nm.nnodes; n++) {
		free(nm.nodes[n].devs);
		free(nm.nodes[n].adapters);
	}
	free(nm.nodes);
	free(nm.devs);
	free(nm.hash);
	memset(&nm, 0, sizeof(nm));
}

int names_node(const char *name)
{
	unsigned i;

	for (i = 0; i < nm.nnodes; i++)
		if (!strcmp(nm.nodes[i].name, name))
			return (int)i;
	return -ENOENT;
}

int names_dev(const char *name)
{
	size_t slot;
	unsigned v;

	if (!nm.hash)
		return -ENXIO;
	for (slot = fnv(name) & (nm.hsize - 1);
	     (v = __atomic_load_n(&nm.hash[slot], __ATOMIC_ACQUIRE)) != 0;
	     slot = (slot + 1) & (nm.hsize - 1))
		if (!strcmp(nm.devs[v - 1].info.name, name))
			return (int)v - 1;
	return -ENXIO;
}

unsigned names_nnodes(void)
{
	return nm.nnodes;
}

unsigned names_ndevs(void)
{
	return nm.ndevs;
}

const struct sfs_nodeinfo *names_nodeinfo(unsigned node)
{
	return node < nm.nnodes ? &nm.nodes[node] : NULL;
}

const struct sfs_dev *names_devinfo(unsigned dev)
{
	return dev < nm.ndevs ? &nm.devs[dev] : NULL;
}

int names_adapter(unsigned node, const char *name)
{
	unsigned i;

	if (node >= nm.nnodes)
		return -ENOENT;
	for (i = 0; i < nm.nodes[node].nadapters; i++)
		if (!strcmp(nm.nodes[node].adapters[i], name))
			return (int)i;
	return -ENOENT;
}
