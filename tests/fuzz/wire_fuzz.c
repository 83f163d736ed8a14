// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target "wire": drivers/kmad/wire.c, built unchanged in user
 * space (tests/fuzz/compat/ stands in for the kernel headers).
 *
 * The input is a received MAD buffer as it is, 0-300 bytes: libFuzzer
 * hands it over in a heap block of exactly that size, so ASan reports any
 * read past it.  The checks, each ending in abort() (via FUZZ_ASSERT) when
 * broken:
 *
 * - kmad_mad_validate() on the input as is, with its length: the verdict
 *   is SHORT below 256 bytes, and then no byte is read (the buffer is
 *   poisoned for ASan during the call), and LONG above; NULL counts as
 *   short whatever the length.
 * - kmad_mad_validate() on a 256-byte MAD made of the input (cut, or
 *   padded with zeros), so that every input exercises the content rules:
 *   - the verdict is the one spec_verdict() computes, an independent
 *     statement of the nine steps listed at the top of wire.c;
 *   - the return value is 0 exactly for KMAD_MAD_VERDICT_OK, else
 *     -EBADMSG, also with @why NULL; the buffer is not written;
 *   - an accepted MAD has what accepted() lists (BaseVersion 1, a class
 *     that is not reserved, the class's version, a method the class has,
 *     the directed-route hop fields in range...);
 *   - requests and responses agree: in an accepted MAD, swapping a
 *     request for its response (Get/Set -> GetResp, Trap -> TrapRepress,
 *     SA GetTraceTable -> GetTableResp..., D bit set for a directed-route
 *     SMP) or a response back for a request gives an accepted MAD (not
 *     for an RMPP ACK, STOP or ABORT, whose Method may be its DATA's with
 *     the response bit flipped).
 * - kmad_mad_verdict_name(): a distinct non-empty lower-case name for every
 *   verdict, "unknown" for any other value (one taken from the input).
 * - the wire.h helpers that read a received MAD (TransactionID halves,
 *   response test, D bit, RMPP flags and time, SM_Key, ClassPortInfo
 *   fields) against the bytes they read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#include <linux/errno.h>
#include <kmad/wire.h>

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "wire_fuzz: %s:%d: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

static u16 be16_at(const u8 *p, size_t off)
{
	return (u16)(p[off] << 8 | p[off + 1]);
}

static u64 be64_at(const u8 *p, size_t off)
{
	u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[off + i];
	return v;
}

/* Methods each class defines (the lists of step 7), 0-terminated. */
static const u8 smp_methods[] = { 0x01, 0x02, 0x81, 0x05, 0x07, 0 };
static const u8 sa_methods[] = { 0x01, 0x02, 0x81, 0x06, 0x86, 0x12, 0x92,
				 0x13, 0x14, 0x94, 0x15, 0x95, 0 };
static const u8 pma_methods[] = { 0x01, 0x02, 0x81, 0 };
static const u8 cm_methods[] = { 0x01, 0x02, 0x81, 0x03, 0 };

/* Per class: the one ClassVersion (0: any) and the methods (NULL: any). */
static void class_rules(u8 cls, u8 *version, const u8 **methods)
{
	*version = 0;
	*methods = NULL;
	switch (cls) {
	case 0x01:
	case 0x81:
		*version = 1;
		*methods = smp_methods;
		break;
	case 0x03:
		*version = 2;
		*methods = sa_methods;
		break;
	case 0x04:
		*version = 1;
		*methods = pma_methods;
		break;
	case 0x07:
		*version = 2;
		*methods = cm_methods;
		break;
	case 0x21:
		*version = 2;
		break;
	}
}

static bool in_list(const u8 *list, u8 v)
{
	for (; *list; list++)
		if (*list == v)
			return true;
	return false;
}

/*
 * An RMPP ACK, STOP or ABORT: a class with the RMPP header (SA, DevMgt,
 * DevAdm, BIS, vendor range 2), RMPPFlags.Active (byte 26, bit 0),
 * RMPPType (byte 25) 2, 3 or 4.  Its Method is its DATA's, with the RESP
 * bit flipped if the DATA's receiver sent it (IBTA 13.6.2.1).
 */
static bool rmpp_ctl(const u8 *p)
{
	u8 cls = p[1];

	return (cls == 0x03 || cls == 0x06 || cls == 0x10 || cls == 0x12 ||
		(cls >= 0x30 && cls <= 0x4F)) &&
	       (p[26] & 0x01) && p[25] >= 2 && p[25] <= 4;
}

/* Steps 6 to 8 for @method of class @cls (@methods: class_rules()'s). */
static enum kmad_mad_verdict method_verdict(u8 cls, const u8 *methods,
					    u8 method, u16 attr)
{
	u8 m = method & 0x7F;

	if (method & 0x80) {
		bool ok;

		if (m <= 0x0F)	/* common: GetResp, ReportResp only */
			ok = method == 0x81 || method == 0x86;
		else if (cls == 0x03)
			ok = method == 0x92 || method == 0x94 ||
			     method == 0x95;
		else
			ok = true;
		if (!ok)
			return KMAD_MAD_VERDICT_RESP_METHOD;
	}
	if (methods && !in_list(methods, method))
		return KMAD_MAD_VERDICT_CLASS_METHOD;
	if (cls == 0x07 && method != 0x03 && attr != 0x0001)
		return KMAD_MAD_VERDICT_METHOD_ATTR;
	if ((cls == 0x01 || cls == 0x81) &&
	    (method == 0x05 || method == 0x07) && attr != 0x0002)
		return KMAD_MAD_VERDICT_METHOD_ATTR;
	return KMAD_MAD_VERDICT_OK;
}

/*
 * The method an accepted MAD's promises are about: its own, or for an
 * RMPP ACK, STOP or ABORT whose own method fails steps 6 to 8, the
 * flipped one (the receiver's packets carry the DATA's method flipped,
 * the sender's the DATA's).
 */
static u8 checked_method(const u8 *p)
{
	u8 version;
	const u8 *methods;

	class_rules(p[1], &version, &methods);
	if (rmpp_ctl(p) &&
	    method_verdict(p[1], methods, p[3], be16_at(p, 16)) !=
	    KMAD_MAD_VERDICT_OK)
		return p[3] ^ 0x80;
	return p[3];
}

/*
 * The verdict for a 256-byte MAD, from the rules at the top of wire.c
 * and the values of IBTA 13.4.4-13.4.5, 13.6.2.1, 14.2.1 and 15.2.2.
 */
static enum kmad_mad_verdict spec_verdict(const u8 *p)
{
	u8 cls = p[1], version, method = p[3], m = method & 0x7F;
	u16 attr = be16_at(p, 16);
	enum kmad_mad_verdict v;
	const u8 *methods;

	if (p[0] != 1)
		return KMAD_MAD_VERDICT_BASE_VERSION;
	if (cls == 0x00 || cls == 0x02 || (cls >= 0x50 && cls <= 0x80) ||
	    cls >= 0x82)
		return KMAD_MAD_VERDICT_RESERVED_CLASS;
	class_rules(cls, &version, &methods);
	if (version && p[2] != version)
		return KMAD_MAD_VERDICT_CLASS_VERSION;
	if (m == 0x00 || m == 0x04 || (m >= 0x08 && m <= 0x0F))
		return KMAD_MAD_VERDICT_RESERVED_METHOD;
	v = method_verdict(cls, methods, method, attr);
	if (v != KMAD_MAD_VERDICT_OK && rmpp_ctl(p) &&
	    method_verdict(cls, methods, method ^ 0x80, attr) ==
	    KMAD_MAD_VERDICT_OK)
		v = KMAD_MAD_VERDICT_OK;
	if (v != KMAD_MAD_VERDICT_OK)
		return v;
	if (cls == 0x81) {
		u8 hop_ptr = p[6], hop_cnt = p[7];
		bool d = p[4] & 0x80;

		if (hop_cnt > 63)
			return KMAD_MAD_VERDICT_DR_HOP_CNT;
		if (hop_ptr > hop_cnt + 1)
			return KMAD_MAD_VERDICT_DR_HOP_PTR;
		if ((method == 0x01 || method == 0x02) && d)
			return KMAD_MAD_VERDICT_DR_DIRECTION;
		if (method == 0x81 && !d)
			return KMAD_MAD_VERDICT_DR_DIRECTION;
	}
	return KMAD_MAD_VERDICT_OK;
}

/* What an accepted MAD is promised to be, stated without the step order. */
static void accepted(const u8 *p)
{
	/* An RMPP ACK, STOP or ABORT: of the method that passed. */
	u8 cls = p[1], method = checked_method(p), version;
	const u8 *methods;

	FUZZ_ASSERT(p[0] == KMAD_MGMT_BASE_VERSION);
	FUZZ_ASSERT(cls == KMAD_MGMT_CLASS_SUBN_LID_ROUTED ||
		    cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE ||
		    (cls >= KMAD_MGMT_CLASS_SUBN_ADM &&
		     cls <= KMAD_MGMT_CLASS_VENDOR_RANGE2_END));
	class_rules(cls, &version, &methods);
	FUZZ_ASSERT(!version || p[2] == version);
	FUZZ_ASSERT(!methods || in_list(methods, method));
	FUZZ_ASSERT((method & KMAD_METHOD_MASK) != 0);
	if ((method & KMAD_METHOD_MASK) <= 0x0F)
		FUZZ_ASSERT((method & KMAD_METHOD_MASK) <= 0x07 &&
			    (method & KMAD_METHOD_MASK) != 0x04);
	/* the RESP bit only on responses that exist */
	if ((method & KMAD_METHOD_RESP) &&
	    (method & KMAD_METHOD_MASK) <= 0x0F)
		FUZZ_ASSERT(method == KMAD_METHOD_GET_RESP ||
			    method == KMAD_METHOD_REPORT_RESP);
	if (cls == KMAD_MGMT_CLASS_CM && method != KMAD_METHOD_SEND)
		FUZZ_ASSERT(be16_at(p, 16) == KMAD_ATTR_CLASS_PORT_INFO);
	if (kmad_is_smp_class(cls) && (method == KMAD_METHOD_TRAP ||
				       method == KMAD_METHOD_TRAP_REPRESS))
		FUZZ_ASSERT(be16_at(p, 16) == KMAD_ATTR_NOTICE);
	if (cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		bool d = be16_at(p, 4) & KMAD_SMP_DIRECTION;

		/* hop_cnt indexes the 64-entry paths, hop_ptr <= cnt + 1 */
		FUZZ_ASSERT(p[7] < KMAD_SMP_DR_PATH_SIZE);
		FUZZ_ASSERT(p[6] <= p[7] + 1);
		if (method == KMAD_METHOD_GET || method == KMAD_METHOD_SET)
			FUZZ_ASSERT(!d);
		if (method == KMAD_METHOD_GET_RESP)
			FUZZ_ASSERT(d);
	}
}

/* The response to request @m in class @cls; 0 if it has none. */
static u8 response_of(u8 cls, u8 m)
{
	switch (m) {
	case KMAD_METHOD_GET:
	case KMAD_METHOD_SET:
		return KMAD_METHOD_GET_RESP;
	case KMAD_METHOD_TRAP:
		return KMAD_METHOD_TRAP_REPRESS;
	case KMAD_METHOD_REPORT:
		return KMAD_METHOD_REPORT_RESP;
	}
	if (m & KMAD_METHOD_RESP || m <= 0x0F)
		return 0;	/* a response, Send, or reserved */
	if (cls == KMAD_MGMT_CLASS_SUBN_ADM)
		switch (m) {
		case KMAD_METHOD_GET_TABLE:
		case KMAD_METHOD_GET_TRACE_TABLE:
			return KMAD_METHOD_GET_TABLE_RESP;
		case KMAD_METHOD_GET_MULTI:
			return KMAD_METHOD_GET_MULTI_RESP;
		case KMAD_METHOD_DELETE:
			return KMAD_METHOD_DELETE_RESP;
		default:
			return 0;
		}
	return m | KMAD_METHOD_RESP;
}

static int validate(const u8 *p, size_t len, enum kmad_mad_verdict *why)
{
	int ret = kmad_mad_validate(p, len, why);

	FUZZ_ASSERT(ret == (*why == KMAD_MAD_VERDICT_OK ? 0 : -EBADMSG));
	FUZZ_ASSERT(kmad_mad_validate(p, len, NULL) == ret);
	return ret;
}

/* Requests and responses of one accepted MAD agree (see the top). */
static void check_pairs(const u8 *p)
{
	u8 q[KMAD_MAD_SIZE];
	enum kmad_mad_verdict why;
	u8 cls = p[1], method = p[3], r;
	int m;

	memcpy(q, p, sizeof(q));
	if (!kmad_method_is_response(method)) {
		r = response_of(cls, method);
		if (!r)
			return;
		q[3] = r;
		if (cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
			q[4] |= KMAD_SMP_DIRECTION >> 8;
		validate(q, sizeof(q), &why);
		if (why != KMAD_MAD_VERDICT_OK)
			fprintf(stderr, "wire_fuzz: response 0x%02x: %s\n",
				r, kmad_mad_verdict_name(why));
		FUZZ_ASSERT(why == KMAD_MAD_VERDICT_OK);
		return;
	}
	/* some request of this class has this response */
	for (m = 1; m < KMAD_METHOD_RESP; m++) {
		if (response_of(cls, (u8)m) != method)
			continue;
		q[3] = (u8)m;
		if (cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
		    method == KMAD_METHOD_GET_RESP)
			q[4] &= ~(KMAD_SMP_DIRECTION >> 8);
		else
			q[4] = p[4];
		if (kmad_mad_validate(q, sizeof(q), NULL) == 0)
			return;
	}
	fprintf(stderr, "wire_fuzz: no request for response 0x%02x\n", method);
	FUZZ_ASSERT(0);
}

/* The inline helpers of wire.h against the bytes they stand for. */
static void check_helpers(const u8 *p)
{
	union {
		struct kmad_mad mad;
		struct kmad_smp smp;
		struct kmad_rmpp_mad rmpp;
		struct kmad_sa_mad sa;
	} u;
	const struct kmad_class_port_info *cpi;
	u64 tid = be64_at(p, 8);
	bool resp;

	memcpy(&u, p, KMAD_MAD_SIZE);
	FUZZ_ASSERT(((u64)kmad_mad_tid_hi(&u.mad.mad_hdr) << 32 |
		     kmad_mad_tid_lo(&u.mad.mad_hdr)) == tid);
	resp = (p[3] & 0x80) || p[3] == KMAD_METHOD_TRAP_REPRESS;
	FUZZ_ASSERT(kmad_method_is_response(p[3]) == resp);
	FUZZ_ASSERT(kmad_mad_is_response(&u.mad.mad_hdr) ==
		    (resp || (p[1] == KMAD_MGMT_CLASS_BM && (p[23] & 1))));
	FUZZ_ASSERT(kmad_smp_is_returning(&u.smp) == !!(p[4] & 0x80));
	FUZZ_ASSERT(kmad_rmpp_flags(&u.rmpp.rmpp_hdr) == (p[26] & 0x07));
	FUZZ_ASSERT(kmad_rmpp_resp_time(&u.rmpp.rmpp_hdr) == p[26] >> 3);
	FUZZ_ASSERT(kmad_sa_sm_key(&u.sa) == be64_at(p, 36));
	kmad_sa_set_sm_key(&u.sa, ~tid);
	FUZZ_ASSERT(kmad_sa_sm_key(&u.sa) == ~tid);
	FUZZ_ASSERT(be64_at((const u8 *)&u, 36) == ~tid);
	FUZZ_ASSERT(memcmp(&u, p, 36) == 0);
	FUZZ_ASSERT(memcmp((u8 *)&u + 44, p + 44, KMAD_MAD_SIZE - 44) == 0);

	/* ClassPortInfo as the payload of a MAD: its word 1 is bytes 28-31 */
	cpi = (const void *)u.mad.data;
	FUZZ_ASSERT(kmad_cpi_resp_time(cpi) == (p[31] & 0x1F));
	FUZZ_ASSERT(kmad_cpi_cap_mask2(cpi) ==
		    ((u32)p[28] << 19 | (u32)p[29] << 11 | (u32)p[30] << 3 |
		     p[31] >> 5));
}

static void check_verdict_name(enum kmad_mad_verdict v)
{
	const char *name = kmad_mad_verdict_name(v);

	FUZZ_ASSERT(name);
	if ((unsigned int)v >= KMAD_MAD_VERDICT_COUNT)
		FUZZ_ASSERT(strcmp(name, "unknown") == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int v, w;

	(void)argc;
	(void)argv;
	for (v = 0; v < KMAD_MAD_VERDICT_COUNT; v++) {
		const char *name = kmad_mad_verdict_name(v), *c;

		FUZZ_ASSERT(*name && strcmp(name, "unknown") != 0);
		for (c = name; *c; c++)
			FUZZ_ASSERT((*c >= 'a' && *c <= 'z') || *c == '_');
		for (w = 0; w < v; w++)
			FUZZ_ASSERT(strcmp(name, kmad_mad_verdict_name(w)));
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u8 mad[KMAD_MAD_SIZE], copy[KMAD_MAD_SIZE];
	enum kmad_mad_verdict why;
	int v;

	/* As received: the length alone decides unless it is 256. */
	FUZZ_ASSERT(kmad_mad_validate(NULL, size, &why) == -EBADMSG);
	FUZZ_ASSERT(why == KMAD_MAD_VERDICT_SHORT);
	if (size < KMAD_MAD_SIZE) {
		/* "No byte of @buf is read unless @len covers a whole MAD." */
		ASAN_POISON_MEMORY_REGION(data, size);
		validate(data, size, &why);
		ASAN_UNPOISON_MEMORY_REGION(data, size);
		FUZZ_ASSERT(why == KMAD_MAD_VERDICT_SHORT);
	} else if (size > KMAD_MAD_SIZE) {
		validate(data, size, &why);
		FUZZ_ASSERT(why == KMAD_MAD_VERDICT_LONG);
	}

	/* The content rules, on the input cut or padded to one MAD. */
	memset(mad, 0, sizeof(mad));
	memcpy(mad, data, size < sizeof(mad) ? size : sizeof(mad));
	memcpy(copy, mad, sizeof(mad));
	validate(mad, sizeof(mad), &why);
	FUZZ_ASSERT(memcmp(mad, copy, sizeof(mad)) == 0);
	if (why != spec_verdict(mad)) {
		fprintf(stderr, "wire_fuzz: verdict %s, model %s\n",
			kmad_mad_verdict_name(why),
			kmad_mad_verdict_name(spec_verdict(mad)));
		FUZZ_ASSERT(0);
	}
	check_verdict_name(why);
	if (why == KMAD_MAD_VERDICT_OK) {
		accepted(mad);
		/* An RMPP ACK, STOP or ABORT answers no request. */
		if (!rmpp_ctl(mad))
			check_pairs(mad);
	}
	check_helpers(mad);

	/* Any int as a verdict: bytes 252-255 of the MAD. */
	memcpy(&v, mad + KMAD_MAD_SIZE - sizeof(v), sizeof(v));
	check_verdict_name((enum kmad_mad_verdict)v);
	return 0;
}
