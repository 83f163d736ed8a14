// SPDX-License-Identifier: GPL-2.0
/*
 * umad_reg_probe: the registrations Debian's OpenSM (3.3.23,
 * osm_vendor_ibumad.c) makes on its port, one by one through the
 * ib_umad ABI as libibumad's umad_register() makes them
 * (IB_USER_MAD_REGISTER_AGENT, the OpenIB OUI in every request whatever
 * the class), each on its own file so that none conflicts with another,
 * with the result of each: "umad-probe: class 0x81 v1 rmpp 0 methods
 * 0x01,0x02,0x05,0x07: ok (id 0)" or ": <errno text>".  For `make opensm`
 * (tests/opensm/guest.sh, check.py): OpenSM only logs that a registration
 * failed; this says which and why.
 *
 *   umad_reg_probe <umad index>
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <rdma/ib_user_mad.h>

static const struct {
	uint8_t cls, version, rmpp;
	uint8_t methods[6];	/* 0-terminated */
} regs[] = {
	/* SM: Get, Set (responder), Trap, TrapRepress (trap processor) */
	{ 0x81, 1, 0, { 0x01, 0x02, 0x05, 0x07 } },
	{ 0x01, 1, 0, { 0x01, 0x02, 0x05, 0x07 } },
	{ 0x03, 2, 1, { 0x01, 0x02, 0x12, 0x15, 0x06 } },	/* SA */
	{ 0x03, 2, 0, { 0x01, 0x02, 0x12, 0x15, 0x06 } },
	{ 0x04, 1, 0, { 0x06 } },		/* PerfMgr: Report */
	{ 0x21, 2, 0, { 0x05, 0x07 } },		/* CC */
};

int main(int argc, char **argv)
{
	char path[64];
	unsigned int i, j;
	int fd;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "/dev/infiniband/umad%s", argv[1]);
	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		struct ib_user_mad_reg_req req;

		memset(&req, 0, sizeof(req));
		req.qpn = (regs[i].cls == 0x01 || regs[i].cls == 0x81) ? 0 : 1;
		req.mgmt_class = regs[i].cls;
		req.mgmt_class_version = regs[i].version;
		req.rmpp_version = regs[i].rmpp;
		req.oui[0] = 0x00;	/* OpenIB, as umad_register() */
		req.oui[1] = 0x14;
		req.oui[2] = 0x05;
		printf("umad-probe: class 0x%02x v%u rmpp %u methods", regs[i].cls,
		       regs[i].version, regs[i].rmpp);
		for (j = 0; regs[i].methods[j]; j++) {
			req.method_mask[regs[i].methods[j] / 64] |=
				1ul << (regs[i].methods[j] % 64);
			printf("%s0x%02x", j ? "," : " ", regs[i].methods[j]);
		}
		fd = open(path, O_RDWR);
		if (fd < 0) {
			printf(": open %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req))
			printf(": %s\n", strerror(errno));
		else
			printf(": ok (id %u)\n", req.id);
		close(fd);
	}
	return 0;
}
