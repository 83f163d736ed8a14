// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the kmad MAD wire format (include/kmad/wire.h) and for
 * receive-side validation (drivers/kmad/wire.c).
 *
 * Offsets below are written as literals taken from the IBTA figures, not
 * derived from the structures, so that a layout mistake in wire.h cannot
 * hide itself.
 */

#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include <kmad/wire.h>

/**
 * struct kmad_wire_case - one row of the validation table
 * @name: case name, shown by KUnit
 * @len: length passed to kmad_mad_validate(); the buffer is exactly this big
 * @base_version: BaseVersion
 * @mgmt_class: MgmtClass
 * @class_version: ClassVersion
 * @method: Method
 * @status: Status (host order), carries the directed-route KD bit
 * @attr_id: AttributeID (host order)
 * @hop_ptr: directed-route hop pointer
 * @hop_cnt: directed-route hop count
 * @verdict: expected verdict
 */
struct kmad_wire_case {
	const char *name;
	size_t len;
	u8 base_version;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	u16 status;
	u16 attr_id;
	u8 hop_ptr;
	u8 hop_cnt;
	enum kmad_mad_verdict verdict;
};

#define MAD_ROW(_n, _v, _len, _bv, _cls, _cv, _m, _st, _attr, _hp, _hc)	\
	{ .name = (_n), .verdict = (_v), .len = (_len),			\
	  .base_version = (_bv), .mgmt_class = (_cls),			\
	  .class_version = (_cv), .method = (_m), .status = (_st),	\
	  .attr_id = (_attr), .hop_ptr = (_hp), .hop_cnt = (_hc) }

/* A full-size MAD with base version 1 and no directed-route fields. */
#define GMP_ROW(_n, _v, _cls, _cv, _m, _attr)				\
	MAD_ROW(_n, _v, KMAD_MAD_SIZE, KMAD_MGMT_BASE_VERSION, _cls, _cv,	\
		_m, 0, _attr, 0, 0)

/* A full-size directed-route SMP. */
#define DR_ROW(_n, _v, _m, _st, _attr, _hp, _hc)			\
	MAD_ROW(_n, _v, KMAD_MAD_SIZE, KMAD_MGMT_BASE_VERSION,		\
		KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, KMAD_SMP_CLASS_VERSION,	\
		_m, _st, _attr, _hp, _hc)

#define KV(x)		KMAD_MAD_VERDICT_##x
#define KM(x)		KMAD_METHOD_##x
#define KC(x)		KMAD_MGMT_CLASS_##x
#define KD		KMAD_SMP_DIRECTION
#define NODE_INFO	KMAD_SMP_ATTR_NODE_INFO
#define CPI		KMAD_ATTR_CLASS_PORT_INFO
#define NOTICE		KMAD_ATTR_NOTICE

static const struct kmad_wire_case kmad_wire_cases[] = {
	/* Accepted MADs. */
	GMP_ROW("good_gmp_sa_get_path", KV(OK), KC(SUBN_ADM), 2, KM(GET), KMAD_SA_ATTR_PATH_REC),
	GMP_ROW("good_sa_get_table_resp", KV(OK), KC(SUBN_ADM), 2, KM(GET_TABLE_RESP), 0x0035),
	GMP_ROW("good_sa_get_trace_table", KV(OK), KC(SUBN_ADM), 2, KM(GET_TRACE_TABLE), 0x0039),
	GMP_ROW("good_pma_get_counters", KV(OK), KC(PERF_MGMT), 1, KM(GET), 0x0012),
	GMP_ROW("good_lid_smp_get", KV(OK), KC(SUBN_LID_ROUTED), 1, KM(GET), NODE_INFO),
	GMP_ROW("good_lid_smp_trap", KV(OK), KC(SUBN_LID_ROUTED), 1, KM(TRAP), NOTICE),
	GMP_ROW("good_lid_smp_trap_repress", KV(OK), KC(SUBN_LID_ROUTED), 1,
		KM(TRAP_REPRESS), NOTICE),
	GMP_ROW("good_cm_send", KV(OK), KC(CM), 2, KM(SEND), 0x0010),
	GMP_ROW("good_cm_get_cpi", KV(OK), KC(CM), 2, KM(GET), CPI),
	/*
	 * Step 7's SA, PerfMgt and CM lists: a row for each method they name
	 * that the rows above do not use; one left out of its class's list
	 * reads class_method.  CM methods other than Send carry ClassPortInfo
	 * (step 8).
	 */
	GMP_ROW("good_sa_set", KV(OK), KC(SUBN_ADM), 2, KM(SET), 0x0035),
	GMP_ROW("good_sa_get_resp", KV(OK), KC(SUBN_ADM), 2, KM(GET_RESP), 0x0035),
	GMP_ROW("good_sa_get_table", KV(OK), KC(SUBN_ADM), 2, KM(GET_TABLE), 0x0035),
	GMP_ROW("good_sa_delete", KV(OK), KC(SUBN_ADM), 2, KM(DELETE), 0x0038),
	GMP_ROW("good_sa_delete_resp", KV(OK), KC(SUBN_ADM), 2, KM(DELETE_RESP),
		0x0038),
	GMP_ROW("good_sa_report", KV(OK), KC(SUBN_ADM), 2, KM(REPORT), NOTICE),
	GMP_ROW("good_sa_report_resp", KV(OK), KC(SUBN_ADM), 2, KM(REPORT_RESP),
		NOTICE),
	GMP_ROW("good_sa_get_multi", KV(OK), KC(SUBN_ADM), 2, KM(GET_MULTI), 0x0035),
	GMP_ROW("good_pma_set_counters", KV(OK), KC(PERF_MGMT), 1, KM(SET), 0x0012),
	GMP_ROW("good_pma_get_resp", KV(OK), KC(PERF_MGMT), 1, KM(GET_RESP), 0x0012),
	GMP_ROW("good_cm_set_cpi", KV(OK), KC(CM), 2, KM(SET), CPI),
	GMP_ROW("good_cm_get_resp_cpi", KV(OK), KC(CM), 2, KM(GET_RESP), CPI),
	GMP_ROW("good_vendor2_any_version", KV(OK), 0x30, 7, 0x10, 0x0001),
	GMP_ROW("good_vendor1_class_method_resp", KV(OK), 0x09, 1, 0x93, 0x0001),
	GMP_ROW("good_app_class_get", KV(OK), KC(DEVICE_ADM), 1, KM(GET), CPI),
	MAD_ROW("good_lid_smp_ignores_hop_fields", KV(OK), KMAD_MAD_SIZE, 1,
		KC(SUBN_LID_ROUTED), 1, KM(GET), KD, NODE_INFO, 200, 200),
	DR_ROW("good_dr_smp_local", KV(OK), KM(GET), 0, NODE_INFO, 0, 0),
	DR_ROW("good_dr_smp_mid_path", KV(OK), KM(SET), 0, NODE_INFO, 2, 3),
	DR_ROW("good_dr_smp_max_hops", KV(OK), KM(GET), 0, NODE_INFO, 64, 63),
	DR_ROW("good_dr_smp_resp_returning", KV(OK), KM(GET_RESP), KD, NODE_INFO, 4, 3),
	DR_ROW("good_dr_smp_trap_any_direction", KV(OK), KM(TRAP), KD, NOTICE, 0, 1),
	/* Length. */
	MAD_ROW("short_by_one", KV(SHORT), KMAD_MAD_SIZE - 1, 1, KC(PERF_MGMT), 1,
		KM(GET), 0, 0x0012, 0, 0),
	MAD_ROW("short_header_only", KV(SHORT), KMAD_MAD_HDR_SIZE, 1, KC(PERF_MGMT),
		1, KM(GET), 0, 0x0012, 0, 0),
	MAD_ROW("short_one_byte", KV(SHORT), 1, 1, KC(PERF_MGMT), 1, KM(GET), 0,
		0x0012, 0, 0),
	MAD_ROW("long_by_one", KV(LONG), KMAD_MAD_SIZE + 1, 1, KC(PERF_MGMT), 1,
		KM(GET), 0, 0x0012, 0, 0),
	/* Versions. */
	MAD_ROW("bad_base_version_2", KV(BASE_VERSION), KMAD_MAD_SIZE, 2,
		KC(PERF_MGMT), 1, KM(GET), 0, 0x0012, 0, 0),
	MAD_ROW("bad_base_version_opa", KV(BASE_VERSION), KMAD_MAD_SIZE, 0x80,
		KC(SUBN_LID_ROUTED), 0x80, KM(GET), 0, NODE_INFO, 0, 0),
	GMP_ROW("bad_class_version_lid_smp", KV(CLASS_VERSION), KC(SUBN_LID_ROUTED), 2,
		KM(GET), NODE_INFO),
	GMP_ROW("bad_class_version_dr_smp", KV(CLASS_VERSION), KC(SUBN_DIRECTED_ROUTE),
		0, KM(GET), NODE_INFO),
	GMP_ROW("bad_class_version_sa_v1", KV(CLASS_VERSION), KC(SUBN_ADM), 1, KM(GET),
		KMAD_SA_ATTR_PATH_REC),
	GMP_ROW("bad_class_version_pma", KV(CLASS_VERSION), KC(PERF_MGMT), 2, KM(GET),
		0x0012),
	GMP_ROW("bad_class_version_cm", KV(CLASS_VERSION), KC(CM), 1, KM(SEND), 0x0010),
	GMP_ROW("bad_class_version_cc", KV(CLASS_VERSION), KC(CONG_MGMT), 1, KM(GET), CPI),
	/* Classes. */
	GMP_ROW("reserved_class_0x00", KV(RESERVED_CLASS), 0x00, 1, KM(GET), CPI),
	GMP_ROW("reserved_class_0x02", KV(RESERVED_CLASS), 0x02, 1, KM(GET), CPI),
	GMP_ROW("reserved_class_0x50", KV(RESERVED_CLASS), 0x50, 1, KM(GET), CPI),
	GMP_ROW("reserved_class_0x80", KV(RESERVED_CLASS), 0x80, 1, KM(GET), CPI),
	GMP_ROW("reserved_class_0x82", KV(RESERVED_CLASS), 0x82, 1, KM(GET), CPI),
	GMP_ROW("reserved_class_0xff", KV(RESERVED_CLASS), 0xFF, 1, KM(GET), CPI),
	/* Methods. */
	GMP_ROW("reserved_method_0x00", KV(RESERVED_METHOD), KC(PERF_MGMT), 1, 0x00, CPI),
	GMP_ROW("reserved_method_0x80", KV(RESERVED_METHOD), KC(PERF_MGMT), 1, 0x80, CPI),
	GMP_ROW("reserved_method_0x04", KV(RESERVED_METHOD), KC(BM), 1, 0x04, CPI),
	GMP_ROW("reserved_method_0x8f", KV(RESERVED_METHOD), 0x0A, 1, 0x8F, CPI),
	GMP_ROW("resp_on_set", KV(RESP_METHOD), KC(PERF_MGMT), 1, 0x82, 0x0012),
	GMP_ROW("resp_on_send", KV(RESP_METHOD), KC(CM), 2, 0x83, 0x0010),
	GMP_ROW("resp_on_trap", KV(RESP_METHOD), KC(SUBN_LID_ROUTED), 1, 0x85, NOTICE),
	GMP_ROW("resp_on_trap_repress", KV(RESP_METHOD), KC(SUBN_LID_ROUTED), 1, 0x87,
		NOTICE),
	GMP_ROW("resp_on_sa_get_trace_table", KV(RESP_METHOD), KC(SUBN_ADM), 2, 0x93,
		0x0039),
	GMP_ROW("class_method_smp_report", KV(CLASS_METHOD), KC(SUBN_LID_ROUTED), 1,
		KM(REPORT), NOTICE),
	GMP_ROW("class_method_smp_get_table", KV(CLASS_METHOD), KC(SUBN_LID_ROUTED), 1,
		KM(GET_TABLE), NODE_INFO),
	GMP_ROW("class_method_pma_send", KV(CLASS_METHOD), KC(PERF_MGMT), 1, KM(SEND),
		0x0012),
	GMP_ROW("class_method_sa_0x16", KV(CLASS_METHOD), KC(SUBN_ADM), 2, 0x16, 0x0035),
	GMP_ROW("class_method_cm_trap", KV(CLASS_METHOD), KC(CM), 2, KM(TRAP), NOTICE),
	GMP_ROW("method_attr_cm_get_non_cpi", KV(METHOD_ATTR), KC(CM), 2, KM(GET), 0x0010),
	GMP_ROW("method_attr_cm_set_non_cpi", KV(METHOD_ATTR), KC(CM), 2, KM(SET), 0x0010),
	GMP_ROW("method_attr_smp_trap_node_info", KV(METHOD_ATTR), KC(SUBN_LID_ROUTED),
		1, KM(TRAP), NODE_INFO),
	/* Directed route. */
	DR_ROW("dr_hop_cnt_64", KV(DR_HOP_CNT), KM(GET), 0, NODE_INFO, 0, 64),
	DR_ROW("dr_hop_cnt_255", KV(DR_HOP_CNT), KM(GET), 0, NODE_INFO, 0, 255),
	DR_ROW("dr_hop_ptr_past_end", KV(DR_HOP_PTR), KM(GET), 0, NODE_INFO, 5, 3),
	DR_ROW("dr_hop_ptr_255_local", KV(DR_HOP_PTR), KM(GET_RESP), KD, NODE_INFO, 255, 0),
	DR_ROW("dr_get_returning", KV(DR_DIRECTION), KM(GET), KD, NODE_INFO, 1, 1),
	DR_ROW("dr_set_returning", KV(DR_DIRECTION), KM(SET), KD, NODE_INFO, 1, 1),
	DR_ROW("dr_get_resp_outbound", KV(DR_DIRECTION), KM(GET_RESP), 0, NODE_INFO, 1, 1),
};

static void kmad_wire_case_desc(const struct kmad_wire_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kmad_wire_validate, kmad_wire_cases, kmad_wire_case_desc);

/* Fill a full MAD from a table row; the directed-route fields overlay it. */
static void kmad_wire_fill(struct kmad_smp *smp, const struct kmad_wire_case *c)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = c->base_version;
	smp->mgmt_class = c->mgmt_class;
	smp->class_version = c->class_version;
	smp->method = c->method;
	smp->status = cpu_to_be16(c->status);
	smp->hop_ptr = c->hop_ptr;
	smp->hop_cnt = c->hop_cnt;
	smp->tid = cpu_to_be64(0x0000000100000002ULL);
	smp->attr_id = cpu_to_be16(c->attr_id);
}

/* Expect: kmad_mad_validate() returns the row's verdict, 0 only for OK. */
static void kmad_wire_validate_test(struct kunit *test)
{
	const struct kmad_wire_case *c = test->param_value;
	enum kmad_mad_verdict why = KMAD_MAD_VERDICT_COUNT;
	struct kmad_smp full;
	u8 *buf;
	int ret;

	/* Exactly @len bytes, so KASAN flags any read past the length. */
	buf = kunit_kzalloc(test, c->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	kmad_wire_fill(&full, c);
	memcpy(buf, &full, min_t(size_t, c->len, sizeof(full)));

	ret = kmad_mad_validate(buf, c->len, &why);
	KUNIT_EXPECT_EQ_MSG(test, why, c->verdict, "got %s, want %s",
			    kmad_mad_verdict_name(why),
			    kmad_mad_verdict_name(c->verdict));
	KUNIT_EXPECT_EQ(test, ret, c->verdict == KMAD_MAD_VERDICT_OK ? 0 : -EBADMSG);
}

/* Expect: a NULL buffer is "short" and a NULL @why is allowed. */
static void kmad_wire_null_args_test(struct kunit *test)
{
	struct kmad_wire_case good = GMP_ROW("x", KV(OK), KC(PERF_MGMT), 1, KM(GET), 0x12);
	enum kmad_mad_verdict why = KMAD_MAD_VERDICT_OK;
	struct kmad_smp mad;

	KUNIT_EXPECT_EQ(test, kmad_mad_validate(NULL, KMAD_MAD_SIZE, &why), -EBADMSG);
	KUNIT_EXPECT_EQ(test, why, KMAD_MAD_VERDICT_SHORT);
	KUNIT_EXPECT_EQ(test, kmad_mad_validate(NULL, 0, NULL), -EBADMSG);
	kmad_wire_fill(&mad, &good);
	KUNIT_EXPECT_EQ(test, kmad_mad_validate(&mad, sizeof(mad), NULL), 0);
}

/* Expect: every MAD view is 256 bytes; headers and CPI have IBTA sizes. */
static void kmad_wire_sizes_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_mad_hdr), 24);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_rmpp_hdr), 12);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_rmpp_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_vendor_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_dm_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_smp), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_sa_mad), 256);
	KUNIT_EXPECT_EQ(test, sizeof(struct kmad_class_port_info), 72);
	KUNIT_EXPECT_EQ(test, KMAD_MAD_DATA_SIZE, 232);
	KUNIT_EXPECT_EQ(test, KMAD_RMPP_DATA_SIZE, 220);
	KUNIT_EXPECT_EQ(test, KMAD_VENDOR_DATA_SIZE, 216);
	KUNIT_EXPECT_EQ(test, KMAD_SA_DATA_SIZE, 200);
	KUNIT_EXPECT_EQ(test, KMAD_DM_DATA_SIZE, 192);
}

/* Expect: common header fields at IBTA byte offsets 0-20. */
static void kmad_wire_mad_hdr_offsets_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, base_version), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, mgmt_class), 1);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, class_version), 2);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, method), 3);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, status), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, class_specific), 6);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, tid), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, attr_id), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, resv), 18);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad_hdr, attr_mod), 20);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_mad, data), 24);
}

/* Expect: SMP fields at IBTA byte offsets, DR paths at 128 and 192. */
static void kmad_wire_smp_offsets_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, status), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, hop_ptr), 6);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, hop_cnt), 7);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, tid), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, attr_id), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, attr_mod), 20);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, mkey), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, dr_slid), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, dr_dlid), 34);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, reserved), 36);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, data), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, initial_path), 128);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_smp, return_path), 192);
}

/* Expect: RMPP, vendor and SA headers at IBTA byte offsets 24-56. */
static void kmad_wire_rmpp_sa_offsets_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_rmpp_mad, rmpp_hdr), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_rmpp_hdr, rmpp_status), 3);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_rmpp_hdr, seg_num), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_rmpp_hdr, paylen_newwin), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_rmpp_mad, data), 36);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_vendor_mad, reserved), 36);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_vendor_mad, oui), 37);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_vendor_mad, data), 40);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_sa_mad, sm_key), 36);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_sa_mad, attr_offset), 44);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_sa_mad, reserved), 46);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_sa_mad, comp_mask), 48);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_sa_mad, data), 56);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_dm_mad, data), 64);
}

/* Expect: ClassPortInfo fields at IBTA byte offsets 0-68. */
static void kmad_wire_cpi_offsets_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, capability_mask), 2);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, cap_mask2_resp_time), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, redirect_gid), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, redirect_tc_sl_fl), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, redirect_lid), 28);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, redirect_pkey), 30);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, redirect_qp), 32);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, redirect_qkey), 36);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, trap_gid), 40);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, trap_tc_sl_fl), 56);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, trap_lid), 60);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, trap_pkey), 62);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, trap_hl_qp), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct kmad_class_port_info, trap_qkey), 68);
}

/* Expect: multi-byte header fields land big-endian at their wire bytes. */
static void kmad_wire_byte_order_test(struct kunit *test)
{
	struct kmad_mad mad = {};
	const u8 *b = (const u8 *)&mad;

	mad.mad_hdr.status = cpu_to_be16(0x8001);
	mad.mad_hdr.tid = cpu_to_be64(0x0102030405060708ULL);
	mad.mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_SM_INFO);
	mad.mad_hdr.attr_mod = cpu_to_be32(0xA0B0C0D0);
	KUNIT_EXPECT_EQ(test, b[4], 0x80);
	KUNIT_EXPECT_EQ(test, b[5], 0x01);
	KUNIT_EXPECT_EQ(test, b[8], 0x01);
	KUNIT_EXPECT_EQ(test, b[15], 0x08);
	KUNIT_EXPECT_EQ(test, b[16], 0x00);
	KUNIT_EXPECT_EQ(test, b[17], 0x20);
	KUNIT_EXPECT_EQ(test, b[20], 0xA0);
	KUNIT_EXPECT_EQ(test, b[23], 0xD0);
}

/* Expect: RESP-bit methods and TrapRepress are responses, requests not. */
static void kmad_wire_method_is_response_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, kmad_method_is_response(KMAD_METHOD_GET_RESP));
	KUNIT_EXPECT_TRUE(test, kmad_method_is_response(KMAD_METHOD_REPORT_RESP));
	KUNIT_EXPECT_TRUE(test, kmad_method_is_response(KMAD_METHOD_GET_TABLE_RESP));
	KUNIT_EXPECT_TRUE(test, kmad_method_is_response(KMAD_METHOD_TRAP_REPRESS));
	KUNIT_EXPECT_FALSE(test, kmad_method_is_response(KMAD_METHOD_GET));
	KUNIT_EXPECT_FALSE(test, kmad_method_is_response(KMAD_METHOD_SET));
	KUNIT_EXPECT_FALSE(test, kmad_method_is_response(KMAD_METHOD_SEND));
	KUNIT_EXPECT_FALSE(test, kmad_method_is_response(KMAD_METHOD_TRAP));
	KUNIT_EXPECT_FALSE(test, kmad_method_is_response(KMAD_METHOD_GET_TABLE));
}

/* Expect: BM Send is a response only with AttributeModifier bit 0 set. */
static void kmad_wire_mad_is_response_test(struct kunit *test)
{
	struct kmad_mad_hdr hdr = {
		.mgmt_class = KMAD_MGMT_CLASS_BM,
		.method = KMAD_METHOD_SEND,
	};

	KUNIT_EXPECT_FALSE(test, kmad_mad_is_response(&hdr));
	hdr.attr_mod = cpu_to_be32(1);
	KUNIT_EXPECT_TRUE(test, kmad_mad_is_response(&hdr));
	hdr.mgmt_class = KMAD_MGMT_CLASS_CM;
	KUNIT_EXPECT_FALSE(test, kmad_mad_is_response(&hdr));
	hdr.method = KMAD_METHOD_GET_RESP;
	KUNIT_EXPECT_TRUE(test, kmad_mad_is_response(&hdr));
}

/* Expect: class predicates are true exactly on their IBTA ranges. */
static void kmad_wire_class_ranges_test(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, kmad_mgmt_class_is_vendor_range1(0x08));
	KUNIT_EXPECT_TRUE(test, kmad_mgmt_class_is_vendor_range1(0x09));
	KUNIT_EXPECT_TRUE(test, kmad_mgmt_class_is_vendor_range1(0x0F));
	KUNIT_EXPECT_FALSE(test, kmad_mgmt_class_is_vendor_range1(0x10));
	KUNIT_EXPECT_FALSE(test, kmad_mgmt_class_is_vendor_range2(0x2F));
	KUNIT_EXPECT_TRUE(test, kmad_mgmt_class_is_vendor_range2(0x30));
	KUNIT_EXPECT_TRUE(test, kmad_mgmt_class_is_vendor_range2(0x4F));
	KUNIT_EXPECT_FALSE(test, kmad_mgmt_class_is_vendor_range2(0x50));
	KUNIT_EXPECT_TRUE(test, kmad_is_smp_class(0x01));
	KUNIT_EXPECT_TRUE(test, kmad_is_smp_class(0x81));
	KUNIT_EXPECT_FALSE(test, kmad_is_smp_class(0x03));
	KUNIT_EXPECT_FALSE(test, kmad_is_smp_class(0x80));
}

/* Expect: TID halves are the big-endian upper and lower 32 bits. */
static void kmad_wire_tid_test(struct kunit *test)
{
	struct kmad_mad_hdr hdr = {
		.tid = cpu_to_be64(0x0123456789ABCDEFULL),
	};

	KUNIT_EXPECT_EQ(test, kmad_mad_tid_hi(&hdr), 0x01234567U);
	KUNIT_EXPECT_EQ(test, kmad_mad_tid_lo(&hdr), 0x89ABCDEFU);
	hdr.tid = cpu_to_be64(~0ULL);
	KUNIT_EXPECT_EQ(test, kmad_mad_tid_hi(&hdr), 0xFFFFFFFFU);
	KUNIT_EXPECT_EQ(test, kmad_mad_tid_lo(&hdr), 0xFFFFFFFFU);
}

/* Expect: SM_Key round-trips and sits big-endian at bytes 36-43. */
static void kmad_wire_sa_sm_key_test(struct kunit *test)
{
	struct kmad_sa_mad sa = {};
	const u8 *b = (const u8 *)&sa;

	kmad_sa_set_sm_key(&sa, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, kmad_sa_sm_key(&sa), 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, b[36], 0x11);
	KUNIT_EXPECT_EQ(test, b[39], 0x44);
	KUNIT_EXPECT_EQ(test, b[40], 0x55);
	KUNIT_EXPECT_EQ(test, b[43], 0x88);
	KUNIT_EXPECT_EQ(test, b[44], 0x00);
}

/* Expect: KD bit, RMPP and ClassPortInfo bit-field accessors decode. */
static void kmad_wire_bitfield_helpers_test(struct kunit *test)
{
	struct kmad_smp smp = {};
	struct kmad_rmpp_hdr rmpp = { .rmpp_rtime_flags = (0x1F << 3) | 0x5 };
	struct kmad_class_port_info cpi = {
		.cap_mask2_resp_time = cpu_to_be32((0x1234 << 5) | 0x12),
	};

	KUNIT_EXPECT_FALSE(test, kmad_smp_is_returning(&smp));
	smp.status = cpu_to_be16(KMAD_SMP_DIRECTION | 0x0004);
	KUNIT_EXPECT_TRUE(test, kmad_smp_is_returning(&smp));
	KUNIT_EXPECT_EQ(test, kmad_rmpp_flags(&rmpp),
			KMAD_RMPP_FLAG_ACTIVE | KMAD_RMPP_FLAG_LAST);
	KUNIT_EXPECT_EQ(test, kmad_rmpp_resp_time(&rmpp), KMAD_RMPP_NO_RESPTIME);
	KUNIT_EXPECT_EQ(test, kmad_cpi_resp_time(&cpi), 0x12);
	KUNIT_EXPECT_EQ(test, kmad_cpi_cap_mask2(&cpi), 0x1234U);
}

/* Expect: every verdict has its own name; past the end is "unknown". */
static void kmad_wire_verdict_names_test(struct kunit *test)
{
	int i, j;

	KUNIT_EXPECT_STREQ(test, kmad_mad_verdict_name(KMAD_MAD_VERDICT_OK), "ok");
	KUNIT_EXPECT_STREQ(test, kmad_mad_verdict_name(KMAD_MAD_VERDICT_COUNT),
			   "unknown");
	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++) {
		const char *a = kmad_mad_verdict_name(i);

		KUNIT_EXPECT_STRNEQ(test, a, "unknown");
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, a, kmad_mad_verdict_name(j));
	}
}

/* One MAD of kmad_wire_rmpp_ctl_test. */
struct kmad_wire_rmpp_case {
	u8 cls, version, method, type, flags;
	enum kmad_mad_verdict verdict;
};

/*
 * An RMPP ACK, STOP or ABORT from the DATA's receiver carries the DATA's
 * method with the response bit flipped (ib_mad's format_ack()), so the
 * ACK of an RMPP Set is 0x82, of a vendor Send 0x83; an ABORT or STOP
 * from the DATA's sender carries the DATA's own (ib_mad's nack_recv()
 * flips an ACK's back): either passes steps 6 to 8, and a packet neither
 * passes gets its own method's verdict.  A DATA segment, an inactive RMPP
 * header, an unknown RMPPType or a class without the RMPP header are
 * checked as any MAD.
 */
static void kmad_wire_rmpp_ctl_test(struct kunit *test)
{
	static const struct kmad_wire_rmpp_case c[] = {
		{ KC(SUBN_ADM), 2, 0x82, KMAD_RMPP_TYPE_ACK, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x82, KMAD_RMPP_TYPE_STOP, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x82, KMAD_RMPP_TYPE_ABORT, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x93, KMAD_RMPP_TYPE_ACK, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x12, KMAD_RMPP_TYPE_ACK, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x94, KMAD_RMPP_TYPE_ACK, 1, KV(OK) },
		{ 0x30, 1, 0x83, KMAD_RMPP_TYPE_ACK, 1, KV(OK) },
		{ 0x4f, 1, 0x85, KMAD_RMPP_TYPE_ABORT, 5, KV(OK) },
		{ KC(DEVICE_MGMT), 1, 0x82, KMAD_RMPP_TYPE_ACK, 1, KV(OK) },
		/* from the DATA's sender: the DATA's own method */
		{ KC(SUBN_ADM), 2, 0x02, KMAD_RMPP_TYPE_ABORT, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x02, KMAD_RMPP_TYPE_STOP, 1, KV(OK) },
		{ KC(SUBN_ADM), 2, 0x13, KMAD_RMPP_TYPE_ABORT, 1, KV(OK) },
		{ 0x30, 1, 0x03, KMAD_RMPP_TYPE_ABORT, 1, KV(OK) },
		{ 0x30, 1, 0x05, KMAD_RMPP_TYPE_STOP, 1, KV(OK) },
		/* neither direction: the packet's own verdict */
		{ KC(SUBN_ADM), 2, 0x96, KMAD_RMPP_TYPE_ACK, 1,
		  KV(RESP_METHOD) },
		{ KC(SUBN_ADM), 2, 0x05, KMAD_RMPP_TYPE_ACK, 1,
		  KV(CLASS_METHOD) },
		{ KC(SUBN_ADM), 2, 0x83, KMAD_RMPP_TYPE_ACK, 1,
		  KV(RESP_METHOD) },
		{ KC(SUBN_ADM), 2, 0x84, KMAD_RMPP_TYPE_ACK, 1,
		  KV(RESERVED_METHOD) },
		/* not an RMPP ACK, STOP or ABORT */
		{ KC(SUBN_ADM), 2, 0x82, KMAD_RMPP_TYPE_DATA, 1,
		  KV(RESP_METHOD) },
		{ KC(SUBN_ADM), 2, 0x82, KMAD_RMPP_TYPE_ACK, 0,
		  KV(RESP_METHOD) },
		{ KC(SUBN_ADM), 2, 0x82, 5, 1, KV(RESP_METHOD) },
		{ KC(SUBN_ADM), 2, 0x82, 0, 1, KV(RESP_METHOD) },
		{ KC(PERF_MGMT), 1, 0x82, KMAD_RMPP_TYPE_ACK, 1,
		  KV(RESP_METHOD) },
		{ 0x0a, 1, 0x83, KMAD_RMPP_TYPE_ACK, 1, KV(RESP_METHOD) },
	};
	struct kmad_rmpp_mad mad;
	enum kmad_mad_verdict v;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		memset(&mad, 0, sizeof(mad));
		mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
		mad.mad_hdr.mgmt_class = c[i].cls;
		mad.mad_hdr.class_version = c[i].version;
		mad.mad_hdr.method = c[i].method;
		mad.mad_hdr.attr_id = cpu_to_be16(0x0035);
		mad.rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
		mad.rmpp_hdr.rmpp_type = c[i].type;
		mad.rmpp_hdr.rmpp_rtime_flags = c[i].flags;
		v = KV(COUNT);
		kmad_mad_validate(&mad, sizeof(mad), &v);
		KUNIT_EXPECT_EQ_MSG(test, v, c[i].verdict,
				    "row %u: class 0x%02x method 0x%02x type %u flags 0x%x",
				    i, c[i].cls, c[i].method, c[i].type,
				    c[i].flags);
	}
}

static struct kunit_case kmad_wire_test_cases[] = {
	KUNIT_CASE_PARAM(kmad_wire_validate_test, kmad_wire_validate_gen_params),
	KUNIT_CASE(kmad_wire_null_args_test),
	KUNIT_CASE(kmad_wire_sizes_test),
	KUNIT_CASE(kmad_wire_mad_hdr_offsets_test),
	KUNIT_CASE(kmad_wire_smp_offsets_test),
	KUNIT_CASE(kmad_wire_rmpp_sa_offsets_test),
	KUNIT_CASE(kmad_wire_cpi_offsets_test),
	KUNIT_CASE(kmad_wire_byte_order_test),
	KUNIT_CASE(kmad_wire_method_is_response_test),
	KUNIT_CASE(kmad_wire_mad_is_response_test),
	KUNIT_CASE(kmad_wire_class_ranges_test),
	KUNIT_CASE(kmad_wire_tid_test),
	KUNIT_CASE(kmad_wire_sa_sm_key_test),
	KUNIT_CASE(kmad_wire_bitfield_helpers_test),
	KUNIT_CASE(kmad_wire_verdict_names_test),
	KUNIT_CASE(kmad_wire_rmpp_ctl_test),
	{}
};

static struct kunit_suite kmad_wire_suite = {
	.name = "kmad_wire",
	.test_cases = kmad_wire_test_cases,
};

kunit_test_suites(&kmad_wire_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the kmad MAD wire format and validation");
