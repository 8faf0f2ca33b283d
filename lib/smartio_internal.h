/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What lies behind a libsmartio handle, for the project's own tests of the
 * core and the simulator.  Not installed and not exported from the shared
 * library (only smartio_* symbols are).
 */
#ifndef SMARTIO_INTERNAL_H
#define SMARTIO_INTERNAL_H

#include "smartio.h"
#include "sim/fabric.h"

struct sim_fabric *sio_lib_fabric(struct smartio *h);
/* Runs a command being built in m as the handle's node; the core's errno. */
/* The registry lock of the handle's transport (a fresh copy for kernel). */
void sio_lib_lock(struct smartio *h);
void sio_lib_unlock(struct smartio *h);
/* The registry queries read: between sio_lib_lock() and sio_lib_unlock()
 * only, since the next lock of any thread may free it. */
struct sio_registry *sio_lib_reg(struct smartio *h);
/* A u32 count of the registry's header (nnodes, ...), read under the lock. */
u32 sio_lib_reg_count(struct smartio *h, size_t off);
#define SIO_LIB_REG_COUNT(h, field) \
	sio_lib_reg_count((h), offsetof(struct sio_registry, field))
/* Test hook: every lock of this (simulated) handle reads a fresh copy of the
 * registry and frees the one before, as the kernel transport may. */
void sio_lib_copy_registry(struct smartio *h);
/* 1 over smartio.ko: no simulated hardware behind the registry. */
int sio_lib_is_kernel(const struct smartio *h);
int sio_lib_command(struct smartio *h, struct sio_msg *m, uint64_t *addr_out);

#endif
