/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_discover: fabric discovery over kmad, the way ibnetdiscover does
 * it, as a sample ULP and a library for tests.
 *
 * kmad_discover_create() registers two send-only agents on a port (QP0 and
 * QP1); kmad_discover_run() walks the fabric breadth first with
 * directed-route SMPs (NodeInfo at each path, then NodeDescription and
 * PortInfo of every port of each new node), then reads the PMA
 * PortCounters of every linked or up port (and the entry port) with
 * LID-routed GMPs, and leaves what it found in a &struct
 * kmad_discover_result.  kmad_discover_stop() makes a run end early from
 * another thread; kmad_discover_destroy() unregisters the agents.
 */
#ifndef KMAD_DISCOVER_H
#define KMAD_DISCOVER_H

#include <linux/types.h>
#include <kmad/wire.h>

struct kmad_port;
struct kmad_discover;

/* Length of a NodeDescription (IBTA 14.2.5.2). */
#define KMAD_DISCOVER_DESC_LEN	64

/**
 * enum kmad_discover_node_type - NodeType of NodeInfo (IBTA 14.2.5.3).
 * @KMAD_DISCOVER_CA: channel adapter.
 * @KMAD_DISCOVER_SWITCH: switch.
 * @KMAD_DISCOVER_ROUTER: router.
 */
enum kmad_discover_node_type {
	KMAD_DISCOVER_CA	= 1,
	KMAD_DISCOVER_SWITCH	= 2,
	KMAD_DISCOVER_ROUTER	= 3,
};

/**
 * enum kmad_discover_query - the queries a run makes.
 * @KMAD_DISCOVER_Q_NODE_INFO: SubnGet(NodeInfo), directed route.
 * @KMAD_DISCOVER_Q_NODE_DESC: SubnGet(NodeDescription), directed route.
 * @KMAD_DISCOVER_Q_PORT_INFO: SubnGet(PortInfo), directed route.
 * @KMAD_DISCOVER_Q_PORT_COUNTERS: PerfMgt Get(PortCounters), LID routed.
 */
enum kmad_discover_query {
	KMAD_DISCOVER_Q_NODE_INFO,
	KMAD_DISCOVER_Q_NODE_DESC,
	KMAD_DISCOVER_Q_PORT_INFO,
	KMAD_DISCOVER_Q_PORT_COUNTERS,
};

/**
 * struct kmad_discover_opts - how to run.
 * @timeout_ms: response timeout of each transmission.
 * @retries: how many times a query is sent again after a timeout or a
 *	local send error.
 * @window: queries in flight at most.
 * @max_nodes: stop adding nodes beyond this many.
 * @max_hops: longest directed route tried, at most 63.
 * @counters: read PMA PortCounters after the topology.
 */
struct kmad_discover_opts {
	unsigned int timeout_ms;
	unsigned int retries;
	unsigned int window;
	unsigned int max_nodes;
	unsigned int max_hops;
	bool counters;
};

/**
 * struct kmad_discover_counters - PortCounters (IBTA 16.1.3.5), host order.
 * @symbol_errors: SymbolErrorCounter.
 * @link_error_recovery: LinkErrorRecoveryCounter.
 * @link_downed: LinkDownedCounter.
 * @rcv_errors: PortRcvErrors.
 * @rcv_remote_phys_errors: PortRcvRemotePhysicalErrors.
 * @rcv_switch_relay_errors: PortRcvSwitchRelayErrors.
 * @xmit_discards: PortXmitDiscards.
 * @xmit_constraint_errors: PortXmitConstraintErrors.
 * @rcv_constraint_errors: PortRcvConstraintErrors.
 * @local_link_integrity_errors: LocalLinkIntegrityErrors.
 * @excessive_buffer_overruns: ExcessiveBufferOverrunErrors.
 * @vl15_dropped: VL15Dropped.
 * @xmit_data: PortXmitData, in units of 4 bytes.
 * @rcv_data: PortRcvData, in units of 4 bytes.
 * @xmit_pkts: PortXmitPkts.
 * @rcv_pkts: PortRcvPkts.
 * @xmit_wait: PortXmitWait.
 */
struct kmad_discover_counters {
	u16 symbol_errors;
	u8 link_error_recovery;
	u8 link_downed;
	u16 rcv_errors;
	u16 rcv_remote_phys_errors;
	u16 rcv_switch_relay_errors;
	u16 xmit_discards;
	u8 xmit_constraint_errors;
	u8 rcv_constraint_errors;
	u8 local_link_integrity_errors;
	u8 excessive_buffer_overruns;
	u16 vl15_dropped;
	u32 xmit_data;
	u32 rcv_data;
	u32 xmit_pkts;
	u32 rcv_pkts;
	u32 xmit_wait;
};

/**
 * struct kmad_discover_port - one port of a discovered node.
 * @info_valid: PortInfo was read.
 * @lid: LID (PortInfo), 0 if unknown.
 * @lmc: LMC.
 * @state: PortState (1 Down, 2 Init, 3 Armed, 4 Active).
 * @phys_state: PortPhysicalState (5 LinkUp).
 * @width_active: LinkWidthActive.
 * @speed_active: LinkSpeedActive.
 * @peer: index of the node at the other end of the link, or -1.
 * @peer_port: port number at the other end.
 * @counters_valid: @counters was read.
 * @counters: its PortCounters.
 */
struct kmad_discover_port {
	bool info_valid;
	u16 lid;
	u8 lmc;
	u8 state;
	u8 phys_state;
	u8 width_active;
	u8 speed_active;
	int peer;
	u8 peer_port;
	bool counters_valid;
	struct kmad_discover_counters counters;
};

/**
 * struct kmad_discover_node - a discovered node.
 * @guid: NodeGUID.
 * @port_guid: PortGUID of the port it was reached through.
 * @sys_guid: SystemImageGUID.
 * @type: &enum kmad_discover_node_type.
 * @num_ports: NumberOfPorts.
 * @lid: a switch's LID (port 0), or a CA's LID on @entry_port.
 * @device_id: DeviceID.
 * @vendor_id: VendorID.
 * @revision: Revision.
 * @desc_valid: @desc was read.
 * @desc: NodeDescription, NUL-terminated, non-printable bytes replaced.
 * @entry_port: the port the discovering SMPs enter it by (LocalPortNum).
 * @hops: length of @path; 0 for the local node.
 * @path: directed route from the local port: @path[1..@hops].
 * @ports: @ports[0..@num_ports]; a CA has no port 0 (left invalid).
 */
struct kmad_discover_node {
	u64 guid;
	u64 port_guid;
	u64 sys_guid;
	u8 type;
	u8 num_ports;
	u16 lid;
	u16 device_id;
	u32 vendor_id;
	u32 revision;
	bool desc_valid;
	char desc[KMAD_DISCOVER_DESC_LEN + 1];
	u8 entry_port;
	u8 hops;
	u8 path[KMAD_SMP_DR_PATH_SIZE];
	struct kmad_discover_port *ports;
};

/**
 * struct kmad_discover_link - a link between two discovered ports.
 * @node: node indices of the two ends.
 * @port: port numbers of the two ends.
 */
struct kmad_discover_link {
	unsigned int node[2];
	u8 port[2];
};

/**
 * struct kmad_discover_failure - a query that got no usable answer.
 * @query: which query.
 * @node: the node it was about, or -1 for a NodeInfo behind @parent.
 * @port: the port it was about (PortInfo, PortCounters), or the port of
 *	@parent it went out of (NodeInfo).
 * @parent: for NodeInfo: the node whose port led there, or -1 for the
 *	local node.
 * @hops: directed route length (SMPs).
 * @path: directed route, @path[1..@hops].
 * @dlid: destination LID (PortCounters).
 * @err: -ETIMEDOUT (no answer), -EIO (send errors), -EREMOTEIO (answered
 *	with an error status), -EPROTO (malformed answer), or another error
 *	from kmad.
 * @mad_status: the Status of an error answer.
 * @tries: transmissions made.
 */
struct kmad_discover_failure {
	enum kmad_discover_query query;
	int node;
	u8 port;
	int parent;
	u8 hops;
	u8 path[KMAD_SMP_DR_PATH_SIZE];
	u16 dlid;
	int err;
	u16 mad_status;
	unsigned int tries;
};

/**
 * struct kmad_discover_result - what a run found.
 * @status: 0 if the run went to its end (some queries may have failed);
 *	-ECANCELED if stopped, -ESHUTDOWN if the port went away, -ENOMEM.
 * @nr_nodes: number of @nodes; node 0 is the local node when it answered.
 * @nodes: the nodes, in discovery order.
 * @nr_links: number of @links.
 * @links: the links, each once.
 * @nr_failures: number of @failures.
 * @failures: queries that got no usable answer, in the order they ended.
 * @ports_read: ports whose PortCounters were read.
 * @queries: queries made (a query is sent up to 1 + retries times).
 * @sends: transmissions.
 * @retries: transmissions after a timeout or send error.
 * @timeouts: transmissions that got no answer in time.
 * @send_errors: transmissions that failed locally.
 * @unreachable: queries that got no answer at all (@failures with
 *	-ETIMEDOUT or -EIO).
 * @errors: queries answered with an error status or malformed.
 * @nodes_dropped: NodeInfo answers of new nodes left out because
 *	@nr_nodes had reached &kmad_discover_opts.max_nodes (the fabric is
 *	larger; a node reached through two ports counts twice).
 * @hops_limited: ports not probed because a node behind them would be
 *	more than &kmad_discover_opts.max_hops away (it may have been found
 *	another way: a switch at max_hops with links back counts them).
 * @elapsed_ms: how long the run took.
 */
struct kmad_discover_result {
	int status;
	unsigned int nr_nodes;
	struct kmad_discover_node *nodes;
	unsigned int nr_links;
	struct kmad_discover_link *links;
	unsigned int nr_failures;
	struct kmad_discover_failure *failures;
	unsigned int ports_read;
	unsigned int queries;
	unsigned int sends;
	unsigned int retries;
	unsigned int timeouts;
	unsigned int send_errors;
	unsigned int unreachable;
	unsigned int errors;
	unsigned int nodes_dropped;
	unsigned int hops_limited;
	unsigned int elapsed_ms;
};

void kmad_discover_default_opts(struct kmad_discover_opts *opts);
struct kmad_discover *kmad_discover_create(struct kmad_port *port,
					   const struct kmad_discover_opts *opts);
int kmad_discover_run(struct kmad_discover *d);
void kmad_discover_stop(struct kmad_discover *d);

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit seam: called by the running thread as each batch of @n queries
 * starts, before it looks at kmad_discover_stop()'s flag.
 */
typedef void (*kmad_discover_test_hook_t)(struct kmad_discover *d,
					  unsigned int n);
extern kmad_discover_test_hook_t kmad_discover_test_batch_hook;
/* The growth of the result's and the probes' arrays (kvmalloc). */
int kmad_discover_grow(void **array, unsigned int *cap, unsigned int need,
		       size_t size);
#endif
const struct kmad_discover_result *
kmad_discover_result(const struct kmad_discover *d);
void kmad_discover_print(const struct kmad_discover *d);
void kmad_discover_destroy(struct kmad_discover *d);
const char *kmad_discover_query_name(enum kmad_discover_query query);

#endif /* KMAD_DISCOVER_H */
