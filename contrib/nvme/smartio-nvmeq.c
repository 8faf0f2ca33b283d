// SPDX-License-Identifier: MIT
/*
 * smartio-nvmeq: one NVMe shared by programs on any node of the cluster,
 * each with an I/O queue pair of its own (see nvmeq.h and
 * smartio-nvmeq(1)).
 *
 *   smartio-nvmeq [-m mount] [-d dev] [-M node] manage [-v]
 *   smartio-nvmeq [-m mount] [-d dev] [-M node] status
 *   smartio-nvmeq [...] read LBA BLOCKS          (to standard output)
 *   smartio-nvmeq [...] write LBA                (standard input)
 *   smartio-nvmeq [...] check [-l LBA] [-n BLOCKS] [-s SEED] [-k]
 *   smartio-nvmeq [...] bench [-q DEPTH] [-r READS] [-l LBA] [-n BLOCKS]
 *                             [-a EPOCH]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "numparse.h"
#include "nvmeq.h"

static const char *dev = "nvme0", *mgr;

static void usage(void)
{
	fprintf(stderr,
		"usage: smartio-nvmeq [-m mount] [-d dev] [-M node] command\n"
		"  manage [-v]             serve the device's queue pairs\n"
		"  status                  the manager and its clients\n"
		"  read LBA BLOCKS         blocks to standard output\n"
		"  write LBA               standard input (whole blocks) to LBA\n"
		"  check [-l LBA] [-n BLOCKS] [-s SEED] [-k]\n"
		"                          write a pattern, read it back (-k: "
		"only check)\n"
		"  bench [-q DEPTH] [-r READS] [-l LBA] [-n BLOCKS] [-a EPOCH]\n"
		"                          random 4 KiB reads: IOPS, p50, p99\n"
		"                          (-a: start them at EPOCH, a time in\n"
		"                          seconds, so that clients run together)\n");
	exit(2);
}

/* A decimal or 0x number, all of arg, at most max; exits on anything else. */
static uint64_t number(const char *arg, uint64_t max, const char *what)
{
	u64 v;

	if (sio_parse_u64(arg, strlen(arg), 0, &v) || v > max) {
		fprintf(stderr, "smartio-nvmeq: bad %s '%s'\n", what, arg);
		exit(2);
	}
	return v;
}

static const char *const state_names[] = {
	"free", "claimed", "requested", "ready", "failed", "releasing",
};

static int status(const struct sfiles *sf)
{
	char who[64] = "";
	volatile struct nvmeq_ctl *ctl;
	unsigned i, used = 0;

	if (mgr)
		snprintf(who, sizeof(who), "%s", mgr);
	if (nvmeq_control(sf, dev, who, sizeof(who), &ctl))
		return 1;
	printf("%s: manager on %s (pid %u), %s, %llu blocks, %u queue pairs\n",
	       dev, who, ctl->manager_pid,
	       ctl->state == NVMEQ_SERVING ? "serving" : "not serving",
	       (unsigned long long)ctl->blocks, ctl->nslots);
	for (i = 0; i < ctl->nslots; i++) {
		volatile struct nvmeq_slot *s = &ctl->slot[i];
		char node[sizeof(s->node)];

		if (s->state == NVMEQ_FREE || s->state > NVMEQ_RELEASE)
			continue;
		memcpy(node, (const void *)s->node, sizeof(node));
		node[sizeof(node) - 1] = '\0';
		printf("queue %u: %s, %s pid %u, %u entries\n", i + 1,
		       state_names[s->state], node, s->pid, s->qsize);
		used++;
	}
	printf("%u of %u queue pairs in use\n", used, ctl->nslots);
	munmap((void *)ctl, NVMEQ_CTL_SIZE);
	return 0;
}

/* Byte j of block lba for seed: what check writes and reads back. */
static uint8_t pattern(uint64_t lba, unsigned j, unsigned seed)
{
	return (uint8_t)(lba * 7 + j * 13 + (j >> 8) + seed * 101);
}

static int check(struct nvmeq_client *c, uint64_t lba, unsigned blocks,
		 unsigned seed, int keep)
{
	size_t len = (size_t)blocks * NVMEQ_LBA, i;
	uint8_t *buf = malloc(len);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (!keep) {
		for (i = 0; i < len; i++)
			buf[i] = pattern(lba + i / NVMEQ_LBA, i % NVMEQ_LBA, seed);
		err = nvmeq_write(c, buf, len, lba);
	}
	if (!err) {
		memset(buf, 0, len);
		err = nvmeq_read(c, buf, len, lba);
	}
	for (i = 0; !err && i < len; i++) {
		if (buf[i] != pattern(lba + i / NVMEQ_LBA, i % NVMEQ_LBA, seed)) {
			fprintf(stderr, "smartio-nvmeq: block %llu differs\n",
				(unsigned long long)(lba + i / NVMEQ_LBA));
			free(buf);
			return 1;
		}
	}
	free(buf);
	if (!err)
		printf("%s %u blocks at %llu through queue %u of %s from %s: "
		       "verified\n", keep ? "read" : "wrote and read back",
		       blocks, (unsigned long long)lba, c->q.qid, dev,
		       c->sf->self);
	return err;
}

/* Sleeps until the wall-clock time at (seconds); says so if it is past. */
static void start_at(double at)
{
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (now > at) {
		fprintf(stderr, "smartio-nvmeq: connected %.3f s after the "
			"start time\n", now - at);
		return;
	}
	ts.tv_sec = (time_t)at;
	ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
	clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
}

static int bench(struct nvmeq_client *c, unsigned long reads, uint64_t lba,
		 uint64_t blocks, double at)
{
	double *lat = calloc(reads, sizeof(*lat)), secs = 0;
	int err;

	if (!lat)
		return -ENOMEM;
	if (at > 0)
		start_at(at);
	err = nvmeq_random_reads(c, reads, lba, blocks, lat, &secs);
	if (!err)
		printf("random 4 KiB reads through queue %u of %s from %s, "
		       "depth %u: %lu in %.3f s, %.0f IOPS, p50 %.1f us, "
		       "p99 %.1f us\n", c->q.qid, dev, c->sf->self, c->depth,
		       reads, secs, (double)reads / secs, lat[reads / 2],
		       lat[reads * 99 / 100]);
	free(lat);
	return err;
}

static int copy_out(struct nvmeq_client *c, uint64_t lba, uint64_t blocks)
{
	uint8_t *buf = malloc(NVMEQ_MAX_XFER * 8);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (blocks && !err) {
		uint64_t n = blocks < NVMEQ_MAX_XFER * 8 / NVMEQ_LBA ?
			     blocks : NVMEQ_MAX_XFER * 8 / NVMEQ_LBA;

		err = nvmeq_read(c, buf, n * NVMEQ_LBA, lba);
		if (!err && fwrite(buf, NVMEQ_LBA, n, stdout) != n)
			err = -EIO;
		lba += n;
		blocks -= n;
	}
	free(buf);
	return err;
}

static int copy_in(struct nvmeq_client *c, uint64_t lba)
{
	uint8_t *buf = malloc(NVMEQ_MAX_XFER * 8);
	uint64_t total = 0;
	size_t n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && (n = fread(buf, 1, NVMEQ_MAX_XFER * 8, stdin)) > 0) {
		if (n % NVMEQ_LBA) {
			fprintf(stderr, "smartio-nvmeq: input of %llu bytes is "
				"not whole 512-byte blocks; the last %zu bytes "
				"were not written\n",
				(unsigned long long)(total + n), n % NVMEQ_LBA);
			n -= n % NVMEQ_LBA;
			err = -EINVAL;
		}
		if (n && nvmeq_write(c, buf, n, lba))
			err = -EIO;
		lba += n / NVMEQ_LBA;
		total += n;
	}
	if (!err)
		err = nvmeq_flush(c);
	free(buf);
	return err;
}

int main(int argc, char **argv)
{
	const char *mnt = "/smartio";
	unsigned long reads = 10000;
	uint64_t lba = 0, blocks = 64;
	unsigned depth = 1, seed = 1;
	double at = 0;
	int opt, keep = 0, verbose = 0, err;
	struct nvmeq_client c;
	struct sfiles sf;
	const char *cmd;

	while ((opt = getopt(argc, argv, "+m:d:M:")) != -1) {
		switch (opt) {
		case 'm': mnt = optarg; break;
		case 'd': dev = optarg; break;
		case 'M': mgr = optarg; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	cmd = argv[optind];
	optind++;
	while ((opt = getopt(argc, argv, "+l:n:s:kq:r:va:")) != -1) {
		switch (opt) {
		case 'a': at = (double)number(optarg, 1ull << 40, "start time"); break;
		case 'l': lba = number(optarg, UINT64_MAX / 2, "LBA"); break;
		case 'n': blocks = number(optarg, 1u << 24, "block count"); break;
		case 's': seed = (unsigned)number(optarg, 1u << 30, "seed"); break;
		case 'k': keep = 1; break;
		case 'q': depth = (unsigned)number(optarg, 63, "depth"); break;
		case 'r': reads = number(optarg, 10000000, "read count"); break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	err = sf_init(&sf, mnt);
	if (err) {
		fprintf(stderr, "smartio-nvmeq: %s is not a /smartio mount: %s\n",
			mnt, strerror(-err));
		return 1;
	}
	if (!strcmp(cmd, "manage") && optind == argc)
		return nvmeq_manage(&sf, dev, verbose);
	if (!strcmp(cmd, "status") && optind == argc)
		return status(&sf);
	if (!strcmp(cmd, "read") && optind + 2 == argc) {
		lba = number(argv[optind], UINT64_MAX / 2, "LBA");
		blocks = number(argv[optind + 1], UINT64_MAX / 2, "block count");
	} else if (!strcmp(cmd, "write") && optind + 1 == argc) {
		lba = number(argv[optind], UINT64_MAX / 2, "LBA");
	} else if ((strcmp(cmd, "check") && strcmp(cmd, "bench")) ||
		   optind != argc || !blocks || !reads || !depth) {
		usage();
	}
	if (nvmeq_connect(&c, &sf, dev, mgr, depth))
		return 1;
	if (!strcmp(cmd, "check"))
		err = check(&c, lba, (unsigned)blocks, seed, keep);
	else if (!strcmp(cmd, "bench"))
		err = bench(&c, reads, lba, blocks, at);
	else if (!strcmp(cmd, "read"))
		err = copy_out(&c, lba, blocks);
	else
		err = copy_in(&c, lba);
	nvmeq_disconnect(&c);
	if (err < 0)
		fprintf(stderr, "smartio-nvmeq: %s failed: %s\n", cmd,
			strerror(-err));
	return err ? 1 : 0;
}
