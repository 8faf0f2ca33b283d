/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smartio_ntb's requester-id hook, one implementation per NTB hardware
 * driver (smartio_ntb_rid.c); sio_ntb_rid_allow() in smartio_ntb.h is its
 * interface to smartio.ko.
 */
#ifndef SMARTIO_NTB_RID_H
#define SMARTIO_NTB_RID_H

#include <linux/ntb.h>
#include <linux/seq_file.h>

int sio_rid_allow(struct ntb_dev *ntb, u16 rid, bool allow);
/* The table of this machine's NT function (peer: of the peer's), or none. */
int sio_rid_show(struct ntb_dev *ntb, bool peer, struct seq_file *m);

#endif
