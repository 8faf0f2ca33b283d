// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writing: strict parsing of attribute writes and the mkdir / rmdir
 * actions.  A write carries exactly one value, optionally followed by one
 * newline, at offset 0 and in one piece; anything else is EINVAL and changes
 * nothing.  Library errors are passed through unchanged.
 */
#include <errno.h>
#include <string.h>

#include "numparse.h"
#include "sfs.h"

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* The value without its one optional trailing newline; -EINVAL if empty
 * or if it holds a NUL byte. */
static int strip(const char *buf, size_t size, size_t *len)
{
	if (size && buf[size - 1] == '\n')
		size--;
	if (!size || memchr(buf, '\0', size))
		return -EINVAL;
	*len = size;
	return 0;
}

/* Whether the value is one token (no blank inside); its length in *len. */
static int one_token(const char *buf, size_t size, size_t *len)
{
	size_t i;

	if (strip(buf, size, len))
		return 0;
	for (i = 0; i < *len; i++)
		if (is_space(buf[i]))
			return 0;
	return 1;
}

int parse_token(const char *buf, size_t size, char *out, size_t outlen)
{
	size_t len;

	if (!one_token(buf, size, &len) || len >= outlen)
		return -EINVAL;
	memcpy(out, buf, len);
	out[len] = '\0';
	return 0;
}

/*
 * A size written to a file: one token in the grammar of topology files
 * (lib/core/numparse.h, smartio.conf(5)), more than 0.
 */
int parse_size(const char *buf, size_t size, uint64_t *out)
{
	char tok[32];
	uint64_t v;

	if (parse_token(buf, size, tok, sizeof(tok)) ||
	    sio_parse_u64(tok, strlen(tok), 1, &v) || !v)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A count written to a file: one number (decimal, or 0x hex), 0 allowed. */
int parse_count(const char *buf, size_t size, uint64_t *out)
{
	char tok[32];

	if (parse_token(buf, size, tok, sizeof(tok)))
		return -EINVAL;
	return sio_parse_u64(tok, strlen(tok), 0, out);
}

int parse_node(const char *buf, size_t size, unsigned *node)
{
	char tok[SMARTIO_NAME_MAX];
	int n;

	if (parse_token(buf, size, tok, sizeof(tok))) {
		/* A well-formed name too long to be a node is an unknown node. */
		size_t len;

		return one_token(buf, size, &len) ? -ENOENT : -EINVAL;
	}
	n = names_node(tok);
	if (n < 0)
		return -ENOENT;
	*node = (unsigned)n;
	return 0;
}

/* A write that names a node (borrow, return, attach, detach, join): the
 * mount must act for that node (authz.c). */
int parse_node_for(const struct sfs_obj *o, const char *buf, size_t size,
		   const struct sfs_caller *who, unsigned *node)
{
	int rc = parse_node(buf, size, node);

	return rc ? rc : authz(who, AZ_WRITE, o, (int)*node);
}

int parse_keyword(const char *buf, size_t size, const char *const *kw,
		  int nkw)
{
	char tok[32];
	int i;

	if (parse_token(buf, size, tok, sizeof(tok)))
		return -EINVAL;
	for (i = 0; i < nkw; i++)
		if (!strcmp(tok, kw[i]))
			return i;
	return -EINVAL;
}

/*
 * A borrow: "NODE" or "NODE window=SIZE|ram" (the borrow's DMA window,
 * smartio(7)); *window is 0 for the default.
 */
int parse_borrow(const char *buf, size_t size, unsigned *node,
		 uint64_t *window)
{
	static const char key[] = "window=";
	static const char *const ram[] = { "ram" };
	size_t i, klen = sizeof(key) - 1;
	const char *v;

	*window = 0;
	for (i = 0; i < size && buf[i] != ' '; i++)
		;
	if (i == size)
		return parse_node(buf, size, node);
	if (!i || size - i - 1 < klen || memcmp(buf + i + 1, key, klen))
		return -EINVAL;
	v = buf + i + 1 + klen;
	if (parse_keyword(v, size - i - 1 - klen, ram, 1) == 0)
		*window = SMARTIO_DMA_WINDOW_RAM;
	else if (parse_size(v, size - i - 1 - klen, window))
		return -EINVAL;
	return parse_node(buf, i, node);
}

/* "none" | "all" | node names separated by commas, spaces or newlines. */
int parse_lend(const char *buf, size_t size, int *policy, uint64_t *mask)
{
	static const char *const kw[] = { "none", "all" };
	size_t len, i = 0, start;
	int unknown = 0, k;

	if (strip(buf, size, &len))
		return -EINVAL;
	k = parse_keyword(buf, size, kw, 2);
	if (k >= 0) {
		*policy = k == 0 ? SMARTIO_LEND_NONE : SMARTIO_LEND_ALL;
		*mask = 0;
		return 0;
	}
	*mask = 0;
	while (i <= len) {
		char tok[SMARTIO_NAME_MAX];
		int n;

		start = i;
		while (i < len && buf[i] != ',' && buf[i] != ' ' && buf[i] != '\n')
			i++;
		if (i == start)
			return -EINVAL;	/* empty name: doubled or edge separator */
		for (size_t j = start; j < i; j++)
			if (is_space(buf[j]))
				return -EINVAL;
		if (i - start >= sizeof(tok)) {
			unknown = 1;
		} else {
			memcpy(tok, buf + start, i - start);
			tok[i - start] = '\0';
			if (!strcmp(tok, "none") || !strcmp(tok, "all"))
				return -EINVAL;	/* keywords stand alone */
			n = names_node(tok);
			if (n < 0 || n >= 64)
				unknown = 1;
			else
				*mask |= 1ull << n;
		}
		i++;	/* past the separator (or the end) */
	}
	if (unknown)
		return -ENOENT;
	*policy = SMARTIO_LEND_LIST;
	return 0;
}

int write_attr(const struct sfs_obj *o, const char *buf, size_t size,
	       off_t off, const struct sfs_caller *who)
{
	const struct sfs_attr *a = tree_attr(o);
	int rc;

	if (!a || !a->store)
		return -EROFS;
	if (off != 0 || size == 0 || size > SFS_WRITE_MAX)
		return -EINVAL;
	rc = a->store(o, buf, size, who);
	return rc < 0 ? rc : (int)size;
}

/*
 * The device a directory entry names (segments/<seg>/dma/<dev>,
 * peers/<dev>, multicast/<group>/dma/<dev>): its index, or `unknown`
 * (ENXIO for a mkdir, ENOENT for an rmdir).
 */
static int named_dev(const char *name, int unknown)
{
	int dev = names_dev(name);

	return dev < 0 ? unknown : dev;
}

/* segments/<seg>: the node's segment, no memory until its size is set. */
static int segment_mkdir(const struct sfs_obj *dir, const char *name)
{
	if (strlen(name) >= SMARTIO_NAME_MAX)
		return -EINVAL;
	return smartio_segment_create(sfs.h, dir->node, name);
}

static int segment_rmdir(const struct sfs_obj *dir, const char *name)
{
	if (strlen(name) >= SMARTIO_NAME_MAX)
		return -ENOENT;
	return smartio_segment_destroy(sfs.h, dir->node, name);
}

/* Made by the segment's owner's mounts. */
const struct sfs_dir_ops segments_dir_ops = {
	SC_OWNER, segment_mkdir, segment_rmdir,
};

/* segments/<seg>/dma/<dev>: the segment mapped for the device. */
static int segdma_mkdir(const struct sfs_obj *dir, const char *name)
{
	int dev = named_dev(name, -ENXIO);
	uint64_t ioaddr;

	return dev < 0 ? dev : smartio_segment_dma_map(sfs.h, dir->node,
						       dir->seg, (unsigned)dev,
						       &ioaddr);
}

static int segdma_rmdir(const struct sfs_obj *dir, const char *name)
{
	int dev = named_dev(name, -ENOENT);

	return dev < 0 ? dev : smartio_segment_dma_unmap(sfs.h, dir->node,
							 dir->seg,
							 (unsigned)dev);
}

const struct sfs_dir_ops segdma_dir_ops = {
	SC_OWNER, segdma_mkdir, segdma_rmdir,
};

/* dev/<dev>/peers/<peer>: the peer's BARs mapped for dev, for this node. */
static int peer_mkdir(const struct sfs_obj *dir, const char *name)
{
	int dev = named_dev(name, -ENXIO);

	return dev < 0 ? dev : smartio_peer_map(sfs.h, dir->dev,
						(unsigned)dev, sfs.self);
}

static int peer_rmdir(const struct sfs_obj *dir, const char *name)
{
	int dev = named_dev(name, -ENOENT);

	return dev < 0 ? dev : smartio_peer_unmap(sfs.h, dir->dev,
						  (unsigned)dev, sfs.self);
}

/* Maps for this mount's node: the core checks the borrow. */
const struct sfs_dir_ops peers_dir_ops = {
	SC_CORE, peer_mkdir, peer_rmdir,
};

/*
 * mkdir multicast/<name>: a group of one page on the first switch with a
 * free one (its size is written next, smartio(7)); ENOSPC when every
 * switch with multicast is full, EOPNOTSUPP when none has it.
 */
static int mcast_mkdir(const struct sfs_obj *dir, const char *name)
{
	unsigned sw, n = smartio_switch_count(sfs.h);
	int rc = -EOPNOTSUPP, r;

	(void)dir;
	if (strlen(name) >= SMARTIO_NAME_MAX)
		return -EINVAL;
	for (sw = 0; sw < n; sw++) {
		r = smartio_mcast_create(sfs.h, name, sw, 4096);
		if (r >= 0)
			return 0;
		if (r == -ENOSPC)
			rc = r;
		else if (r != -EOPNOTSUPP)
			return r;
	}
	return rc;
}

static int mcast_rmdir(const struct sfs_obj *dir, const char *name)
{
	int g = smartio_mcast_lookup(sfs.h, name);

	(void)dir;
	return g < 0 ? -ENOENT : smartio_mcast_destroy(sfs.h, (unsigned)g);
}

/* Groups span switches: the management view's alone. */
const struct sfs_dir_ops mcasts_dir_ops = {
	SC_CLUSTER, mcast_mkdir, mcast_rmdir,
};

/* Who maps a group for dev from this mount: its lender when the mount
 * acts for it, else this mount's node (a borrower of it, or refused). */
static unsigned mcast_user(unsigned dev)
{
	unsigned lender = names_devinfo(dev)->info.node;

	return sfs.manage || lender == sfs.self ? lender : sfs.self;
}

/* multicast/<group>/dma/<dev>: the group mapped for the device. */
static int mcastdma_mkdir(const struct sfs_obj *dir, const char *name)
{
	int dev = named_dev(name, -ENXIO), g = tree_mcast(dir);
	uint64_t ioaddr;

	if (dev < 0)
		return dev;
	if (g < 0)
		return g;
	return smartio_mcast_map(sfs.h, (unsigned)g, (unsigned)dev,
				 mcast_user((unsigned)dev), &ioaddr);
}

static int mcastdma_rmdir(const struct sfs_obj *dir, const char *name)
{
	int dev = named_dev(name, -ENOENT), g = tree_mcast(dir);

	if (dev < 0 || g < 0)
		return -ENOENT;
	return smartio_mcast_unmap(sfs.h, (unsigned)g, (unsigned)dev,
				   mcast_user((unsigned)dev));
}

/* As the device's lender or this node: the core checks. */
const struct sfs_dir_ops mcastdma_dir_ops = {
	SC_CORE, mcastdma_mkdir, mcastdma_rmdir,
};

int write_mkdir(const struct sfs_obj *dir, const char *name,
		struct sfs_obj *out)
{
	const struct sfs_dir_ops *d = tree_dir_ops(dir);
	int rc;

	if (!d)
		return -EPERM;
	rc = d->mkdir(dir, name);
	return rc ? rc : tree_child(dir, name, out);
}

int write_rmdir(const struct sfs_obj *dir, const char *name)
{
	const struct sfs_dir_ops *d = tree_dir_ops(dir);

	return d ? d->rmdir(dir, name) : -EPERM;
}
