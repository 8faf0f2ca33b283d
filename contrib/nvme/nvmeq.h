/* SPDX-License-Identifier: MIT */
/*
 * smartio-nvmeq: one NVMe shared by many programs on many nodes, as
 * SmartIO's distributed NVMe driver shares it (SmartIO sections 6.2 and
 * 7.4.2).  A manager owns the controller and its admin queue; each client
 * keeps an I/O queue pair in a segment of its own node's memory, mapped for
 * the device, and rings its own doorbells: the manager creates and deletes
 * the queues and is never in the data path.
 *
 *   sfiles.c          the /smartio files the tool uses (smartio(7))
 *   nvmeq_queue.c     a queue pair: submit, reap, NVMe commands
 *   nvmeq_manager.c   the manager: bring-up, the control block's requests
 *   nvmeq_client.c    a client: a queue pair from the manager, block I/O
 *   smartio-nvmeq.c   the command line
 *
 * Everything goes through /smartio files, so the tool runs the same on the
 * simulated cluster and over smartio.ko.
 */
#ifndef SMARTIO_NVMEQ_H
#define SMARTIO_NVMEQ_H

#include <stddef.h>
#include <stdint.h>

/* --- the /smartio files (sfiles.c) -------------------------------------- */
struct sfiles {
	char mnt[256];		/* the mount, /smartio by default */
	char self[64];		/* this node's name */
};

int sf_init(struct sfiles *sf, const char *mnt);
/* mnt/rel, printf-style; -ENAMETOOLONG if it does not fit. */
int sf_path(const struct sfiles *sf, char *buf, size_t len,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* One write(2) of value to rel, as smartio(7) wants; 0 or -errno. */
int sf_put(const struct sfiles *sf, const char *rel, const char *value);
/* The text of rel without its trailing newlines; 0 or -errno. */
int sf_get(const struct sfiles *sf, const char *rel, char *buf, size_t len);
/* mmap of what rel leads to (its whole size if *size is 0); NULL: errno. */
void *sf_map(const struct sfiles *sf, const char *rel, size_t *size);
/* The same for any path (a file of another mount, a device's BAR). */
void *sf_map_path(const char *path, size_t *size);
/* This node borrows dev unless it holds it (lends it or borrows it). */
int sf_hold_device(const struct sfiles *sf, const char *dev);
/* Memory decoding and bus mastering on in dev's command register. */
int sf_enable_device(const struct sfiles *sf, const char *dev);

/* A segment of this node's memory, mapped for a device. */
struct sf_segment {
	char name[64];
	void *mem;
	size_t size;
	uint64_t io;		/* the device's address of it */
};

/* The node owning a segment named name, in who; -ENOENT if none. */
int sf_segment_owner(const struct sfiles *sf, const char *name, char *who,
		     size_t len);
int sf_segment_make(const struct sfiles *sf, struct sf_segment *s,
		    const char *name, size_t size, const char *dev);
void sf_segment_remove(const struct sfiles *sf, struct sf_segment *s,
		       const char *dev);

/* --- a queue pair (nvmeq_queue.c) --------------------------------------- */
#define NVMEQ_PAGE 4096u
#define NVMEQ_LBA 512u
#define NVMEQ_MAX_XFER (128u << 10)	/* MDTS 5 of the smartio NVMe model */

struct nvmeq_qp {
	volatile uint8_t *sq, *cq;	/* entries, as this CPU sees them */
	volatile uint32_t *sq_db, *cq_db;
	uint32_t size, sq_tail, cq_head, phase, qid;
	uint32_t busy;			/* commands submitted, not reaped */
};

struct nvmeq_cqe {
	uint32_t result;
	uint16_t cid, status;		/* status: SC | SCT << 8, 0 is success */
};

void nvmeq_cmd(uint8_t *c, uint8_t op, uint32_t nsid, uint64_t prp1,
	       uint64_t prp2, uint32_t c10, uint32_t c11, uint32_t c12);
/* Queues c (its cid set to cid) and rings the doorbell; -EBUSY if full. */
int nvmeq_submit(struct nvmeq_qp *q, uint8_t *c, uint16_t cid);
/* The next completion if there is one (1), or 0; frees its SQ slot. */
int nvmeq_reap(struct nvmeq_qp *q, struct nvmeq_cqe *e);
/* How many completions wait to be reaped, without reaping them. */
uint32_t nvmeq_ready(const struct nvmeq_qp *q);
/* Submit and wait up to 10 s: the status, or -ETIMEDOUT. */
int nvmeq_run(struct nvmeq_qp *q, uint8_t *c, uint32_t *result);
/* Waits a little for a completion: short naps, never a busy spin. */
void nvmeq_nap(void);
void nvmeq_nap_us(unsigned us);	/* a nap of that many microseconds */

/* --- the control block: the manager's exported segment ----------------- */
#define NVMEQ_MAGIC 0x514d564eu		/* "NVMQ" */
#define NVMEQ_VERSION 1u
#define NVMEQ_SLOTS 31u			/* I/O queue ids 1..31 */
#define NVMEQ_CTL_SIZE (64u << 10)

enum nvmeq_slot_state {
	NVMEQ_FREE,	/* nobody */
	NVMEQ_CLAIMED,	/* a client is filling it in */
	NVMEQ_REQUEST,	/* asks the manager for queues at sq_io, cq_io */
	NVMEQ_READY,	/* queue qid exists: the client's to use */
	NVMEQ_FAILED,	/* the manager refused: status says why */
	NVMEQ_RELEASE,	/* the client is done: delete the queues */
};

enum nvmeq_ctl_state {
	NVMEQ_STARTING,
	NVMEQ_SERVING,
	NVMEQ_STOPPED,	/* queues deleted, controller off: clients leave */
};

struct nvmeq_slot {
	uint32_t state;		/* enum nvmeq_slot_state */
	uint32_t qsize;		/* entries of both queues */
	uint64_t sq_io, cq_io;	/* device addresses, page aligned */
	int32_t status;		/* NVMe status, or -errno from the manager */
	uint32_t pid;		/* the client's, on its node */
	char node[64];		/* the client's node */
	char segment[64];	/* its queue segment: gone means client gone */
	uint8_t pad[8];
};

struct nvmeq_ctl {
	uint32_t magic, version;
	uint32_t state;		/* enum nvmeq_ctl_state */
	uint32_t nslots;	/* usable slots: the controller's I/O queues */
	uint64_t blocks;	/* namespace 1, 512-byte blocks */
	uint32_t db_stride;	/* bytes between doorbells */
	uint32_t max_entries;	/* per queue (CAP.MQES + 1) */
	uint32_t manager_pid;
	char manager_node[64];
	uint8_t pad[36];
	struct nvmeq_slot slot[NVMEQ_SLOTS];
};

_Static_assert(sizeof(struct nvmeq_slot) == 168, "slot layout");
_Static_assert(offsetof(struct nvmeq_ctl, slot) == 136, "header layout");
_Static_assert(sizeof(struct nvmeq_ctl) <= NVMEQ_CTL_SIZE, "control block");

/* The control segment's name: nvmeq-<dev>. */
#define NVMEQ_CTL_FMT "nvmeq-%s"

/* --- the manager (nvmeq_manager.c) -------------------------------------- */
/* Serves dev until SIGINT or SIGTERM; 0, or 1 with a message printed. */
int nvmeq_manage(const struct sfiles *sf, const char *dev, int verbose);

/* --- a client (nvmeq_client.c) ------------------------------------------ */
struct nvmeq_client {
	const struct sfiles *sf;
	char dev[32], mgr[32];
	volatile struct nvmeq_ctl *ctl;
	unsigned slot;
	volatile uint8_t *bar;
	size_t bar_size;
	struct sf_segment seg;
	struct nvmeq_qp q;
	unsigned depth;		/* commands in flight at most */
	uint64_t blocks;
	double wait_us;		/* how long a completion takes to come (EWMA) */
	double oversleep_us;	/* how much longer than asked a sleep takes */
	double batch_us;	/* the sleep with several in flight */
};

/* dev's control block: from node mgr, or found (mgr "": written back),
 * attached for this node and checked; 0, or -errno with a message. */
int nvmeq_control(const struct sfiles *sf, const char *dev, char *mgr,
		  size_t mgrlen, volatile struct nvmeq_ctl **out);
/* Finds dev's manager (mgr NULL: any node serving it), gets a queue pair
 * of depth entries in flight; 0 or -errno with a message printed. */
int nvmeq_connect(struct nvmeq_client *c, const struct sfiles *sf,
		  const char *dev, const char *mgr, unsigned depth);
void nvmeq_disconnect(struct nvmeq_client *c);
/* Whole blocks: len a multiple of 512, any size (split in commands). */
int nvmeq_read(struct nvmeq_client *c, void *buf, size_t len, uint64_t lba);
int nvmeq_write(struct nvmeq_client *c, const void *buf, size_t len,
		uint64_t lba);
int nvmeq_flush(struct nvmeq_client *c);
/* n random 4 KiB reads in [lba, lba + blocks), depth in flight: the
 * latencies in us (n of them, sorted), their total time in *secs. */
int nvmeq_random_reads(struct nvmeq_client *c, unsigned long n, uint64_t lba,
		       uint64_t blocks, double *lat, double *secs);

#endif
