// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * race [ROUNDS] [RACERS]: RACERS processes (32 by default), each serving its
 * own node of one simulated fabric, race to borrow one exclusive device of
 * a lender process, ROUNDS times (1000 by default).  Every round exactly one
 * borrow must succeed and every other must fail with EBUSY; the winner
 * returns the device before the next round.  Afterwards every LUT and
 * requester entry of every adapter is free again.
 *
 * The processes meet at a process-shared barrier before each round, so all
 * of them are inside smartio_borrow() at about the same time.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "smartio.h"

#define MAX_RACERS 63

struct shared {
	pthread_barrier_t go, done, checked, next;
	int result[MAX_RACERS];
	int returned[MAX_RACERS];
	int stop;
};

static struct shared *sh;

static void usage_fail(const char *what, int rc)
{
	fprintf(stderr, "race: %s: %s\n", what, smartio_strerror(rc));
	exit(1);
}

static void topology(const char *path, int racers)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		usage_fail(path, -errno);
	fprintf(f, "node lender id=100\n");
	fprintf(f, "adapter lender ntb0 peers=all\n");
	for (i = 0; i < racers; i++)
		fprintf(f, "node r%d id=%d\nadapter r%d ntb0 peers=all\n", i, i, i);
	fprintf(f, "device lender nvme0 bdf=0000:01:00.0 vendor=0x1b36 "
		   "device=0x0010 class=0x010802 bar0=16K,64\n");
	fclose(f);
}

static void racer(const char *fabric, int me, int rounds)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h;
	char node[16];
	int r, dev, rc;

	snprintf(node, sizeof(node), "r%d", me);
	o.fabric = fabric;
	o.node = node;
	rc = smartio_open(&h, &o);
	if (rc) {
		fprintf(stderr, "race: r%d: join: %s\n", me, smartio_strerror(rc));
		_exit(2);
	}
	dev = smartio_device_find(h, "nvme0");
	for (r = 0; r < rounds; r++) {
		pthread_barrier_wait(&sh->go);
		if (sh->stop)
			break;
		rc = smartio_borrow(h, (unsigned)dev, smartio_self(h));
		sh->result[me] = rc;
		pthread_barrier_wait(&sh->done);
		/* The parent looks at the device while the winner holds it. */
		pthread_barrier_wait(&sh->checked);
		sh->returned[me] = rc ? 0 : smartio_return(h, (unsigned)dev,
							   smartio_self(h));
		pthread_barrier_wait(&sh->next);
	}
	smartio_close(h);
	_exit(0);
}

/* Sum of used LUT and requester entries over every adapter of the fabric. */
static void usage(struct smartio *h, unsigned *luts, unsigned *reqs)
{
	struct smartio_node_info ni;
	struct smartio_adapter_info ai;
	unsigned n, a;

	*luts = *reqs = 0;
	for (n = 0; n < smartio_node_count(h); n++) {
		smartio_node_info(h, n, &ni);
		for (a = 0; a < ni.nadapters; a++) {
			smartio_adapter_info(h, n, a, &ai);
			*luts += ai.luts_used;
			*reqs += ai.req_used;
		}
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;
	int racers = argc > 2 ? atoi(argv[2]) : 32;
	struct smartio_open_opts o = { 0 };
	struct smartio_device_info di;
	pthread_barrierattr_t ba;
	struct smartio *h;
	char fabric[64], topo[128];
	unsigned luts0, reqs0, luts, reqs, up = 0;
	int i, r, rc, dev, bad = 0, status;
	long busy = 0, wins = 0;
	pid_t pid[MAX_RACERS];

	if (rounds < 1 || racers < 2 || racers > MAX_RACERS) {
		fprintf(stderr, "usage: race [ROUNDS] [RACERS (2..%d)]\n", MAX_RACERS);
		return 2;
	}
	snprintf(fabric, sizeof(fabric), "stress-race-%d", (int)getpid());
	snprintf(topo, sizeof(topo), "/tmp/smartio-%s.conf", fabric);
	topology(topo, racers);
	o.fabric = fabric;
	o.topology = topo;
	o.node = "lender";
	o.create = 1;
	rc = smartio_open(&h, &o);
	unlink(topo);
	if (rc)
		usage_fail("create", rc);
	dev = smartio_device_find(h, "nvme0");
	if ((rc = smartio_lend(h, (unsigned)dev, SMARTIO_LEND_ALL, 0)))
		usage_fail("lend", rc);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		usage_fail("mmap", -errno);
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&sh->go, &ba, (unsigned)racers + 1);
	pthread_barrier_init(&sh->done, &ba, (unsigned)racers + 1);
	pthread_barrier_init(&sh->checked, &ba, (unsigned)racers + 1);
	pthread_barrier_init(&sh->next, &ba, (unsigned)racers + 1);
	for (i = 0; i < racers; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			racer(fabric, i, rounds);
	}
	/* Everyone joined: every node is up before the first round. */
	while (up != (unsigned)racers + 1) {
		struct smartio_node_info ni;
		unsigned n;

		usleep(10000);
		for (up = 0, n = 0; n < smartio_node_count(h); n++)
			if (!smartio_node_info(h, n, &ni) && ni.state == SMARTIO_NODE_UP)
				up++;
	}
	usage(h, &luts0, &reqs0);
	for (r = 0; r < rounds && !bad; r++) {
		int winners = 0, winner = -1;

		pthread_barrier_wait(&sh->go);
		pthread_barrier_wait(&sh->done);
		for (i = 0; i < racers; i++) {
			if (sh->result[i] == 0) {
				winners++;
				winner = i;
			} else if (sh->result[i] == -EBUSY) {
				busy++;
			} else {
				fprintf(stderr, "race: round %d: r%d got %s\n", r, i,
					smartio_strerror(sh->result[i]));
				bad = 1;
			}
		}
		smartio_device_info(h, (unsigned)dev, &di);
		if (winners != 1) {
			fprintf(stderr, "race: round %d: %d winners\n", r, winners);
			bad = 1;
		} else if (di.borrowers != 1ull << smartio_node_find(h, "r0") << winner) {
			fprintf(stderr, "race: round %d: r%d won but borrowers are %#llx\n",
				r, winner, (unsigned long long)di.borrowers);
			bad = 1;
		}
		wins += winners;
		pthread_barrier_wait(&sh->checked);
		pthread_barrier_wait(&sh->next);
		for (i = 0; i < racers; i++)
			if (sh->returned[i]) {
				fprintf(stderr, "race: round %d: r%d could not return: %s\n",
					r, i, smartio_strerror(sh->returned[i]));
				bad = 1;
			}
	}
	if (bad) {
		/* Release the racers at the barrier they wait at, then stop them. */
		for (i = 0; i < racers; i++)
			kill(pid[i], SIGKILL);
	} else {
		sh->stop = 1;
	}
	for (i = 0; i < racers; i++)
		waitpid(pid[i], &status, 0);
	smartio_device_info(h, (unsigned)dev, &di);
	usage(h, &luts, &reqs);
	if (!bad && (di.borrowers || luts != luts0 || reqs != reqs0)) {
		fprintf(stderr, "race: after %d rounds: borrowers %#llx, LUTs %u "
			"(were %u), requesters %u (were %u)\n", rounds,
			(unsigned long long)di.borrowers, luts, luts0, reqs, reqs0);
		bad = 1;
	}
	smartio_close(h);
	if (bad) {
		printf("FAIL: race: %d racers, stopped in round %d\n", racers, r);
		return 1;
	}
	printf("PASS: race: %d racers x %d rounds: exactly one winner each round "
	       "(%ld wins, %ld EBUSY), no LUT or requester entry left\n",
	       racers, rounds, wins, busy);
	return 0;
}
