// SPDX-License-Identifier: GPL-2.0
/*
 * abi_check - compare kmad's wire format with rdma-core's libibumad.
 *
 * include/kmad/wire.h and rdma-core's <infiniband/umad_*.h> describe the
 * same IBTA wire format independently.  This program checks that every
 * structure both define has the same size and field offsets/widths, and
 * that every constant both define has the same value.
 *
 * Build and run (needs libibumad-dev):
 *
 *	gcc -Wall -Wextra -Werror -I include tests/abi/abi_check.c -o abi_check
 *	./abi_check
 *
 * Each comparison is a _Static_assert, so a mismatch normally fails the
 * build.  Define KMAD_ABI_RUNTIME_ONLY (-DKMAD_ABI_RUNTIME_ONLY) to skip
 * the static assertions and get the full list of mismatches at run time
 * instead.  The program prints one line per comparison, then
 * "abi: N passed, M failed", and exits 1 if anything failed.
 *
 * rdma-core constants with no kmad counterpart, not compared:
 * UMAD_SM_ATTR_MLNX_EXT_PORT_INFO (Mellanox vendor attribute),
 * UMAD_SA_CAP_MASK*, UMAD_SA_SELECTOR_*, UMAD_SA_RATE_MTU_PKT_LIFE_MASK.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/umad_types.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_sa.h>

#include <kmad/wire.h>

static unsigned int passed;
static unsigned int failed;

static void check(const char *what, long long kmad, long long umad)
{
	int ok = kmad == umad;

	printf("%s %s: kmad %lld, rdma-core %lld\n",
	       ok ? "PASS" : "FAIL", what, kmad, umad);
	if (ok)
		passed++;
	else
		failed++;
}

#ifdef KMAD_ABI_RUNTIME_ONLY
#define ABI_STATIC_EQ(k, u)
#else
#define ABI_STATIC_EQ(k, u)						\
	_Static_assert((long long)(k) == (long long)(u), #k " != " #u)
#endif

/* One comparison: compile-time if possible, always reported at run time. */
#define ABI_EQ(k, u)							\
	do {								\
		ABI_STATIC_EQ(k, u);					\
		check(#k " == " #u, (long long)(k), (long long)(u));	\
	} while (0)

#define MEMBER_SIZE(type, member) sizeof(((type *)0)->member)

/* Same offset and same width for one field of a structure pair. */
#define ABI_FIELD(ktype, kfield, utype, ufield)				\
	do {								\
		ABI_EQ(offsetof(ktype, kfield), offsetof(utype, ufield)); \
		ABI_EQ(MEMBER_SIZE(ktype, kfield),			\
		       MEMBER_SIZE(utype, ufield));			\
	} while (0)

#define ABI_SIZE(ktype, utype) ABI_EQ(sizeof(ktype), sizeof(utype))

static void check_mad_hdr(void)
{
	ABI_SIZE(struct kmad_mad_hdr, struct umad_hdr);
	ABI_FIELD(struct kmad_mad_hdr, base_version, struct umad_hdr, base_version);
	ABI_FIELD(struct kmad_mad_hdr, mgmt_class, struct umad_hdr, mgmt_class);
	ABI_FIELD(struct kmad_mad_hdr, class_version, struct umad_hdr, class_version);
	ABI_FIELD(struct kmad_mad_hdr, method, struct umad_hdr, method);
	ABI_FIELD(struct kmad_mad_hdr, status, struct umad_hdr, status);
	ABI_FIELD(struct kmad_mad_hdr, class_specific, struct umad_hdr, class_specific);
	ABI_FIELD(struct kmad_mad_hdr, tid, struct umad_hdr, tid);
	ABI_FIELD(struct kmad_mad_hdr, attr_id, struct umad_hdr, attr_id);
	ABI_FIELD(struct kmad_mad_hdr, resv, struct umad_hdr, resv);
	ABI_FIELD(struct kmad_mad_hdr, attr_mod, struct umad_hdr, attr_mod);

	ABI_SIZE(struct kmad_mad, struct umad_packet);
	ABI_FIELD(struct kmad_mad, mad_hdr, struct umad_packet, mad_hdr);
	ABI_FIELD(struct kmad_mad, data, struct umad_packet, data);
}

static void check_rmpp(void)
{
	ABI_SIZE(struct kmad_rmpp_hdr, struct umad_rmpp_hdr);
	ABI_FIELD(struct kmad_rmpp_hdr, rmpp_version, struct umad_rmpp_hdr, rmpp_version);
	ABI_FIELD(struct kmad_rmpp_hdr, rmpp_type, struct umad_rmpp_hdr, rmpp_type);
	ABI_FIELD(struct kmad_rmpp_hdr, rmpp_rtime_flags,
		  struct umad_rmpp_hdr, rmpp_rtime_flags);
	ABI_FIELD(struct kmad_rmpp_hdr, rmpp_status, struct umad_rmpp_hdr, rmpp_status);
	ABI_FIELD(struct kmad_rmpp_hdr, seg_num, struct umad_rmpp_hdr, seg_num);
	ABI_FIELD(struct kmad_rmpp_hdr, paylen_newwin, struct umad_rmpp_hdr, paylen_newwin);

	ABI_SIZE(struct kmad_rmpp_mad, struct umad_rmpp_packet);
	ABI_FIELD(struct kmad_rmpp_mad, mad_hdr, struct umad_rmpp_packet, mad_hdr);
	ABI_FIELD(struct kmad_rmpp_mad, rmpp_hdr, struct umad_rmpp_packet, rmpp_hdr);
	ABI_FIELD(struct kmad_rmpp_mad, data, struct umad_rmpp_packet, data);
}

static void check_vendor_dm(void)
{
	ABI_SIZE(struct kmad_vendor_mad, struct umad_vendor_packet);
	ABI_FIELD(struct kmad_vendor_mad, mad_hdr, struct umad_vendor_packet, mad_hdr);
	ABI_FIELD(struct kmad_vendor_mad, rmpp_hdr, struct umad_vendor_packet, rmpp_hdr);
	ABI_FIELD(struct kmad_vendor_mad, reserved, struct umad_vendor_packet, reserved);
	ABI_FIELD(struct kmad_vendor_mad, oui, struct umad_vendor_packet, oui);
	ABI_FIELD(struct kmad_vendor_mad, data, struct umad_vendor_packet, data);

	ABI_SIZE(struct kmad_dm_mad, struct umad_dm_packet);
	ABI_FIELD(struct kmad_dm_mad, mad_hdr, struct umad_dm_packet, mad_hdr);
	ABI_FIELD(struct kmad_dm_mad, reserved, struct umad_dm_packet, reserved);
	ABI_FIELD(struct kmad_dm_mad, data, struct umad_dm_packet, data);
}

static void check_smp(void)
{
	ABI_SIZE(struct kmad_smp, struct umad_smp);
	ABI_FIELD(struct kmad_smp, base_version, struct umad_smp, base_version);
	ABI_FIELD(struct kmad_smp, mgmt_class, struct umad_smp, mgmt_class);
	ABI_FIELD(struct kmad_smp, class_version, struct umad_smp, class_version);
	ABI_FIELD(struct kmad_smp, method, struct umad_smp, method);
	ABI_FIELD(struct kmad_smp, status, struct umad_smp, status);
	ABI_FIELD(struct kmad_smp, hop_ptr, struct umad_smp, hop_ptr);
	ABI_FIELD(struct kmad_smp, hop_cnt, struct umad_smp, hop_cnt);
	ABI_FIELD(struct kmad_smp, tid, struct umad_smp, tid);
	ABI_FIELD(struct kmad_smp, attr_id, struct umad_smp, attr_id);
	ABI_FIELD(struct kmad_smp, resv, struct umad_smp, resv);
	ABI_FIELD(struct kmad_smp, attr_mod, struct umad_smp, attr_mod);
	ABI_FIELD(struct kmad_smp, mkey, struct umad_smp, mkey);
	ABI_FIELD(struct kmad_smp, dr_slid, struct umad_smp, dr_slid);
	ABI_FIELD(struct kmad_smp, dr_dlid, struct umad_smp, dr_dlid);
	ABI_FIELD(struct kmad_smp, reserved, struct umad_smp, reserved);
	ABI_FIELD(struct kmad_smp, data, struct umad_smp, data);
	ABI_FIELD(struct kmad_smp, initial_path, struct umad_smp, initial_path);
	ABI_FIELD(struct kmad_smp, return_path, struct umad_smp, return_path);
}

static void check_sa(void)
{
	ABI_SIZE(struct kmad_sa_mad, struct umad_sa_packet);
	ABI_FIELD(struct kmad_sa_mad, mad_hdr, struct umad_sa_packet, mad_hdr);
	ABI_FIELD(struct kmad_sa_mad, rmpp_hdr, struct umad_sa_packet, rmpp_hdr);
	/* kmad: __be32[2], rdma-core: uint8_t[8]; same bytes */
	ABI_FIELD(struct kmad_sa_mad, sm_key, struct umad_sa_packet, sm_key);
	ABI_FIELD(struct kmad_sa_mad, attr_offset, struct umad_sa_packet, attr_offset);
	ABI_FIELD(struct kmad_sa_mad, reserved, struct umad_sa_packet, reserved);
	ABI_FIELD(struct kmad_sa_mad, comp_mask, struct umad_sa_packet, comp_mask);
	ABI_FIELD(struct kmad_sa_mad, data, struct umad_sa_packet, data);
}

static void check_class_port_info(void)
{
	ABI_SIZE(struct kmad_class_port_info, struct umad_class_port_info);
	ABI_FIELD(struct kmad_class_port_info, base_version,
		  struct umad_class_port_info, base_ver);
	ABI_FIELD(struct kmad_class_port_info, class_version,
		  struct umad_class_port_info, class_ver);
	ABI_FIELD(struct kmad_class_port_info, capability_mask,
		  struct umad_class_port_info, cap_mask);
	ABI_FIELD(struct kmad_class_port_info, cap_mask2_resp_time,
		  struct umad_class_port_info, cap_mask2_resp_time);
	/* rdma-core's redir_gid/trap_gid are deprecated aliases of these */
	ABI_FIELD(struct kmad_class_port_info, redirect_gid,
		  struct umad_class_port_info, redirgid);
	ABI_FIELD(struct kmad_class_port_info, redirect_tc_sl_fl,
		  struct umad_class_port_info, redir_tc_sl_fl);
	ABI_FIELD(struct kmad_class_port_info, redirect_lid,
		  struct umad_class_port_info, redir_lid);
	ABI_FIELD(struct kmad_class_port_info, redirect_pkey,
		  struct umad_class_port_info, redir_pkey);
	ABI_FIELD(struct kmad_class_port_info, redirect_qp,
		  struct umad_class_port_info, redir_qp);
	ABI_FIELD(struct kmad_class_port_info, redirect_qkey,
		  struct umad_class_port_info, redir_qkey);
	ABI_FIELD(struct kmad_class_port_info, trap_gid,
		  struct umad_class_port_info, trapgid);
	ABI_FIELD(struct kmad_class_port_info, trap_tc_sl_fl,
		  struct umad_class_port_info, trap_tc_sl_fl);
	ABI_FIELD(struct kmad_class_port_info, trap_lid,
		  struct umad_class_port_info, trap_lid);
	ABI_FIELD(struct kmad_class_port_info, trap_pkey,
		  struct umad_class_port_info, trap_pkey);
	ABI_FIELD(struct kmad_class_port_info, trap_hl_qp,
		  struct umad_class_port_info, trap_hl_qp);
	ABI_FIELD(struct kmad_class_port_info, trap_qkey,
		  struct umad_class_port_info, trap_qkey);
}

static void check_sizes_versions(void)
{
	ABI_EQ(KMAD_MGMT_BASE_VERSION, UMAD_BASE_VERSION);
	ABI_EQ(KMAD_QP1_QKEY, UMAD_QKEY);
	ABI_EQ(KMAD_RMPP_VERSION, UMAD_RMPP_VERSION);
	ABI_EQ(KMAD_SA_CLASS_VERSION, UMAD_SA_CLASS_VERSION);
	ABI_EQ(KMAD_MAD_DATA_SIZE, UMAD_LEN_DATA);
	ABI_EQ(KMAD_RMPP_DATA_SIZE, UMAD_LEN_RMPP_DATA);
	ABI_EQ(KMAD_DM_DATA_SIZE, UMAD_LEN_DM_DATA);
	ABI_EQ(KMAD_VENDOR_DATA_SIZE, UMAD_LEN_VENDOR_DATA);
	ABI_EQ(KMAD_SA_DATA_SIZE, UMAD_LEN_SA_DATA);
	ABI_EQ(KMAD_SMP_DATA_SIZE, UMAD_LEN_SMP_DATA);
	ABI_EQ(KMAD_SMP_DR_PATH_SIZE, UMAD_SMP_MAX_HOPS);
	ABI_EQ(KMAD_OPENIB_OUI, UMAD_OPENIB_OUI);
	ABI_EQ(KMAD_CPI_RESP_TIME_MASK, UMAD_CLASS_RESP_TIME_MASK);
	ABI_EQ(KMAD_RMPP_FLAG_ACTIVE, UMAD_RMPP_FLAG_ACTIVE);
}

static void check_classes(void)
{
	ABI_EQ(KMAD_MGMT_CLASS_SUBN_LID_ROUTED, UMAD_CLASS_SUBN_LID_ROUTED);
	ABI_EQ(KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, UMAD_CLASS_SUBN_DIRECTED_ROUTE);
	ABI_EQ(KMAD_MGMT_CLASS_SUBN_ADM, UMAD_CLASS_SUBN_ADM);
	ABI_EQ(KMAD_MGMT_CLASS_PERF_MGMT, UMAD_CLASS_PERF_MGMT);
	ABI_EQ(KMAD_MGMT_CLASS_BM, UMAD_CLASS_BM);
	ABI_EQ(KMAD_MGMT_CLASS_DEVICE_MGMT, UMAD_CLASS_DEVICE_MGMT);
	ABI_EQ(KMAD_MGMT_CLASS_CM, UMAD_CLASS_CM);
	ABI_EQ(KMAD_MGMT_CLASS_SNMP, UMAD_CLASS_SNMP);
	ABI_EQ(KMAD_MGMT_CLASS_VENDOR_RANGE1_START, UMAD_CLASS_VENDOR_RANGE1_START);
	ABI_EQ(KMAD_MGMT_CLASS_VENDOR_RANGE1_END, UMAD_CLASS_VENDOR_RANGE1_END);
	ABI_EQ(KMAD_MGMT_CLASS_APPLICATION_START, UMAD_CLASS_APPLICATION_START);
	ABI_EQ(KMAD_MGMT_CLASS_DEVICE_ADM, UMAD_CLASS_DEVICE_ADM);
	ABI_EQ(KMAD_MGMT_CLASS_BOOT_MGMT, UMAD_CLASS_BOOT_MGMT);
	ABI_EQ(KMAD_MGMT_CLASS_BIS, UMAD_CLASS_BIS);
	ABI_EQ(KMAD_MGMT_CLASS_CONG_MGMT, UMAD_CLASS_CONG_MGMT);
	ABI_EQ(KMAD_MGMT_CLASS_APPLICATION_END, UMAD_CLASS_APPLICATION_END);
	ABI_EQ(KMAD_MGMT_CLASS_VENDOR_RANGE2_START, UMAD_CLASS_VENDOR_RANGE2_START);
	ABI_EQ(KMAD_MGMT_CLASS_VENDOR_RANGE2_END, UMAD_CLASS_VENDOR_RANGE2_END);
}

static void check_methods(void)
{
	ABI_EQ(KMAD_METHOD_GET, UMAD_METHOD_GET);
	ABI_EQ(KMAD_METHOD_SET, UMAD_METHOD_SET);
	ABI_EQ(KMAD_METHOD_GET_RESP, UMAD_METHOD_GET_RESP);
	ABI_EQ(KMAD_METHOD_SEND, UMAD_METHOD_SEND);
	ABI_EQ(KMAD_METHOD_TRAP, UMAD_METHOD_TRAP);
	ABI_EQ(KMAD_METHOD_REPORT, UMAD_METHOD_REPORT);
	ABI_EQ(KMAD_METHOD_REPORT_RESP, UMAD_METHOD_REPORT_RESP);
	ABI_EQ(KMAD_METHOD_TRAP_REPRESS, UMAD_METHOD_TRAP_REPRESS);
	ABI_EQ(KMAD_METHOD_RESP, UMAD_METHOD_RESP_MASK);
	ABI_EQ(KMAD_METHOD_GET_TABLE, UMAD_SA_METHOD_GET_TABLE);
	ABI_EQ(KMAD_METHOD_GET_TABLE_RESP, UMAD_SA_METHOD_GET_TABLE_RESP);
	ABI_EQ(KMAD_METHOD_DELETE, UMAD_SA_METHOD_DELETE);
	ABI_EQ(KMAD_METHOD_DELETE_RESP, UMAD_SA_METHOD_DELETE_RESP);
	ABI_EQ(KMAD_METHOD_GET_MULTI, UMAD_SA_METHOD_GET_MULTI);
	ABI_EQ(KMAD_METHOD_GET_MULTI_RESP, UMAD_SA_METHOD_GET_MULTI_RESP);
	ABI_EQ(KMAD_METHOD_GET_TRACE_TABLE, UMAD_SA_METHOD_GET_TRACE_TABLE);
}

static void check_status(void)
{
	ABI_EQ(KMAD_MAD_STATUS_SUCCESS, UMAD_STATUS_SUCCESS);
	ABI_EQ(KMAD_MAD_STATUS_BUSY, UMAD_STATUS_BUSY);
	ABI_EQ(KMAD_MAD_STATUS_REDIRECT, UMAD_STATUS_REDIRECT);
	ABI_EQ(KMAD_MAD_STATUS_BAD_VERSION, UMAD_STATUS_BAD_VERSION);
	ABI_EQ(KMAD_MAD_STATUS_UNSUPPORTED_METHOD, UMAD_STATUS_METHOD_NOT_SUPPORTED);
	ABI_EQ(KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR, UMAD_STATUS_ATTR_NOT_SUPPORTED);
	ABI_EQ(KMAD_MAD_STATUS_INVALID_ATTR_VALUE, UMAD_STATUS_INVALID_ATTR_VALUE);
	ABI_EQ(KMAD_MAD_STATUS_INVALID_FIELD_MASK, UMAD_STATUS_INVALID_FIELD_MASK);
	ABI_EQ(KMAD_MAD_STATUS_CLASS_MASK, UMAD_STATUS_CLASS_MASK);
	ABI_EQ(KMAD_SMP_DIRECTION, UMAD_SMP_DIRECTION);

	ABI_EQ(KMAD_SA_STATUS_SUCCESS, UMAD_SA_STATUS_SUCCESS);
	ABI_EQ(KMAD_SA_STATUS_NO_RESOURCES, UMAD_SA_STATUS_NO_RESOURCES);
	ABI_EQ(KMAD_SA_STATUS_REQ_INVALID, UMAD_SA_STATUS_REQ_INVALID);
	ABI_EQ(KMAD_SA_STATUS_NO_RECORDS, UMAD_SA_STATUS_NO_RECORDS);
	ABI_EQ(KMAD_SA_STATUS_TOO_MANY_RECORDS, UMAD_SA_STATUS_TOO_MANY_RECORDS);
	ABI_EQ(KMAD_SA_STATUS_INVALID_GID, UMAD_SA_STATUS_INVALID_GID);
	ABI_EQ(KMAD_SA_STATUS_INSUF_COMPS, UMAD_SA_STATUS_INSUF_COMPS);
	ABI_EQ(KMAD_SA_STATUS_REQ_DENIED, UMAD_SA_STATUS_REQ_DENIED);
	ABI_EQ(KMAD_SA_STATUS_PRI_SUGGESTED, UMAD_SA_STATUS_PRI_SUGGESTED);
}

static void check_common_smp_attrs(void)
{
	ABI_EQ(KMAD_ATTR_CLASS_PORT_INFO, UMAD_ATTR_CLASS_PORT_INFO);
	ABI_EQ(KMAD_ATTR_NOTICE, UMAD_ATTR_NOTICE);
	ABI_EQ(KMAD_ATTR_INFORM_INFO, UMAD_ATTR_INFORM_INFO);

	ABI_EQ(KMAD_SMP_ATTR_NODE_DESC, UMAD_SM_ATTR_NODE_DESC);
	ABI_EQ(KMAD_SMP_ATTR_NODE_INFO, UMAD_SM_ATTR_NODE_INFO);
	ABI_EQ(KMAD_SMP_ATTR_SWITCH_INFO, UMAD_SM_ATTR_SWITCH_INFO);
	ABI_EQ(KMAD_SMP_ATTR_GUID_INFO, UMAD_SM_ATTR_GUID_INFO);
	ABI_EQ(KMAD_SMP_ATTR_PORT_INFO, UMAD_SM_ATTR_PORT_INFO);
	ABI_EQ(KMAD_SMP_ATTR_PKEY_TABLE, UMAD_SM_ATTR_PKEY_TABLE);
	ABI_EQ(KMAD_SMP_ATTR_SL_TO_VL_TABLE, UMAD_SM_ATTR_SLVL_TABLE);
	ABI_EQ(KMAD_SMP_ATTR_VL_ARB_TABLE, UMAD_SM_ATTR_VL_ARB_TABLE);
	ABI_EQ(KMAD_SMP_ATTR_LINEAR_FT, UMAD_SM_ATTR_LINEAR_FT);
	ABI_EQ(KMAD_SMP_ATTR_RANDOM_FT, UMAD_SM_ATTR_RANDOM_FT);
	ABI_EQ(KMAD_SMP_ATTR_MCAST_FT, UMAD_SM_ATTR_MCAST_FT);
	ABI_EQ(KMAD_SMP_ATTR_LINK_SPD_WIDTH_TABLE, UMAD_SM_ATTR_LINK_SPD_WIDTH_TABLE);
	ABI_EQ(KMAD_SMP_ATTR_VENDOR_MADS_TABLE, UMAD_SM_ATTR_VENDOR_MADS_TABLE);
	ABI_EQ(KMAD_SMP_ATTR_HIERARCHY_INFO, UMAD_SM_ATTR_HIERARCHY_INFO);
	ABI_EQ(KMAD_SMP_ATTR_SM_INFO, UMAD_SM_ATTR_SM_INFO);
	ABI_EQ(KMAD_SMP_ATTR_VENDOR_DIAG, UMAD_SM_ATTR_VENDOR_DIAG);
	ABI_EQ(KMAD_SMP_ATTR_LED_INFO, UMAD_SM_ATTR_LED_INFO);
	ABI_EQ(KMAD_SMP_ATTR_CABLE_INFO, UMAD_SM_ATTR_CABLE_INFO);
	ABI_EQ(KMAD_SMP_ATTR_PORT_INFO_EXT, UMAD_SM_ATTR_PORT_INFO_EXT);
	ABI_EQ(KMAD_SMP_ATTR_VENDOR_MASK, UMAD_SM_ATTR_VENDOR_MASK);
}

static void check_smp_traps(void)
{
	ABI_EQ(KMAD_SMP_TRAP_GID_IN_SERVICE, UMAD_SM_GID_IN_SERVICE_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_GID_OUT_OF_SERVICE, UMAD_SM_GID_OUT_OF_SERVICE_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_MGID_CREATED, UMAD_SM_MGID_CREATED_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_MGID_DESTROYED, UMAD_SM_MGID_DESTROYED_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_UNPATH, UMAD_SM_UNPATH_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_REPATH, UMAD_SM_REPATH_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_LINK_STATE_CHANGED, UMAD_SM_LINK_STATE_CHANGED_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_LINK_INTEGRITY_THRESHOLD,
	       UMAD_SM_LINK_INTEGRITY_THRESHOLD_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_BUFFER_OVERRUN_THRESHOLD,
	       UMAD_SM_BUFFER_OVERRUN_THRESHOLD_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_WATCHDOG_TIMER_EXPIRED, UMAD_SM_WATCHDOG_TIMER_EXPIRED_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_LOCAL_CHANGES, UMAD_SM_LOCAL_CHANGES_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_SYS_IMG_GUID_CHANGED, UMAD_SM_SYS_IMG_GUID_CHANGED_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_BAD_MKEY, UMAD_SM_BAD_MKEY_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_BAD_PKEY, UMAD_SM_BAD_PKEY_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_BAD_QKEY, UMAD_SM_BAD_QKEY_TRAP);
	ABI_EQ(KMAD_SMP_TRAP_BAD_SWITCH_PKEY, UMAD_SM_BAD_SWITCH_PKEY_TRAP);
}

static void check_sa_attrs(void)
{
	ABI_EQ(KMAD_SA_ATTR_NODE_REC, UMAD_SA_ATTR_NODE_REC);
	ABI_EQ(KMAD_SA_ATTR_PORT_INFO_REC, UMAD_SA_ATTR_PORT_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_SLVL_REC, UMAD_SA_ATTR_SLVL_REC);
	ABI_EQ(KMAD_SA_ATTR_SWITCH_INFO_REC, UMAD_SA_ATTR_SWITCH_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_LINEAR_FT_REC, UMAD_SA_ATTR_LINEAR_FT_REC);
	ABI_EQ(KMAD_SA_ATTR_RANDOM_FT_REC, UMAD_SA_ATTR_RANDOM_FT_REC);
	ABI_EQ(KMAD_SA_ATTR_MCAST_FT_REC, UMAD_SA_ATTR_MCAST_FT_REC);
	ABI_EQ(KMAD_SA_ATTR_SM_INFO_REC, UMAD_SA_ATTR_SM_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_LINK_SPD_WIDTH_TABLE_REC,
	       UMAD_SA_ATTR_LINK_SPD_WIDTH_TABLE_REC);
	ABI_EQ(KMAD_SA_ATTR_INFORM_INFO_REC, UMAD_SA_ATTR_INFORM_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_LINK_REC, UMAD_SA_ATTR_LINK_REC);
	ABI_EQ(KMAD_SA_ATTR_GUID_INFO_REC, UMAD_SA_ATTR_GUID_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_SERVICE_REC, UMAD_SA_ATTR_SERVICE_REC);
	ABI_EQ(KMAD_SA_ATTR_PKEY_TABLE_REC, UMAD_SA_ATTR_PKEY_TABLE_REC);
	ABI_EQ(KMAD_SA_ATTR_PATH_REC, UMAD_SA_ATTR_PATH_REC);
	ABI_EQ(KMAD_SA_ATTR_VL_ARB_REC, UMAD_SA_ATTR_VL_ARB_REC);
	ABI_EQ(KMAD_SA_ATTR_MCMEMBER_REC, UMAD_SA_ATTR_MCMEMBER_REC);
	ABI_EQ(KMAD_SA_ATTR_TRACE_REC, UMAD_SA_ATTR_TRACE_REC);
	ABI_EQ(KMAD_SA_ATTR_MULTI_PATH_REC, UMAD_SA_ATTR_MULTI_PATH_REC);
	ABI_EQ(KMAD_SA_ATTR_SERVICE_ASSOC_REC, UMAD_SA_ATTR_SERVICE_ASSOC_REC);
	ABI_EQ(KMAD_SA_ATTR_HIERARCHY_INFO_REC, UMAD_SA_ATTR_HIERARCHY_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_CABLE_INFO_REC, UMAD_SA_ATTR_CABLE_INFO_REC);
	ABI_EQ(KMAD_SA_ATTR_PORT_INFO_EXT_REC, UMAD_SA_ATTR_PORT_INFO_EXT_REC);
}

int main(void)
{
	check_mad_hdr();
	check_rmpp();
	check_vendor_dm();
	check_smp();
	check_sa();
	check_class_port_info();
	check_sizes_versions();
	check_classes();
	check_methods();
	check_status();
	check_common_smp_attrs();
	check_smp_traps();
	check_sa_attrs();

	printf("abi: %u passed, %u failed\n", passed, failed);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
