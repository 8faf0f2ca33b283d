/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated NTB fabric ("sim" platform).
 *
 * One directory per fabric (<shm_dir>/smartio-<name>/) holds:
 *   state            the shared state: lock, liveness, the core's registry
 *                    and the hardware model (LUTs, IOMMU tables, config
 *                    spaces, counters), mapped by every process of the fabric
 *   bar-<dev>-<n>.<e> the memory behind device BAR n, generation e (revoke.c)
 *   ram-<node>-<gen> the memory behind a segment of node
 * so that a resolved mapping is an mmap of a plain file: no software in
 * the data path.
 *
 * The directory is its owner's alone (0700), or with a group named when
 * opening, that group's (02770, files 0660): a process that finds it owned
 * by someone else, open to others, or not a directory at all refuses it,
 * and every file in it is opened relative to the directory it checked,
 * never through a symbolic link (issue 12, defect 1).
 */
#ifndef SIO_SIM_FABRIC_H
#define SIO_SIM_FABRIC_H

#include <pthread.h>
#include <sys/types.h>
#include "core.h"

#define SIM_MAGIC 0x53494d46u	/* "SIMF" */
#define SIM_VERSION 6
#define SIM_IOMMU_ENTRIES 1024	/* per node */
#define SIM_HEARTBEAT_MS 200
#define SIM_DEAD_MS 2000	/* heartbeat age that takes a stopped node down */
#define SIM_SILENT_MS 10000	/* ... and a node whose process runs */

struct sim_lut {
	u8 valid;
	u8 pad;
	u16 rid;		/* allowed requester */
	u32 src_node;		/* allowed source node */
	u32 target_node;
	u32 pad2;
	u64 target_addr;
	u64 len;		/* bytes of the slot that are mapped */
};

struct sim_iommu {
	u8 used;
	u8 pad;
	u16 rid;
	u32 src_node;
	u64 iova;
	u64 size;
	u64 phys;
};

/* A PCIe link carries each direction on its own lanes (ffLink section
 * 2): out of the device or node at that end, or into it. */
enum sim_link_dir { SIM_LINK_OUT, SIM_LINK_IN };

struct sim_node_hw {
	s32 owner_pid;		/* process serving the node, 0 = none */
	u32 pad;
	u64 owner_start;	/* its start time: tells a reused pid apart */
	u64 blocked;		/* transactions blocked at this node */
	u64 msi_count[SIO_MSI_VECTORS];
	/* Monotonic ns until which each adapter's link is taken, in each
	 * direction (enum sim_link_dir; pace.c). */
	u64 link_busy_ns[SIO_MAX_ADAPTERS][2];
};

/* Per device: its BAR memory's generation (revoke.c). */
struct sim_dev_hw {
	u32 epoch;		/* the BARs live in bar-<dev>-<n>.<epoch> */
	u32 want;		/* != epoch: a model is asked to move them */
	s32 runner_pid;		/* process whose model maps them, 0 = none */
	u32 pad;
	u64 runner_start;
	u64 link_busy_ns[2];	/* its own link is taken until (pace.c) */
};

struct sim_shared {
	u32 magic;		/* written last by the creator */
	u32 version;
	u64 size;
	pthread_mutex_t lock;	/* robust, process-shared */
	u32 change;		/* futex word: bumps on every state change */
	u32 pad_c;
	u64 reg_off, reg_size;
	u64 nodes_hw_off;	/* struct sim_node_hw[nnodes] */
	u64 luts_off;		/* struct sim_lut[nnodes][SIO_MAX_ADAPTERS][lut_max] */
	u32 lut_max;
	u32 repairs;		/* lock takeovers that found half-done state */
	u64 iommu_off;		/* struct sim_iommu[nnodes][SIM_IOMMU_ENTRIES] */
	u64 cfg_off;		/* config spaces, 4096 bytes per device slot */
	u64 cfg_stride;
	u64 devs_hw_off;	/* struct sim_dev_hw[ndevices] */
	u32 revoking;		/* revocations a model has yet to carry out */
	u32 no_pace;		/* the topology's fabric pace=off */
};

struct sim_models;	/* devmodel.c: the device-model runner */

/*
 * Backing files mapped for device DMA (dmamap.c), kept between transfers:
 * opening and mapping a file for every 64 KiB a DMA engine moves cost more
 * than the copy.  A key names one object for its whole life (a segment by
 * its generation, a BAR by its epoch), as its file's path does, so a
 * cached mapping never shows another's data; finding it by key spares
 * each transfer the formatting of that path, which took a fifth of a
 * multicast write to 59 members (and of the NVMe model's commands).
 */
struct sim_dmakey {
	u32 kind;		/* SIM_LOC_RAM or SIM_LOC_BAR */
	u32 a, b, c;		/* RAM: owner, generation; BAR: dev, bar, epoch */
};

/* A multicast write reaches up to 63 members' buffers at once: their
 * mappings and the writer's queues must all stay cached. */
#define SIM_DMAMAP_SLOTS 128
/* A key is looked for in this many slots from where its hash points. */
#define SIM_DMAMAP_PROBE 8
struct sim_dmamap {
	struct sim_dmakey key;
	u8 *base;
	size_t size;
};

struct sim_dmamaps {
	pthread_mutex_t lock;	/* held across a copy: no unmap under it */
	unsigned next;		/* round-robin victim among a key's slots */
	struct sim_dmamap slot[SIM_DMAMAP_SLOTS];
};

struct sim_fabric {
	struct sim_shared *sh;
	struct sio_registry *reg;
	struct sio_core core;
	char dir[256];
	int dirfd;		/* dir, checked; files are opened relative to it */
	int fd;
	mode_t file_mode;	/* 0600, or 0660 for a group's fabric */
	int grouped;		/* shared with the group gid */
	gid_t gid;
	u64 served;		/* node mask this process serves */
	pthread_t beat;
	int beat_running;
	int stop;		/* atomic: asks the heartbeat thread to end */
	struct sim_models *models;	/* models of the served nodes' devices */
	int pace;		/* this process paces the DMA it performs */
	struct sim_dmamaps dmamaps;
};

struct sim_open {
	const char *name;
	const char *shm_dir;
	const struct sio_topology *topo;	/* for creating */
	int create;		/* 1 create, 0 join, -1 either */
	/* The fabric is shared with this group (NULL: its owner's alone). */
	const char *group;
	char *err;		/* if set, a one-line reason for a refusal */
	size_t errlen;
};

/*
 * Creates or joins the fabric o names.  A state nobody has open is stale
 * and rebuilt when creating is allowed: one left unfinished by a creator
 * that died, or of another version, too (o->err then says so, though the
 * open succeeds); joining only, such a state is refused at once with
 * -EPROTO and the reason in o->err.
 */
int sim_fabric_open(struct sim_fabric *f, const struct sim_open *o);
/* Serve nodes (mask): claims them (-EBUSY if another live process does). */
int sim_fabric_serve(struct sim_fabric *f, u64 mask);
void sim_fabric_close(struct sim_fabric *f);
/*
 * Opens path, a file of the fabric directory (f->dir/<name>), relative to
 * the directory checked at open and never through a symbolic link; a file
 * created here gets the fabric's file mode.  An fd, or -errno.
 */
int sim_file_open(struct sim_fabric *f, const char *path, int flags);

/*
 * Copies between buf and [off, off+len) of the object key names, whose
 * backing file is path (dmamap.c).  path NULL: only if it is mapped
 * already, else -EAGAIN (the caller then finds the path and asks again).
 */
int sim_dmamap_copy(struct sim_fabric *f, const struct sim_dmakey *key,
		    const char *path, u64 off, void *buf, size_t len,
		    int write);
void sim_dmamap_init(struct sim_fabric *f);
void sim_dmamap_fini(struct sim_fabric *f);

int sim_lock_init(pthread_mutex_t *m);
void sim_lock(struct sim_fabric *f);
void sim_unlock(struct sim_fabric *f);
/* Failure detector pass; also run by the heartbeat thread. */
void sim_check_liveness(struct sim_fabric *f);
void sim_notify(struct sim_fabric *f);
int sim_wait_change(struct sim_fabric *f, u32 seen, int timeout_ms);

/*
 * Who has the fabric open (state_users.c).  sim_state_attach: this
 * handle's shared flock on its state fd, held until it closes.
 * sim_state_users, under the open lock: whether any handle (this one's
 * too) holds it; any_version also looks for a process that maps the
 * state, for states of versions that took no such flock.
 */
int sim_state_attach(int fd);
int sim_state_users(int dirfd, int any_version);

/* Hardware model (sio_plat.c). */
extern const struct sio_platform_ops sim_ops;
struct sim_lut *sim_lut_at(struct sim_fabric *f, u32 node, u32 adapter,
			   u32 slot);
struct sim_iommu *sim_iommu_at(struct sim_fabric *f, u32 node, u32 i);
struct sim_node_hw *sim_node_hw(struct sim_fabric *f, u32 node);
u8 *sim_cfg(struct sim_fabric *f, u32 dev);
void sim_cfg_init(struct sim_fabric *f, u32 dev);

/* Where a physical address of a node lands after translation. */
enum sim_loc_kind { SIM_LOC_RAM, SIM_LOC_BAR, SIM_LOC_MSI, SIM_LOC_MCAST };
struct sim_loc {
	int kind;
	s32 adapter;		/* DMA: the NTB adapter it left by, -1 none */
	u32 node;		/* where the bytes are */
	u32 index;		/* segment or device index */
	u32 bar;
	u64 offset;		/* into the backing file */
	u64 avail;		/* bytes from offset to the end of the object */
};

/* CPU of `node` accessing phys address addr (len bytes). */
int sim_translate_cpu(struct sim_fabric *f, u32 node, u64 addr, u64 len,
		      struct sim_loc *out);
/* Device DMA from (node, rid) to device-side address addr. */
int sim_translate_dma(struct sim_fabric *f, u32 node, u16 rid, u64 addr,
		      u64 len, struct sim_loc *out);
int sim_backing_path(struct sim_fabric *f, const struct sim_loc *loc,
		     char *path, size_t len);
/* The key of where loc lands (RAM or BAR), read from the registry under
 * sim_lock; -ENXIO for other places. */
int sim_dmakey_of(struct sim_fabric *f, const struct sim_loc *loc,
		  struct sim_dmakey *key);
/* sim_dmamap_copy of len bytes at loc, whose key is key, without
 * sim_lock held: it takes the lock to find the path only when the object
 * is not mapped yet (sio_plat.c). */
int sim_loc_copy(struct sim_fabric *f, const struct sim_loc *loc,
		 const struct sim_dmakey *key, void *buf, size_t len,
		 int write);
/* Writes len bytes of buf at each of n (at most 64) places under one hold
 * of the mappings' lock: a bit per place not mapped yet, which the caller
 * then writes with sim_loc_copy (dmamap.c). */
u64 sim_dmamap_write_many(struct sim_fabric *f, const struct sim_loc *loc,
			  const struct sim_dmakey *key, u32 n, void *buf,
			  size_t len);
/* Device dev's DMA: a copy to (write) or from the device-side address
 * addr, paced (pace.c): returns when the transaction would complete. */
int sim_dma(struct sim_fabric *f, u32 dev, u64 addr, void *buf, size_t len,
	    int write);
/* The same without waiting: *done_ns is when the transaction completes
 * (CLOCK_MONOTONIC), 0 when it is not paced; for device models, which
 * hold back what depends on it (a completion) until then. */
int sim_dma_start(struct sim_fabric *f, u32 dev, u64 addr, void *buf,
		  size_t len, int write, u64 *done_ns);

/*
 * Pacing (pace.c): device DMA takes the time the simulated PCIe path
 * would (its slowest link's rate, shared by everything crossing it, and
 * each chip's latency), CPU loads and stores never.  On unless the
 * topology says fabric pace=off; SMARTIO_PACE=on|off in the environment
 * decides for the DMA this process performs.
 */
void sim_pace_init(struct sim_fabric *f);
/* Under the lock: reserves the links of dev's transaction of len bytes to
 * loc (reached as sim_translate_dma found it); its completion time. */
u64 sim_pace_reserve(struct sim_fabric *f, u32 dev, const struct sim_loc *loc,
		     size_t len, int write);
u64 sim_pace_reserve_many(struct sim_fabric *f, u32 dev,
			  const struct sim_loc *loc, u32 nloc, size_t len,
			  int write);
/* Device dev's write of len bytes at offset off of multicast group group,
 * replicated to its members (mcast.c); takes the fabric lock. */
int sim_mcast_write(struct sim_fabric *f, u32 dev, u32 group, u64 off,
		    void *buf, size_t len, u64 *done_ns);
/* Monotonic ns now; waits (sleeps, then spins) until t. */
u64 sim_now_ns(void);
void sim_wait_until(u64 t);

/* Revoking BAR mappings when a borrow ends (revoke.c). */
struct sim_dev_hw *sim_dev_hw(struct sim_fabric *f, u32 dev);
int sim_bar_path(struct sim_fabric *f, u32 dev, u32 bar, u32 epoch,
		 char *path, size_t len);
/* Under the lock: every mapping of dev's BARs made so far is to fault. */
void sim_bar_revoke(struct sim_fabric *f, u32 dev);
/* Under the lock: moves dev's BARs to fresh files now; maps[b] (or NULL)
 * are the caller's mappings, moved onto the new files. */
int sim_bar_renew(struct sim_fabric *f, u32 dev, u8 *const maps[]);
/* Without the lock: waits for the revocations models carry out. */
void sim_revoke_settle(struct sim_fabric *f);
/* Whether a live process runs dev's model (fabric.c). */
int sim_runner_alive(struct sim_fabric *f, u32 dev);
/* This process runs dev's model from now on, or (0) no longer. */
void sim_runner_set(struct sim_fabric *f, u32 dev, int running);

#endif /* SIO_SIM_FABRIC_H */
