// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Authorization: every permission decision of smartiofs, in one place
 * (the table in smartio(7) describes exactly this file).
 *
 * Two questions are asked of each request:
 *
 *  Who may do it.  Callers fall in three classes, like the owner, group
 *  and other bits of a sysfs file: the admin (root or the daemon's user),
 *  the operators (members of the group given with operator_group=, none
 *  without it) and everyone else.  Each object has a policy mode (tree.c
 *  tables, tightened here) and the class's bits of it decide; the mode
 *  stat() shows is that same mode, so `ls -l` tells the truth.  Raw
 *  config space follows PCI sysfs: everyone may read the first 64 bytes
 *  (the standard header), only admin and operators the rest, only the
 *  admin may write it (the lender's or borrower's real function).
 *  Refusals here are EACCES.
 *
 *  For which node.  A mount serving one node (--node) acts for that node
 *  only: it borrows and returns for itself, lends and sets the mode of
 *  devices installed in it, sizes, exports, maps and destroys its own
 *  segments, attaches only itself and detaches itself (or, as owner,
 *  anyone from its segments), joins and leaves multicast groups for itself
 *  and maps them for the devices it lends or borrows; creating, sizing
 *  and removing groups, the switches' and so the cluster's, is for the
 *  management view alone.  A mount serving the whole cluster (no --node:
 *  the management view) acts for every node.  Refusals are EPERM.
 *
 * Deny by default: an object or action this file does not know is refused.
 */
#include <errno.h>
#include <string.h>

#include "sfs.h"

enum { CL_OTHER, CL_OPERATOR, CL_ADMIN };

static int class_of(const struct sfs_caller *who)
{
	if (who->uid == 0 || who->uid == sfs.uid)
		return CL_ADMIN;
	if (sfs.has_operator_group && who->operator)
		return CL_OPERATOR;
	return CL_OTHER;
}

/*
 * The policy mode of o: tree.c's mode with the group bits that apply.
 * Control files are group-writable (operators may act); events is
 * readable by admin and operators only (it tells who did what on the
 * whole cluster); interrupt counts stay world-readable, as
 * /proc/interrupts is.  Without an operator group the group bits are the
 * other bits (nobody is an operator).
 */
mode_t authz_mode(const struct sfs_obj *o)
{
	mode_t m = tree_mode(o), perm = m & 07777;

	if (S_ISLNK(m))
		return m;
	if (S_ISDIR(m)) {
		/* mkdir/rmdir create and remove where the record says for whom */
		perm = tree_scope(o) != SC_NONE ? 0775 : 0755;
	} else if (o->kind == K_EVENTS) {
		perm = 0440;
	} else if (o->kind == K_DEV_ATTR && o->attr == DA_CONFIG) {
		perm = 0644;
	} else {
		perm = (perm & 0644) | (perm & 0200 ? 0020 : 0);
	}
	if (!sfs.has_operator_group)
		perm = (perm & ~(mode_t)0070) | ((perm & 0007) << 3);
	return (m & S_IFMT) | perm;
}

/* The bits (4 read, 2 write, 1 search) the caller's class has on o. */
static unsigned bits_for(const struct sfs_caller *who, const struct sfs_obj *o)
{
	mode_t m = authz_mode(o);

	switch (class_of(who)) {
	case CL_ADMIN: return (m >> 6) & 7;
	case CL_OPERATOR: return (m >> 3) & 7;
	default: return m & 7;
	}
}

static int acts_for(unsigned node)
{
	return sfs.manage || node == sfs.self;
}

static unsigned dev_node(unsigned dev)
{
	const struct sfs_dev *d = names_devinfo(dev);

	return d ? d->info.node : ~0u;
}

/*
 * Whether this mount may act for `node` on o (node < 0: none named), as
 * o's record scopes it (tree_scope: a file's struct sfs_attr in attrs.c, a
 * directory's struct sfs_dir_ops in writes.c).
 */
static int scope(const struct sfs_obj *o, int node)
{
	int named = node < 0 || acts_for((unsigned)node);

	switch (tree_scope(o)) {
	case SC_CORE:
		return 1;
	case SC_LENDER:
		return acts_for(dev_node(o->dev));
	case SC_OWNER:
		return acts_for(o->node);
	case SC_NAMED:
		return named;
	case SC_NAMED_OR_OWNER:
		return named || acts_for(o->node);
	case SC_CLUSTER:
		return sfs.manage;
	default:
		return 0;
	}
}

int authz(const struct sfs_caller *who, enum authz_act act,
	  const struct sfs_obj *o, int node)
{
	unsigned b = bits_for(who, o);

	switch (act) {
	case AZ_READ:
		return b & 4 ? 0 : -EACCES;
	case AZ_CONFIG_FULL:
		return class_of(who) != CL_OTHER ? 0 : -EACCES;
	case AZ_WRITE:
		if (S_ISDIR(authz_mode(o)) || !(b & 2))
			return -EACCES;
		return scope(o, node) ? 0 : -EPERM;
	case AZ_DIR:		/* mkdir or rmdir of a child of directory o */
		if (!S_ISDIR(authz_mode(o)) || !(b & 2))
			return -EACCES;
		return scope(o, -1) ? 0 : -EPERM;
	default:
		return -EACCES;
	}
}
