// SPDX-License-Identifier: GPL-2.0
/*
 * kmad - receive-side validation of InfiniBand MADs.
 *
 * kmad_mad_validate() looks only at what IBTA fixes for every MAD of a
 * class: length, versions, the Method/RESP pairing, the methods a class
 * defines, and the directed-route hop fields.  Anything that depends on
 * local state (which agents are registered, M_Key checks, forwarding of
 * directed-route SMPs, RMPP sequencing) is left to the layers above.
 *
 * The checks run in this order and the first failure decides the verdict:
 *
 *  1. Length: exactly KMAD_MAD_SIZE bytes (IBTA 13.4.2: MADs are 256
 *     bytes); nothing is read from a buffer shorter than that.
 *  2. BaseVersion must be KMAD_MGMT_BASE_VERSION.
 *  3. MgmtClass must not be reserved (0x00, 0x02, 0x50-0x80, 0x82-0xFF).
 *  4. ClassVersion must match for classes with a single defined version:
 *     SMP (both routings) 1, SA 2, PerfMgt 1, CM 2, CongMgt 2.  Other
 *     classes (BM, DevMgt, SNMP, vendor, application) are not checked.
 *  5. Method: 0x00 and 0x80 are reserved, as are the unassigned common
 *     methods 0x04 and 0x08-0x0F (with or without the RESP bit).
 *  6. RESP bit: among common methods only GetResp (0x81) and ReportResp
 *     (0x86) exist; Set is answered by GetResp, Trap by TrapRepress, and
 *     Send and TrapRepress are never answered.  In the SA class the only
 *     class-specific responses are GetTableResp (also the answer to
 *     GetTraceTable), GetMultiResp and DeleteResp.  Class-specific
 *     methods (0x10-0x7F) of other classes are not checked.
 *     An RMPP ACK, STOP or ABORT (a class with the RMPP header, Active,
 *     RMPPType 2-4) from the receiver carries the method of the DATA it
 *     is about with the RESP bit flipped (ib_mad's format_ack()): the
 *     ACK of a Set transfer is 0x82; an ABORT or STOP from the sender,
 *     built from an ACK flipped back (nack_recv()), the DATA's method.
 *     Steps 6 to 8 take such a packet if either its method or the
 *     flipped one passes them.
 *  7. Per-class method sets: SMP Get/Set/GetResp/Trap/TrapRepress; SA
 *     Get/Set/GetResp/Report/ReportResp plus the SA methods; PerfMgt
 *     Get/Set/GetResp; CM Get/Set/GetResp/Send.
 *  8. Method/attribute: CM uses Send for everything but ClassPortInfo
 *     (as Linux's MAD layer also enforces); SMP Trap and TrapRepress
 *     carry the Notice attribute.
 *  9. Directed-route SMPs: hop count 0-63 (C14-6); hop pointer at most
 *     hop count + 1, the value at which the SMP reaches its destination
 *     (C14-9); Get and Set travel outbound (D bit clear) and GetResp
 *     returns (D bit set).  Trap and TrapRepress are not constrained.
 *
 * A request that fails step 4, 7 or 8 would, per IBTA 13.4.7, normally
 * be answered with status BAD_VERSION, UNSUPPORTED_METHOD or
 * UNSUPPORTED_METHOD_ATTR rather than silently dropped; the verdict tells
 * the caller which case it has, and the caller decides.
 */

#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/unaligned.h>

#include <kmad/wire.h>

/* Methods 0x01-0x0F are common to all classes, the rest class-specific. */
#define KMAD_METHOD_COMMON_LAST		0x0F

#define KMAD_MAD_BYTE(p, type, field)	((p)[offsetof(type, field)])
#define KMAD_MAD_BE16(p, type, field)	\
	get_unaligned_be16((p) + offsetof(type, field))

static bool kmad_class_is_reserved(u8 cls)
{
	return cls == 0x00 || cls == 0x02 ||
	       (cls > KMAD_MGMT_CLASS_VENDOR_RANGE2_END &&
		cls != KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE);
}

/* Step 5: @m is the method without the RESP bit. */
static bool kmad_method_is_reserved(u8 m)
{
	switch (m) {
	case KMAD_METHOD_GET:
	case KMAD_METHOD_SET:
	case KMAD_METHOD_SEND:
	case KMAD_METHOD_TRAP:
	case KMAD_METHOD_REPORT:
	case KMAD_METHOD_TRAP_REPRESS:
		return false;
	default:
		/* 0x00, 0x04 and 0x08-0x0F; 0x10-0x7F belong to the class */
		return m <= KMAD_METHOD_COMMON_LAST;
	}
}

/* Step 6: @method has the RESP bit set. */
static bool kmad_resp_method_ok(u8 cls, u8 method)
{
	if (method == KMAD_METHOD_GET_RESP || method == KMAD_METHOD_REPORT_RESP)
		return true;
	if ((method & KMAD_METHOD_MASK) <= KMAD_METHOD_COMMON_LAST)
		return false;
	if (cls != KMAD_MGMT_CLASS_SUBN_ADM)
		return true;
	return method == KMAD_METHOD_GET_TABLE_RESP ||
	       method == KMAD_METHOD_GET_MULTI_RESP ||
	       method == KMAD_METHOD_DELETE_RESP;
}

/* Step 7: true if @cls defines @method, or kmad has no list for @cls. */
static bool kmad_class_has_method(u8 cls, u8 method)
{
	switch (cls) {
	case KMAD_MGMT_CLASS_SUBN_LID_ROUTED:
	case KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		return method == KMAD_METHOD_GET ||
		       method == KMAD_METHOD_SET ||
		       method == KMAD_METHOD_GET_RESP ||
		       method == KMAD_METHOD_TRAP ||
		       method == KMAD_METHOD_TRAP_REPRESS;
	case KMAD_MGMT_CLASS_SUBN_ADM:
		switch (method) {
		case KMAD_METHOD_GET:
		case KMAD_METHOD_SET:
		case KMAD_METHOD_GET_RESP:
		case KMAD_METHOD_REPORT:
		case KMAD_METHOD_REPORT_RESP:
		case KMAD_METHOD_GET_TABLE:
		case KMAD_METHOD_GET_TABLE_RESP:
		case KMAD_METHOD_GET_TRACE_TABLE:
		case KMAD_METHOD_GET_MULTI:
		case KMAD_METHOD_GET_MULTI_RESP:
		case KMAD_METHOD_DELETE:
		case KMAD_METHOD_DELETE_RESP:
			return true;
		default:
			return false;
		}
	case KMAD_MGMT_CLASS_PERF_MGMT:
		return method == KMAD_METHOD_GET ||
		       method == KMAD_METHOD_SET ||
		       method == KMAD_METHOD_GET_RESP;
	case KMAD_MGMT_CLASS_CM:
		return method == KMAD_METHOD_GET ||
		       method == KMAD_METHOD_SET ||
		       method == KMAD_METHOD_GET_RESP ||
		       method == KMAD_METHOD_SEND;
	default:
		return true;
	}
}

/* Step 8. */
static bool kmad_method_attr_ok(u8 cls, u8 method, u16 attr_id)
{
	if (cls == KMAD_MGMT_CLASS_CM)
		return method == KMAD_METHOD_SEND ||
		       attr_id == KMAD_ATTR_CLASS_PORT_INFO;
	if (kmad_is_smp_class(cls) &&
	    (method == KMAD_METHOD_TRAP || method == KMAD_METHOD_TRAP_REPRESS))
		return attr_id == KMAD_ATTR_NOTICE;
	return true;
}

/* Step 9; @p holds a full MAD of class SUBN_DIRECTED_ROUTE. */
static enum kmad_mad_verdict kmad_dr_smp_check(const u8 *p)
{
	u8 hop_cnt = KMAD_MAD_BYTE(p, struct kmad_smp, hop_cnt);
	u8 hop_ptr = KMAD_MAD_BYTE(p, struct kmad_smp, hop_ptr);
	u8 method = KMAD_MAD_BYTE(p, struct kmad_smp, method);
	bool returning = KMAD_MAD_BE16(p, struct kmad_smp, status) &
			 KMAD_SMP_DIRECTION;

	if (hop_cnt > KMAD_SMP_DR_MAX_HOP_CNT)
		return KMAD_MAD_VERDICT_DR_HOP_CNT;
	if (hop_ptr > hop_cnt + 1)
		return KMAD_MAD_VERDICT_DR_HOP_PTR;
	if ((method == KMAD_METHOD_GET || method == KMAD_METHOD_SET) &&
	    returning)
		return KMAD_MAD_VERDICT_DR_DIRECTION;
	if (method == KMAD_METHOD_GET_RESP && !returning)
		return KMAD_MAD_VERDICT_DR_DIRECTION;
	return KMAD_MAD_VERDICT_OK;
}

/*
 * Is @p (a full MAD of class @cls) an RMPP ACK, STOP or ABORT?  Its
 * Method is its DATA's, with the RESP bit flipped if the DATA's receiver
 * sent it.
 */
static bool kmad_rmpp_ctl(const u8 *p, u8 cls)
{
	u8 type = KMAD_MAD_BYTE(p, struct kmad_rmpp_mad, rmpp_hdr.rmpp_type);
	u8 flags = KMAD_MAD_BYTE(p, struct kmad_rmpp_mad,
				 rmpp_hdr.rmpp_rtime_flags);

	return kmad_mgmt_class_has_rmpp(cls) &&
	       (flags & KMAD_RMPP_FLAG_ACTIVE) &&
	       (type == KMAD_RMPP_TYPE_ACK || type == KMAD_RMPP_TYPE_STOP ||
		type == KMAD_RMPP_TYPE_ABORT);
}

/* Steps 6 to 8 for @method. */
static enum kmad_mad_verdict kmad_method_check(u8 cls, u8 method, u16 attr_id)
{
	if ((method & KMAD_METHOD_RESP) && !kmad_resp_method_ok(cls, method))
		return KMAD_MAD_VERDICT_RESP_METHOD;
	if (!kmad_class_has_method(cls, method))
		return KMAD_MAD_VERDICT_CLASS_METHOD;
	if (!kmad_method_attr_ok(cls, method, attr_id))
		return KMAD_MAD_VERDICT_METHOD_ATTR;
	return KMAD_MAD_VERDICT_OK;
}

static enum kmad_mad_verdict kmad_mad_check(const u8 *p, size_t len)
{
	enum kmad_mad_verdict v;
	u8 base_version, cls, class_version, method, fixed;
	u16 attr_id;

	if (!p || len < KMAD_MAD_SIZE)
		return KMAD_MAD_VERDICT_SHORT;
	if (len > KMAD_MAD_SIZE)
		return KMAD_MAD_VERDICT_LONG;

	base_version = KMAD_MAD_BYTE(p, struct kmad_mad_hdr, base_version);
	cls = KMAD_MAD_BYTE(p, struct kmad_mad_hdr, mgmt_class);
	class_version = KMAD_MAD_BYTE(p, struct kmad_mad_hdr, class_version);
	method = KMAD_MAD_BYTE(p, struct kmad_mad_hdr, method);
	attr_id = KMAD_MAD_BE16(p, struct kmad_mad_hdr, attr_id);

	if (base_version != KMAD_MGMT_BASE_VERSION)
		return KMAD_MAD_VERDICT_BASE_VERSION;
	if (kmad_class_is_reserved(cls))
		return KMAD_MAD_VERDICT_RESERVED_CLASS;
	fixed = kmad_mgmt_class_version(cls);
	if (fixed && class_version != fixed)
		return KMAD_MAD_VERDICT_CLASS_VERSION;
	if (kmad_method_is_reserved(method & KMAD_METHOD_MASK))
		return KMAD_MAD_VERDICT_RESERVED_METHOD;
	v = kmad_method_check(cls, method, attr_id);
	/* An RMPP ACK, STOP or ABORT: either direction's method. */
	if (v != KMAD_MAD_VERDICT_OK && kmad_rmpp_ctl(p, cls) &&
	    kmad_method_check(cls, method ^ KMAD_METHOD_RESP, attr_id) ==
	    KMAD_MAD_VERDICT_OK)
		v = KMAD_MAD_VERDICT_OK;
	if (v != KMAD_MAD_VERDICT_OK)
		return v;
	if (cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return kmad_dr_smp_check(p);
	return KMAD_MAD_VERDICT_OK;
}

/**
 * kmad_mad_validate() - check a received MAD against the IBTA wire rules
 * @buf: the MAD, starting at the common MAD header (after any GRH); need
 *	not be aligned; may be NULL, which counts as too short
 * @len: number of valid bytes at @buf
 * @why: if not NULL, receives the verdict, %KMAD_MAD_VERDICT_OK on success
 *
 * No byte of @buf is read unless @len covers a whole MAD.  The rules are
 * listed in the comment at the top of this file.  Context: any; does not
 * sleep.
 *
 * Return: 0 if the MAD may be dispatched, -EBADMSG if it must not be.
 */
int kmad_mad_validate(const void *buf, size_t len,
		      enum kmad_mad_verdict *why)
{
	enum kmad_mad_verdict v = kmad_mad_check(buf, len);

	if (why)
		*why = v;
	return v == KMAD_MAD_VERDICT_OK ? 0 : -EBADMSG;
}
EXPORT_SYMBOL_GPL(kmad_mad_validate);

static const char * const kmad_mad_verdict_names[KMAD_MAD_VERDICT_COUNT] = {
	[KMAD_MAD_VERDICT_OK]			= "ok",
	[KMAD_MAD_VERDICT_SHORT]		= "short",
	[KMAD_MAD_VERDICT_LONG]			= "long",
	[KMAD_MAD_VERDICT_BASE_VERSION]		= "base_version",
	[KMAD_MAD_VERDICT_RESERVED_CLASS]	= "reserved_class",
	[KMAD_MAD_VERDICT_CLASS_VERSION]	= "class_version",
	[KMAD_MAD_VERDICT_RESERVED_METHOD]	= "reserved_method",
	[KMAD_MAD_VERDICT_RESP_METHOD]		= "resp_method",
	[KMAD_MAD_VERDICT_CLASS_METHOD]		= "class_method",
	[KMAD_MAD_VERDICT_METHOD_ATTR]		= "method_attr",
	[KMAD_MAD_VERDICT_DR_HOP_CNT]		= "dr_hop_cnt",
	[KMAD_MAD_VERDICT_DR_HOP_PTR]		= "dr_hop_ptr",
	[KMAD_MAD_VERDICT_DR_DIRECTION]		= "dr_direction",
};

/**
 * kmad_mad_verdict_name() - short name of a validation verdict
 * @v: verdict from kmad_mad_validate()
 *
 * The names are stable identifiers (lower case, no spaces) suitable for
 * statistics files and trace output.
 *
 * Return: a static string; "unknown" for a value outside the enum.
 */
const char *kmad_mad_verdict_name(enum kmad_mad_verdict v)
{
	if ((unsigned int)v >= ARRAY_SIZE(kmad_mad_verdict_names) ||
	    !kmad_mad_verdict_names[v])
		return "unknown";
	return kmad_mad_verdict_names[v];
}
EXPORT_SYMBOL_GPL(kmad_mad_verdict_name);
