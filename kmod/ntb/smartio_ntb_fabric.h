/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The table smartio.ko reaches smartio_ntb through, offered on the
 * auxiliary bus for as long as the module is loaded (smartio_ntb_fabric.c).
 */
#ifndef SMARTIO_NTB_FABRIC_H
#define SMARTIO_NTB_FABRIC_H

int sio_fabric_register(void);
void sio_fabric_unregister(void);

#endif
