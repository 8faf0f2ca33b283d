// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Path resolution.  Every adapter lists the nodes it reaches (a direct
 * cable or a cluster switch).  Among the adapters of `from` whose link is up
 * and that reach `to`, the one with the most free LUT entries is chosen, so
 * mappings spread over parallel adapters.
 */
#include "core.h"

int sio_path_find(struct sio_registry *r, u32 from, u32 to)
{
	struct sio_node *n;
	int best = -EHOSTUNREACH;
	u32 best_free = 0, a;

	if (from >= r->nnodes || to >= r->nnodes || from == to)
		return -EINVAL;
	n = sio_node(r, from);
	for (a = 0; a < n->nadapters; a++) {
		struct sio_adapter *ad = &n->adapter[a];
		u32 free_luts = ad->luts.total - ad->luts.used;

		if (!ad->present || !ad->link_up || !(ad->peers >> to & 1))
			continue;
		if (best < 0 || free_luts > best_free) {
			best = (int)a;
			best_free = free_luts;
		}
	}
	return best;
}
