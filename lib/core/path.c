// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Path resolution.  An adapter reaches nodes over a direct cable (peers)
 * or through cluster switches, possibly cascaded (SmartIO section 3).
 * Among the adapters of `from` whose link is up and that reach `to`, the
 * path through the fewest switches is chosen, then the adapter with the
 * most free LUT entries, so mappings spread over parallel adapters.
 * When the topology cables `from` to `to` but no such path has its links
 * up, the answer is -EHOSTDOWN, as for a node that is down.
 *
 * A path's switches hold requester entries (SmartIO section 8.6): a
 * requester whose requests enter a switch at one port takes an outgoing
 * entry on that port and an incoming entry on every other cabled port.
 */
#include "core.h"

static int adapter_up(struct sio_registry *r, u32 node, u32 a)
{
	const struct sio_adapter *ad = &sio_node(r, node)->adapter[a];

	return a < sio_node(r, node)->nadapters && ad->present && ad->link_up;
}

/*
 * The far end of a direct cable from `from` to `to`: when `to` has
 * adapters cabled back to `from`, one of them must be up (a cable whose
 * other end is down carries nothing).  A topology that describes only one
 * end of the cable is taken at its word.
 */
static int far_end_up(struct sio_registry *r, u32 to, u32 from)
{
	const struct sio_node *n = sio_node(r, to);
	u32 a, cabled = 0;

	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++) {
		if (n->adapter[a].sw || !(n->adapter[a].peers >> from & 1))
			continue;
		if (adapter_up(r, to, a))
			return 1;
		cabled++;
	}
	return !cabled;
}

/*
 * The port of switch s cabled to an adapter of `to` whose link is up, the
 * lowest if several are.  Found from the node's few adapters rather than
 * the switch's ports: a multicast write asks it of every member, for
 * every switch on the way.
 */
static int port_to(struct sio_registry *r, u32 s, u32 to)
{
	const struct sio_node *n = sio_node(r, to);
	int port = -1;
	u32 a;

	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++) {
		const struct sio_adapter *ad = &n->adapter[a];

		if (ad->sw == s + 1 && adapter_up(r, to, a) &&
		    (port < 0 || ad->port < port))
			port = ad->port;
	}
	return port;
}

/*
 * A breadth-first search of the switches from the one an adapter is
 * cabled to, at most SIO_MAX_HOPS deep: the switches in the order reached,
 * each with its depth (0: not reached) and the switch and port it was
 * reached from.  The first one in that order with a port to a node is the
 * end of the node's shortest path.
 */
struct switch_search {
	u8 prev[SIO_MAX_SWITCHES], in_port[SIO_MAX_SWITCHES];
	u8 depth[SIO_MAX_SWITCHES], order[SIO_MAX_SWITCHES];
	u32 n;
};

static void search_switches(struct sio_registry *r,
			    const struct sio_adapter *ad,
			    struct switch_search *ss)
{
	u32 head = 0, s, p;

	sio_memset(ss->depth, 0, sizeof(ss->depth));
	s = ad->sw - 1u;
	ss->depth[s] = 1;
	ss->prev[s] = (u8)s;
	ss->in_port[s] = (u8)ad->port;
	ss->order[0] = (u8)s;
	ss->n = 1;
	while (head < ss->n) {
		const struct sio_switch *sw;

		s = ss->order[head++];
		if (ss->depth[s] == SIO_MAX_HOPS)
			continue;
		sw = sio_switch_at(r, s);
		for (p = 0; p < sw->nports && p < SIO_MAX_SWITCH_PORTS; p++) {
			u32 far = sw->port[p].peer_sw;

			if (sw->port[p].kind != SIO_PORT_CASCADE ||
			    far >= r->nswitches || ss->depth[far])
				continue;
			ss->depth[far] = (u8)(ss->depth[s] + 1);
			ss->prev[far] = (u8)s;
			ss->in_port[far] = (u8)sw->port[p].peer_port;
			ss->order[ss->n++] = (u8)far;
		}
	}
}

/* The nearest switch of the search with a port to `to`, or -1. */
static int search_end(struct sio_registry *r, const struct switch_search *ss,
		      u32 to)
{
	u32 i;

	for (i = 0; i < ss->n; i++)
		if (port_to(r, ss->order[i], to) >= 0)
			return ss->order[i];
	return -1;
}

static void search_route(const struct switch_search *ss, u32 s,
			 struct sio_route *rt)
{
	u32 i;

	rt->hops = ss->depth[s];
	for (i = rt->hops; i-- > 0; s = ss->prev[s]) {
		rt->sw[i] = (u8)s;
		rt->in_port[i] = ss->in_port[s];
	}
}

/* The adapter `from` leaves by, if its link is up; NULL otherwise. */
static const struct sio_adapter *start_adapter(struct sio_registry *r,
					       u32 from, u32 adapter)
{
	if (from >= r->nnodes || adapter >= SIO_MAX_ADAPTERS ||
	    !adapter_up(r, from, adapter))
		return NULL;
	return &sio_node(r, from)->adapter[adapter];
}

int sio_path_route(struct sio_registry *r, u32 from, u32 adapter, u32 to,
		   struct sio_route *rt)
{
	const struct sio_adapter *ad = start_adapter(r, from, adapter);
	struct switch_search ss;
	int end;

	if (!ad || to >= r->nnodes || from == to)
		return -EHOSTUNREACH;
	rt->hops = 0;
	if (!ad->sw)
		return ad->peers >> to & 1 && far_end_up(r, to, from) ?
		       0 : -EHOSTUNREACH;
	if (ad->sw > r->nswitches)
		return -EHOSTUNREACH;
	search_switches(r, ad, &ss);
	end = search_end(r, &ss, to);
	if (end < 0)
		return -EHOSTUNREACH;
	search_route(&ss, (u32)end, rt);
	return 0;
}

int sio_path_hops(struct sio_registry *r, u32 from, u32 adapter, u32 to)
{
	struct sio_route rt;
	int err = sio_path_route(r, from, adapter, to, &rt);

	return err ? err : (int)rt.hops;
}

/*
 * The adapter of `to` at the far end of a direct cable from `from`, or -1
 * when the topology describes only this end of it.
 */
static int far_adapter(struct sio_registry *r, u32 to, u32 from)
{
	const struct sio_node *n = sio_node(r, to);
	u32 a;

	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++)
		if (!n->adapter[a].sw && n->adapter[a].peers >> from & 1 &&
		    adapter_up(r, to, a))
			return (int)a;
	return -1;
}

/* Adds a link of gen and width and a chip of lat ns to the path. */
static void path_link(struct sio_path_speed *ps, u32 gen, u32 width, u32 lat)
{
	u64 rate = sio_link_rate(gen, width);

	if (rate && (!ps->rate || rate < ps->rate))
		ps->rate = rate;
	ps->latency_ns += lat;
}

/*
 * The speed of a route up to its last switch: the adapter's link, then
 * each switch's.
 */
static void route_speed(struct sio_registry *r, const struct sio_adapter *ad,
			const struct sio_route *rt, struct sio_path_speed *ps)
{
	u32 h;

	sio_memset(ps, 0, sizeof(*ps));
	ps->hops = rt->hops;
	path_link(ps, ad->gen, ad->width, ad->latency_ns);
	for (h = 0; h < rt->hops; h++) {
		const struct sio_switch *sw = sio_switch_at(r, rt->sw[h]);

		path_link(ps, sw->gen, sw->width, sw->latency_ns);
	}
}

/* Adds the adapter of `to` the route ends at (ps->far_adapter). */
static void far_speed(struct sio_registry *r, u32 from, u32 to, int last_sw,
		      struct sio_path_speed *ps)
{
	const struct sio_adapter *ad;
	int far;

	if (last_sw >= 0) {
		far = port_to(r, (u32)last_sw, to);
		if (far >= 0)
			far = sio_switch_at(r, (u32)last_sw)->port[far].adapter;
	} else {
		far = far_adapter(r, to, from);
	}
	ps->far_adapter = far;
	if (far >= 0) {
		ad = &sio_node(r, to)->adapter[far];
		path_link(ps, ad->gen, ad->width, ad->latency_ns);
	}
}

int sio_path_speed(struct sio_registry *r, u32 from, u32 adapter, u32 to,
		   struct sio_path_speed *ps)
{
	struct sio_route rt;
	int err = sio_path_route(r, from, adapter, to, &rt);

	if (err)
		return err;
	route_speed(r, &sio_node(r, from)->adapter[adapter], &rt, ps);
	far_speed(r, from, to, rt.hops ? rt.sw[rt.hops - 1] : -1, ps);
	return 0;
}

/*
 * One search of the switches for all of to[]: the members of a multicast
 * write each need their path's speed, and those behind one switch share
 * all of it but their own adapter.
 */
u64 sio_path_speed_many(struct sio_registry *r, u32 from, u32 adapter,
			const u32 *to, u32 n, struct sio_path_speed *ps)
{
	const struct sio_adapter *ad = start_adapter(r, from, adapter);
	struct sio_path_speed upto[SIO_MAX_SWITCHES];
	struct switch_search ss;
	u32 known = 0, i;
	u64 ok = 0;

	if (n > SIO_MAX_NODES)
		n = SIO_MAX_NODES;
	if (!ad || !ad->sw || ad->sw > r->nswitches) {
		for (i = 0; i < n; i++)
			if (!sio_path_speed(r, from, adapter, to[i], &ps[i]))
				ok |= 1ULL << i;
		return ok;
	}
	search_switches(r, ad, &ss);
	for (i = 0; i < n; i++) {
		int end = to[i] < r->nnodes && to[i] != from ?
			  search_end(r, &ss, to[i]) : -1;

		if (end < 0)
			continue;
		if (!(known >> end & 1)) {
			struct sio_route rt;

			search_route(&ss, (u32)end, &rt);
			route_speed(r, ad, &rt, &upto[end]);
			known |= 1u << end;
		}
		ps[i] = upto[end];
		far_speed(r, from, to[i], end, &ps[i]);
		ok |= 1ULL << i;
	}
	return ok;
}

int sio_path_find(struct sio_registry *r, u32 from, u32 to)
{
	struct sio_node *n;
	int best = -EHOSTUNREACH, hops;
	u32 best_free = 0, best_hops = 0, a, cabled = 0;

	if (from >= r->nnodes || to >= r->nnodes || from == to)
		return -EINVAL;
	n = sio_node(r, from);
	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++) {
		struct sio_adapter *ad = &n->adapter[a];
		u32 free_luts = ad->luts.total - ad->luts.used;

		if (ad->present && ad->peers >> to & 1)
			cabled++;
		hops = sio_path_hops(r, from, a, to);
		if (hops < 0)
			continue;
		if (best < 0 || (u32)hops < best_hops ||
		    ((u32)hops == best_hops && free_luts > best_free)) {
			best = (int)a;
			best_hops = (u32)hops;
			best_free = free_luts;
		}
	}
	/* Cabled to it, but every path is down (SmartIO section 6.3). */
	return best < 0 && cabled ? -EHOSTDOWN : best;
}

/* Every other cabled port of the switch than `in`. */
static int other_port(const struct sio_switch *sw, u32 p, u32 in)
{
	return p != in && sw->port[p].kind != SIO_PORT_FREE;
}

int sio_route_fits(struct sio_registry *r, const struct sio_route *rt)
{
	u32 h, p;

	for (h = 0; h < rt->hops; h++) {
		const struct sio_switch *sw = sio_switch_at(r, rt->sw[h]);
		const struct sio_swport *in = &sw->port[rt->in_port[h]];

		if (in->out_used + in->out_reserved >= in->out_total)
			return -ENOSPC;
		for (p = 0; p < sw->nports && p < SIO_MAX_SWITCH_PORTS; p++) {
			const struct sio_swport *o = &sw->port[p];

			if (other_port(sw, p, rt->in_port[h]) &&
			    o->in_used + o->in_reserved >= o->in_total)
				return -ENOSPC;
		}
	}
	return 0;
}

/* Takes (take 1) or gives back (take 0) a route's requester entries. */
void sio_route_account(struct sio_registry *r, const struct sio_route *rt,
		       int take)
{
	u32 h, p;

	for (h = 0; h < rt->hops && h < SIO_MAX_HOPS; h++) {
		struct sio_switch *sw = sio_switch_at(r, rt->sw[h]);
		struct sio_swport *in = &sw->port[rt->in_port[h]];

		if (take)
			in->out_used++;
		else if (in->out_used)
			in->out_used--;
		for (p = 0; p < sw->nports && p < SIO_MAX_SWITCH_PORTS; p++) {
			struct sio_swport *o = &sw->port[p];

			if (!other_port(sw, p, rt->in_port[h]))
				continue;
			if (take)
				o->in_used++;
			else if (o->in_used)
				o->in_used--;
		}
	}
}
