/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * 32-bit register access through a BAR mapped from /smartio, for the
 * contrib tools that drive a device themselves (smartio-nvme,
 * smartio-dma-copy): a load acquires and a store releases, so what a
 * register write starts sees the memory written before it.
 */
#ifndef SMARTIO_CONTRIB_MMIO_H
#define SMARTIO_CONTRIB_MMIO_H

#include <stdint.h>

static inline uint32_t mmio_rd32(volatile uint8_t *bar, unsigned int off)
{
	return __atomic_load_n((volatile uint32_t *)(bar + off),
			       __ATOMIC_ACQUIRE);
}

static inline void mmio_wr32(volatile uint8_t *bar, unsigned int off,
			     uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(bar + off), v, __ATOMIC_RELEASE);
}

#endif
