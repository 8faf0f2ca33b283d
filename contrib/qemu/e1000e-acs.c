/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * e1000e-acs: QEMU's e1000e with an ACS extended capability, for the
 * tests of what smartio.ko keeps a borrower from writing to a lent
 * function (kmod/sio_vcfg.c, issue 28 item 1).
 *
 * QEMU 7.2 gives ACS to its root and downstream ports only, and smartio
 * lends endpoints.  Real endpoints carry ACS when they are functions of
 * a multifunction device (PCIe 6.0 §7.7.8: P2P Request and Completion
 * Redirect, Egress Control, Direct Translated P2P), as many NICs do, so
 * this is the e1000e as such a function: `multifunction=on` is required,
 * as pcie_acs_init() itself demands of an endpoint.  The capability
 * offers Request Redirect, Completion Redirect and Direct Translated
 * P2P, and its control bits for them are writable, so a write that
 * smartio lets through would change the real register (pcie_acs_init()
 * alone leaves an endpoint's control read-only, which no filter could
 * be tested against).  It sits after the e1000e's AER (0x100) and
 * serial number (0x140) capabilities.
 *
 *   smartio-ntb-qemu ... -device e1000e-acs,multifunction=on
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/module.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "qom/object.h"

#define TYPE_E1000E_ACS "e1000e-acs"
#define E1000E_ACS_OFFSET 0x150
#define E1000E_ACS_BITS (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_DT)

/* The e1000e's own realize, kept when the subclass replaces it. */
static void (*e1000e_acs_parent_realize)(PCIDevice *pd, Error **errp);

static void e1000e_acs_realize(PCIDevice *pd, Error **errp)
{
	Error *err = NULL;

	if (!(pd->cap_present & QEMU_PCI_CAP_MULTIFUNCTION) &&
	    !PCI_FUNC(pd->devfn)) {
		error_setg(errp, "e1000e-acs: an endpoint carries ACS only as a function of a multifunction device: add multifunction=on");
		return;
	}
	e1000e_acs_parent_realize(pd, &err);
	if (err) {
		error_propagate(errp, err);
		return;
	}
	pcie_acs_init(pd, E1000E_ACS_OFFSET);
	pci_set_word(pd->config + E1000E_ACS_OFFSET + PCI_ACS_CAP,
		     E1000E_ACS_BITS);
	pci_set_word(pd->wmask + E1000E_ACS_OFFSET + PCI_ACS_CTRL,
		     E1000E_ACS_BITS);
}

static void e1000e_acs_class_init(ObjectClass *oc, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(oc);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);

	(void)data;
	e1000e_acs_parent_realize = k->realize;
	k->realize = e1000e_acs_realize;
	dc->desc = "Intel 82574L GbE with ACS, as a multifunction device's function (smartio test device)";
}

static const TypeInfo e1000e_acs_info = {
	.name = TYPE_E1000E_ACS,
	.parent = "e1000e",
	.class_init = e1000e_acs_class_init,
};

static void e1000e_acs_register(void)
{
	type_register_static(&e1000e_acs_info);
}

type_init(e1000e_acs_register)
