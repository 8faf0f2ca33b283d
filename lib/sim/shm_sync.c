// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the node processes of one simulated fabric synchronise with, in
 * its shared memory: the process-shared robust lock over the core and
 * the change counter readers wait on (a futex).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"

/* A process-shared, robust mutex (a holder's death is seen: EOWNERDEAD). */
int sim_lock_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	err = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -err;
}

void sim_lock(struct sim_fabric *f)
{
	/*
	 * A process killed inside the lock leaves it to the next taker, with
	 * whatever it had half done: the core puts the allocations back in
	 * line with its records before anyone reads them.
	 */
	if (pthread_mutex_lock(&f->sh->lock) == EOWNERDEAD) {
		f->sh->repairs += sio_core_repair(&f->core) ? 1 : 0;
		pthread_mutex_consistent(&f->sh->lock);
	}
}

void sim_unlock(struct sim_fabric *f)
{
	pthread_mutex_unlock(&f->sh->lock);
}

void sim_notify(struct sim_fabric *f)
{
	__atomic_add_fetch(&f->sh->change, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &f->sh->change, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int sim_wait_change(struct sim_fabric *f, u32 seen, int timeout_ms)
{
	struct timespec ts, *tp = NULL;

	if (__atomic_load_n(&f->sh->change, __ATOMIC_ACQUIRE) != seen)
		return 1;
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tp = &ts;
	}
	syscall(SYS_futex, &f->sh->change, FUTEX_WAIT, seen, tp, NULL, 0);
	return __atomic_load_n(&f->sh->change, __ATOMIC_ACQUIRE) != seen;
}
