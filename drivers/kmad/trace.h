/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad tracepoints: the life of a send, and every received MAD.
 *
 *   echo 1 > /sys/kernel/tracing/events/kmad/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * See Documentation/tracing.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kmad

#if !defined(KMAD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define KMAD_TRACE_H

#include <linux/tracepoint.h>

#include "kmad_priv.h"

/*
 * The state by name with __print_symbolic(), which perf and trace-cmd
 * (libtraceevent) decode from the event's format; a call of a kmad
 * function in TP_printk() would read "[FAILED TO PARSE]" there.  The names
 * are kmad_send_state_name()'s.
 */
TRACE_DEFINE_ENUM(KMAD_SS_INIT);
TRACE_DEFINE_ENUM(KMAD_SS_BACKLOG);
TRACE_DEFINE_ENUM(KMAD_SS_SENDING);
TRACE_DEFINE_ENUM(KMAD_SS_EARLY_RESP);
TRACE_DEFINE_ENUM(KMAD_SS_WAIT_RESP);
TRACE_DEFINE_ENUM(KMAD_SS_CANCELED);
TRACE_DEFINE_ENUM(KMAD_SS_DONE);

#define kmad_trace_send_state(state)					\
	__print_symbolic(state,						\
			 { KMAD_SS_INIT, "init" },			\
			 { KMAD_SS_BACKLOG, "backlog" },		\
			 { KMAD_SS_SENDING, "sending" },		\
			 { KMAD_SS_EARLY_RESP, "early_resp" },		\
			 { KMAD_SS_WAIT_RESP, "wait_resp" },		\
			 { KMAD_SS_CANCELED, "canceled" },		\
			 { KMAD_SS_DONE, "done" })

DECLARE_EVENT_CLASS(kmad_send_class,
	TP_PROTO(const struct kmad_send_wr *wr),
	TP_ARGS(wr),
	TP_STRUCT__entry(
		__string(dev, kmad_send_agent(wr)->qpi->port->dev->name)
		__field(u8, port)
		__field(u8, qpn)
		__field(u32, hi_tid)
		__field(u64, tid)
		__field(u8, mgmt_class)
		__field(u8, method)
		__field(u16, attr_id)
		__field(u8, state)
		__field(u8, refs)
		__field(u8, status)
		__field(u32, retries_left)
	),
	TP_fast_assign(
		__assign_str(dev, kmad_send_agent(wr)->qpi->port->dev->name);
		__entry->port = kmad_send_agent(wr)->qpi->port->port_num;
		__entry->qpn = kmad_send_agent(wr)->qpi->qp.qpn;
		__entry->hi_tid = kmad_send_agent(wr)->agent.hi_tid;
		__entry->tid = be64_to_cpu(wr->mad.mad_hdr.tid);
		__entry->mgmt_class = wr->mad.mad_hdr.mgmt_class;
		__entry->method = wr->mad.mad_hdr.method;
		__entry->attr_id = be16_to_cpu(wr->mad.mad_hdr.attr_id);
		__entry->state = wr->state;
		__entry->refs = wr->refs;
		__entry->status = wr->status;
		__entry->retries_left = wr->retries_left;
	),
	TP_printk("%s/%u qp%u agent %#x tid %#llx class %#x method %#x attr %#x state %s refs %u status %u retries_left %u",
		  __get_str(dev), __entry->port, __entry->qpn, __entry->hi_tid,
		  __entry->tid, __entry->mgmt_class, __entry->method,
		  __entry->attr_id, kmad_trace_send_state(__entry->state),
		  __entry->refs, __entry->status, __entry->retries_left)
);

/* kmad_post_send() accepted the send (state sending, or backlog when it
 * waits for a flow control slot); a backlogged send fires it again,
 * state sending, as it leaves the backlog for its QP.
 */
DEFINE_EVENT(kmad_send_class, kmad_post,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));
/* The hardware completed the send (state before the transition). */
DEFINE_EVENT(kmad_send_class, kmad_send_hw_done,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));
/* A response matched the send (state before the transition). */
DEFINE_EVENT(kmad_send_class, kmad_resp_match,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));
/* The send's deadline passed with no retries left. */
DEFINE_EVENT(kmad_send_class, kmad_timeout,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));
/* The send's deadline passed; it is sent again with the same TID. */
DEFINE_EVENT(kmad_send_class, kmad_retry,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));
/* The send was canceled or flushed (state before the transition). */
DEFINE_EVENT(kmad_send_class, kmad_cancel,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));
/* The send's callback is about to run, with its final status. */
DEFINE_EVENT(kmad_send_class, kmad_send_callback,
	TP_PROTO(const struct kmad_send_wr *wr), TP_ARGS(wr));

/* A MAD was received and validated, before dispatch. */
TRACE_EVENT(kmad_recv,
	TP_PROTO(const struct kmad_qp_info *qpi, const struct kmad_mad *mad,
		 u16 slid),
	TP_ARGS(qpi, mad, slid),
	TP_STRUCT__entry(
		__string(dev, qpi->port->dev->name)
		__field(u8, port)
		__field(u8, qpn)
		__field(u16, slid)
		__field(u64, tid)
		__field(u8, mgmt_class)
		__field(u8, method)
		__field(u16, attr_id)
		__field(u16, status)
	),
	TP_fast_assign(
		__assign_str(dev, qpi->port->dev->name);
		__entry->port = qpi->port->port_num;
		__entry->qpn = qpi->qp.qpn;
		__entry->slid = slid;
		__entry->tid = be64_to_cpu(mad->mad_hdr.tid);
		__entry->mgmt_class = mad->mad_hdr.mgmt_class;
		__entry->method = mad->mad_hdr.method;
		__entry->attr_id = be16_to_cpu(mad->mad_hdr.attr_id);
		__entry->status = be16_to_cpu(mad->mad_hdr.status);
	),
	TP_printk("%s/%u qp%u slid %u tid %#llx class %#x method %#x attr %#x status %#x",
		  __get_str(dev), __entry->port, __entry->qpn, __entry->slid,
		  __entry->tid, __entry->mgmt_class, __entry->method,
		  __entry->attr_id, __entry->status)
);

#endif /* KMAD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
