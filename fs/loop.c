// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session loop: one thread reads every request and answers those that
 * only read the namespace (LOOKUP, GETATTR, READDIRPLUS, ...) itself; the
 * rest (writes, opens, reads of attributes: library calls that may take
 * long) go to a pool of workers, so that they never delay the others.
 *
 * Why not libfuse's multithreaded loop: its threads all wait in read(2) on
 * /dev/fuse and the kernel wakes the one that waited longest, so a walk
 * such as ls -lR, one request at a time, hops from thread to thread, and
 * each hop costs a cold wake-up on another CPU.  Served by one thread, a
 * cold ls -lR of dev/ at 10x512 costs ls and the daemon 3.5 s of CPU
 * instead of 5.5 s, and half the wall-clock time.
 */
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>

#include "compat.h"
#include "sfs.h"

#define POOL_MAX 16		/* workers at most (libfuse's default: 10) */
/*
 * Workers ready from the start.  A worker that answered a request is
 * still on its way back to the pool when the caller's next request
 * arrives, so "spawn when none is idle" alone grew the pool toward its
 * maximum under one caller's calls in a row, the more so under load
 * (test_intern_churn: +588 KiB of RSS in one CI run).  With a few ready,
 * one more starts only when that many requests wait at once.
 */
#define POOL_START 4

struct job {
	struct job *next;
	struct fuse_buf buf;	/* a copy of the request */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct job *head, **tail;
	unsigned queued, idle, nthreads;
	int stop;
	pthread_t threads[POOL_MAX];
	struct fuse_session *se;
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.tail = &pool.head,
};

/* The requests that only read the namespace and never wait for anyone:
 * answered by the reading thread itself. */
static int read_only(const struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;

	if (buf->size < sizeof(*in))
		return 1;	/* libfuse answers it (EIO) */
	switch (in->opcode) {
	case FUSE_LOOKUP:
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_GETATTR:
	case FUSE_READLINK:
	case FUSE_OPENDIR:
	case FUSE_READDIR:
	case FUSE_READDIRPLUS:
	case FUSE_RELEASEDIR:
	case FUSE_STATFS:
	case FUSE_GETXATTR:
	case FUSE_LISTXATTR:
	case FUSE_ACCESS:
	case FUSE_INTERRUPT:
	case FUSE_INIT:
	case FUSE_DESTROY:
		return 1;
	default:
		return 0;
	}
}

/* Set in the workers: they may wait on the kernel (loop_in_worker). */
static _Thread_local int in_worker;

int loop_in_worker(void)
{
	return in_worker;
}

static void *worker(void *arg)
{
	struct job *j;

	(void)arg;
	in_worker = 1;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		while (!pool.head && !pool.stop) {
			pool.idle++;
			pthread_cond_wait(&pool.more, &pool.lock);
			pool.idle--;
		}
		if (!pool.head)
			break;
		j = pool.head;
		pool.head = j->next;
		if (!pool.head)
			pool.tail = &pool.head;
		pool.queued--;
		pthread_mutex_unlock(&pool.lock);
		fuse_session_process_buf(pool.se, &j->buf);
		free(j->buf.mem);
		free(j);
		pthread_mutex_lock(&pool.lock);
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

/*
 * A worker.  It inherits the reading thread's mask, which blocks the exit
 * signals: libfuse's handler only marks the session as exited, which the
 * reading thread must see (wait_request).
 */
static void spawn(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) == 0) {
		pthread_setname_np(t, "sfs-work");
		pool.threads[pool.nthreads++] = t;
	}
}

/* Queues a copy of the request: 0, or -ENOMEM (then it is served here). */
static int hand_over(const struct fuse_buf *buf)
{
	struct job *j = malloc(sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->next = NULL;
	j->buf = *buf;
	j->buf.mem = malloc(buf->size);
	if (!j->buf.mem) {
		free(j);
		return -ENOMEM;
	}
	memcpy(j->buf.mem, buf->mem, buf->size);
	pthread_mutex_lock(&pool.lock);
	*pool.tail = j;
	pool.tail = &j->next;
	pool.queued++;
	if (pool.queued > pool.idle && pool.nthreads < POOL_MAX)
		spawn();
	if (!pool.nthreads) {	/* not one worker: serve it here */
		pool.head = NULL;
		pool.tail = &pool.head;
		pool.queued--;
		pthread_mutex_unlock(&pool.lock);
		free(j->buf.mem);
		free(j);
		return -ENOMEM;
	}
	pthread_cond_signal(&pool.more);
	pthread_mutex_unlock(&pool.lock);
	return 0;
}

/* Lets the workers finish what is queued, and joins them. */
static void pool_stop(void)
{
	unsigned i;

	pthread_mutex_lock(&pool.lock);
	pool.stop = 1;
	pthread_cond_broadcast(&pool.more);
	pthread_mutex_unlock(&pool.lock);
	for (i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);
	pool.nthreads = 0;
}

/*
 * Waits until a request can be read, with the exit signals deliverable
 * only here: -EINTR once one was handled.  Checking fuse_session_exited
 * and then blocking in read(2) loses a signal that lands between the two
 * (the handler runs, the read sleeps on), and with a lazily unmounted file
 * still open no request ever comes to wake it: a SIGTERM was ignored in
 * two of twenty runs of test_exit_frees_unreleased_files under valgrind
 * and load.  ppoll unblocks the signals and sleeps in one step.
 */
static int wait_request(struct fuse_session *se, const sigset_t *waiting)
{
	struct pollfd p = { .fd = fuse_session_fd(se), .events = POLLIN };

	if (fuse_session_exited(se))
		return -EINTR;
	if (ppoll(&p, 1, NULL, waiting) < 0)
		return -errno;
	return 0;
}

/* The signals that end the daemon: libfuse's handlers take them. */
static const int exit_signals[] = { SIGINT, SIGTERM, SIGHUP };

void loop_exit_signals(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < SIO_ARRAY_SIZE(exit_signals); i++)
		sigaddset(set, exit_signals[i]);
}

/*
 * The mask to wait with: the caller's (main.c blocks the exit signals in
 * every thread) without the exit signals.  The device turns non-blocking,
 * so that a request withdrawn between ppoll and read (its caller killed)
 * costs an EAGAIN, not a read that sleeps with the signals blocked.
 */
static int prepare_wait(struct fuse_session *se, sigset_t *waiting)
{
	int fd = fuse_session_fd(se), fl = fcntl(fd, F_GETFL);
	size_t i;

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	pthread_sigmask(SIG_SETMASK, NULL, waiting);
	for (i = 0; i < SIO_ARRAY_SIZE(exit_signals); i++)
		sigdelset(waiting, exit_signals[i]);
	return 0;
}

int loop_serve(struct fuse_session *se)
{
	struct fuse_buf buf = { .mem = NULL };
	sigset_t waiting;
	int res, i;

	res = prepare_wait(se, &waiting);
	if (res)
		return res;
	pool.se = se;
	pthread_mutex_lock(&pool.lock);
	for (i = 0; i < POOL_START; i++)
		spawn();	/* one that fails is started on demand */
	pthread_mutex_unlock(&pool.lock);
	follow_cpu_start();
	while (!fuse_session_exited(se)) {
		res = wait_request(se, &waiting);
		if (!res)
			res = fuse_session_receive_buf(se, &buf);
		if (res == -EINTR || res == -EAGAIN) {
			res = 0;	/* a signal or a withdrawn request */
			continue;
		}
		if (res <= 0)
			break;
		follow_cpu_of(&buf);
		/* Spliced (op_init asks for none): not in buf.mem to copy. */
		if ((buf.flags & FUSE_BUF_IS_FD) || read_only(&buf) ||
		    hand_over(&buf))
			fuse_session_process_buf(se, &buf);
	}
	pool_stop();
	free(buf.mem);
	fuse_session_reset(se);
	return res < 0 ? res : 0;
}
