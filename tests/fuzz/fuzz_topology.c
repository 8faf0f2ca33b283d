// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness for the smartio.conf(5) parser (lib/sim/topology_parse.h).
 *
 * A topology file is operator input, so any text must give either a clean
 * error or a cluster that obeys the rules of the man page.  Checked here:
 *  - on error: a negative errno of the documented ones, a message that
 *    names a line, and an empty result;
 *  - on success: the limits and uniqueness rules hold, and writing the
 *    cluster back as text and parsing that gives the same cluster (so the
 *    parser accepts everything it can describe, and nothing is lost).
 * A violated property aborts, which libFuzzer reports as a crash.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_topology: %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		CHECK(n >= 0);
		if ((size_t)n < t->cap - t->len)
			break;
		t->cap = 2 * t->cap + (size_t)n;
		t->s = realloc(t->s, t->cap);
		CHECK(t->s);
	}
	t->len += (size_t)n;
}

/* The cluster in smartio.conf(5) syntax, every value spelled out. */
/* A link's options as written (0: not given, the default), and the
 * line's end. */
static void put_link(struct text *o, u32 gen, u32 width, u32 latency)
{
	if (gen)
		put(o, " gen=%" PRIu32, gen);
	if (width)
		put(o, " width=%" PRIu32, width);
	if (latency)
		put(o, " latency=%" PRIu32, latency);
	put(o, "\n");
}

/* sriov=, vfdevice= and the vfbar<N>= of devices[pf], from its VF 0. */
static void put_sriov(struct text *o, const struct sio_topology *t, u32 pf)
{
	const struct sio_topo_device *v = &t->devices[pf + 1];
	u32 b;

	CHECK(pf + t->devices[pf].sriov_total < t->ndevices && v->vf &&
	      v->pf == pf);
	put(o, " sriov=%u vfdevice=%u", t->devices[pf].sriov_total, v->device);
	for (b = 0; b < SIO_MAX_BARS; b++)
		if (v->bar[b].size)
			put(o, " vfbar%" PRIu32 "=%" PRIu64 "%s%s", b,
			    v->bar[b].size,
			    v->bar[b].flags & SIO_BAR_MEM64 ? ",64" : "",
			    v->bar[b].flags & SIO_BAR_PREFETCH ? ",prefetch" : "");
}

static void to_text(const struct sio_topology *t, struct text *o)
{
	static const char *const model[] = { "generic", "nvme", "dma" };
	u32 i, k, b;

	if (t->no_pace)
		put(o, "fabric pace=off\n");
	for (i = 0; i < t->nswitches; i++) {
		const struct sio_topo_switch *s = &t->switches[i];

		put(o, "switch %s ports=%" PRIu32 " requesters=%" PRIu32
		    " reserved=%" PRIu32, s->name, s->ports, s->requesters,
		    s->reserved);
		if (s->multicast)
			put(o, " multicast=%" PRIu32, s->multicast);
		put_link(o, s->gen, s->width, s->latency_ns);
	}
	for (i = 0; i < t->nswitches; i++)
		for (k = 0; k < t->switches[i].ports; k++) {
			u32 far = t->switches[i].peer_sw[k];

			if (far > i + 1)	/* each cable once */
				put(o, "cascade %s:%" PRIu32 " %s:%u\n",
				    t->switches[i].name, k,
				    t->switches[far - 1].name,
				    t->switches[i].peer_port[k]);
		}
	for (i = 0; i < t->nnodes; i++)
		put(o, "node %s id=%" PRIu32 " ram=%" PRIu64 "\n", t->nodes[i].name,
		    t->nodes[i].id, t->nodes[i].ram);
	for (i = 0; i < t->nadapters; i++) {
		const struct sio_topo_adapter *a = &t->adapters[i];
		char sep = '=';

		put(o, "adapter %s %s", t->nodes[a->node].name, a->name);
		if (a->sw)
			put(o, " switch=%s:%" PRIu32,
			    t->switches[a->sw - 1].name, a->port);
		else
			put(o, " peers");
		for (k = 0; !a->sw && k < t->nnodes; k++)
			if (a->peers >> k & 1) {
				put(o, "%c%s", sep, t->nodes[k].name);
				sep = ',';
			}
		put(o, " window=%" PRIu64 " luts=%" PRIu32 " requesters=%" PRIu32
		    " reserved=%" PRIu32 " share=%" PRIu32, a->window, a->luts,
		    a->requesters, a->reserved, a->share);
		put_link(o, a->gen, a->width, a->latency_ns);
	}
	for (i = 0; i < t->ndevices; i++) {
		const struct sio_topo_device *d = &t->devices[i];

		if (d->vf)
			continue;	/* its PF's sriov= brings it back */
		CHECK(d->model < 3);
		put(o, "device %s %s bdf=%s vendor=%u device=%u class=%" PRIu32
		    " subsystem_vendor=%u subsystem_device=%u revision=%u"
		    " config=%" PRIu32 " model=%s", t->nodes[d->node].name,
		    d->name, d->bdf, d->vendor, d->device, d->class_code,
		    d->subsys_vendor, d->subsys_device, d->revision,
		    d->config_size, model[d->model]);
		for (b = 0; b < SIO_MAX_BARS; b++)
			if (d->bar[b].size)
				put(o, " bar%" PRIu32 "=%" PRIu64 "%s%s", b,
				    d->bar[b].size,
				    d->bar[b].flags & SIO_BAR_MEM64 ? ",64" : "",
				    d->bar[b].flags & SIO_BAR_PREFETCH ?
				    ",prefetch" : "");
		if (d->sriov_total)
			put_sriov(o, t, i);
		put(o, "\n");
	}
}

static int is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

/* The rules of smartio.conf(5) that a parsed cluster must obey. */
static void check_rules(const struct sio_topology *t)
{
	u32 i, k, b;

	CHECK(t->nnodes >= 1 && t->nnodes <= SIO_MAX_NODES);
	CHECK(t->ndevices <= SIO_TOPO_MAX_DEVICES);
	for (i = 0; i < t->nnodes; i++) {
		CHECK(t->nodes[i].name[0] && strlen(t->nodes[i].name) < SIO_TOPO_NAME);
		CHECK(strcmp(t->nodes[i].name, "all"));
		CHECK(t->nodes[i].ram >= (1u << 20) && t->nodes[i].ram % 4096 == 0);
		for (k = 0; k < i; k++)
			CHECK(strcmp(t->nodes[i].name, t->nodes[k].name) &&
			      t->nodes[i].id != t->nodes[k].id);
	}
	for (i = 0; i < t->nadapters; i++) {
		const struct sio_topo_adapter *a = &t->adapters[i];

		CHECK(a->node < t->nnodes);
		CHECK(a->peers && !(a->peers >> a->node & 1));
		CHECK(t->nnodes == 64 || !(a->peers >> t->nnodes));
		CHECK(is_pow2(a->window) && a->window >= (1u << 20));
		CHECK(is_pow2(a->luts) && a->luts <= 4096 && a->window / a->luts >= 4096);
		CHECK(a->requesters >= 1 && a->requesters <= 64);
		CHECK(a->reserved < a->requesters);
	}
	for (i = 0; i < t->ndevices; i++) {
		const struct sio_topo_device *d = &t->devices[i];

		CHECK(d->node < t->nnodes);
		CHECK(d->config_size == 256 || d->config_size == 4096);
		/* A VF follows its PF, within the PF's TotalVFs, and lives on
		 * its node; a PF's capability needs extended config space. */
		CHECK(!d->vf || (d->pf < i && i - d->pf <= t->devices[d->pf].sriov_total &&
				 t->devices[d->pf].node == d->node));
		CHECK(!d->sriov_total || (d->config_size == 4096 &&
		      d->sriov_total <= SIO_SRIOV_MAX_VFS));
		CHECK(d->class_code <= 0xffffff);
		CHECK(strlen(d->bdf) == 12);
		for (b = 0; b < SIO_MAX_BARS; b++) {
			if (!d->bar[b].size)
				continue;
			CHECK(is_pow2(d->bar[b].size) && d->bar[b].size >= 4096 &&
			      d->bar[b].size <= (1ull << 40));
			if (d->bar[b].flags & SIO_BAR_MEM64)
				CHECK(b < 5 && !d->bar[b + 1].size);
		}
	}
}

static void same(const struct sio_topology *x, const struct sio_topology *y)
{
	CHECK(x->nnodes == y->nnodes && x->nadapters == y->nadapters &&
	      x->ndevices == y->ndevices);
	CHECK(!memcmp(x->nodes, y->nodes, x->nnodes * sizeof(*x->nodes)));
	CHECK(!x->nadapters ||
	      !memcmp(x->adapters, y->adapters, x->nadapters * sizeof(*x->adapters)));
	CHECK(!x->ndevices ||
	      !memcmp(x->devices, y->devices, x->ndevices * sizeof(*x->devices)));
	CHECK(x->nswitches == y->nswitches);
	CHECK(!x->nswitches ||
	      !memcmp(x->switches, y->switches, x->nswitches * sizeof(*x->switches)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sio_topology t, again;
	struct text o = { 0 };
	char err[256];
	int rc;

	memset(err, 'x', sizeof(err));
	rc = sio_topo_parse((const char *)data, size, &t, err, sizeof(err));
	if (rc) {
		CHECK(rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
		CHECK(memchr(err, '\0', sizeof(err)));
		CHECK(!strncmp(err, "line ", 5) || rc != -EINVAL);
		CHECK(!t.nnodes && !t.nadapters && !t.ndevices && !t.nodes &&
		      !t.adapters && !t.devices && !t.nswitches && !t.switches);
		return 0;
	}
	check_rules(&t);
	o.cap = 4096;
	o.s = malloc(o.cap);
	CHECK(o.s);
	to_text(&t, &o);
	rc = sio_topo_parse(o.s, o.len, &again, err, sizeof(err));
	if (rc)
		fprintf(stderr, "fuzz_topology: written back, refused: %s\n%s", err, o.s);
	CHECK(rc == 0);
	same(&t, &again);
	sio_topo_free(&again);
	sio_topo_free(&t);
	free(o.s);
	return 0;
}
