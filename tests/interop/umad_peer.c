// SPDX-License-Identifier: GPL-2.0
/*
 * umad_peer: the rdma-core side of `make interop`, built against Debian's
 * libibumad (libibumad-dev) and talking to the kernel through ib_umad.
 *
 *   umad_peer serve --ca rxe1 [--port 1] [--class 0x0a] [--mult 13]
 *                   [--count N] [--timeout S]
 *	register a vendor class (version 1, method mask Get) and answer
 *	every Get with a GetResp, status 0, same TID, data byte i (after the
 *	24-byte MAD header) = (u8)(attr_mod * mult + i); stop after N Gets
 *	(0: until killed) or S seconds.
 *
 *   umad_peer query --ca rxe0 [--port 1] --dgid GID [--sgid-index 0]
 *                   [--class 0x0b] [--mult 17] [--count N]
 *                   [--expect-status S] [--timeout-ms T] [--retries R]
 *	send N Gets (attr_mod 0..N-1), GID-routed to the QP1 (Q_Key
 *	0x80010000) of the port owning GID, one at a time, and check every
 *	answer: GetResp, same TID, status S (default 0), sent from QP 1
 *	(IBTA: the answer to a GMP sent to QP1 comes from QP1; ib_umad
 *	gives the source QP in the umad address) and, when S is 0, data
 *	byte i = (u8)(attr_mod * mult + i).
 *
 * Output: one line, "umad_peer: query: ok N (...)" or
 * "umad_peer: query: FAILED ..." (exit 1), or, when status 0 was expected
 * and the answer is ib_mad's status 0x000c (no agent registered the class
 * at the destination), "umad_peer: query: UNSUPPORTED ..." (exit 3).
 * serve prints "umad_peer: serve: ready ..." once registered and
 * "umad_peer: serve: answered N, E errors" at the end.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/umad.h>

#define MAD_SIZE	256
#define MAD_HDR		24
#define METHOD_GET	0x01
#define METHOD_GETRESP	0x81
#define QP1_QKEY	0x80010000
/* unsupported method/attribute: ib_mad answers unclaimed Gets with it */
#define UNSUPPORTED	0x000c

/* The 24-byte common MAD header, as on the wire. */
struct mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint16_t resv;
	uint32_t attr_mod;
} __attribute__((packed));	/* user space: no __packed */

struct opts {
	const char *mode;
	const char *ca;
	int port;
	int mgmt_class;
	unsigned int mult;
	int count;
	int timeout_s;
	const char *dgid;
	int dlid;
	int pkey_index;
	int sgid_index;
	int expect_status;
	int timeout_ms;
	int retries;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: umad_peer serve --ca CA [--port P] [--class C] [--mult M] [--count N] [--timeout S]\n"
		"       umad_peer query --ca CA [--port P] {--dgid GID | --dlid LID [--dgid GID]}\n"
		"                       [--sgid-index I] [--pkey-index K] [--class C]\n"
		"                       [--mult M] [--count N] [--expect-status S]\n"
		"                       [--timeout-ms T] [--retries R]\n");
	exit(2);
}

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "umad_peer: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void fill(uint8_t *data, uint32_t attr_mod, unsigned int mult)
{
	int i;

	for (i = 0; i < MAD_SIZE - MAD_HDR; i++)
		data[i] = (uint8_t)(attr_mod * mult + i);
}

static int open_port(const struct opts *o)
{
	int fd;

	if (umad_init() < 0) {
		fprintf(stderr, "umad_peer: umad_init failed (is ib_umad loaded?)\n");
		return -1;
	}
	fd = umad_open_port(o->ca, o->port);
	if (fd < 0)
		fprintf(stderr, "umad_peer: umad_open_port(%s, %d): %s\n",
			o->ca, o->port, strerror(-fd));
	return fd;
}

static int serve(const struct opts *o)
{
	long mask[16 / sizeof(long)] = { 0 };
	uint8_t *in, *out;
	int fd, agent, answered = 0, bad = 0;
	time_t end = o->timeout_s ? time(NULL) + o->timeout_s : 0;

	fd = open_port(o);
	if (fd < 0)
		return 1;
	mask[METHOD_GET / (8 * sizeof(long))] |= 1L << (METHOD_GET % (8 * sizeof(long)));
	agent = umad_register(fd, o->mgmt_class, 1, 0, mask);
	if (agent < 0) {
		printf("umad_peer: serve: FAILED umad_register class 0x%02x on %s: %s\n",
		       o->mgmt_class, o->ca, strerror(-agent));
		return 1;
	}
	in = calloc(1, umad_size() + MAD_SIZE);
	out = calloc(1, umad_size() + MAD_SIZE);
	if (!in || !out)
		return 1;
	printf("umad_peer: serve: ready class 0x%02x on %s port %d\n",
	       o->mgmt_class, o->ca, o->port);
	fflush(stdout);

	while (!stop && (!o->count || answered < o->count) &&
	       (!end || time(NULL) < end)) {
		struct mad_hdr *req = umad_get_mad(in), *resp = umad_get_mad(out);
		int len = MAD_SIZE, ret;

		ret = umad_recv(fd, in, &len, 200);
		if (ret == -ETIMEDOUT || ret == -EINTR)
			continue;
		/* libibumad's poll() interrupted by the stop signal comes
		 * back as -EIO (errno EINTR): the end, not an error.
		 */
		if (ret < 0 && stop)
			break;
		if (ret < 0) {
			fprintf(stderr, "umad_peer: serve: umad_recv: %s\n", strerror(-ret));
			bad++;
			break;
		}
		if (umad_status(in) || req->method != METHOD_GET ||
		    req->mgmt_class != o->mgmt_class)
			continue;
		memcpy(out, in, umad_size() + MAD_SIZE);
		resp->method = METHOD_GETRESP;
		resp->status = 0;
		fill((uint8_t *)resp + MAD_HDR, be32toh(req->attr_mod), o->mult);
		((struct ib_user_mad *)out)->addr.qkey = htobe32(QP1_QKEY);
		ret = umad_send(fd, agent, out, MAD_SIZE, 0, 0);
		if (ret < 0) {
			fprintf(stderr, "umad_peer: serve: umad_send: %s\n", strerror(-ret));
			bad++;
			continue;
		}
		answered++;
	}
	printf("umad_peer: serve: answered %d, %d errors\n", answered, bad);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	return bad ? 1 : 0;
}

/* Wait for the answer to the Get with TID low word seq. */
static const char *await(int fd, uint8_t *in, uint32_t seq, int wait_ms)
{
	static char why[160];
	struct mad_hdr *h = umad_get_mad(in);

	for (;;) {
		int len = MAD_SIZE, ret = umad_recv(fd, in, &len, wait_ms);

		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			snprintf(why, sizeof(why), "umad_recv: %s", strerror(-ret));
			return why;
		}
		if ((uint32_t)be64toh(h->tid) != seq)
			continue;	/* a late answer to an earlier Get */
		if (umad_status(in)) {
			snprintf(why, sizeof(why), "send status %s",
				 strerror(umad_status(in)));
			return why;
		}
		if (len < MAD_SIZE) {
			snprintf(why, sizeof(why), "answer of %d bytes", len);
			return why;
		}
		return NULL;
	}
}

static int query(const struct opts *o)
{
	struct ib_mad_addr addr = { 0 };
	uint8_t *out, *in, want[MAD_SIZE - MAD_HDR];
	int fd, agent, i;
	unsigned int data_bad = 0, src_qp = 0;
	char to[INET6_ADDRSTRLEN + 32];

	if (!o->dgid && !o->dlid)
		usage();
	if (o->dgid && inet_pton(AF_INET6, o->dgid, addr.gid) != 1) {
		fprintf(stderr, "umad_peer: bad GID '%s'\n", o->dgid);
		return 2;
	}
	if (o->dlid)
		snprintf(to, sizeof(to), "LID %d%s%s", o->dlid,
			 o->dgid ? " GID " : "", o->dgid ? o->dgid : "");
	else
		snprintf(to, sizeof(to), "%s", o->dgid);
	fd = open_port(o);
	if (fd < 0) {
		printf("umad_peer: query: FAILED cannot open %s port %d\n", o->ca, o->port);
		return 1;
	}
	agent = umad_register(fd, o->mgmt_class, 1, 0, NULL);
	if (agent < 0) {
		printf("umad_peer: query: FAILED umad_register class 0x%02x on %s: %s\n",
		       o->mgmt_class, o->ca, strerror(-agent));
		return 1;
	}
	out = calloc(1, umad_size() + MAD_SIZE);
	in = calloc(1, umad_size() + MAD_SIZE);
	if (!out || !in)
		return 1;

	for (i = 0; i < o->count && !stop; i++) {
		struct mad_hdr *req = umad_get_mad(out), *resp = umad_get_mad(in);
		uint32_t seq = 0x1000 + i;
		const char *why;
		int ret;

		memset(out, 0, umad_size() + MAD_SIZE);
		req->base_version = 1;
		req->mgmt_class = o->mgmt_class;
		req->class_version = 1;
		req->method = METHOD_GET;
		req->tid = htobe64(seq);	/* ib_umad sets the high word */
		req->attr_id = htobe16(0x0010);
		req->attr_mod = htobe32(i);
		/* QP1, its Q_Key.  LID 0 (no --dlid): on RoCE only the GRH
		 * routes.  With --dlid (InfiniBand), a GRH only with --dgid.
		 */
		umad_set_addr(out, o->dlid, 1, 0, QP1_QKEY);
		if (o->dgid) {
			addr.hop_limit = 64;
			addr.gid_index = o->sgid_index;
			addr.traffic_class = 0;
			addr.flow_label = 0;
			umad_set_grh(out, &addr);
		}
		umad_set_pkey(out, o->pkey_index);
		ret = umad_send(fd, agent, out, MAD_SIZE, o->timeout_ms, o->retries);
		if (ret < 0) {
			printf("umad_peer: query: FAILED umad_send #%d: %s\n", i, strerror(-ret));
			return 1;
		}
		why = await(fd, in, seq, o->timeout_ms * (o->retries + 1) + 2000);
		if (why) {
			printf("umad_peer: query: FAILED Get #%d (class 0x%02x): %s\n",
			       i, o->mgmt_class, why);
			return 1;
		}
		if (resp->method == METHOD_GETRESP && !o->expect_status &&
		    be16toh(resp->status) == UNSUPPORTED) {
			/* ib_mad's answer: nobody registered the class there */
			printf("umad_peer: query: UNSUPPORTED Get #%d (class 0x%02x) answered with status 0x%04x: no agent for the class at %s\n",
			       i, o->mgmt_class, UNSUPPORTED, to);
			return 3;
		}
		if (resp->method != METHOD_GETRESP ||
		    be16toh(resp->status) != o->expect_status) {
			printf("umad_peer: query: FAILED Get #%d: answer method 0x%02x status 0x%04x, want 0x81 0x%04x\n",
			       i, resp->method, be16toh(resp->status),
			       o->expect_status);
			return 1;
		}
		/* The answer comes in the request's partition. */
		if (umad_get_pkey(in) != o->pkey_index) {
			printf("umad_peer: query: FAILED Get #%d: answer with P_Key index %d, want %d\n",
			       i, umad_get_pkey(in), o->pkey_index);
			return 1;
		}
		src_qp = be32toh(umad_get_mad_addr(in)->qpn);
		if (src_qp != 1) {
			printf("umad_peer: query: FAILED Get #%d: answer from QP %u, want QP 1\n",
			       i, src_qp);
			return 1;
		}
		if (be32toh(resp->attr_mod) != (uint32_t)i) {
			printf("umad_peer: query: FAILED Get #%d: answer attr_mod %u\n",
			       i, be32toh(resp->attr_mod));
			return 1;
		}
		if (o->expect_status)
			continue;	/* an error answer carries the request's data */
		fill(want, i, o->mult);
		if (memcmp((uint8_t *)resp + MAD_HDR, want, sizeof(want)))
			data_bad++;
	}
	umad_unregister(fd, agent);
	umad_close_port(fd);
	if (stop) {
		printf("umad_peer: query: FAILED interrupted after %d Gets\n", i);
		return 1;
	}
	if (data_bad) {
		printf("umad_peer: query: FAILED %u of %d answers with wrong data\n",
		       data_bad, o->count);
		return 1;
	}
	printf("umad_peer: query: ok %d (class 0x%02x, %s -> %s, status 0x%04x, from QP %u, P_Key index %d)\n",
	       o->count, o->mgmt_class, o->ca, to, o->expect_status,
	       src_qp, o->pkey_index);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ca", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ "class", required_argument, NULL, 'C' },
		{ "mult", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "dgid", required_argument, NULL, 'g' },
		{ "dlid", required_argument, NULL, 'L' },
		{ "pkey-index", required_argument, NULL, 'K' },
		{ "sgid-index", required_argument, NULL, 'i' },
		{ "expect-status", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "retries", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = {
		.port = 1, .mgmt_class = -1, .count = -1, .timeout_ms = 1000,
		.retries = 2,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int c, serving;

	if (argc < 2)
		usage();
	o.mode = argv[1];
	serving = !strcmp(o.mode, "serve");
	if (!serving && strcmp(o.mode, "query"))
		usage();
	optind = 2;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.ca = optarg;
			break;
		case 'p':
			o.port = num(optarg);
			break;
		case 'C':
			o.mgmt_class = num(optarg);
			break;
		case 'm':
			o.mult = num(optarg);
			break;
		case 'n':
			o.count = num(optarg);
			break;
		case 't':
			o.timeout_s = num(optarg);
			break;
		case 'g':
			o.dgid = optarg;
			break;
		case 'K':
			o.pkey_index = num(optarg);
			if (o.pkey_index < 0 || o.pkey_index > 0xffff) {
				fprintf(stderr, "umad_peer: bad --pkey-index\n");
				exit(2);
			}
			break;
		case 'L':
			o.dlid = num(optarg);
			if (o.dlid <= 0 || o.dlid >= 0xc000) {
				fprintf(stderr, "umad_peer: --dlid wants a unicast LID\n");
				exit(2);
			}
			break;
		case 'i':
			o.sgid_index = num(optarg);
			break;
		case 's':
			o.expect_status = num(optarg);
			break;
		case 'T':
			o.timeout_ms = num(optarg);
			break;
		case 'r':
			o.retries = num(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !o.ca)
		usage();
	if (o.mgmt_class < 0)
		o.mgmt_class = serving ? 0x0a : 0x0b;
	if (!o.mult)
		o.mult = serving ? 13 : 17;
	if (o.count < 0)
		o.count = serving ? 0 : 16;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return serving ? serve(&o) : query(&o);
}
