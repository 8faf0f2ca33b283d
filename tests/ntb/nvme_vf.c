// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nvme_vf: the NVMe admin commands that make an SR-IOV controller's
 * secondary controllers (its VFs) usable, sent through the Linux nvme
 * driver's admin passthrough (NVME_IOCTL_ADMIN_CMD) of the PF; what
 * nvme-cli's virt-mgmt and attach-ns do, for a busybox guest
 * (tests/ntb/sriov-init.sh).  NVMe 1.4 section 5.22 (Virtualization
 * Management), 5.19 (Namespace Attachment), Identify CNS 15h (5.15.2.1).
 *
 *   nvme_vf /dev/nvme0 seclist              scid vfn state vq vi, a line each
 *   nvme_vf /dev/nvme0 virt ACT RT CNTLID NR
 *       ACT 1: the primary's flexible resources (after its next reset),
 *       8: assign NR to secondary CNTLID, 9: online, 7: offline;
 *       RT 0: queues (VQ), 1: interrupts (VI)
 *   nvme_vf /dev/nvme0 attach NSID CNTLID   namespace NSID to controller CNTLID
 *
 * Exit 0 when the controller completed the command with status 0; the
 * status is printed otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum nvme_admin_opcode {
	OPC_IDENTIFY = 0x06,
	OPC_NS_ATTACH = 0x15,
	OPC_VIRT_MGMT = 0x1c,
};

#define CNS_SECONDARY_CTRL_LIST 0x15
#define SEC_ENTRY_SIZE 32	/* a Secondary Controller Entry */
#define SEC_LIST_MAX 127

/* The only numbers taken: decimal or 0x hex, within max. */
static int number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	if (errno || end == s || *end || *out > max || s[0] == '-') {
		fprintf(stderr, "nvme_vf: bad number '%s' (at most %lu)\n", s,
			max);
		return -1;
	}
	return 0;
}

static int admin(int fd, struct nvme_admin_cmd *c, const char *what)
{
	int rc = ioctl(fd, NVME_IOCTL_ADMIN_CMD, c);

	if (rc < 0) {
		fprintf(stderr, "nvme_vf: %s: %s\n", what, strerror(errno));
		return 1;
	}
	if (rc) {
		fprintf(stderr, "nvme_vf: %s: NVMe status %#x\n", what, rc);
		return 1;
	}
	return 0;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static int seclist(int fd)
{
	static uint8_t buf[4096];
	struct nvme_admin_cmd c;
	unsigned i, n;

	memset(&c, 0, sizeof(c));
	c.opcode = OPC_IDENTIFY;
	c.addr = (uintptr_t)buf;
	c.data_len = sizeof(buf);
	c.cdw10 = CNS_SECONDARY_CTRL_LIST;
	if (admin(fd, &c, "identify secondary controller list"))
		return 1;
	n = buf[0] < SEC_LIST_MAX ? buf[0] : SEC_LIST_MAX;
	for (i = 0; i < n; i++) {
		const uint8_t *e = buf + SEC_ENTRY_SIZE * (i + 1);

		/* SCID, PCID, SCS, VFN at 8, NVQ at 10, NVI at 12 */
		printf("scid %u vfn %u state %s vq %u vi %u\n", le16(e),
		       le16(e + 8), e[4] & 1 ? "online" : "offline",
		       le16(e + 10), le16(e + 12));
	}
	return 0;
}

static int virt(int fd, char **arg)
{
	unsigned long act, rt, cntlid, nr;
	struct nvme_admin_cmd c;

	if (number(arg[0], 0xf, &act) || number(arg[1], 7, &rt) ||
	    number(arg[2], 0xffff, &cntlid) || number(arg[3], 0xffff, &nr))
		return 2;
	memset(&c, 0, sizeof(c));
	c.opcode = OPC_VIRT_MGMT;
	c.cdw10 = (uint32_t)(act | rt << 8 | cntlid << 16);
	c.cdw11 = (uint32_t)nr;
	return admin(fd, &c, "virtualization management");
}

static int attach(int fd, char **arg)
{
	static uint8_t list[4096];
	unsigned long nsid, cntlid;
	struct nvme_admin_cmd c;

	if (number(arg[0], 0xfffffffe, &nsid) ||
	    number(arg[1], 0xffff, &cntlid))
		return 2;
	memset(list, 0, sizeof(list));
	list[0] = 1;		/* one controller identifier follows */
	list[2] = (uint8_t)cntlid;
	list[3] = (uint8_t)(cntlid >> 8);
	memset(&c, 0, sizeof(c));
	c.opcode = OPC_NS_ATTACH;
	c.nsid = (uint32_t)nsid;
	c.addr = (uintptr_t)list;
	c.data_len = sizeof(list);
	c.cdw10 = 0;		/* SEL 0: attach */
	return admin(fd, &c, "namespace attachment");
}

int main(int argc, char **argv)
{
	int fd, rc;

	if (argc < 3 ||
	    !((!strcmp(argv[2], "seclist") && argc == 3) ||
	      (!strcmp(argv[2], "virt") && argc == 7) ||
	      (!strcmp(argv[2], "attach") && argc == 5))) {
		fprintf(stderr, "usage: nvme_vf DEV seclist | virt ACT RT CNTLID NR | attach NSID CNTLID\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "nvme_vf: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (!strcmp(argv[2], "seclist"))
		rc = seclist(fd);
	else if (!strcmp(argv[2], "virt"))
		rc = virt(fd, argv + 3);
	else
		rc = attach(fd, argv + 3);
	close(fd);
	return rc;
}
