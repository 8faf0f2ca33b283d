// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness for a simulated function's configuration space
 * (lib/sim/cfg_space.c, issue 28 item 4): any lender or borrower may
 * write any bytes at any offset of dev/<dev>/config.
 *
 * The input describes a function -- its model, configuration space size,
 * BARs and, as an SR-IOV PF, VF 0's BARs -- then a run of writes
 * (offset, length, bytes).  After each write:
 *   - bytes outside the write are unchanged;
 *   - no bit is set that the write did not write as 1 (a write sets only
 *     read-write bits; write-1-to-clear bits only clear);
 *   - the ids, header type, subsystem ids, capability pointer, interrupt
 *     pin, every capability id and next pointer of the initial list, and
 *     the SR-IOV capability's read-only fields keep their values;
 *   - each BAR register keeps its type bits, an absent BAR stays zero, and
 *     no address bit below the BAR's size is set (VF BARs alike).
 * At the end, the sizing probe of every BAR register reads the size mask
 * and writing the address back restores it.  A violated property aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pci_regs.h>

#include "devmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_cfg: %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

#define CFG_MAX 4096

struct input {
	const uint8_t *p;
	size_t left;
};

static u8 take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

/* BARs from the input: a size code (0 absent, else 16 << n bytes) and
 * flags per register; a 64-bit BAR leaves its next register empty. */
static void take_bars(struct input *in, struct sio_bar *bar)
{
	u32 b;

	memset(bar, 0, sizeof(*bar) * SIO_MAX_BARS);
	for (b = 0; b < SIO_MAX_BARS; b++) {
		u8 code = take(in), flags = take(in);

		if (!(code % 40))
			continue;
		bar[b].size = 16ull << (code % 40);
		bar[b].addr = bar[b].size * (1 + flags % 7);
		if ((flags & 0x80) && b + 1 < SIO_MAX_BARS) {
			bar[b].flags |= SIO_BAR_MEM64;
			if (flags & 0x40)
				bar[b].flags |= SIO_BAR_PREFETCH;
			b++;
		} else {
			bar[b].addr &= 0xffffffffull & ~(bar[b].size - 1);
			if (bar[b].size > 0x80000000ull) {
				memset(&bar[b], 0, sizeof(bar[b]));
				continue;
			}
		}
	}
}

/* Offsets of the capabilities in the standard list, 0 ended. */
static u32 caps_of(const u8 *c, u32 *pos, u32 max)
{
	u32 p = c[PCI_CAPABILITY_LIST] & ~3u, n = 0;

	while (p >= PCI_STD_HEADER_SIZEOF && p < 0x100 && n < max) {
		pos[n++] = p;
		p = c[p + PCI_CAP_LIST_NEXT] & ~3u;
	}
	return n;
}

/* The writable address bits of BAR register reg of bars (oracle). */
static u32 addr_bits(const struct sio_bar *bar, u32 reg)
{
	if (bar[reg].size)
		return (u32)~(bar[reg].size - 1) & ~0xfu;
	if (reg && (bar[reg - 1].flags & SIO_BAR_MEM64) && bar[reg - 1].size)
		return (u32)(~(bar[reg - 1].size - 1) >> 32);
	return 0;
}

static void check_bars(const u8 *now, const u8 *init, u32 at,
		       const struct sio_bar *bar)
{
	u32 r;

	for (r = 0; r < SIO_MAX_BARS; r++) {
		u32 v = sio_get_le32(now + at + 4 * r);
		u32 v0 = sio_get_le32(init + at + 4 * r);
		u32 mask = addr_bits(bar, r);

		CHECK((v & ~mask) == (v0 & ~mask));	/* type bits, absent */
	}
}

static void probe_bars(u8 *c, const struct sio_device *d,
		       const struct sio_device *vf0, u32 at,
		       const struct sio_bar *bar)
{
	u8 ones[4] = { 0xff, 0xff, 0xff, 0xff }, back[4];
	u32 r;

	for (r = 0; r < SIO_MAX_BARS; r++) {
		u32 v0 = sio_get_le32(c + at + 4 * r);
		u32 mask = addr_bits(bar, r);

		sim_cfg_write(c, d, vf0, at + 4 * r, ones, 4);
		CHECK(sio_get_le32(c + at + 4 * r) == (mask | (v0 & ~mask)));
		sio_put_le32(back, v0);
		sim_cfg_write(c, d, vf0, at + 4 * r, back, 4);
		CHECK(sio_get_le32(c + at + 4 * r) == v0);
	}
}

/* The bytes that must never change: ids, pointers, SR-IOV's RO part. */
static void check_fixed(const u8 *now, const u8 *init, const u32 *caps,
			u32 ncaps, int sriov)
{
	static const u8 hdr[] = { 0, 1, 2, 3, 8, 9, 10, 11, 0x0e, 0x2c, 0x2d,
				  0x2e, 0x2f, 0x34, 0x3d };
	static const u8 sr[] = { 0, 1, 2, 3, 4, 5, 6, 7, 0x0c, 0x0d, 0x0e,
				 0x0f, 0x14, 0x15, 0x16, 0x17, 0x1a, 0x1b,
				 0x1c, 0x1d, 0x1e, 0x1f };
	u32 i;

	for (i = 0; i < sizeof(hdr); i++)
		CHECK(now[hdr[i]] == init[hdr[i]]);
	for (i = 0; i < ncaps; i++)
		CHECK(now[caps[i]] == init[caps[i]] &&
		      now[caps[i] + 1] == init[caps[i] + 1]);
	for (i = 0; sriov && i < sizeof(sr); i++)
		CHECK(now[0x100 + sr[i]] == init[0x100 + sr[i]]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 c[CFG_MAX], init[CFG_MAX], before[CFG_MAX];
	struct input in = { data, size };
	struct sio_device d, vf;
	const struct sio_device *vf0 = NULL;
	u32 caps[48], ncaps, i;
	u8 kind = take(&in);

	memset(&d, 0, sizeof(d));
	memset(&vf, 0, sizeof(vf));
	d.vendor = 0x1b36;
	d.device = 0x0010;
	d.class_code = 0x010802;
	d.model = kind % 3;
	d.config_size = kind & 0x10 ? 4096 : 256;
	take_bars(&in, d.bar);
	if ((kind & 0x30) == 0x30) {
		d.sriov_total = 1 + take(&in) % 8;
		vf.device = 0x10ed;
		take_bars(&in, vf.bar);
		vf0 = &vf;
	}
	memset(c, 0, sizeof(c));
	sim_cfg_layout(c, &d, vf0);
	memcpy(init, c, sizeof(c));
	ncaps = caps_of(init, caps, 48);
	while (in.left >= 3) {
		u32 off = (take(&in) | (u32)take(&in) << 8) % d.config_size;
		u32 len = 1 + take(&in) % 16;
		u8 src[16];

		for (i = 0; i < len; i++)
			src[i] = take(&in);
		if (len > d.config_size - off)
			len = d.config_size - off;
		memcpy(before, c, sizeof(c));
		sim_cfg_write(c, &d, vf0, off, src, len);
		for (i = 0; i < d.config_size; i++) {
			if (i < off || i >= off + len)
				CHECK(c[i] == before[i]);
			else
				CHECK(!(c[i] & ~before[i] & ~src[i - off]));
		}
		check_fixed(c, init, caps, ncaps, vf0 != NULL);
		check_bars(c, init, PCI_BASE_ADDRESS_0, d.bar);
		if (vf0)
			check_bars(c, init, 0x100 + PCI_SRIOV_BAR, vf.bar);
	}
	probe_bars(c, &d, vf0, PCI_BASE_ADDRESS_0, d.bar);
	if (vf0)
		probe_bars(c, &d, vf0, 0x100 + PCI_SRIOV_BAR, vf.bar);
	return 0;
}
