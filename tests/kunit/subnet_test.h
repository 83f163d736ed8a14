/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared fixture of the simulated-subnet suites (kmad_fabric, kmad_sma,
 * kmad_pma): a fabric of any topology in step mode, and send-only kmad
 * agents on any HCA port's QP0 or QP1 as requesters.
 *
 * sn_rpc() posts a request, transmits it (the firmware answers at once,
 * in step mode), lets kmad reap the send and the response, and returns
 * the response's status; with no response it moves the virtual clock past
 * the timeout so that the send ends, and returns -1.
 *
 * Everything here is static: each suite is its own module.
 */
#ifndef KMAD_SUBNET_TEST_H
#define KMAD_SUBNET_TEST_H

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/spinlock.h>
#include <asm/unaligned.h>

#include <kmad/mad.h>
#include <kmad/sim.h>
#include <kmad/wire.h>

#define SN_MAX_DEV	8
#define SN_TIMEOUT_MS	100
/*
 * On the asynchronous fabric the answer comes through work items and real
 * timers, which a loaded host (make check beside other guests, load 7-9)
 * delays by hundreds of milliseconds: wait that long for it.
 */
#define SN_ASYNC_TIMEOUT_MS	5000
#define SN_PMA_DATA	64	/* PMA attributes start at byte 64 */

struct sn {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	char name[16];
	struct kmad_port *port[SN_MAX_DEV][2];
	struct kmad_agent *agent[SN_MAX_DEV][2][2];	/* [dev][port-1][qpt] */
	bool async;
	spinlock_t lock;				/* guards got, resp */
	bool got;
	struct kmad_mad resp;
	u16 resp_slid;					/* where it came from */
	u8 resp_path_bits;				/* the LID it came to */
	u16 resp_pkey_index;				/* the entry it matched */
	u16 pkey_index;		/* of sn_rpc_from()'s and sn_post()'s sends */
};

static atomic_t sn_seq = ATOMIC_INIT(0);

static inline void sn_send_done(struct kmad_agent *agent,
				struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

static inline void sn_recv(struct kmad_agent *agent,
			   struct kmad_send_buf *req, struct kmad_recv_wc *wc)
{
	struct sn *s = agent->context;

	spin_lock(&s->lock);
	s->resp = *wc->mad;
	s->resp_slid = wc->slid;
	s->resp_path_bits = wc->dlid_path_bits;
	s->resp_pkey_index = wc->pkey_index;
	s->got = true;
	spin_unlock(&s->lock);
	kmad_free_recv(wc);
}

/* A fabric of @cfg (its name is set here); sn_exit frees it. */
static inline struct sn *sn_setup_cfg(struct kunit *test,
				      struct kmad_sim_config *cfg)
{
	struct sn *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	s->async = cfg->mode == KMAD_SIM_ASYNC;
	spin_lock_init(&s->lock);
	snprintf(s->name, sizeof(s->name), "sn%d_", atomic_inc_return(&sn_seq));
	cfg->name = s->name;
	s->fab = kmad_sim_create(cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(s->fab));
	test->priv = s;
	return s;
}

/* A fabric of @topo in @mode; the test owns it (sn_exit frees it). */
static inline struct sn *sn_setup_mode(struct kunit *test,
				       enum kmad_sim_topology topo,
				       unsigned int hcas, unsigned int leaves,
				       unsigned int hca_ports,
				       enum kmad_sim_mode mode)
{
	struct kmad_sim_config cfg = {
		.topology = topo,
		.hcas = hcas,
		.leaves = leaves,
		.hca_ports = hca_ports,
		.mode = mode,
		.rq_depth = 32,	/* cheaper setup than the default 256 */
	};

	return sn_setup_cfg(test, &cfg);
}

static inline struct sn *sn_setup(struct kunit *test,
				  enum kmad_sim_topology topo,
				  unsigned int hcas, unsigned int leaves,
				  unsigned int hca_ports)
{
	return sn_setup_mode(test, topo, hcas, leaves, hca_ports,
			     KMAD_SIM_STEP);
}

static inline void sn_exit(struct kunit *test)
{
	struct sn *s = test->priv;
	int d, p, q;

	if (!s)
		return;
	/* Destroy first: in step mode sends wait on the wire otherwise. */
	kmad_sim_destroy(s->fab);
	for (d = 0; d < SN_MAX_DEV; d++) {
		for (p = 0; p < 2; p++) {
			for (q = 0; q < 2; q++)
				if (s->agent[d][p][q])
					kmad_unregister_agent(s->agent[d][p][q]);
			if (s->port[d][p])
				kmad_port_put(s->port[d][p]);
		}
	}
}

/* The send-only agent of device @dev, port @port, on QP @qpn. */
static inline struct kmad_agent *sn_agent(struct sn *s, unsigned int dev,
					  u8 port, u32 qpn)
{
	char dev_name[24];
	struct kmad_agent **a;

	KUNIT_ASSERT_LT(s->test, dev, SN_MAX_DEV);
	a = &s->agent[dev][port - 1][qpn];
	if (*a)
		return *a;
	if (!s->port[dev][port - 1]) {
		snprintf(dev_name, sizeof(dev_name), "%s%u", s->name, dev);
		s->port[dev][port - 1] = kmad_port_get(dev_name, port);
		KUNIT_ASSERT_NOT_NULL(s->test, s->port[dev][port - 1]);
	}
	*a = kmad_register_agent(s->port[dev][port - 1],
				 qpn ? KMAD_QPT_GSI : KMAD_QPT_SMI, NULL,
				 sn_send_done, sn_recv, s);
	KUNIT_ASSERT_FALSE(s->test, IS_ERR(*a));
	return *a;
}

/*
 * Transmit what waits on a QP's wire and let kmad reap the results (in
 * async mode: wait until the fabric is idle).
 */
static inline void sn_pump(struct sn *s, unsigned int dev, u8 port, u32 qpn)
{
	u32 q = KMAD_SIM_QP(port, qpn);

	if (s->async) {
		kmad_sim_settle(s->fab);
		return;
	}
	while (kmad_sim_pending_sends(s->fab, dev, q))
		KUNIT_ASSERT_EQ(s->test,
				kmad_sim_complete_send(s->fab, dev, q, 0,
						       KMAD_WC_SUCCESS, true),
				0);
	kmad_sim_fire_cq_event(s->fab, dev, q, false);
	kmad_sim_settle(s->fab);
}

/*
 * Send @mad from (@dev, @port), from its LID with @path_bits, to @dlid on
 * QP0 (SMP classes) or QP1 and wait for the answer, which replaces @mad.
 * Returns its status (without the D bit), or -1 if none came.
 */
static inline int sn_rpc_from(struct sn *s, unsigned int dev, u8 port,
			      struct kmad_mad *mad, u16 dlid, u8 path_bits)
{
	u32 qpn = kmad_is_smp_class(mad->mad_hdr.mgmt_class) ? 0 : 1;
	struct kmad_dest dest = {
		.dlid = dlid, .remote_qpn = qpn, .remote_qkey = KMAD_QP1_QKEY,
		.src_path_bits = path_bits, .pkey_index = s->pkey_index,
	};
	struct kmad_send_buf *buf;
	bool got = false;
	int i;

	buf = kmad_alloc_send_buf(sn_agent(s, dev, port, qpn), &dest,
				  GFP_KERNEL);
	KUNIT_ASSERT_FALSE(s->test, IS_ERR_OR_NULL(buf));
	*buf->mad = *mad;
	buf->timeout_ms = s->async ? SN_ASYNC_TIMEOUT_MS : SN_TIMEOUT_MS;
	spin_lock(&s->lock);
	s->got = false;
	spin_unlock(&s->lock);
	KUNIT_ASSERT_EQ(s->test, kmad_post_send(buf), 0);
	sn_pump(s, dev, port, qpn);
	for (i = 0; i < (s->async ? SN_ASYNC_TIMEOUT_MS / 20 : 1) && !got;
	     i++) {
		if (i)
			msleep(20);
		spin_lock(&s->lock);
		got = s->got;
		if (got)
			*mad = s->resp;
		spin_unlock(&s->lock);
	}
	if (!got) {
		if (s->async)
			msleep(SN_TIMEOUT_MS);
		kmad_sim_advance_clock(s->fab, SN_TIMEOUT_MS + 10);
		kmad_sim_settle(s->fab);
		return -1;
	}
	return be16_to_cpu(mad->mad_hdr.status) & KMAD_SMP_STATUS_MASK;
}

/* sn_rpc_from() from the port's base LID. */
static inline int sn_rpc(struct sn *s, unsigned int dev, u8 port,
			 struct kmad_mad *mad, u16 dlid)
{
	return sn_rpc_from(s, dev, port, mad, dlid, 0);
}

/* Post @mad (a response or datagram: nothing comes back) and transmit it. */
static inline void sn_post(struct sn *s, unsigned int dev, u8 port,
			   const struct kmad_mad *mad, u16 dlid)
{
	u32 qpn = kmad_is_smp_class(mad->mad_hdr.mgmt_class) ? 0 : 1;
	struct kmad_dest dest = {
		.dlid = dlid, .remote_qpn = qpn, .remote_qkey = KMAD_QP1_QKEY,
		.pkey_index = s->pkey_index,
	};
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(sn_agent(s, dev, port, qpn), &dest,
				  GFP_KERNEL);
	KUNIT_ASSERT_FALSE(s->test, IS_ERR_OR_NULL(buf));
	*buf->mad = *mad;
	KUNIT_ASSERT_EQ(s->test, kmad_post_send(buf), 0);
	sn_pump(s, dev, port, qpn);
}

static inline void sn_hdr(struct kmad_mad *mad, u8 cls, u8 version,
			  u8 method, u16 attr, u32 mod)
{
	memset(mad, 0, sizeof(*mad));
	mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = cls;
	mad->mad_hdr.class_version = version;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(atomic_inc_return(&sn_seq));
	mad->mad_hdr.attr_id = cpu_to_be16(attr);
	mad->mad_hdr.attr_mod = cpu_to_be32(mod);
}

/* A LID-routed SMP. */
static inline void sn_smp(struct kmad_mad *mad, u8 method, u16 attr, u32 mod)
{
	sn_hdr(mad, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, method, attr, mod);
}

/* A directed-route SMP along @path (@hops entries), DrSLID/DrDLID 0xffff. */
static inline void sn_dr(struct kmad_mad *mad, u8 method, u16 attr, u32 mod,
			 const u8 *path, u8 hops)
{
	struct kmad_smp *smp = (struct kmad_smp *)mad;

	sn_hdr(mad, KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 1, method, attr, mod);
	smp->hop_cnt = hops;
	smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	if (hops)
		memcpy(&smp->initial_path[1], path, hops);
}

/* A PMA request for @port_select with CounterSelect @select. */
static inline void sn_pma(struct kmad_mad *mad, u8 method, u16 attr,
			  u8 port_select, u16 select)
{
	u8 *d = (u8 *)mad + SN_PMA_DATA;

	sn_hdr(mad, KMAD_MGMT_CLASS_PERF_MGMT, 1, method, attr, 0);
	d[1] = port_select;
	put_unaligned_be16(select, d + 2);
}

/* An SA-class MAD, which no firmware answers: it reaches kmad. */
static inline void sn_sa(struct kmad_mad *mad, u8 method)
{
	sn_hdr(mad, KMAD_MGMT_CLASS_SUBN_ADM, 2, method, 0x0011, 0);
}

static inline u8 *sn_smp_data(struct kmad_mad *mad)
{
	return ((struct kmad_smp *)mad)->data;
}

static inline u8 *sn_pma_data(struct kmad_mad *mad)
{
	return (u8 *)mad + SN_PMA_DATA;
}

static inline struct kmad_sim_stats sn_stats(struct sn *s, unsigned int node,
					     u8 port)
{
	struct kmad_sim_stats st;

	kmad_sim_get_port_stats(s->fab, node, port, &st);
	return st;
}

static inline u16 sn_lid(struct sn *s, unsigned int node, u8 port)
{
	return kmad_sim_port_lid(s->fab, node, port);
}

#endif /* KMAD_SUBNET_TEST_H */
