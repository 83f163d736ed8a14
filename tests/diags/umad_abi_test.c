// SPDX-License-Identifier: GPL-2.0
/*
 * umad_abi_test: the ib_umad ABI of kmad_umad, its bad inputs and its
 * corner cases, with raw system calls (no libibumad), in the guest of
 * `make diags`.  Each case prints "umad-test: <name>: ok" or
 * "umad-test: <name>: FAILED: <why>"; the last line is
 * "umad-test: summary: <ok> ok, <failed> failed".
 *
 *   umad_abi_test <umad index of an HCA port> <LID of another HCA port>
 *   umad_abi_test --port-gone <umad index> <LID> <command>
 *
 * --port-gone opens the port, posts sends that wait for no answer, holds
 * issmN, runs <command> (which must remove the port: rmmod kmad_sim) and
 * checks what the open files get afterwards.
 *
 * The fabric is kmad_sim's: the port's own SMA answers local
 * directed-route SMPs, LID 999 does not exist.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <endian.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <rdma/ib_user_mad.h>

#define HDR		sizeof(struct ib_user_mad_hdr)
#define OLD_HDR		sizeof(struct ib_user_mad_hdr_old)
#define MAD		256
#define NO_LID		999

static int n_ok, n_failed;
static char umad_path[64], issm_path[64], cap_path[128], lid_path[128];
static char dropped_path[128], gid_path[128], node_path[128];
static int peer_lid;

static void result(const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!fmt) {
		printf("umad-test: %s: ok\n", name);
		n_ok++;
		return;
	}
	printf("umad-test: %s: FAILED: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	n_failed++;
}

#define CHECK(name, cond, ...) do {				\
	if (!(cond)) {						\
		result(name, __VA_ARGS__);			\
		return;						\
	}							\
} while (0)

static int open_port(void)
{
	int fd = open(umad_path, O_RDWR | O_NONBLOCK);

	if (fd >= 0 && ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL))
		return -1;
	return fd;
}

static int reg(int fd, int qpn, int class, int version, int method)
{
	struct ib_user_mad_reg_req req;

	memset(&req, 0, sizeof(req));
	req.qpn = qpn;
	req.mgmt_class = class;
	req.mgmt_class_version = version;
	if (method)
		((uint32_t *)req.method_mask)[method / 32] |= 1u << (method % 32);
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req))
		return -errno;
	return req.id;
}

static unsigned int read_hex(const char *path)
{
	unsigned int v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%x", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

struct pkt {
	struct ib_user_mad_hdr hdr;
	uint8_t mad[MAD];
	uint8_t spare[8];	/* for the write one byte too long */
};

/* A Get of @class/@attr to @lid (0xffff: a local directed-route SMP). */
static void make_get(struct pkt *p, int id, int lid, int class, int attr,
		     uint32_t tid, int timeout_ms, int retries)
{
	memset(p, 0, sizeof(*p));
	p->hdr.id = id;
	p->hdr.timeout_ms = timeout_ms;
	p->hdr.retries = retries;
	p->hdr.lid = htobe16(lid);
	p->hdr.qpn = htobe32(class == 0x01 || class == 0x81 ? 0 : 1);
	p->hdr.qkey = htobe32(class == 0x01 || class == 0x81 ? 0 : 0x80010000);
	p->mad[0] = 1;
	p->mad[1] = class;
	p->mad[2] = 1;
	p->mad[3] = 0x01;	/* Get */
	*(uint32_t *)(p->mad + 12) = htobe32(tid);
	*(uint16_t *)(p->mad + 16) = htobe16(attr);
	if (class == 0x81) {
		*(uint16_t *)(p->mad + 32) = htobe16(0xffff);	/* DrSLID */
		*(uint16_t *)(p->mad + 34) = htobe16(0xffff);	/* DrDLID */
	}
}

static int wait_read_buf(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	n = read(fd, buf, len);
	return n < 0 ? -errno : n;
}

static int wait_read(int fd, struct pkt *p, int timeout_ms)
{
	return wait_read_buf(fd, p, sizeof(*p), timeout_ms);
}

static uint32_t tid_low(const uint8_t *mad)
{
	return be64toh(*(const uint64_t *)(mad + 8)) & 0xffffffff;
}

/*
 * Wait until the request in @req (a umad header and a 256-byte MAD, just
 * written to @fd) has ended in kmad_umad: its answer went through the
 * file's recv_handler (queued or dropped) and its send_handler took it
 * off the file's send list.  Without reading the file: a copy of it to
 * NO_LID, the same TID, is refused as a duplicate (EINVAL) until then; it
 * waits for no answer and the file's close takes it back.
 */
static int wait_answered(int fd, const void *req)
{
	struct pkt probe;
	int i;

	memcpy(&probe, req, HDR + MAD);
	probe.hdr.lid = htobe16(NO_LID);
	probe.hdr.timeout_ms = 0xffffffff;
	probe.hdr.retries = 0;
	for (i = 0; i < 500; i++) {
		if (write(fd, &probe, HDR + MAD) == HDR + MAD)
			return 0;
		if (errno != EINVAL && errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static void t_sysfs(void)
{
	char buf[192] = "";
	FILE *f = fopen("/sys/class/infiniband_mad/abi_version", "r");

	CHECK("sysfs_abi_version", f && fgets(buf, sizeof(buf), f),
	      "cannot read abi_version");
	fclose(f);
	CHECK("sysfs_abi_version", !strcmp(buf, "5\n"), "abi_version is %s", buf);
	result("sysfs_abi_version", NULL);

	/* hw_rev as HCA drivers print it: hex digits, no "0x". */
	snprintf(buf, sizeof(buf), "%s/hw_rev", node_path);
	f = fopen(buf, "r");
	CHECK("sysfs_hw_rev", f && fgets(buf, sizeof(buf), f),
	      "cannot read hw_rev");
	fclose(f);
	CHECK("sysfs_hw_rev", buf[0] != '\n' &&
	      strspn(buf, "0123456789abcdef") == strlen(buf) - 1 &&
	      buf[strlen(buf) - 1] == '\n', "hw_rev is %s", buf);
	result("sysfs_hw_rev", NULL);
}

static void t_register_limits(void)
{
	struct ib_user_mad_reg_req req;
	int fd = open_port(), i, id;
	uint32_t bad = 40;

	CHECK("register_limits", fd >= 0, "open %s: %m", umad_path);
	memset(&req, 0, sizeof(req));
	req.qpn = 2;
	CHECK("register_bad_qpn", ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req) &&
	      errno == EINVAL, "qpn 2: %m");
	result("register_bad_qpn", NULL);
	/* A class version of 8 or more is refused for any class, also
	 * without methods (a send-only agent); ib_mad refuses 0x83 on
	 * (umad.rst, Differences).
	 */
	id = reg(fd, 1, 0x04, 8, 0);
	CHECK("register_bad_version_no_methods", id == -EINVAL,
	      "class 0x04 version 8, no methods: %d", id);
	result("register_bad_version_no_methods", NULL);
	/*
	 * Without methods too, ib_mad's class checks: a GMP class on QP0,
	 * an SMP class on QP1, a class at or above 0x50 (but 0x81), vendor
	 * range 2 without an OUI.
	 */
	id = reg(fd, 0, 0x03, 2, 0);
	CHECK("register_no_methods_class_checks", id == -EINVAL,
	      "SA on QP0: %d", id);
	id = reg(fd, 1, 0x81, 1, 0);
	CHECK("register_no_methods_class_checks", id == -EINVAL,
	      "directed-route SMP on QP1: %d", id);
	id = reg(fd, 1, 0x90, 1, 0);
	CHECK("register_no_methods_class_checks", id == -EINVAL,
	      "class 0x90: %d", id);
	id = reg(fd, 1, 0x30, 1, 0);
	CHECK("register_no_methods_class_checks", id == -EINVAL,
	      "class 0x30 without an OUI: %d", id);
	result("register_no_methods_class_checks", NULL);
	for (i = 0; i < 32; i++) {
		id = reg(fd, 1, 0x04, 1, 0);
		CHECK("register_32_agents", id == i, "agent %d got %d", i, id);
	}
	result("register_32_agents", NULL);
	id = reg(fd, 1, 0x04, 1, 0);
	CHECK("register_33rd_agent", id == -ENOMEM, "33rd agent: %d", id);
	result("register_33rd_agent", NULL);
	CHECK("unregister_bad_id", ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad) &&
	      errno == EINVAL, "id 40: %m");
	bad = 5;
	CHECK("unregister_bad_id", !ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad),
	      "id 5: %m");
	CHECK("unregister_bad_id", ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad) &&
	      errno == EINVAL, "id 5 twice: %m");
	result("unregister_bad_id", NULL);
	CHECK("enable_pkey_after_register",
	      ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL) && errno == EINVAL,
	      "ENABLE_PKEY after a registration: %m");
	result("enable_pkey_after_register", NULL);
	/* The same class and method twice: EINVAL, ib_umad's code. */
	bad = 6;
	CHECK("register_overlap", !ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad),
	      "id 6: %m");
	id = reg(fd, 1, 0x09, 1, 0x01);
	CHECK("register_overlap", id == 5, "first: %d", id);
	id = reg(fd, 1, 0x09, 1, 0x01);
	CHECK("register_overlap", id == -EINVAL, "second: %d", id);
	result("register_overlap", NULL);
	/*
	 * As libibumad's umad_register() asks (OpenSM's SM agent): a class
	 * outside vendor range 2 with the OpenIB OUI, which ib_umad ignores.
	 */
	memset(&req, 0, sizeof(req));
	req.qpn = 0;
	req.mgmt_class = 0x81;
	req.mgmt_class_version = 1;
	req.oui[1] = 0x14;
	req.oui[2] = 0x05;
	req.method_mask[0] |= 1u << 0x05;		/* Trap */
	CHECK("register_oui_ignored",
	      !ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req) && req.id == 6,
	      "class 0x81 with the OpenIB OUI: %m (id %u)", req.id);
	result("register_oui_ignored", NULL);
	close(fd);
}

/*
 * The id cannot be written back (a read-only request): EFAULT, and the
 * agent is gone again, as with ib_umad, which stores it only once the id
 * is written: its class and method are free for the next registration.
 */
static void t_register_efault(void)
{
	struct ib_user_mad_reg_req *req;
	int fd = open_port(), id;

	CHECK("register_efault", fd >= 0, "open %s: %m", umad_path);
	req = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK("register_efault", req != MAP_FAILED, "mmap: %m");
	memset(req, 0, sizeof(*req));
	req->qpn = 1;
	req->mgmt_class = 0x09;
	req->mgmt_class_version = 1;
	req->method_mask[0] |= 1u << 0x02;	/* Set */
	CHECK("register_efault", !mprotect(req, 4096, PROT_READ),
	      "mprotect: %m");
	CHECK("register_efault",
	      ioctl(fd, IB_USER_MAD_REGISTER_AGENT, req) && errno == EFAULT,
	      "a read-only request: %m");
	id = reg(fd, 1, 0x09, 1, 0x02);
	CHECK("register_efault", id == 0,
	      "the same class and method again: %d", id);
	munmap(req, 4096);
	result("register_efault", NULL);
	close(fd);
}

static void t_register2(void)
{
	struct ib_user_mad_reg_req2 req;
	int fd = open(umad_path, O_RDWR);

	CHECK("register2_flags", fd >= 0, "open: %m");
	memset(&req, 0, sizeof(req));
	req.qpn = 1;
	req.mgmt_class = 0x04;
	req.mgmt_class_version = 1;
	/*
	 * USER_RMPP is the one flag: another is refused, the one written
	 * back; but a bad QPN is refused first, with nothing written back.
	 */
	req.qpn = 2;
	req.flags = IB_USER_MAD_USER_RMPP << 1;
	CHECK("register2_flags", ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &req) &&
	      errno == EINVAL && req.flags == IB_USER_MAD_USER_RMPP << 1,
	      "qpn 2 and flags %#x: %m, flags back %#x",
	      IB_USER_MAD_USER_RMPP << 1, req.flags);
	req.qpn = 1;
	CHECK("register2_flags", ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &req) &&
	      errno == EINVAL && req.flags == IB_USER_MAD_USER_RMPP,
	      "flags %#x: %m, flags back %#x", IB_USER_MAD_USER_RMPP << 1,
	      req.flags);
	result("register2_flags", NULL);
	req.flags = 0;
	req.oui = 0x1000000;
	CHECK("register2_bad_oui", ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &req) &&
	      errno == EINVAL, "oui 0x1000000: %m");
	result("register2_bad_oui", NULL);
	req.oui = 0;
	CHECK("register2", !ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &req) &&
	      req.id == 0, "%m, id %u", req.id);
	/* REGISTER_AGENT2 implies the 64-byte header. */
	CHECK("register2", ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL) &&
	      errno == EINVAL, "ENABLE_PKEY after REGISTER_AGENT2: %m");
	result("register2", NULL);
	close(fd);
}

/*
 * The header size of read() and write(), as ib_umad's hdr_size(): a file
 * that registers with REGISTER_AGENT and never asks ENABLE_PKEY uses the
 * old 56-byte struct ib_user_mad_hdr_old (older libibumad, and any
 * program that registers before it could enable it); REGISTER_AGENT2
 * implies the 64-byte one.  A local NodeInfo SMP each way: the write of
 * header and MAD is taken whole, the answer read back is header and MAD,
 * and the header's length says so.  A file on the wrong size reads the
 * MAD shifted by 8 bytes (a class-0 "SMP", refused) and writes 8 bytes
 * more or fewer.
 */
static void t_hdr_sizes(void)
{
	struct ib_user_mad_reg_req2 req2;
	struct {
		struct ib_user_mad_hdr_old hdr;	/* 56 bytes */
		unsigned char mad[MAD];
		unsigned char spare[8];
	} o;
	struct pkt p;
	int fd, id, n;

	fd = open(umad_path, O_RDWR | O_NONBLOCK);
	CHECK("old_header_io", fd >= 0, "open: %m");
	id = reg(fd, 0, 0x81, 1, 0);
	CHECK("old_header_io", id == 0, "register: %d", id);
	make_get(&p, id, 0xffff, 0x81, 0x11, 0x1301, 1000, 1);
	memset(&o, 0, sizeof(o));
	memcpy(&o.hdr, &p.hdr, OLD_HDR);	/* the same first 56 bytes */
	memcpy(o.mad, p.mad, MAD);
	n = write(fd, &o, OLD_HDR + MAD);
	CHECK("old_header_io", n == (int)(OLD_HDR + MAD),
	      "write 56 + 256 bytes: %d %m", n);
	memset(&o, 0, sizeof(o));
	n = wait_read_buf(fd, &o, sizeof(o), 5000);
	CHECK("old_header_io", n == (int)(OLD_HDR + MAD) &&
	      o.hdr.length == OLD_HDR + MAD && o.hdr.status == 0 &&
	      o.mad[3] == 0x81 && tid_low(o.mad) == 0x1301 &&
	      o.mad[64 + 2] == 1,
	      "read %d (want %zu) length %u method %#x tid %#x node type %u",
	      n, OLD_HDR + MAD, o.hdr.length, o.mad[3], tid_low(o.mad),
	      o.mad[64 + 2]);
	result("old_header_io", NULL);
	close(fd);

	fd = open(umad_path, O_RDWR | O_NONBLOCK);
	CHECK("register2_header_io", fd >= 0, "open: %m");
	memset(&req2, 0, sizeof(req2));
	req2.qpn = 0;
	req2.mgmt_class = 0x81;
	req2.mgmt_class_version = 1;
	CHECK("register2_header_io",
	      !ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &req2) && req2.id == 0,
	      "REGISTER_AGENT2: %m, id %u", req2.id);
	make_get(&p, req2.id, 0xffff, 0x81, 0x11, 0x1302, 1000, 1);
	n = write(fd, &p, HDR + MAD);
	CHECK("register2_header_io", n == (int)(HDR + MAD),
	      "write 64 + 256 bytes: %d %m", n);
	memset(&p, 0, sizeof(p));
	n = wait_read(fd, &p, 5000);
	CHECK("register2_header_io", n == (int)(HDR + MAD) &&
	      p.hdr.length == HDR + MAD && p.hdr.status == 0 &&
	      p.mad[3] == 0x81 && tid_low(p.mad) == 0x1302 &&
	      p.mad[64 + 2] == 1,
	      "read %d (want %zu) length %u method %#x tid %#x node type %u",
	      n, HDR + MAD, p.hdr.length, p.mad[3], tid_low(p.mad),
	      p.mad[64 + 2]);
	result("register2_header_io", NULL);
	close(fd);
}

static void t_write_errors(void)
{
	int fd = open_port(), smi, gsi;
	struct pkt p;
	ssize_t n;

	CHECK("write_short", fd >= 0, "open: %m");
	smi = reg(fd, 0, 0x81, 1, 0);
	gsi = reg(fd, 1, 0x04, 1, 0);
	CHECK("write_short", smi == 0 && gsi == 1, "register: %d %d", smi, gsi);
	make_get(&p, smi, 0xffff, 0x81, 0x11, 1, 1000, 0);
	n = write(fd, &p, HDR + 35);
	CHECK("write_short", n < 0 && errno == EINVAL, "36 - 1 bytes: %zd %m", n);
	n = write(fd, &p, HDR - 1);
	CHECK("write_short", n < 0 && errno == EINVAL, "short header: %zd %m", n);
	result("write_short", NULL);
	n = write(fd, &p, HDR + MAD + 1);
	CHECK("write_long", n < 0 && errno == EINVAL, "257 bytes: %zd %m", n);
	result("write_long", NULL);
	p.hdr.id = 32;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_bad_agent_id", n < 0 && errno == EINVAL, "id 32: %zd %m", n);
	result("write_bad_agent_id", NULL);
	p.hdr.id = 7;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_unknown_agent", n < 0 && errno == EIO, "id 7: %zd %m", n);
	result("write_unknown_agent", NULL);
	/* A PerfMgt MAD on the QP0 agent. */
	make_get(&p, smi, peer_lid, 0x04, 0x12, 2, 1000, 0);
	n = write(fd, &p, HDR + MAD);
	CHECK("write_class_qp_mismatch", n < 0 && errno == EINVAL, "%zd %m", n);
	result("write_class_qp_mismatch", NULL);
	/* A directed route of 64 hops. */
	make_get(&p, smi, 0xffff, 0x81, 0x11, 3, 1000, 0);
	p.mad[7] = 64;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_bad_dr_path", n < 0 && errno == EINVAL, "%zd %m", n);
	/* Out of this port through port 9, which an HCA does not have. */
	p.mad[7] = 1;
	p.mad[128 + 1] = 9;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_bad_dr_path", n < 0 && errno == EINVAL,
	      "out port 9: %zd %m", n);
	result("write_bad_dr_path", NULL);
	/* A timeout of 2^32 - 1 ms, which ib_umad takes (as "never", in
	 * effect): written, and taken back by the close.
	 */
	make_get(&p, gsi, NO_LID, 0x04, 0x12, 5, 1000, 0);
	p.hdr.timeout_ms = 0xffffffff;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_huge_timeout", n == HDR + MAD, "%zd %m", n);
	result("write_huge_timeout", NULL);
	/* An SL above 15 and a P_Key index past kmad_sim's 64 entries: EINVAL
	 * (ib_umad hands both to the HCA); entry 63 is taken.
	 */
	make_get(&p, gsi, NO_LID, 0x04, 0x12, 6, 1000, 0);
	p.hdr.sl = 16;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_bad_sl_pkey", n < 0 && errno == EINVAL, "sl 16: %zd %m", n);
	p.hdr.sl = 15;
	p.hdr.pkey_index = 64;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_bad_sl_pkey", n < 0 && errno == EINVAL,
	      "P_Key index 64: %zd %m", n);
	p.hdr.pkey_index = 63;
	n = write(fd, &p, HDR + MAD);
	CHECK("write_bad_sl_pkey", n == HDR + MAD, "sl 15, index 63: %zd %m",
	      n);
	result("write_bad_sl_pkey", NULL);
	/* Two outstanding requests with one TID. */
	make_get(&p, gsi, NO_LID, 0x04, 0x12, 4, 5000, 0);
	n = write(fd, &p, HDR + MAD);
	CHECK("write_duplicate_tid", n == HDR + MAD, "first: %zd %m", n);
	n = write(fd, &p, HDR + MAD);
	CHECK("write_duplicate_tid", n < 0 && errno == EINVAL, "second: %zd %m", n);
	result("write_duplicate_tid", NULL);
	close(fd);
}

static void t_read(void)
{
	int fd = open_port(), smi, i;
	struct pollfd pfd;
	struct pkt p, r;
	long long before;
	uint64_t tid;
	ssize_t n;

	CHECK("read_nonblock_empty", fd >= 0, "open: %m");
	smi = reg(fd, 0, 0x81, 1, 0);
	CHECK("read_nonblock_empty", smi == 0, "register: %d", smi);
	n = read(fd, &r, sizeof(r));
	CHECK("read_nonblock_empty", n < 0 && errno == EAGAIN, "%zd %m", n);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK("read_nonblock_empty", poll(&pfd, 1, 0) == 0, "poll says %#x",
	      pfd.revents);
	result("read_nonblock_empty", NULL);

	make_get(&p, smi, 0xffff, 0x81, 0x11, 0x1234, 1000, 1);
	n = write(fd, &p, HDR + MAD);
	CHECK("local_smp_nodeinfo", n == HDR + MAD, "write: %zd %m", n);
	CHECK("local_smp_nodeinfo", poll(&pfd, 1, 5000) == 1 &&
	      (pfd.revents & POLLIN), "poll: no answer");
	n = read(fd, &r, HDR + 10);
	CHECK("read_too_small_requeues", n < 0 && errno == EINVAL,
	      "short read: %zd %m", n);
	n = read(fd, &r, HDR - 1);
	CHECK("read_too_small_requeues", n < 0 && errno == EINVAL,
	      "shorter than a header: %zd %m", n);
	n = read(fd, &r, sizeof(r));
	CHECK("read_too_small_requeues", n == HDR + MAD, "then: %zd %m", n);
	result("read_too_small_requeues", NULL);
	tid = be64toh(*(uint64_t *)(r.mad + 8));
	CHECK("local_smp_nodeinfo", r.hdr.status == 0 && r.mad[3] == 0x81 &&
	      (tid & 0xffffffff) == 0x1234 && r.hdr.length == HDR + MAD &&
	      r.mad[64 + 2] == 1,
	      "status %u method %#x tid %#llx length %u node type %u",
	      r.hdr.status, r.mad[3], (unsigned long long)tid, r.hdr.length,
	      r.mad[64 + 2]);
	/* From the permissive LID, as ib_mad reports a local SMP's answer. */
	CHECK("local_smp_nodeinfo", r.hdr.lid == htobe16(0xffff) &&
	      r.hdr.qpn == 0, "header lid %#x qpn %u", be16toh(r.hdr.lid),
	      be32toh(r.hdr.qpn));
	result("local_smp_nodeinfo", NULL);

	/*
	 * The packet the short read put back was counted back in: the file's
	 * queue holds nothing now, so two more round trips are each queued
	 * and read, none dropped.  Were it not counted, the full read took
	 * the count below zero (it wraps), and the queue would look full to
	 * every later MAD of this file.
	 */
	before = read_ll(dropped_path);
	CHECK("read_requeue_then_more", before >= 0, "read %s: %m",
	      dropped_path);
	for (i = 0; i < 2; i++) {
		make_get(&p, smi, 0xffff, 0x81, 0x11, 0x1235 + i, 1000, 1);
		n = write(fd, &p, HDR + MAD);
		CHECK("read_requeue_then_more", n == HDR + MAD,
		      "write %d: %zd %m", i, n);
		memset(&r, 0, sizeof(r));
		n = wait_read(fd, &r, 5000);
		CHECK("read_requeue_then_more", n == HDR + MAD &&
		      r.mad[3] == 0x81 && tid_low(r.mad) == 0x1235 + (unsigned int)i,
		      "round trip %d: read %zd (want %zu) method %#x tid %#x",
		      i, n, HDR + MAD, r.mad[3], tid_low(r.mad));
	}
	CHECK("read_requeue_then_more", read_ll(dropped_path) == before,
	      "recv_dropped grew by %lld", read_ll(dropped_path) - before);
	result("read_requeue_then_more", NULL);
	close(fd);
}

static void t_timeout(void)
{
	int fd = open_port(), gsi;
	struct pkt p, r;
	int n;

	CHECK("timeout_record", fd >= 0, "open: %m");
	gsi = reg(fd, 1, 0x04, 1, 0);
	make_get(&p, gsi, NO_LID, 0x04, 0x12, 0x77, 100, 2);
	CHECK("timeout_record", write(fd, &p, HDR + MAD) == HDR + MAD,
	      "write: %m");
	n = wait_read(fd, &r, 5000);
	CHECK("timeout_record", n == HDR + 24, "read: %d", n);
	CHECK("timeout_record", r.hdr.status == ETIMEDOUT && r.hdr.id == (unsigned int)gsi &&
	      (be64toh(*(uint64_t *)(r.mad + 8)) & 0xffffffff) == 0x77 &&
	      r.mad[1] == 0x04,
	      "status %u id %u class %#x", r.hdr.status, r.hdr.id, r.mad[1]);
	result("timeout_record", NULL);
	close(fd);
}

/* Unsolicited MADs to a registered agent, and its answer. */
static void t_unsolicited(void)
{
	int srv = open_port(), cli = open_port(), sid, cid, n;
	struct pkt p, r;

	CHECK("unsolicited_to_agent", srv >= 0 && cli >= 0, "open: %m");
	sid = reg(srv, 1, 0x09, 1, 0x01);
	cid = reg(cli, 1, 0x09, 1, 0);
	CHECK("unsolicited_to_agent", sid == 0 && cid == 0, "register %d %d",
	      sid, cid);
	/* To the port's own LID: looped back. */
	make_get(&p, cid, 0, 0x09, 0x10, 0x55, 1000, 1);
	p.hdr.lid = htobe16(read_hex(lid_path));
	CHECK("unsolicited_to_agent", write(cli, &p, HDR + MAD) == HDR + MAD,
	      "write: %m");
	n = wait_read(srv, &r, 5000);
	CHECK("unsolicited_to_agent", n == HDR + MAD && r.mad[3] == 0x01 &&
	      r.hdr.qpn == htobe32(1) && r.hdr.id == (unsigned int)sid,
	      "read %d method %#x qpn %u", n, r.mad[3], be32toh(r.hdr.qpn));
	result("unsolicited_to_agent", NULL);
	/*
	 * The answer: GetResp, the same TID, back to the sender; with a
	 * timeout, as libibmad's mad_respond_via() writes it.
	 */
	r.mad[3] = 0x81;
	r.hdr.id = sid;
	r.hdr.timeout_ms = 1000;
	r.hdr.retries = 3;
	/*
	 * The header's qkey as read (0): ib_umad sends with the QP's
	 * Q_Key whatever it says.
	 */
	CHECK("response_to_requester", r.hdr.qkey == 0, "qkey read %#x",
	      be32toh(r.hdr.qkey));
	CHECK("response_to_requester", write(srv, &r, HDR + MAD) == HDR + MAD,
	      "write: %m");
	n = wait_read(cli, &p, 5000);
	CHECK("response_to_requester", n == HDR + MAD && p.mad[3] == 0x81 &&
	      p.hdr.status == 0 &&
	      (be64toh(*(uint64_t *)(p.mad + 8)) & 0xffffffff) == 0x55,
	      "read %d method %#x status %u", n, p.mad[3], p.hdr.status);
	result("response_to_requester", NULL);
	close(srv);
	/*
	 * Nobody registered the class: kmad answers "class not supported"
	 * (status 0x0004; ib_mad would say 0x000C, Documentation/umad.rst).
	 */
	make_get(&p, cid, peer_lid, 0x09, 0x10, 0x56, 1000, 1);
	p.hdr.qkey = 0;		/* not read: sent with QP1's Q_Key */
	CHECK("unsupported_answer", write(cli, &p, HDR + MAD) == HDR + MAD,
	      "write: %m");
	n = wait_read(cli, &r, 5000);
	CHECK("unsupported_answer", n == HDR + MAD && r.mad[3] == 0x81 &&
	      be16toh(*(uint16_t *)(r.mad + 4)) == 0x0004,
	      "read %d method %#x status %#x", n, r.mad[3],
	      be16toh(*(uint16_t *)(r.mad + 4)));
	result("unsupported_answer", NULL);
	close(cli);
}

/* Entry 0 of the port's GID table (sysfs, as "%pI6"); 0 or -1. */
static int read_gid0(unsigned char gid[16])
{
	char buf[64] = "";
	FILE *f = fopen(gid_path, "r");
	int ok;

	if (!f)
		return -1;
	ok = !!fgets(buf, sizeof(buf), f);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok && inet_pton(AF_INET6, buf, gid) == 1 ? 0 : -1;
}

/*
 * A request that carries a GRH (kmad_sim's InfiniBand links carry them),
 * to the port's own LID and GID: the reader learns the address to answer
 * at, as ib_umad gives it (ib_init_ah_attr_from_wc()): the sender's GID,
 * the index of the port's GID it was sent to (0, the only one kmad_sim
 * has without an SM), hop limit 0xff (not the 7 it came with), its
 * traffic class and flow label.  Written back as read, the answer goes by
 * GID and reaches the requester, with a GRH.
 */
static void t_grh(void)
{
	int srv = open_port(), cli = open_port(), sid, cid, n;
	unsigned char gid[16];
	struct pkt p, r;

	CHECK("grh_recv_header", srv >= 0 && cli >= 0, "open: %m");
	CHECK("grh_recv_header", !read_gid0(gid), "read %s: %m", gid_path);
	sid = reg(srv, 1, 0x09, 1, 0x01);
	cid = reg(cli, 1, 0x09, 1, 0);
	CHECK("grh_recv_header", sid == 0 && cid == 0, "register %d %d", sid,
	      cid);
	make_get(&p, cid, read_hex(lid_path), 0x09, 0x10, 0x58, 1000, 1);
	p.hdr.grh_present = 1;
	p.hdr.gid_index = 0;
	p.hdr.hop_limit = 7;
	p.hdr.traffic_class = 0x2a;
	p.hdr.flow_label = htobe32(0x12345);
	memcpy(p.hdr.gid, gid, 16);
	CHECK("grh_recv_header", write(cli, &p, HDR + MAD) == HDR + MAD,
	      "write: %m");
	memset(&r, 0, sizeof(r));
	n = wait_read(srv, &r, 5000);
	CHECK("grh_recv_header", n == HDR + MAD && r.mad[3] == 0x01 &&
	      tid_low(r.mad) == 0x58, "read %d method %#x tid %#x", n,
	      r.mad[3], tid_low(r.mad));
	CHECK("grh_recv_header", r.hdr.grh_present == 1 &&
	      !memcmp(r.hdr.gid, gid, 16) && r.hdr.gid_index == 0 &&
	      r.hdr.hop_limit == 0xff && r.hdr.traffic_class == 0x2a &&
	      be32toh(r.hdr.flow_label) == 0x12345,
	      "grh_present %u gid %s, gid_index %u hop_limit %#x (want 0xff) traffic_class %#x (want 0x2a) flow_label %#x (want 0x12345)",
	      r.hdr.grh_present,
	      memcmp(r.hdr.gid, gid, 16) ? "differs" : "ok", r.hdr.gid_index,
	      r.hdr.hop_limit, r.hdr.traffic_class, be32toh(r.hdr.flow_label));
	result("grh_recv_header", NULL);

	r.mad[3] = 0x81;
	r.hdr.id = sid;
	CHECK("grh_response", write(srv, &r, HDR + MAD) == HDR + MAD,
	      "write: %m");
	memset(&p, 0, sizeof(p));
	n = wait_read(cli, &p, 5000);
	CHECK("grh_response", n == HDR + MAD && p.mad[3] == 0x81 &&
	      p.hdr.status == 0 && tid_low(p.mad) == 0x58 &&
	      p.hdr.grh_present == 1 && !memcmp(p.hdr.gid, gid, 16),
	      "read %d method %#x status %u tid %#x grh_present %u", n,
	      p.mad[3], p.hdr.status, tid_low(p.mad), p.hdr.grh_present);
	result("grh_response", NULL);
	close(srv);
	close(cli);
}

/* Register SA (class 3, version 2) with @rmpp and up to two methods. */
static int reg_sa(int fd, int rmpp, int m1, int m2)
{
	struct ib_user_mad_reg_req req;

	memset(&req, 0, sizeof(req));
	req.qpn = 1;
	req.mgmt_class = 0x03;
	req.mgmt_class_version = 2;
	req.rmpp_version = rmpp;
	if (m1)
		((uint32_t *)req.method_mask)[m1 / 32] |= 1u << (m1 % 32);
	if (m2)
		((uint32_t *)req.method_mask)[m2 / 32] |= 1u << (m2 % 32);
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req))
		return -errno;
	return req.id;
}

#define SA_HDR		56
#define RMPP_DATA_LEN	5000	/* 25 segments of 200 bytes */

/*
 * An SA MAD of @len bytes (header and data) in @buf, behind a umad header
 * to @lid: method @method, TID @tid, RMPP Active if @active, data bytes
 * (from SA_HDR on) a pattern seeded by @seed.
 */
static void make_sa(uint8_t *buf, size_t len, int id, int lid, int method,
		    uint32_t tid, int active, int seed)
{
	struct ib_user_mad_hdr *h = (struct ib_user_mad_hdr *)buf;
	uint8_t *m = buf + HDR;
	size_t i;

	memset(buf, 0, HDR + len);
	h->id = id;
	h->timeout_ms = 1000;
	h->retries = 3;
	h->lid = htobe16(lid);
	h->qpn = htobe32(1);
	h->qkey = htobe32(0x80010000);
	m[0] = 1;
	m[1] = 0x03;
	m[2] = 2;
	m[3] = method;
	*(uint32_t *)(m + 12) = htobe32(tid);
	*(uint16_t *)(m + 16) = htobe16(0x0011);	/* NodeRecord */
	m[24] = 1;				/* RMPPVersion */
	m[25] = 1;				/* DATA */
	m[26] = active ? 0x07 : 0;		/* Active, First, Last */
	for (i = SA_HDR; i < len; i++)
		m[i] = (uint8_t)(i * 7 + seed);
}

static int sa_data_ok(const uint8_t *m, size_t len, int seed)
{
	size_t i;

	for (i = SA_HDR; i < len; i++)
		if (m[i] != (uint8_t)(i * 7 + seed))
			return 0;
	return 1;
}

/*
 * Kernel RMPP through the file (ib_umad's rules): registration checks, a
 * multi-segment response written whole and read reassembled (-ENOSPC
 * first into a 256-byte buffer), a multi-segment request the other way.
 * Both files on this port; the MADs loop back through its LID.
 */
static void t_rmpp(void)
{
	size_t big = HDR + SA_HDR + RMPP_DATA_LEN;
	int srv = open_port(), cli = open_port(), sid, cid, n, lid, i;
	uint8_t *w = calloc(1, big + 64), *r = calloc(1, big + 64);
	struct ib_user_mad_hdr *rh = (struct ib_user_mad_hdr *)r;
	long long before;
	struct pkt p;

	CHECK("rmpp_register", srv >= 0 && cli >= 0 && w && r, "open: %m");
	CHECK("rmpp_register", reg(cli, 1, 0x04, 1, 0) >= 0, "plain: %m");
	{
		struct ib_user_mad_reg_req req;

		memset(&req, 0, sizeof(req));
		req.qpn = 1;
		req.mgmt_class = 0x04;	/* PerfMgt: no RMPP header */
		req.mgmt_class_version = 1;
		req.rmpp_version = 1;
		CHECK("rmpp_register", ioctl(cli, IB_USER_MAD_REGISTER_AGENT,
					     &req) && errno == EINVAL,
		      "PerfMgt with RMPP: %m");
	}
	CHECK("rmpp_register", reg_sa(cli, 2, 0x12, 0) == -EINVAL,
	      "RMPP version 2 accepted");
	sid = reg_sa(srv, 1, 0x12, 0x14);
	cid = reg_sa(cli, 1, 0, 0);		/* send-only, kernel RMPP */
	CHECK("rmpp_register", sid == 0 && cid == 1, "register %d %d", sid,
	      cid);
	result("rmpp_register", NULL);

	lid = read_hex(lid_path);
	/* Too long without RMPP Active, or for an agent without RMPP. */
	make_sa(w, SA_HDR + RMPP_DATA_LEN, cid, lid, 0x12, 0x60, 0, 1);
	CHECK("rmpp_write_errors", write(cli, w, big) < 0 && errno == EINVAL,
	      "long non-RMPP write: %m");
	make_sa(w, SA_HDR + RMPP_DATA_LEN, 0, lid, 0x12, 0x60, 1, 1);
	CHECK("rmpp_write_errors", write(cli, w, big) < 0 && errno == EINVAL,
	      "long write for the PerfMgt agent: %m");
	result("rmpp_write_errors", NULL);

	/*
	 * A kernel-RMPP agent sends RMPP classes only (ib_mad's
	 * ib_post_send_mad()), a send-only one (class 0) too; the PerfMgt
	 * agent may send the same Get.
	 */
	{
		struct ib_user_mad_reg_req req;
		struct pkt g;
		int any;

		memset(&req, 0, sizeof(req));
		req.qpn = 1;
		req.rmpp_version = 1;
		any = ioctl(cli, IB_USER_MAD_REGISTER_AGENT, &req) ? -errno :
		      (int)req.id;
		CHECK("rmpp_agent_non_rmpp_class", any == 2,
		      "send-only RMPP agent: %d", any);
		make_get(&g, cid, NO_LID, 0x04, 0x12, 0x70, 0, 0);
		CHECK("rmpp_agent_non_rmpp_class",
		      write(cli, &g, HDR + MAD) < 0 && errno == EINVAL,
		      "PerfMgt Get from the SA agent: %m");
		g.hdr.id = any;
		CHECK("rmpp_agent_non_rmpp_class",
		      write(cli, &g, HDR + MAD) < 0 && errno == EINVAL,
		      "PerfMgt Get from the send-only RMPP agent: %m");
		g.hdr.id = 0;
		CHECK("rmpp_agent_non_rmpp_class",
		      write(cli, &g, HDR + MAD) == HDR + MAD,
		      "PerfMgt Get from the PerfMgt agent: %m");
		if (any >= 0)
			ioctl(cli, IB_USER_MAD_UNREGISTER_AGENT, &any);
	}
	result("rmpp_agent_non_rmpp_class", NULL);

	/*
	 * GetTable (one MAD), answered by a 25-segment GetTableResp.  Not
	 * RMPP-active, from a kernel-RMPP agent: it goes with an RMPP header
	 * of zeros, whatever was written there, as under ib_umad.
	 */
	make_sa(w, MAD, cid, lid, 0x12, 0x61, 0, 0);
	for (i = 27; i < 36; i++)
		w[HDR + i] = 0xa5;	/* status, segment, length */
	CHECK("rmpp_response", write(cli, w, HDR + MAD) == HDR + MAD,
	      "write GetTable: %m");
	n = wait_read(srv, &p, 5000);
	CHECK("rmpp_response", n == HDR + MAD && p.mad[3] == 0x12,
	      "server read %d method %#x", n, p.mad[3]);
	for (i = 24; i < 36 && !p.mad[i]; i++)
		;
	CHECK("rmpp_inactive_header_zeroed", n == HDR + MAD && i == 36,
	      "byte %d of the MAD is %#x", i, i < 36 ? p.mad[i] : 0);
	result("rmpp_inactive_header_zeroed", NULL);
	make_sa(w, SA_HDR + RMPP_DATA_LEN, sid, be16toh(p.hdr.lid), 0x92, 0,
		1, 3);
	memcpy(w + HDR + 8, p.mad + 8, 8);	/* the request's TID */
	CHECK("rmpp_response", write(srv, w, big) == (ssize_t)big,
	      "write GetTableResp: %m");
	n = wait_read(cli, &p, 10000);
	CHECK("rmpp_response", n < 0 && n == -ENOSPC &&
	      p.hdr.length == big && p.mad[3] == 0x92,
	      "short read %d (want -ENOSPC), length %u (want %zu)", n,
	      p.hdr.length, big);
	n = read(cli, r, big + 64);
	CHECK("rmpp_response", n == (int)big && rh->status == 0 &&
	      r[HDR + 3] == 0x92 && sa_data_ok(r + HDR, n - HDR, 3),
	      "read %d (want %zu) status %u, data %s", n, big, rh->status,
	      n > 0 && sa_data_ok(r + HDR, n - HDR, 3) ? "ok" : "differs");
	result("rmpp_response", NULL);

	/*
	 * The short read above (-ENOSPC, as libibumad's umad_recv() does for
	 * every RMPP message) put the message back: its count and its bytes
	 * must go back with it, or the full read takes them below zero and
	 * they wrap.  A wrapped count makes the queue look full to the next
	 * MAD, wrapped bytes to the next one that finds another waiting: so
	 * two answers are kept waiting together, the second arriving after
	 * the first is queued.  kmad answers each SA Get itself (no agent
	 * has the method); wait_answered() waits for each without a read.
	 */
	before = read_ll(dropped_path);
	CHECK("rmpp_requeue_then_two_queued", before >= 0, "read %s: %m",
	      dropped_path);
	for (i = 0; i < 2; i++) {
		make_sa(w, MAD, cid, lid, 0x01, 0x65 + i, 0, 0);
		CHECK("rmpp_requeue_then_two_queued",
		      write(cli, w, HDR + MAD) == HDR + MAD, "write Get %d: %m",
		      i);
		n = wait_answered(cli, w);
		CHECK("rmpp_requeue_then_two_queued", !n,
		      "answer %d never handled: %d", i, n);
	}
	for (i = 0; i < 2; i++) {
		n = read(cli, r, big + 64);
		CHECK("rmpp_requeue_then_two_queued", n == (int)(HDR + MAD) &&
		      r[HDR + 3] == 0x81 && tid_low(r + HDR) == 0x65 + (unsigned int)i,
		      "answer %d: read %d %s(want %zu) method %#x tid %#x", i,
		      n, n < 0 ? strerror(errno) : "", HDR + MAD, r[HDR + 3],
		      tid_low(r + HDR));
	}
	n = read(cli, r, big + 64);
	CHECK("rmpp_requeue_then_two_queued", n < 0 && errno == EAGAIN,
	      "third read %d: %m (want EAGAIN)", n);
	CHECK("rmpp_requeue_then_two_queued",
	      read_ll(dropped_path) == before, "recv_dropped grew by %lld",
	      read_ll(dropped_path) - before);
	result("rmpp_requeue_then_two_queued", NULL);

	/*
	 * A 25-segment request (GetMulti) the other way, written with
	 * RRespTime 31: it goes with 0, as under ib_umad, whose RMPP header
	 * is the kernel's.
	 */
	make_sa(w, SA_HDR + RMPP_DATA_LEN, cid, lid, 0x14, 0x62, 1, 5);
	w[HDR + 26] = 0xff;
	CHECK("rmpp_request", write(cli, w, big) == (ssize_t)big,
	      "write GetMulti: %m");
	{
		struct pollfd pfd = { .fd = srv, .events = POLLIN };

		CHECK("rmpp_request", poll(&pfd, 1, 10000) == 1, "no request");
	}
	n = read(srv, r, big + 64);
	CHECK("rmpp_request", n == (int)big && r[HDR + 3] == 0x14 &&
	      sa_data_ok(r + HDR, n - HDR, 5),
	      "read %d (want %zu) method %#x, data %s", n, big, r[HDR + 3],
	      n > 0 && sa_data_ok(r + HDR, n - HDR, 5) ? "ok" : "differs");
	result("rmpp_request", NULL);
	CHECK("rmpp_rtime_zeroed", n == (int)big && (r[HDR + 26] >> 3) == 0,
	      "read %d, RRespTime %d", n, n > 0 ? r[HDR + 26] >> 3 : -1);
	result("rmpp_rtime_zeroed", NULL);
	free(w);
	free(r);
	close(srv);
	close(cli);
}

/*
 * ib_umad's other write rules: a MAD shorter than its class's header is
 * refused (an SA MAD of 40 bytes; 56 is taken); two responses with one
 * TID, class and destination may not be outstanding at once (a
 * 25-segment RMPP response to a LID nobody has waits for ACKs that never
 * come: another to the same LID is refused, one to another LID taken).
 */
static void t_write_rules(void)
{
	size_t big = HDR + SA_HDR + RMPP_DATA_LEN;
	int fd = open_port(), sa, gsi;
	uint8_t *w = calloc(1, big + 64);
	ssize_t n;

	CHECK("write_short_class_header", fd >= 0 && w, "open: %m");
	sa = reg_sa(fd, 1, 0x12, 0);
	gsi = reg(fd, 1, 0x04, 1, 0);
	CHECK("write_short_class_header", sa == 0 && gsi == 1,
	      "register: %d %d", sa, gsi);
	make_sa(w, MAD, sa, NO_LID, 0x01, 0x80, 0, 0);
	n = write(fd, w, HDR + 40);
	CHECK("write_short_class_header", n < 0 && errno == EINVAL,
	      "SA, 40 bytes: %zd %m", n);
	n = write(fd, w, HDR + SA_HDR);
	CHECK("write_short_class_header", n == (ssize_t)(HDR + SA_HDR),
	      "SA, 56 bytes: %zd %m", n);
	result("write_short_class_header", NULL);

	make_sa(w, SA_HDR + RMPP_DATA_LEN, sa, NO_LID, 0x92, 0x81, 1, 2);
	n = write(fd, w, big);
	CHECK("write_duplicate_response", n == (ssize_t)big, "first: %zd %m",
	      n);
	n = write(fd, w, big);
	CHECK("write_duplicate_response", n < 0 && errno == EINVAL,
	      "the same again: %zd %m", n);
	((struct ib_user_mad_hdr *)w)->lid = htobe16(NO_LID + 1);
	n = write(fd, w, big);
	CHECK("write_duplicate_response", n == (ssize_t)big,
	      "to another LID: %zd %m", n);
	result("write_duplicate_response", NULL);
	free(w);
	close(fd);
}

/* Byte @i of an RMPP message made by make_sa() with @seed, in segment @seg. */
static int user_rmpp_seg_ok(const uint8_t *m, int seg, int seed)
{
	size_t i, off;

	for (i = SA_HDR; i < MAD; i++) {
		off = SA_HDR + (size_t)(seg - 1) * (MAD - SA_HDR) + (i - SA_HDR);
		if (m[i] != (uint8_t)(off * 7 + seed))
			return 0;
	}
	return 1;
}

/* Write, from agent @id, the ACK of segment @seg of the transfer in @m. */
static int user_rmpp_ack(int fd, int id, const struct pkt *got, int seg,
			 int newwin)
{
	struct pkt a;

	memset(&a, 0, sizeof(a));
	a.hdr.id = id;
	a.hdr.lid = got->hdr.lid;
	a.hdr.qpn = htobe32(1);
	a.hdr.qkey = htobe32(0x80010000);
	memcpy(a.mad, got->mad, 24);		/* MAD header: TID, class */
	a.mad[3] = got->mad[3] ^ 0x80;		/* the method, RESP flipped */
	a.mad[4] = a.mad[5] = 0;		/* status */
	a.mad[24] = 1;				/* RMPPVersion */
	a.mad[25] = 2;				/* ACK */
	a.mad[26] = 0x01;			/* Active */
	*(uint32_t *)(a.mad + 28) = htobe32(seg);
	*(uint32_t *)(a.mad + 32) = htobe32(newwin);
	return write(fd, &a, HDR + MAD) == HDR + MAD ? 0 : -errno;
}

/*
 * User-level RMPP (REGISTER_AGENT2's IB_USER_MAD_USER_RMPP, as ib_umad
 * and ib_mad give it): a GetTable from such an agent, answered by a
 * kernel-RMPP agent's 25-segment GetTableResp, is read segment by
 * segment, 256 bytes each, the first as the request's response and the
 * others unsolicited, and the agent's own ACKs (RMPP-active, one TID: no
 * duplicate refused) drive the sender's window to its end.  The sender,
 * with an ACK timeout of 1 s and no retry, then reports no timeout.
 */
static void t_user_rmpp(void)
{
	size_t big = HDR + SA_HDR + RMPP_DATA_LEN;
	int srv = open_port(), cli = open(umad_path, O_RDWR), sid, n, lid;
	uint8_t *w = calloc(1, big + 64);
	struct ib_user_mad_reg_req2 req;
	uint32_t seg;
	struct pkt p;

	CHECK("user_rmpp_register", srv >= 0 && cli >= 0 && w, "open: %m");
	memset(&req, 0, sizeof(req));
	req.qpn = 1;
	req.flags = IB_USER_MAD_USER_RMPP;
	CHECK("user_rmpp_register",
	      ioctl(cli, IB_USER_MAD_REGISTER_AGENT2, &req) && errno == EINVAL,
	      "USER_RMPP without a class: %m");
	req.mgmt_class = 0x03;
	req.mgmt_class_version = 2;
	req.rmpp_version = 2;
	CHECK("user_rmpp_register",
	      ioctl(cli, IB_USER_MAD_REGISTER_AGENT2, &req) && errno == EINVAL,
	      "RMPP version 2 with USER_RMPP: %m");
	req.rmpp_version = 1;
	CHECK("user_rmpp_register",
	      !ioctl(cli, IB_USER_MAD_REGISTER_AGENT2, &req) && req.id == 0,
	      "USER_RMPP: %m, id %u", req.id);
	sid = reg_sa(srv, 1, 0x12, 0);
	CHECK("user_rmpp_register", sid == 0, "kernel-RMPP server: %d", sid);
	/* Registered with an RMPP version: RMPP classes only, as ib_mad. */
	make_get(&p, 0, NO_LID, 0x04, 0x12, 0x73, 0, 0);
	CHECK("user_rmpp_register",
	      write(cli, &p, HDR + MAD) < 0 && errno == EINVAL,
	      "PerfMgt Get from the USER_RMPP agent: taken");
	result("user_rmpp_register", NULL);

	/*
	 * Its RMPP-active writes skip the duplicate check: an ACK with the
	 * TID of its own outstanding GetTable, and one RMPP response twice
	 * to one LID (both to LID 999: nobody answers).
	 */
	make_sa(w, MAD, 0, NO_LID, 0x12, 0x71, 0, 0);
	/* Outstanding until the close: no ETIMEDOUT record among the reads. */
	((struct ib_user_mad_hdr *)w)->timeout_ms = 0xffffffff;
	((struct ib_user_mad_hdr *)w)->retries = 0;
	CHECK("user_rmpp_no_duplicate_check",
	      write(cli, w, HDR + MAD) == HDR + MAD, "write GetTable: %m");
	memcpy(&p, w, HDR + MAD);
	p.mad[3] = 0x92;			/* as if answered */
	n = user_rmpp_ack(cli, 0, &p, 1, 1);
	CHECK("user_rmpp_no_duplicate_check", !n, "ACK with its TID: %s",
	      strerror(-n));
	make_sa(w, MAD, 0, NO_LID, 0x92, 0x72, 1, 4);
	((struct ib_user_mad_hdr *)w)->timeout_ms = 0;
	((struct ib_user_mad_hdr *)w)->retries = 0;
	CHECK("user_rmpp_no_duplicate_check",
	      write(cli, w, HDR + MAD) == HDR + MAD &&
	      write(cli, w, HDR + MAD) == HDR + MAD,
	      "an RMPP response twice: %m");
	result("user_rmpp_no_duplicate_check", NULL);

	lid = read_hex(lid_path);
	make_sa(w, MAD, 0, lid, 0x12, 0x70, 0, 0);
	CHECK("user_rmpp_response", write(cli, w, HDR + MAD) == HDR + MAD,
	      "write GetTable: %m");
	n = wait_read(srv, &p, 5000);
	CHECK("user_rmpp_response", n == HDR + MAD && p.mad[3] == 0x12,
	      "server read %d method %#x", n, p.mad[3]);
	make_sa(w, SA_HDR + RMPP_DATA_LEN, sid, be16toh(p.hdr.lid), 0x92, 0,
		1, 9);
	memcpy(w + HDR + 8, p.mad + 8, 8);	/* the request's TID */
	((struct ib_user_mad_hdr *)w)->retries = 0;
	CHECK("user_rmpp_response", write(srv, w, big) == (ssize_t)big,
	      "write GetTableResp: %m");
	for (seg = 1; seg <= RMPP_DATA_LEN / (MAD - SA_HDR); seg++) {
		n = wait_read(cli, &p, 10000);
		CHECK("user_rmpp_response", n == HDR + MAD && p.hdr.status == 0 &&
		      p.mad[3] == 0x92 && p.mad[25] == 1 && (p.mad[26] & 1) &&
		      be32toh(*(uint32_t *)(p.mad + 28)) == seg &&
		      tid_low(p.mad) == 0x70 && user_rmpp_seg_ok(p.mad, seg, 9),
		      "segment %u: read %d status %d method %#x type %u flags %#x seg %u tid %#x data %s",
		      seg, n, p.hdr.status, p.mad[3], p.mad[25], p.mad[26],
		      be32toh(*(uint32_t *)(p.mad + 28)), tid_low(p.mad),
		      user_rmpp_seg_ok(p.mad, seg, 9) ? "ok" : "differs");
		if (seg == 1 || seg == RMPP_DATA_LEN / (MAD - SA_HDR)) {
			n = user_rmpp_ack(cli, 0, &p, seg,
					  RMPP_DATA_LEN / (MAD - SA_HDR));
			CHECK("user_rmpp_response", !n, "ACK %u: %s", seg,
			      strerror(-n));
		}
	}
	result("user_rmpp_response", NULL);
	/* The final ACK ended the transfer: no ACK timeout comes back. */
	n = wait_read(srv, &p, 2500);
	CHECK("user_rmpp_done", n == -ETIMEDOUT,
	      "server read %d status %d (want nothing)", n, p.hdr.status);
	n = wait_read(cli, &p, 100);
	CHECK("user_rmpp_done", n == -ETIMEDOUT, "client read %d more", n);
	result("user_rmpp_done", NULL);
	free(w);
	close(srv);
	close(cli);
}

static int write_str(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	return fclose(f) || ret ? -1 : 0;
}

#define QUEUE_BYTES_PARAM "/sys/module/kmad_umad/parameters/recv_queue_bytes"

/*
 * The bytes one file holds unread are bounded (kmad_umad's
 * recv_queue_bytes; ib_umad bounds only the count, and a reassembled RMPP
 * message can be megabytes).  At 8 KiB, of three 5000-byte RMPP requests
 * to a server that does not read, the first is queued (one is always
 * taken), the other two dropped and counted in umadN/recv_dropped; read
 * gives the first, then nothing.
 */
static void t_recv_queue_bytes(void)
{
	size_t big = HDR + SA_HDR + RMPP_DATA_LEN;
	int srv = open_port(), cli = open_port(), sid, cid, lid, i, n;
	uint8_t *w = calloc(1, big + 64), *r = calloc(1, big + 64);
	struct ib_user_mad_hdr *wh = (struct ib_user_mad_hdr *)w;
	char old[32] = "";
	long long before;
	FILE *f;

	CHECK("recv_queue_bytes", srv >= 0 && cli >= 0 && w && r, "open: %m");
	f = fopen(QUEUE_BYTES_PARAM, "r");
	CHECK("recv_queue_bytes", f && fgets(old, sizeof(old), f),
	      "read %s: %m", QUEUE_BYTES_PARAM);
	fclose(f);
	sid = reg_sa(srv, 1, 0x14, 0);
	cid = reg_sa(cli, 1, 0, 0);
	CHECK("recv_queue_bytes", sid >= 0 && cid >= 0, "register %d %d", sid,
	      cid);
	before = read_ll(dropped_path);
	CHECK("recv_queue_bytes", before >= 0, "read %s: %m", dropped_path);
	CHECK("recv_queue_bytes", !write_str(QUEUE_BYTES_PARAM, "8192"),
	      "write %s: %m", QUEUE_BYTES_PARAM);
	lid = read_hex(lid_path);
	for (i = 0; i < 3; i++) {
		make_sa(w, SA_HDR + RMPP_DATA_LEN, cid, lid, 0x14, 0x70 + i, 1,
			i);
		wh->timeout_ms = 0;	/* no response: ends at the final ACK */
		wh->retries = 0;
		CHECK("recv_queue_bytes", write(cli, w, big) == (ssize_t)big,
		      "write %d: %m", i);
	}
	for (i = 0; i < 100 && read_ll(dropped_path) - before < 2; i++)
		usleep(100000);
	n = read(srv, r, big + 64);
	write_str(QUEUE_BYTES_PARAM, old);
	CHECK("recv_queue_bytes", read_ll(dropped_path) - before == 2,
	      "recv_dropped grew by %lld, want 2",
	      read_ll(dropped_path) - before);
	CHECK("recv_queue_bytes", n == (int)big && r[HDR + 3] == 0x14 &&
	      sa_data_ok(r + HDR, n - HDR, 0),
	      "read %d (want %zu), data %s", n, big,
	      n > 0 && sa_data_ok(r + HDR, n - HDR, 0) ? "ok" : "differs");
	n = read(srv, r, big + 64);
	CHECK("recv_queue_bytes", n < 0 && errno == EAGAIN,
	      "second read %d: %m (want EAGAIN)", n);
	result("recv_queue_bytes", NULL);
	free(w);
	free(r);
	close(srv);
	close(cli);
}

static void t_close_outstanding(void)
{
	int fd = open_port(), gsi, i;
	struct pkt p;

	CHECK("close_with_sends_outstanding", fd >= 0, "open: %m");
	gsi = reg(fd, 1, 0x04, 1, 0);
	for (i = 0; i < 16; i++) {
		make_get(&p, gsi, NO_LID, 0x04, 0x12, 0x100 + i, 60000, 3);
		CHECK("close_with_sends_outstanding",
		      write(fd, &p, HDR + MAD) == HDR + MAD, "write %d: %m", i);
	}
	close(fd);
	fd = open_port();
	CHECK("close_with_sends_outstanding", fd >= 0 && reg(fd, 1, 0x04, 1, 0) == 0,
	      "reopen: %m");
	close(fd);
	result("close_with_sends_outstanding", NULL);
}

static void t_killed_in_read(void)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		int fd = open(umad_path, O_RDWR);
		struct pkt r;

		if (fd < 0 || reg(fd, 1, 0x04, 1, 0) < 0)
			_exit(2);
		(void)!read(fd, &r, sizeof(r));	/* blocks */
		_exit(3);
	}
	usleep(300000);
	kill(pid, SIGKILL);
	CHECK("killed_in_read", waitpid(pid, &status, 0) == pid &&
	      WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "status %#x", status);
	result("killed_in_read", NULL);
}

static unsigned int read_cap(void)
{
	return read_hex(cap_path);
}

static void t_issm(void)
{
	int fd, fd2;

	CHECK("issm", !(read_cap() & 2), "IsSM set before open: %#x", read_cap());
	fd = open(issm_path, O_RDWR);
	CHECK("issm", fd >= 0, "open %s: %m", issm_path);
	CHECK("issm", read_cap() & 2, "IsSM not set while open: %#x", read_cap());
	fd2 = open(issm_path, O_RDWR | O_NONBLOCK);
	CHECK("issm", fd2 < 0 && errno == EAGAIN, "second holder: %d %m", fd2);
	close(fd);
	CHECK("issm", !(read_cap() & 2), "IsSM set after close: %#x", read_cap());
	result("issm", NULL);
}

/* The port goes away under open files: everything fails cleanly. */
static void t_port_gone(const char *cmd)
{
	int fd = open_port(), sm, gsi, i, rc;
	pid_t reader;
	struct ib_user_mad_reg_req req;
	struct pollfd pfd;
	struct pkt p;
	ssize_t n;

	CHECK("port_gone", fd >= 0, "open: %m");
	gsi = reg(fd, 1, 0x04, 1, 0);
	CHECK("port_gone", gsi == 0, "register: %d", gsi);
	for (i = 0; i < 8; i++) {
		make_get(&p, gsi, NO_LID, 0x04, 0x12, 0x200 + i, 60000, 3);
		CHECK("port_gone", write(fd, &p, HDR + MAD) == HDR + MAD,
		      "write %d: %m", i);
	}
	sm = open(issm_path, O_RDWR);
	CHECK("port_gone", sm >= 0, "open %s: %m", issm_path);
	/*
	 * A reader asleep on the empty queue (the sends wait for no
	 * answer) is woken by the removal and gets EIO (umad.rst; ib_umad's
	 * would sleep on).
	 */
	reader = fork();
	CHECK("port_gone", reader >= 0, "fork: %m");
	if (!reader) {
		/* Its own file, opened blocking (open_port()'s is not). */
		int rfd = open(umad_path, O_RDWR);

		if (rfd < 0)
			_exit(errno & 0xff);
		n = read(rfd, &p, sizeof(p));
		/* 0 for EIO, else the errno, or 255 for a packet read. */
		_exit(n >= 0 ? 255 : errno == EIO ? 0 : errno & 0xff);
	}
	usleep(300000);
	rc = system(cmd);
	CHECK("port_gone", rc == 0, "%s: status %#x", cmd, rc);
	for (i = 0; i < 100 && waitpid(reader, &rc, WNOHANG) == 0; i++)
		usleep(50000);
	if (i == 100) {
		kill(reader, SIGKILL);
		waitpid(reader, &rc, 0);
		CHECK("port_gone_blocked_read", 0, "still asleep 5 s on");
	}
	CHECK("port_gone_blocked_read", WIFEXITED(rc) && !WEXITSTATUS(rc),
	      "the reader got %s, not EIO",
	      !WIFEXITED(rc) ? "killed" : WEXITSTATUS(rc) == 255 ? "a packet" :
	      strerror(WEXITSTATUS(rc)));
	result("port_gone_blocked_read", NULL);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK("port_gone_poll", poll(&pfd, 1, 1000) == 1 &&
	      (pfd.revents & POLLERR), "poll: %#x", pfd.revents);
	result("port_gone_poll", NULL);
	n = read(fd, &p, sizeof(p));
	CHECK("port_gone_read", n < 0 && errno == EIO, "read: %zd %m", n);
	result("port_gone_read", NULL);
	make_get(&p, gsi, NO_LID, 0x04, 0x12, 0x300, 1000, 0);
	n = write(fd, &p, HDR + MAD);
	CHECK("port_gone_write", n < 0 && errno == EIO, "write: %zd %m", n);
	result("port_gone_write", NULL);
	memset(&req, 0, sizeof(req));
	req.qpn = 1;
	CHECK("port_gone_register",
	      ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req) && errno == EPIPE,
	      "register: %m");
	result("port_gone_register", NULL);
	CHECK("port_gone_close", !close(fd) && !close(sm), "close: %m");
	CHECK("port_gone_close", open(umad_path, O_RDWR) < 0 && errno == ENOENT,
	      "%s still opens: %m", umad_path);
	result("port_gone_close", NULL);
}

/*
 * Allocation failures from user space, on a kernel with
 * CONFIG_FAULT_INJECTION whose failslab fails sleeping allocations too
 * (guest.sh sets ignore-gfp-wait to N when it can): writing n to
 * /proc/thread-self/fail-nth fails the n-th slab allocation of this
 * thread's next system calls (Documentation/fault-injection).  Each sweep
 * goes n = 1, 2, ... until a call makes no allocation not failed yet;
 * every run must either work or fail with ENOMEM, and leave the file
 * usable (kmemleak, at the end of the run, reports what leaked).  Without
 * fail-nth, it prints nothing and counts nothing.
 */
#define FNTH_MAX	500

static int fnth_fd = -1;

static void fnth_arm(int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%d", n);

	if (pwrite(fnth_fd, b, len, 0) != len)
		abort();
}

/* Stop failing; 1 if the armed failure happened. */
static int fnth_disarm(void)
{
	char b[16] = "";

	if (pread(fnth_fd, b, sizeof(b) - 1, 0) <= 0 ||
	    pwrite(fnth_fd, "0", 1, 0) != 1)
		abort();
	return atoi(b) == 0;
}

/* Can a GFP_KERNEL allocation of this thread be made to fail? */
static int fnth_works(void)
{
	int fd, injected;

	fnth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fnth_fd < 0)
		return 0;
	/* open() allocates a struct file (GFP_KERNEL) at least. */
	fnth_arm(1);
	fd = open(umad_path, O_RDWR);
	injected = fnth_disarm();
	if (fd >= 0)
		close(fd);
	if (!injected || fd >= 0) {
		close(fnth_fd);
		fnth_fd = -1;
		return 0;
	}
	return 1;
}

static void t_fail_nth(void)
{
	int n, fd, id, injected, err, got, runs[4];
	char path[160], want[64], val[64];
	struct pkt p, r;
	ssize_t w;

	if (!fnth_works())
		return;
	printf("umad-test: fault injection: on\n");

	for (n = 1; n < FNTH_MAX; n++) {
		fnth_arm(n);
		fd = open(umad_path, O_RDWR | O_NONBLOCK);
		err = errno;
		injected = fnth_disarm();
		CHECK("fail_nth_open", fd >= 0 || err == ENOMEM,
		      "run %d: %s", n, strerror(err));
		if (fd >= 0)
			close(fd);
		if (!injected)
			break;
	}
	CHECK("fail_nth_open", n < FNTH_MAX, "no end");
	CHECK("fail_nth_open", n > 1, "no allocation failed");
	runs[0] = n;
	result("fail_nth_open", NULL);

	for (n = 1; n < FNTH_MAX; n++) {
		fd = open_port();
		CHECK("fail_nth_register", fd >= 0, "open: %m");
		fnth_arm(n);
		id = reg(fd, 1, 0x04, 1, 0x01);
		injected = fnth_disarm();
		CHECK("fail_nth_register", id == 0 || id == -ENOMEM,
		      "run %d: %d", n, id);
		/* A failed registration leaves the class free. */
		if (id < 0)
			id = reg(fd, 1, 0x04, 1, 0x01);
		CHECK("fail_nth_register", id == 0, "run %d: then %d", n, id);
		close(fd);
		if (!injected)
			break;
	}
	CHECK("fail_nth_register", n < FNTH_MAX, "no end");
	CHECK("fail_nth_register", n > 1, "no allocation failed");
	runs[1] = n;
	result("fail_nth_register", NULL);

	/* A Get to no one: a timeout record if written, nothing if not. */
	for (n = 1; n < FNTH_MAX; n++) {
		fd = open_port();
		CHECK("fail_nth_write", fd >= 0, "open: %m");
		id = reg(fd, 1, 0x04, 1, 0);
		CHECK("fail_nth_write", id == 0, "register: %d", id);
		make_get(&p, id, NO_LID, 0x04, 0x12, 0x500 + n, 50, 0);
		fnth_arm(n);
		w = write(fd, &p, HDR + MAD);
		err = errno;
		injected = fnth_disarm();
		CHECK("fail_nth_write", w == HDR + MAD || err == ENOMEM,
		      "run %d: %zd %s", n, w, strerror(err));
		got = wait_read(fd, &r, w < 0 ? 300 : 5000);
		if (w < 0)
			CHECK("fail_nth_write", got == -ETIMEDOUT,
			      "run %d: failed write, then a record (%d)", n,
			      got);
		else
			CHECK("fail_nth_write", got == HDR + 24 &&
			      r.hdr.status == ETIMEDOUT,
			      "run %d: read %d status %u", n, got,
			      r.hdr.status);
		close(fd);
		if (!injected)
			break;
	}
	CHECK("fail_nth_write", n < FNTH_MAX, "no end");
	CHECK("fail_nth_write", n > 1, "no allocation failed");
	runs[2] = n;
	result("fail_nth_write", NULL);

	/* A node file asks the SMA: its value or ENOMEM, never another. */
	snprintf(path, sizeof(path), "%s/node_guid", node_path);
	fd = open(path, O_RDONLY);
	CHECK("fail_nth_node_guid", fd >= 0, "open %s: %m", path);
	w = pread(fd, want, sizeof(want) - 1, 0);
	CHECK("fail_nth_node_guid", w > 0, "read %s: %m", path);
	want[w] = 0;
	close(fd);
	for (n = 1; n < FNTH_MAX; n++) {
		fd = open(path, O_RDONLY);
		CHECK("fail_nth_node_guid", fd >= 0, "open %s: %m", path);
		memset(val, 0, sizeof(val));
		fnth_arm(n);
		w = pread(fd, val, sizeof(val) - 1, 0);
		err = errno;
		injected = fnth_disarm();
		close(fd);
		CHECK("fail_nth_node_guid", (w > 0 && !strcmp(val, want)) ||
		      (w < 0 && err == ENOMEM), "run %d: %zd %s, read \"%s\"",
		      n, w, w < 0 ? strerror(err) : "", val);
		if (!injected)
			break;
	}
	CHECK("fail_nth_node_guid", n < FNTH_MAX, "no end");
	CHECK("fail_nth_node_guid", n > 1, "no allocation failed");
	runs[3] = n;
	result("fail_nth_node_guid", NULL);
	printf("umad-test: fault injection: runs: open %d, register %d, write %d, node_guid %d\n",
	       runs[0], runs[1], runs[2], runs[3]);
	close(fnth_fd);
	fnth_fd = -1;
}

/*
 * Run one group of cases, then close every file it left open: a failed
 * CHECK() returns at once, and its files' agents would otherwise hold
 * their registrations and fail the groups after it.
 */
static void run(void (*group)(void))
{
	int first = open("/dev/null", O_RDONLY), fd;

	if (first >= 0)
		close(first);
	group();
	for (fd = first; first >= 0 && fd < first + 256; fd++)
		close(fd);
}

int main(int argc, char **argv)
{
	const char *gone_cmd = NULL;
	char dev[32] = "";
	FILE *f;

	if (argc == 5 && !strcmp(argv[1], "--port-gone")) {
		gone_cmd = argv[4];
		argv++;
		argc = 3;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s [--port-gone] <umad index> <peer lid> [<command>]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(umad_path, sizeof(umad_path), "/dev/infiniband/umad%s", argv[1]);
	snprintf(issm_path, sizeof(issm_path), "/dev/infiniband/issm%s", argv[1]);
	snprintf(cap_path, sizeof(cap_path), "/sys/class/infiniband_mad/umad%s/ibdev",
		 argv[1]);
	f = fopen(cap_path, "r");
	if (!f || !fgets(dev, sizeof(dev), f)) {
		fprintf(stderr, "cannot read %s\n", cap_path);
		return 2;
	}
	fclose(f);
	dev[strcspn(dev, "\n")] = 0;
	snprintf(cap_path, sizeof(cap_path),
		 "/sys/class/infiniband/%s/ports/1/cap_mask", dev);
	snprintf(lid_path, sizeof(lid_path),
		 "/sys/class/infiniband/%s/ports/1/lid", dev);
	snprintf(dropped_path, sizeof(dropped_path),
		 "/sys/class/infiniband_mad/umad%s/recv_dropped", argv[1]);
	snprintf(gid_path, sizeof(gid_path),
		 "/sys/class/infiniband/%s/ports/1/gids/0", dev);
	snprintf(node_path, sizeof(node_path), "/sys/class/infiniband/%s", dev);
	peer_lid = atoi(argv[2]);

	if (gone_cmd) {
		t_port_gone(gone_cmd);
		printf("umad-test: summary: %d ok, %d failed\n", n_ok, n_failed);
		return n_failed ? 1 : 0;
	}
	run(t_sysfs);
	run(t_register_limits);
	run(t_register_efault);
	run(t_register2);
	run(t_hdr_sizes);
	run(t_write_errors);
	run(t_write_rules);
	run(t_read);
	run(t_timeout);
	run(t_unsolicited);
	run(t_grh);
	run(t_rmpp);
	run(t_user_rmpp);
	run(t_recv_queue_bytes);
	run(t_close_outstanding);
	run(t_killed_in_read);
	run(t_issm);
	run(t_fail_nth);
	printf("umad-test: summary: %d ok, %d failed\n", n_ok, n_failed);
	return n_failed ? 1 : 0;
}
