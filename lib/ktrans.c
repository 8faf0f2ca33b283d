// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsmartio's kernel transport over libnl-genl-3.  A request is the
 * core's own message (lib/core/proto.h lays it out as a generic netlink
 * message); it goes to the "smartio" family with its command and
 * attributes, and the reply comes back in the same shape, so the caller
 * parses it with sio_msg_parse as it would the embedded core's reply.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "core.h"
#include "ktrans.h"

#ifdef HAVE_LIBNL
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

struct sio_ktrans {
	struct nl_sock *sk;
	int family;
	u8 *reg;		/* the last consistent copy (what callers see) */
	u64 reg_size;
	u64 gen;		/* the kernel's generation when it was read */
	u8 *next;		/* the copy being read */
	u64 next_size;
};

int sio_ktrans_open(struct sio_ktrans **kp)
{
	struct sio_ktrans *k = calloc(1, sizeof(*k));
	int rc = -ENOMEM;

	if (!k)
		return rc;
	k->sk = nl_socket_alloc();
	if (!k->sk)
		goto fail;
	rc = -ENOTCONN;
	if (genl_connect(k->sk))
		goto fail;
	k->family = genl_ctrl_resolve(k->sk, SIO_GENL_NAME);
	rc = -ENOENT;
	if (k->family < 0)
		goto fail;
	nl_socket_disable_auto_ack(k->sk);
	*kp = k;
	return 0;
fail:
	sio_ktrans_close(k);
	return rc;
}

void sio_ktrans_close(struct sio_ktrans *k)
{
	if (!k)
		return;
	if (k->sk)
		nl_socket_free(k->sk);
	free(k->reg);
	free(k->next);
	free(k);
}

int sio_ktrans_call(struct sio_ktrans *k, const void *req, uint32_t len,
		    void *reply, uint32_t cap)
{
	const u8 *r = req;
	struct nl_msg *msg;
	struct nlmsghdr *nlh;
	unsigned char *buf = NULL;
	struct sockaddr_nl peer;
	unsigned int seq;
	int n, rc;

	if (len < SIO_MSG_HDRLEN)
		return -EINVAL;
	msg = nlmsg_alloc_size(len + NLMSG_HDRLEN + 64);
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, k->family, 0,
			 NLM_F_REQUEST, r[SIO_NLMSG_HDRLEN], SIO_GENL_VERSION) ||
	    nlmsg_append(msg, (void *)(r + SIO_MSG_HDRLEN),
			 len - SIO_MSG_HDRLEN, NLMSG_ALIGNTO)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	rc = nl_send_auto(k->sk, msg);
	seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
	if (rc < 0)
		return -EIO;
	for (;;) {
		free(buf);
		buf = NULL;
		n = nl_recv(k->sk, &peer, &buf, NULL);
		if (n <= 0)
			return -EIO;
		nlh = (struct nlmsghdr *)buf;
		if (!nlmsg_ok(nlh, n) || nlh->nlmsg_seq != seq)
			continue;	/* a stale answer: not ours */
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = nlmsg_data(nlh);

			rc = nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(*e) &&
			     e->error ? e->error : -EPROTO;
			break;
		}
		rc = (int)nlh->nlmsg_len;
		if ((uint32_t)rc > cap)
			rc = -EMSGSIZE;
		else
			memcpy(reply, buf, (size_t)rc);
		break;
	}
	free(buf);
	return rc;
}

/*
 * Registry bytes [off, off + size) into k->next (size 0: none); the
 * registry's total size and generation.  Returns the bytes copied.
 */
static int read_chunk(struct sio_ktrans *k, u64 off, u64 size, u64 *total,
		      u64 *gen)
{
	static __thread u8 req[128], rep[SIO_MSG_MAX];
	struct sio_parsed p;
	struct sio_msg m;
	int n, rc;

	sio_msg_init(&m, req, sizeof(req), SIO_CMD_REG_READ, SIO_F_REQUEST, 0);
	sio_msg_put_u64(&m, SIO_A_OFFSET, off);
	sio_msg_put_u64(&m, SIO_A_SIZE, size);
	n = sio_msg_finish(&m);
	if (n < 0)
		return n;
	n = sio_ktrans_call(k, req, (u32)n, rep, sizeof(rep));
	if (n < 0)
		return n;
	rc = sio_msg_parse(rep, (u32)n, &p);
	if (rc)
		return rc;
	if (!p.present[SIO_A_ERRNO])
		return -EPROTO;
	rc = sio_nla_s32(&p.tb[SIO_A_ERRNO]);
	if (rc)
		return rc;
	if (!p.present[SIO_A_SIZE] || !p.present[SIO_A_SEQ] ||
	    !p.present[SIO_A_DATA])
		return -EPROTO;
	*total = sio_nla_u64(&p.tb[SIO_A_SIZE]);
	*gen = sio_nla_u64(&p.tb[SIO_A_SEQ]);
	if (!size)
		return 0;
	if (*total != k->next_size) {
		u8 *nr = realloc(k->next, *total ? *total : 1);

		if (!nr)
			return -ENOMEM;
		k->next = nr;
		k->next_size = *total;
	}
	if (off > *total || p.tb[SIO_A_DATA].len > *total - off)
		return -EPROTO;
	memcpy(k->next + off, p.tb[SIO_A_DATA].data, p.tb[SIO_A_DATA].len);
	return (int)p.tb[SIO_A_DATA].len;
}

int sio_ktrans_generation(struct sio_ktrans *k, uint64_t *gen)
{
	u64 total;

	return read_chunk(k, 0, 0, &total, gen);
}

/* A whole copy into k->next, unchanged from its first to its last byte. */
static int read_all(struct sio_ktrans *k, u64 *gen)
{
	u64 total, gen0, g, off;
	int tries, n;

	for (tries = 0; tries < 8; tries++) {
		n = read_chunk(k, 0, SIO_DATA_MAX, &total, &gen0);
		g = gen0;
		for (off = n > 0 ? (u64)n : 0; n > 0 && off < total;
		     off += (u64)n) {
			n = read_chunk(k, off, SIO_DATA_MAX, &total, &g);
			if (n >= 0 && g != gen0)
				break;	/* changed meanwhile: read it again */
		}
		if (n < 0)
			return n;
		if (g == gen0 && off >= total) {
			*gen = gen0;
			return 0;
		}
	}
	return -EAGAIN;
}

int sio_ktrans_registry(struct sio_ktrans *k, void **reg)
{
	u64 total, gen;
	u8 *t;
	int rc;

	if (k->reg) {
		rc = read_chunk(k, 0, 0, &total, &gen);
		if (rc < 0)
			return rc;
		if (gen == k->gen && total == k->reg_size) {
			*reg = k->reg;
			return 0;
		}
	}
	rc = read_all(k, &gen);
	if (rc)
		return rc;
	if (sio_registry_check(k->next, k->next_size))
		return -EPROTO;
	/* The new copy becomes the one callers see; the old is reused. */
	t = k->reg;
	k->reg = k->next;
	k->next = t;
	total = k->reg_size;
	k->reg_size = k->next_size;
	k->next_size = total;
	k->gen = gen;
	*reg = k->reg;
	return 0;
}

#else /* !HAVE_LIBNL */

int sio_ktrans_open(struct sio_ktrans **k)
{
	(void)k;
	return -EOPNOTSUPP;
}

void sio_ktrans_close(struct sio_ktrans *k)
{
	(void)k;
}

int sio_ktrans_call(struct sio_ktrans *k, const void *req, uint32_t len,
		    void *reply, uint32_t cap)
{
	(void)k, (void)req, (void)len, (void)reply, (void)cap;
	return -EOPNOTSUPP;
}

int sio_ktrans_registry(struct sio_ktrans *k, void **reg)
{
	(void)k, (void)reg;
	return -EOPNOTSUPP;
}

int sio_ktrans_generation(struct sio_ktrans *k, uint64_t *gen)
{
	(void)k, (void)gen;
	return -EOPNOTSUPP;
}
#endif
