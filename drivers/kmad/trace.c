// SPDX-License-Identifier: GPL-2.0
/*
 * kmad tracepoint definitions (see trace.h).
 */

#define CREATE_TRACE_POINTS
#include "trace.h"

EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_post);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_send_hw_done);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_resp_match);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_timeout);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_retry);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_cancel);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_send_callback);
EXPORT_TRACEPOINT_SYMBOL_GPL(kmad_recv);
