// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Revoking the BAR mappings of a device that was returned or reclaimed
 * (issue 12, defect 10).  smartio.ko zaps a borrower's mappings of a BAR
 * when the borrow ends (later accesses raise SIGBUS); here a mapping is an
 * mmap of the BAR's backing file, so the device's memory moves to a fresh
 * file (bar-<dev>-<n>.<epoch+1>, a copy) and the old file is emptied and
 * unlinked: every mapping made before faults with SIGBUS, and the device
 * model, which maps the BARs too, is moved onto the new file first.
 *
 * The sharers of a device map the same file, so mappings are revoked when
 * the last borrower leaves: in shared mode one sharer's return leaves the
 * others' (and its own) mappings in place until then.
 *
 * The device's model runs in the process that serves its lender, which may
 * not be the one that ends the borrow: that process only asks (want), the
 * model's runner moves the files and the asker waits for it outside the
 * fabric lock (sim_revoke_settle).  A device with no model running is
 * moved at once, under the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "devmodel.h"

struct sim_dev_hw *sim_dev_hw(struct sim_fabric *f, u32 dev)
{
	return (struct sim_dev_hw *)((u8 *)f->sh + f->sh->devs_hw_off) + dev;
}

int sim_bar_path(struct sim_fabric *f, u32 dev, u32 bar, u32 epoch,
		 char *path, size_t len)
{
	int n = snprintf(path, len, "%s/bar-%s-%u.%u", f->dir,
			 sio_dev(f->reg, dev)->name, bar, epoch);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Copies the data of from into to, leaving holes holes (BARs are sparse). */
static int copy_data(int from, int to, u64 size)
{
	static __thread u8 buf[65536];
	off_t pos = 0, end;
	ssize_t n;

	while ((u64)pos < size) {
		pos = lseek(from, pos, SEEK_DATA);
		if (pos < 0)
			return errno == ENXIO ? 0 : -errno;
		end = lseek(from, pos, SEEK_HOLE);
		if (end < 0)
			return -errno;
		while (pos < end) {
			size_t want = (size_t)(end - pos) < sizeof(buf) ?
				      (size_t)(end - pos) : sizeof(buf);

			n = pread(from, buf, want, pos);
			if (n <= 0)
				return n < 0 ? -errno : 0;
			if (pwrite(to, buf, (size_t)n, pos) != n)
				return -EIO;
			pos += n;
		}
	}
	return 0;
}

/* BAR b of dev from epoch e to e + 1; maps (may be NULL) follows it. */
static int renew_bar(struct sim_fabric *f, u32 dev, u32 b, u32 e, u8 *map)
{
	u64 size = sio_dev(f->reg, dev)->bar[b].size;
	char oldp[320], newp[320];
	int ofd, nfd, err;

	err = sim_bar_path(f, dev, b, e, oldp, sizeof(oldp));
	if (!err)
		err = sim_bar_path(f, dev, b, e + 1, newp, sizeof(newp));
	if (err)
		return err;
	ofd = sim_file_open(f, oldp, O_RDWR);
	if (ofd == -ENOENT)
		return 0;	/* never used: nothing to revoke */
	if (ofd < 0)
		return ofd;
	nfd = sim_file_open(f, newp, O_RDWR | O_CREAT | O_EXCL);
	if (nfd == -EEXIST && !unlinkat(f->dirfd, strrchr(newp, '/') + 1, 0))
		nfd = sim_file_open(f, newp, O_RDWR | O_CREAT | O_EXCL);
	if (nfd < 0) {
		close(ofd);
		return nfd;
	}
	err = ftruncate(nfd, (off_t)size) < 0 ? -errno : copy_data(ofd, nfd, size);
	if (!err && map && mmap(map, size, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_FIXED, nfd, 0) == MAP_FAILED)
		err = -errno;
	if (err) {
		unlinkat(f->dirfd, strrchr(newp, '/') + 1, 0);
	} else {
		/* Every mapping of the old file now faults (SIGBUS). */
		if (ftruncate(ofd, 0) < 0)
			err = -errno;
		unlinkat(f->dirfd, strrchr(oldp, '/') + 1, 0);
	}
	close(nfd);
	close(ofd);
	return err;
}

int sim_bar_renew(struct sim_fabric *f, u32 dev, u8 *const maps[])
{
	struct sim_dev_hw *hw = sim_dev_hw(f, dev);
	u32 e = hw->epoch, b;
	int err = 0;

	for (b = 0; b < SIO_MAX_BARS && !err; b++)
		if (sio_dev(f->reg, dev)->bar[b].size)
			err = renew_bar(f, dev, b, e, maps ? maps[b] : NULL);
	/* Even after an error: what moved stays moved, mappings go stale. */
	__atomic_store_n(&hw->epoch, e + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&hw->want, e + 1, __ATOMIC_RELEASE);
	return err;
}

void sim_bar_revoke(struct sim_fabric *f, u32 dev)
{
	struct sim_dev_hw *hw = sim_dev_hw(f, dev);

	if (hw->want != hw->epoch)
		return;	/* already asked */
	if (!sim_runner_alive(f, dev)) {
		sim_bar_renew(f, dev, NULL);
		return;
	}
	__atomic_store_n(&hw->want, hw->epoch + 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&f->sh->revoking, 1, __ATOMIC_RELEASE);
	sim_notify(f);
}

static u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000u + (u64)ts.tv_nsec / 1000000u;
}

/*
 * Waits until the models asked to move have moved (or their processes are
 * gone: then it moves them itself), so that a return is complete when the
 * call that made it returns.
 */
void sim_revoke_settle(struct sim_fabric *f)
{
	u64 start = now_ms();
	u32 dev, left, seen;

	if (!__atomic_load_n(&f->sh->revoking, __ATOMIC_ACQUIRE))
		return;
	for (;;) {
		seen = __atomic_load_n(&f->sh->change, __ATOMIC_ACQUIRE);
		left = 0;
		sim_lock(f);
		for (dev = 0; dev < f->reg->ndevices; dev++) {
			struct sim_dev_hw *hw = sim_dev_hw(f, dev);

			if (hw->want == hw->epoch)
				continue;
			if (!sim_runner_alive(f, dev)) {
				sim_bar_renew(f, dev, NULL);
				__atomic_sub_fetch(&f->sh->revoking, 1,
						   __ATOMIC_RELEASE);
				continue;
			}
			left++;
		}
		sim_unlock(f);
		/* A runner that does not answer (a stopped process) moves its
		 * device when it runs again; the caller goes on. */
		if (!left || now_ms() - start > SIM_DEAD_MS)
			return;
		sim_wait_change(f, seen, 50);
	}
}

/* The model runner's side: moves its device when asked. */
int sim_model_follow(struct sim_devmodel *m)
{
	struct sim_dev_hw *hw = sim_dev_hw(m->f, m->dev);
	int err;

	if (__atomic_load_n(&hw->want, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&hw->epoch, __ATOMIC_ACQUIRE))
		return 0;
	sim_lock(m->f);
	err = 0;
	if (hw->want != hw->epoch) {
		err = sim_bar_renew(m->f, m->dev, m->bar);
		__atomic_sub_fetch(&m->f->sh->revoking, 1, __ATOMIC_RELEASE);
	}
	sim_unlock(m->f);
	sim_notify(m->f);
	return err ? err : 1;
}
