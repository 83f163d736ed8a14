/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad - InfiniBand management datagram (MAD) wire format.
 *
 * Everything in this header describes bytes as they appear on the wire,
 * as laid down by the InfiniBand Architecture Specification Volume 1
 * (IBTA), chapters 13.4 (MADs), 13.6 (RMPP), 14.2 (SMPs), 15.2 (SA MADs)
 * and 16.1 (performance management).  Multi-byte fields are big-endian.
 *
 * The header is shared with userspace (tests/abi/abi_check.c compares it
 * against rdma-core's libibumad headers), so outside of the __KERNEL__
 * section it may only rely on <linux/types.h>.
 *
 * Every structure is laid out so that natural C alignment yields the IBTA
 * byte offsets; no structure needs packing.  The one field IBTA places at
 * an offset that is not a multiple of its width (the SA SM_Key) is split
 * into two 32-bit words, see &struct kmad_sa_mad.  Should a future
 * structure really need packing, it must get it from a KMAD_WIRE_PACKED
 * macro defined here (__packed does not exist in userspace); no such
 * macro exists yet because nothing needs it.
 */
#ifndef _KMAD_WIRE_H
#define _KMAD_WIRE_H

#include <linux/types.h>

/**
 * enum kmad_wire_size - sizes of MADs and of their headers, in bytes
 * @KMAD_MAD_SIZE: every InfiniBand MAD is exactly this long (IBTA 13.4.2)
 * @KMAD_MAD_HDR_SIZE: common MAD header, &struct kmad_mad_hdr
 * @KMAD_MAD_DATA_SIZE: payload following the common MAD header
 * @KMAD_RMPP_HDR_SIZE: RMPP header alone, &struct kmad_rmpp_hdr (IBTA 13.6.2)
 * @KMAD_RMPP_MAD_HDR_SIZE: common MAD header plus RMPP header
 * @KMAD_RMPP_DATA_SIZE: payload of an RMPP-capable MAD
 * @KMAD_VENDOR_OUI_SIZE: length of the OUI field of a vendor range 2 MAD
 * @KMAD_VENDOR_MAD_HDR_SIZE: common + RMPP headers, reserved byte and OUI
 * @KMAD_VENDOR_DATA_SIZE: payload of a vendor range 2 MAD
 * @KMAD_SA_HDR_SIZE: SA-specific header alone (SM_Key, AttributeOffset,
 *	reserved, ComponentMask; IBTA 15.2.1.1)
 * @KMAD_SA_MAD_HDR_SIZE: common + RMPP + SA headers
 * @KMAD_SA_DATA_SIZE: payload of an SA MAD
 * @KMAD_DM_MAD_HDR_SIZE: common header plus the 40 reserved bytes of a
 *	device management MAD
 * @KMAD_DM_DATA_SIZE: payload of a device management MAD
 * @KMAD_SMP_DATA_SIZE: SMP payload (IBTA 14.2.1)
 * @KMAD_SMP_DR_PATH_SIZE: size of each directed-route path array, and the
 *	number of hops that fit in it (IBTA 14.2.1.2)
 * @KMAD_SMP_DR_MAX_HOP_CNT: largest valid directed-route hop count (C14-6)
 * @KMAD_CLASS_PORT_INFO_SIZE: &struct kmad_class_port_info (IBTA 13.4.8.1)
 */
enum kmad_wire_size {
	KMAD_MAD_SIZE			= 256,
	KMAD_MAD_HDR_SIZE		= 24,
	KMAD_MAD_DATA_SIZE		= KMAD_MAD_SIZE - KMAD_MAD_HDR_SIZE,
	KMAD_RMPP_HDR_SIZE		= 12,
	KMAD_RMPP_MAD_HDR_SIZE		= KMAD_MAD_HDR_SIZE + KMAD_RMPP_HDR_SIZE,
	KMAD_RMPP_DATA_SIZE		= KMAD_MAD_SIZE - KMAD_RMPP_MAD_HDR_SIZE,
	KMAD_VENDOR_OUI_SIZE		= 3,
	KMAD_VENDOR_MAD_HDR_SIZE	= KMAD_RMPP_MAD_HDR_SIZE + 4,
	KMAD_VENDOR_DATA_SIZE		= KMAD_MAD_SIZE - KMAD_VENDOR_MAD_HDR_SIZE,
	KMAD_SA_HDR_SIZE		= 20,
	KMAD_SA_MAD_HDR_SIZE		= KMAD_RMPP_MAD_HDR_SIZE + KMAD_SA_HDR_SIZE,
	KMAD_SA_DATA_SIZE		= KMAD_MAD_SIZE - KMAD_SA_MAD_HDR_SIZE,
	KMAD_DM_MAD_HDR_SIZE		= 64,
	KMAD_DM_DATA_SIZE		= KMAD_MAD_SIZE - KMAD_DM_MAD_HDR_SIZE,
	KMAD_SMP_DATA_SIZE		= 64,
	KMAD_SMP_DR_PATH_SIZE		= 64,
	KMAD_SMP_DR_MAX_HOP_CNT		= KMAD_SMP_DR_PATH_SIZE - 1,
	KMAD_CLASS_PORT_INFO_SIZE	= 72,
};

/**
 * enum kmad_wire_version - protocol version numbers carried in MADs
 * @KMAD_MGMT_BASE_VERSION: BaseVersion of every InfiniBand MAD (IBTA 13.4.2)
 * @KMAD_SMP_CLASS_VERSION: ClassVersion of LID-routed and directed-route
 *	SMPs (IBTA 14.2.1)
 * @KMAD_SA_CLASS_VERSION: ClassVersion of SA MADs since IBTA 1.1 (15.2.1)
 * @KMAD_PMA_CLASS_VERSION: ClassVersion of performance management MADs
 * @KMAD_CM_CLASS_VERSION: ClassVersion of communication management MADs
 *	since IBTA 1.2 (chapter 12)
 * @KMAD_CC_CLASS_VERSION: ClassVersion of congestion control MADs
 *	(IBTA Annex A10)
 * @KMAD_RMPP_VERSION: RMPPVersion of the RMPP header (IBTA 13.6.2)
 */
enum kmad_wire_version {
	KMAD_MGMT_BASE_VERSION		= 1,
	KMAD_SMP_CLASS_VERSION		= 1,
	KMAD_SA_CLASS_VERSION		= 2,
	KMAD_PMA_CLASS_VERSION		= 1,
	KMAD_CM_CLASS_VERSION		= 2,
	KMAD_CC_CLASS_VERSION		= 2,
	KMAD_RMPP_VERSION		= 1,
};

/*
 * Well-known Q_Key of the general services interface, QP1 (IBTA 13.5.1).
 * Above INT_MAX, hence a macro rather than an enumerator.
 */
#define KMAD_QP1_QKEY			0x80010000U

/**
 * enum kmad_mgmt_class - MgmtClass values (IBTA 13.4.4)
 * @KMAD_MGMT_CLASS_SUBN_LID_ROUTED: LID-routed subnet management (SMP)
 * @KMAD_MGMT_CLASS_SUBN_ADM: subnet administration (SA)
 * @KMAD_MGMT_CLASS_PERF_MGMT: performance management (PMA)
 * @KMAD_MGMT_CLASS_BM: baseboard management
 * @KMAD_MGMT_CLASS_DEVICE_MGMT: device management
 * @KMAD_MGMT_CLASS_CM: communication management
 * @KMAD_MGMT_CLASS_SNMP: SNMP tunneling
 * @KMAD_MGMT_CLASS_VENDOR_RANGE1_START: first vendor class without RMPP
 * @KMAD_MGMT_CLASS_VENDOR_RANGE1_END: last vendor class without RMPP
 * @KMAD_MGMT_CLASS_APPLICATION_START: first application-specific class
 * @KMAD_MGMT_CLASS_DEVICE_ADM: device administration (application class)
 * @KMAD_MGMT_CLASS_BOOT_MGMT: boot management (application class)
 * @KMAD_MGMT_CLASS_BIS: boot integrity services (application class)
 * @KMAD_MGMT_CLASS_CONG_MGMT: congestion control (application class)
 * @KMAD_MGMT_CLASS_APPLICATION_END: last application-specific class
 * @KMAD_MGMT_CLASS_VENDOR_RANGE2_START: first vendor class with the
 *	RMPP header and OUI, &struct kmad_vendor_mad
 * @KMAD_MGMT_CLASS_VENDOR_RANGE2_END: last vendor range 2 class
 * @KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE: directed-route subnet management
 *
 * Values 0x00, 0x02, 0x50-0x80 and 0x82-0xFF are reserved.
 */
enum kmad_mgmt_class {
	KMAD_MGMT_CLASS_SUBN_LID_ROUTED		= 0x01,
	KMAD_MGMT_CLASS_SUBN_ADM		= 0x03,
	KMAD_MGMT_CLASS_PERF_MGMT		= 0x04,
	KMAD_MGMT_CLASS_BM			= 0x05,
	KMAD_MGMT_CLASS_DEVICE_MGMT		= 0x06,
	KMAD_MGMT_CLASS_CM			= 0x07,
	KMAD_MGMT_CLASS_SNMP			= 0x08,
	KMAD_MGMT_CLASS_VENDOR_RANGE1_START	= 0x09,
	KMAD_MGMT_CLASS_VENDOR_RANGE1_END	= 0x0F,
	KMAD_MGMT_CLASS_APPLICATION_START	= 0x10,
	KMAD_MGMT_CLASS_DEVICE_ADM		= 0x10,
	KMAD_MGMT_CLASS_BOOT_MGMT		= 0x11,
	KMAD_MGMT_CLASS_BIS			= 0x12,
	KMAD_MGMT_CLASS_CONG_MGMT		= 0x21,
	KMAD_MGMT_CLASS_APPLICATION_END		= 0x2F,
	KMAD_MGMT_CLASS_VENDOR_RANGE2_START	= 0x30,
	KMAD_MGMT_CLASS_VENDOR_RANGE2_END	= 0x4F,
	KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE	= 0x81,
};

/**
 * enum kmad_method - Method values (IBTA 13.4.5, 15.2.2)
 * @KMAD_METHOD_GET: request an attribute
 * @KMAD_METHOD_SET: write an attribute; answered by GetResp
 * @KMAD_METHOD_SEND: datagram, no response (in baseboard management a
 *	Send with bit 0 of the AttributeModifier set answers one without)
 * @KMAD_METHOD_TRAP: unsolicited notice; answered by TrapRepress
 * @KMAD_METHOD_REPORT: forwarded notice (SA); answered by ReportResp
 * @KMAD_METHOD_TRAP_REPRESS: answer to a Trap; a response although the
 *	RESP bit is clear
 * @KMAD_METHOD_GET_TABLE: SA table query
 * @KMAD_METHOD_GET_TRACE_TABLE: SA trace query; answered by GetTableResp
 * @KMAD_METHOD_GET_MULTI: SA multi-packet request
 * @KMAD_METHOD_DELETE: SA record deletion
 * @KMAD_METHOD_RESP: bit set in the Method of every response except
 *	TrapRepress
 * @KMAD_METHOD_GET_RESP: answer to Get and Set
 * @KMAD_METHOD_REPORT_RESP: answer to Report
 * @KMAD_METHOD_GET_TABLE_RESP: answer to GetTable and GetTraceTable
 * @KMAD_METHOD_GET_MULTI_RESP: answer to GetMulti
 * @KMAD_METHOD_DELETE_RESP: answer to Delete
 * @KMAD_METHOD_MASK: Method bits without the RESP bit
 *
 * 0x01-0x0F are common methods; of these 0x04 and 0x08-0x0F are reserved.
 * The SA-specific methods 0x12-0x15 lie in the class-specific range.
 */
enum kmad_method {
	KMAD_METHOD_GET			= 0x01,
	KMAD_METHOD_SET			= 0x02,
	KMAD_METHOD_SEND		= 0x03,
	KMAD_METHOD_TRAP		= 0x05,
	KMAD_METHOD_REPORT		= 0x06,
	KMAD_METHOD_TRAP_REPRESS	= 0x07,
	KMAD_METHOD_GET_TABLE		= 0x12,
	KMAD_METHOD_GET_TRACE_TABLE	= 0x13,
	KMAD_METHOD_GET_MULTI		= 0x14,
	KMAD_METHOD_DELETE		= 0x15,
	KMAD_METHOD_RESP		= 0x80,
	KMAD_METHOD_GET_RESP		= 0x81,
	KMAD_METHOD_REPORT_RESP		= 0x86,
	KMAD_METHOD_GET_TABLE_RESP	= 0x92,
	KMAD_METHOD_GET_MULTI_RESP	= 0x94,
	KMAD_METHOD_DELETE_RESP		= 0x95,
	KMAD_METHOD_MASK		= 0x7F,
};

/**
 * enum kmad_mad_status - Status field values and masks (IBTA 13.4.7)
 * @KMAD_MAD_STATUS_SUCCESS: no error
 * @KMAD_MAD_STATUS_BUSY: temporarily busy, request discarded
 * @KMAD_MAD_STATUS_REDIRECT: redirection required, see ClassPortInfo
 * @KMAD_MAD_STATUS_BAD_VERSION: class or version is not supported
 * @KMAD_MAD_STATUS_UNSUPPORTED_METHOD: method is not supported
 * @KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR: method/attribute combination
 *	is not supported
 * @KMAD_MAD_STATUS_INVALID_ATTR_VALUE: one or more attribute or attribute
 *	modifier fields contain an invalid value
 * @KMAD_MAD_STATUS_INVALID_FIELD_MASK: bits 2-4, the invalid-field code
 * @KMAD_MAD_STATUS_CLASS_MASK: bits 8-15, class-specific status
 * @KMAD_SMP_DIRECTION: D bit of a directed-route SMP, which shares the
 *	Status field: set when the SMP is returning (IBTA 14.2.1.2)
 * @KMAD_SMP_STATUS_MASK: Status bits of a directed-route SMP without D
 */
enum kmad_mad_status {
	KMAD_MAD_STATUS_SUCCESS			= 0x0000,
	KMAD_MAD_STATUS_BUSY			= 0x0001,
	KMAD_MAD_STATUS_REDIRECT		= 0x0002,
	KMAD_MAD_STATUS_BAD_VERSION		= 0x0004,
	KMAD_MAD_STATUS_UNSUPPORTED_METHOD	= 0x0008,
	KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR	= 0x000C,
	KMAD_MAD_STATUS_INVALID_ATTR_VALUE	= 0x001C,
	KMAD_MAD_STATUS_INVALID_FIELD_MASK	= 0x001C,
	KMAD_MAD_STATUS_CLASS_MASK		= 0xFF00,
	KMAD_SMP_DIRECTION			= 0x8000,
	KMAD_SMP_STATUS_MASK			= 0x7FFF,
};

/**
 * enum kmad_attr - attributes common to several classes (IBTA 13.4.8)
 * @KMAD_ATTR_CLASS_PORT_INFO: ClassPortInfo, &struct kmad_class_port_info
 * @KMAD_ATTR_NOTICE: Notice (trap payload)
 * @KMAD_ATTR_INFORM_INFO: InformInfo (trap subscription)
 */
enum kmad_attr {
	KMAD_ATTR_CLASS_PORT_INFO	= 0x0001,
	KMAD_ATTR_NOTICE		= 0x0002,
	KMAD_ATTR_INFORM_INFO		= 0x0003,
};

/**
 * enum kmad_smp_attr - subnet management attribute IDs (IBTA 14.2.5)
 * @KMAD_SMP_ATTR_NODE_DESC: NodeDescription
 * @KMAD_SMP_ATTR_NODE_INFO: NodeInfo
 * @KMAD_SMP_ATTR_SWITCH_INFO: SwitchInfo
 * @KMAD_SMP_ATTR_GUID_INFO: GUIDInfo
 * @KMAD_SMP_ATTR_PORT_INFO: PortInfo
 * @KMAD_SMP_ATTR_PKEY_TABLE: P_KeyTable
 * @KMAD_SMP_ATTR_SL_TO_VL_TABLE: SLtoVLMappingTable
 * @KMAD_SMP_ATTR_VL_ARB_TABLE: VLArbitrationTable
 * @KMAD_SMP_ATTR_LINEAR_FT: LinearForwardingTable
 * @KMAD_SMP_ATTR_RANDOM_FT: RandomForwardingTable
 * @KMAD_SMP_ATTR_MCAST_FT: MulticastForwardingTable
 * @KMAD_SMP_ATTR_LINK_SPD_WIDTH_TABLE: LinkSpeedWidthPairsTable
 * @KMAD_SMP_ATTR_VENDOR_MADS_TABLE: VendorSpecificMadsTable
 * @KMAD_SMP_ATTR_HIERARCHY_INFO: HierarchyInfo
 * @KMAD_SMP_ATTR_SM_INFO: SMInfo
 * @KMAD_SMP_ATTR_VENDOR_DIAG: VendorDiag
 * @KMAD_SMP_ATTR_LED_INFO: LedInfo
 * @KMAD_SMP_ATTR_CABLE_INFO: CableInfo
 * @KMAD_SMP_ATTR_PORT_INFO_EXT: PortInfoExtended
 * @KMAD_SMP_ATTR_VENDOR_MASK: attribute IDs 0xFF00-0xFFFF are
 *	vendor-specific
 *
 * Notice (0x0002) is also an SMP attribute, see &enum kmad_attr.
 */
enum kmad_smp_attr {
	KMAD_SMP_ATTR_NODE_DESC			= 0x0010,
	KMAD_SMP_ATTR_NODE_INFO			= 0x0011,
	KMAD_SMP_ATTR_SWITCH_INFO		= 0x0012,
	KMAD_SMP_ATTR_GUID_INFO			= 0x0014,
	KMAD_SMP_ATTR_PORT_INFO			= 0x0015,
	KMAD_SMP_ATTR_PKEY_TABLE		= 0x0016,
	KMAD_SMP_ATTR_SL_TO_VL_TABLE		= 0x0017,
	KMAD_SMP_ATTR_VL_ARB_TABLE		= 0x0018,
	KMAD_SMP_ATTR_LINEAR_FT			= 0x0019,
	KMAD_SMP_ATTR_RANDOM_FT			= 0x001A,
	KMAD_SMP_ATTR_MCAST_FT			= 0x001B,
	KMAD_SMP_ATTR_LINK_SPD_WIDTH_TABLE	= 0x001C,
	KMAD_SMP_ATTR_VENDOR_MADS_TABLE		= 0x001D,
	KMAD_SMP_ATTR_HIERARCHY_INFO		= 0x001E,
	KMAD_SMP_ATTR_SM_INFO			= 0x0020,
	KMAD_SMP_ATTR_VENDOR_DIAG		= 0x0030,
	KMAD_SMP_ATTR_LED_INFO			= 0x0031,
	KMAD_SMP_ATTR_CABLE_INFO		= 0x0032,
	KMAD_SMP_ATTR_PORT_INFO_EXT		= 0x0033,
	KMAD_SMP_ATTR_VENDOR_MASK		= 0xFF00,
};

/**
 * enum kmad_smp_trap - trap numbers of SM-class notices (IBTA 14.2.5.1)
 * @KMAD_SMP_TRAP_GID_IN_SERVICE: GID now in service
 * @KMAD_SMP_TRAP_GID_OUT_OF_SERVICE: GID out of service
 * @KMAD_SMP_TRAP_MGID_CREATED: multicast group created
 * @KMAD_SMP_TRAP_MGID_DESTROYED: multicast group deleted
 * @KMAD_SMP_TRAP_UNPATH: paths no longer valid
 * @KMAD_SMP_TRAP_REPATH: paths recomputed
 * @KMAD_SMP_TRAP_LINK_STATE_CHANGED: port link state changed
 * @KMAD_SMP_TRAP_LINK_INTEGRITY_THRESHOLD: local link integrity threshold
 * @KMAD_SMP_TRAP_BUFFER_OVERRUN_THRESHOLD: excessive buffer overrun
 *	threshold
 * @KMAD_SMP_TRAP_WATCHDOG_TIMER_EXPIRED: flow control update watchdog
 * @KMAD_SMP_TRAP_LOCAL_CHANGES: capability mask or other local change
 * @KMAD_SMP_TRAP_SYS_IMG_GUID_CHANGED: system image GUID changed
 * @KMAD_SMP_TRAP_BAD_MKEY: bad M_Key
 * @KMAD_SMP_TRAP_BAD_PKEY: bad P_Key
 * @KMAD_SMP_TRAP_BAD_QKEY: bad Q_Key
 * @KMAD_SMP_TRAP_BAD_SWITCH_PKEY: bad P_Key at a switch external port
 */
enum kmad_smp_trap {
	KMAD_SMP_TRAP_GID_IN_SERVICE		= 64,
	KMAD_SMP_TRAP_GID_OUT_OF_SERVICE	= 65,
	KMAD_SMP_TRAP_MGID_CREATED		= 66,
	KMAD_SMP_TRAP_MGID_DESTROYED		= 67,
	KMAD_SMP_TRAP_UNPATH			= 68,
	KMAD_SMP_TRAP_REPATH			= 69,
	KMAD_SMP_TRAP_LINK_STATE_CHANGED	= 128,
	KMAD_SMP_TRAP_LINK_INTEGRITY_THRESHOLD	= 129,
	KMAD_SMP_TRAP_BUFFER_OVERRUN_THRESHOLD	= 130,
	KMAD_SMP_TRAP_WATCHDOG_TIMER_EXPIRED	= 131,
	KMAD_SMP_TRAP_LOCAL_CHANGES		= 144,
	KMAD_SMP_TRAP_SYS_IMG_GUID_CHANGED	= 145,
	KMAD_SMP_TRAP_BAD_MKEY			= 256,
	KMAD_SMP_TRAP_BAD_PKEY			= 257,
	KMAD_SMP_TRAP_BAD_QKEY			= 258,
	KMAD_SMP_TRAP_BAD_SWITCH_PKEY		= 259,
};

/**
 * enum kmad_pma_attr - performance management attribute IDs (IBTA 16.1.3)
 * @KMAD_PMA_ATTR_PORT_SAMPLES_CONTROL: PortSamplesControl
 * @KMAD_PMA_ATTR_PORT_SAMPLES_RESULT: PortSamplesResult
 * @KMAD_PMA_ATTR_PORT_COUNTERS: PortCounters
 * @KMAD_PMA_ATTR_PORT_COUNTERS_EXT: PortCountersExtended
 * @KMAD_PMA_ATTR_PORT_SAMPLES_RESULT_EXT: PortSamplesResultExtended
 *
 * ClassPortInfo (0x0001) is also a PMA attribute, see &enum kmad_attr.
 */
enum kmad_pma_attr {
	KMAD_PMA_ATTR_PORT_SAMPLES_CONTROL	= 0x0010,
	KMAD_PMA_ATTR_PORT_SAMPLES_RESULT	= 0x0011,
	KMAD_PMA_ATTR_PORT_COUNTERS		= 0x0012,
	KMAD_PMA_ATTR_PORT_COUNTERS_EXT		= 0x001D,
	KMAD_PMA_ATTR_PORT_SAMPLES_RESULT_EXT	= 0x001E,
};

/**
 * enum kmad_sa_attr - subnet administration attribute IDs (IBTA 15.2.5)
 * @KMAD_SA_ATTR_NODE_REC: NodeRecord
 * @KMAD_SA_ATTR_PORT_INFO_REC: PortInfoRecord
 * @KMAD_SA_ATTR_SLVL_REC: SLtoVLMappingTableRecord
 * @KMAD_SA_ATTR_SWITCH_INFO_REC: SwitchInfoRecord
 * @KMAD_SA_ATTR_LINEAR_FT_REC: LinearForwardingTableRecord
 * @KMAD_SA_ATTR_RANDOM_FT_REC: RandomForwardingTableRecord
 * @KMAD_SA_ATTR_MCAST_FT_REC: MulticastForwardingTableRecord
 * @KMAD_SA_ATTR_SM_INFO_REC: SMInfoRecord
 * @KMAD_SA_ATTR_LINK_SPD_WIDTH_TABLE_REC: LinkSpeedWidthPairsTableRecord
 * @KMAD_SA_ATTR_LINK_REC: LinkRecord
 * @KMAD_SA_ATTR_GUID_INFO_REC: GuidInfoRecord
 * @KMAD_SA_ATTR_SERVICE_REC: ServiceRecord
 * @KMAD_SA_ATTR_PKEY_TABLE_REC: P_KeyTableRecord
 * @KMAD_SA_ATTR_PATH_REC: PathRecord
 * @KMAD_SA_ATTR_VL_ARB_REC: VLArbitrationTableRecord
 * @KMAD_SA_ATTR_MCMEMBER_REC: MCMemberRecord
 * @KMAD_SA_ATTR_TRACE_REC: TraceRecord
 * @KMAD_SA_ATTR_MULTI_PATH_REC: MultiPathRecord
 * @KMAD_SA_ATTR_SERVICE_ASSOC_REC: ServiceAssociationRecord
 * @KMAD_SA_ATTR_HIERARCHY_INFO_REC: HierarchyInfoRecord
 * @KMAD_SA_ATTR_CABLE_INFO_REC: CableInfoRecord
 * @KMAD_SA_ATTR_PORT_INFO_EXT_REC: PortInfoExtendedRecord
 * @KMAD_SA_ATTR_INFORM_INFO_REC: InformInfoRecord
 */
enum kmad_sa_attr {
	KMAD_SA_ATTR_NODE_REC			= 0x0011,
	KMAD_SA_ATTR_PORT_INFO_REC		= 0x0012,
	KMAD_SA_ATTR_SLVL_REC			= 0x0013,
	KMAD_SA_ATTR_SWITCH_INFO_REC		= 0x0014,
	KMAD_SA_ATTR_LINEAR_FT_REC		= 0x0015,
	KMAD_SA_ATTR_RANDOM_FT_REC		= 0x0016,
	KMAD_SA_ATTR_MCAST_FT_REC		= 0x0017,
	KMAD_SA_ATTR_SM_INFO_REC		= 0x0018,
	KMAD_SA_ATTR_LINK_SPD_WIDTH_TABLE_REC	= 0x0019,
	KMAD_SA_ATTR_LINK_REC			= 0x0020,
	KMAD_SA_ATTR_GUID_INFO_REC		= 0x0030,
	KMAD_SA_ATTR_SERVICE_REC		= 0x0031,
	KMAD_SA_ATTR_PKEY_TABLE_REC		= 0x0033,
	KMAD_SA_ATTR_PATH_REC			= 0x0035,
	KMAD_SA_ATTR_VL_ARB_REC			= 0x0036,
	KMAD_SA_ATTR_MCMEMBER_REC		= 0x0038,
	KMAD_SA_ATTR_TRACE_REC			= 0x0039,
	KMAD_SA_ATTR_MULTI_PATH_REC		= 0x003A,
	KMAD_SA_ATTR_SERVICE_ASSOC_REC		= 0x003B,
	KMAD_SA_ATTR_HIERARCHY_INFO_REC		= 0x003C,
	KMAD_SA_ATTR_CABLE_INFO_REC		= 0x003D,
	KMAD_SA_ATTR_PORT_INFO_EXT_REC		= 0x003E,
	KMAD_SA_ATTR_INFORM_INFO_REC		= 0x00F3,
};

/**
 * enum kmad_sa_status - class-specific SA status codes (IBTA 15.2.1.1)
 * @KMAD_SA_STATUS_SUCCESS: no error
 * @KMAD_SA_STATUS_NO_RESOURCES: ERR_NO_RESOURCES
 * @KMAD_SA_STATUS_REQ_INVALID: ERR_REQ_INVALID
 * @KMAD_SA_STATUS_NO_RECORDS: ERR_NO_RECORDS
 * @KMAD_SA_STATUS_TOO_MANY_RECORDS: ERR_TOO_MANY_RECORDS
 * @KMAD_SA_STATUS_INVALID_GID: ERR_REQ_INVALID_GID
 * @KMAD_SA_STATUS_INSUF_COMPS: ERR_REQ_INSUFFICIENT_COMPONENTS
 * @KMAD_SA_STATUS_REQ_DENIED: ERR_REQ_DENIED
 * @KMAD_SA_STATUS_PRI_SUGGESTED: ERR_STATUS_PRIO_SUGGESTED
 *
 * These codes sit in bits 8-15 of the Status field, i.e. the value on the
 * wire is the code shifted left by %KMAD_SA_STATUS_SHIFT.
 */
enum kmad_sa_status {
	KMAD_SA_STATUS_SUCCESS		= 0,
	KMAD_SA_STATUS_NO_RESOURCES	= 1,
	KMAD_SA_STATUS_REQ_INVALID	= 2,
	KMAD_SA_STATUS_NO_RECORDS	= 3,
	KMAD_SA_STATUS_TOO_MANY_RECORDS	= 4,
	KMAD_SA_STATUS_INVALID_GID	= 5,
	KMAD_SA_STATUS_INSUF_COMPS	= 6,
	KMAD_SA_STATUS_REQ_DENIED	= 7,
	KMAD_SA_STATUS_PRI_SUGGESTED	= 8,
};

/* Position of &enum kmad_sa_status codes within the MAD Status field. */
#define KMAD_SA_STATUS_SHIFT		8

/**
 * enum kmad_rmpp_const - RMPP header values (IBTA 13.6.2)
 * @KMAD_RMPP_TYPE_DATA: RMPPType DATA
 * @KMAD_RMPP_TYPE_ACK: RMPPType ACK
 * @KMAD_RMPP_TYPE_STOP: RMPPType STOP
 * @KMAD_RMPP_TYPE_ABORT: RMPPType ABORT
 * @KMAD_RMPP_FLAG_ACTIVE: RMPPFlags.Active, the RMPP header is in use
 * @KMAD_RMPP_FLAG_FIRST: RMPPFlags.First segment
 * @KMAD_RMPP_FLAG_LAST: RMPPFlags.Last segment
 * @KMAD_RMPP_FLAGS_MASK: the flags bits of rmpp_rtime_flags
 * @KMAD_RMPP_RTIME_SHIFT: position of RRespTime in rmpp_rtime_flags
 * @KMAD_RMPP_NO_RESPTIME: RRespTime value meaning "no time given"
 * @KMAD_RMPP_STATUS_SUCCESS: normal
 * @KMAD_RMPP_STATUS_RESX: resources exhausted (STOP)
 * @KMAD_RMPP_STATUS_T2L: total time too long (ABORT)
 * @KMAD_RMPP_STATUS_BAD_LEN: inconsistent last segment and PayloadLength
 * @KMAD_RMPP_STATUS_BAD_SEG: inconsistent first segment and SegmentNumber
 * @KMAD_RMPP_STATUS_BADT: illegal RMPPType
 * @KMAD_RMPP_STATUS_W2S: NewWindowLast too small
 * @KMAD_RMPP_STATUS_S2B: SegmentNumber too big
 * @KMAD_RMPP_STATUS_BAD_STATUS: illegal RMPPStatus
 * @KMAD_RMPP_STATUS_UNV: unsupported RMPPVersion
 * @KMAD_RMPP_STATUS_TMR: too many retries
 * @KMAD_RMPP_STATUS_UNSPEC: unspecified error
 * @KMAD_RMPP_STATUS_ABORT_MIN: lowest RMPPStatus valid in an ABORT
 * @KMAD_RMPP_STATUS_ABORT_MAX: highest RMPPStatus valid in an ABORT
 */
enum kmad_rmpp_const {
	KMAD_RMPP_TYPE_DATA		= 1,
	KMAD_RMPP_TYPE_ACK		= 2,
	KMAD_RMPP_TYPE_STOP		= 3,
	KMAD_RMPP_TYPE_ABORT		= 4,
	KMAD_RMPP_FLAG_ACTIVE		= 0x01,
	KMAD_RMPP_FLAG_FIRST		= 0x02,
	KMAD_RMPP_FLAG_LAST		= 0x04,
	KMAD_RMPP_FLAGS_MASK		= 0x07,
	KMAD_RMPP_RTIME_SHIFT		= 3,
	KMAD_RMPP_NO_RESPTIME		= 0x1F,
	KMAD_RMPP_STATUS_SUCCESS	= 0,
	KMAD_RMPP_STATUS_RESX		= 1,
	KMAD_RMPP_STATUS_T2L		= 118,
	KMAD_RMPP_STATUS_BAD_LEN	= 119,
	KMAD_RMPP_STATUS_BAD_SEG	= 120,
	KMAD_RMPP_STATUS_BADT		= 121,
	KMAD_RMPP_STATUS_W2S		= 122,
	KMAD_RMPP_STATUS_S2B		= 123,
	KMAD_RMPP_STATUS_BAD_STATUS	= 124,
	KMAD_RMPP_STATUS_UNV		= 125,
	KMAD_RMPP_STATUS_TMR		= 126,
	KMAD_RMPP_STATUS_UNSPEC		= 127,
	KMAD_RMPP_STATUS_ABORT_MIN	= 118,
	KMAD_RMPP_STATUS_ABORT_MAX	= 127,
};

/**
 * enum kmad_class_port_info_const - ClassPortInfo field encodings
 * @KMAD_CPI_RESP_TIME_MASK: RespTimeValue, low 5 bits of
 *	cap_mask2_resp_time
 * @KMAD_CPI_CAP_MASK2_SHIFT: CapabilityMask2 is the upper 27 bits of
 *	cap_mask2_resp_time
 */
enum kmad_class_port_info_const {
	KMAD_CPI_RESP_TIME_MASK		= 0x1F,
	KMAD_CPI_CAP_MASK2_SHIFT	= 5,
};

/* OUI of OpenIB, used in vendor range 2 MADs of the OpenFabrics stack. */
#define KMAD_OPENIB_OUI			0x001405

/**
 * struct kmad_mad_hdr - common MAD header (IBTA 13.4.2), bytes 0-23
 * @base_version: BaseVersion, %KMAD_MGMT_BASE_VERSION
 * @mgmt_class: MgmtClass, &enum kmad_mgmt_class
 * @class_version: ClassVersion, format version of the class
 * @method: Method, &enum kmad_method
 * @status: Status, &enum kmad_mad_status; for directed-route SMPs the top
 *	bit is the D bit
 * @class_specific: ClassSpecific; hop pointer and count in directed-route
 *	SMPs, see &struct kmad_smp
 * @tid: TransactionID; see kmad_mad_tid_hi() and kmad_mad_tid_lo()
 * @attr_id: AttributeID
 * @resv: reserved
 * @attr_mod: AttributeModifier
 */
struct kmad_mad_hdr {
	__u8	base_version;
	__u8	mgmt_class;
	__u8	class_version;
	__u8	method;
	__be16	status;
	__be16	class_specific;
	__be64	tid;
	__be16	attr_id;
	__be16	resv;
	__be32	attr_mod;
};

/**
 * struct kmad_mad - a MAD of any class, seen as header plus opaque payload
 * @mad_hdr: common MAD header
 * @data: class-specific payload
 */
struct kmad_mad {
	struct kmad_mad_hdr	mad_hdr;
	__u8			data[KMAD_MAD_DATA_SIZE];
};

/**
 * struct kmad_rmpp_hdr - RMPP header (IBTA 13.6.2.1), MAD bytes 24-35
 * @rmpp_version: RMPPVersion, %KMAD_RMPP_VERSION or 0 when RMPP is unused
 * @rmpp_type: RMPPType, %KMAD_RMPP_TYPE_DATA ... %KMAD_RMPP_TYPE_ABORT
 * @rmpp_rtime_flags: RRespTime (bits 3-7) and RMPPFlags (bits 0-2)
 * @rmpp_status: RMPPStatus
 * @seg_num: SegmentNumber (DATA, ACK) or reserved
 * @paylen_newwin: PayloadLength (DATA) or NewWindowLast (ACK)
 */
struct kmad_rmpp_hdr {
	__u8	rmpp_version;
	__u8	rmpp_type;
	__u8	rmpp_rtime_flags;
	__u8	rmpp_status;
	__be32	seg_num;
	__be32	paylen_newwin;
};

/**
 * struct kmad_rmpp_mad - a MAD of a class that carries the RMPP header
 * @mad_hdr: common MAD header
 * @rmpp_hdr: RMPP header
 * @data: class-specific payload
 */
struct kmad_rmpp_mad {
	struct kmad_mad_hdr	mad_hdr;
	struct kmad_rmpp_hdr	rmpp_hdr;
	__u8			data[KMAD_RMPP_DATA_SIZE];
};

/**
 * struct kmad_vendor_mad - a vendor range 2 MAD, MgmtClass 0x30-0x4F
 *	(IBTA 16.5)
 * @mad_hdr: common MAD header
 * @rmpp_hdr: RMPP header
 * @reserved: reserved, byte 36
 * @oui: IEEE OUI of the vendor that defines the class, big-endian
 * @data: vendor-defined payload
 */
struct kmad_vendor_mad {
	struct kmad_mad_hdr	mad_hdr;
	struct kmad_rmpp_hdr	rmpp_hdr;
	__u8			reserved;
	__u8			oui[KMAD_VENDOR_OUI_SIZE];
	__u8			data[KMAD_VENDOR_DATA_SIZE];
};

/**
 * struct kmad_dm_mad - a device management MAD (IBTA 16.3)
 * @mad_hdr: common MAD header
 * @reserved: reserved, bytes 24-63
 * @data: device management payload
 */
struct kmad_dm_mad {
	struct kmad_mad_hdr	mad_hdr;
	__u8			reserved[KMAD_DM_MAD_HDR_SIZE - KMAD_MAD_HDR_SIZE];
	__u8			data[KMAD_DM_DATA_SIZE];
};

/**
 * struct kmad_smp - a subnet management packet, LID-routed (MgmtClass
 *	0x01) or directed-route (0x81) (IBTA 14.2.1)
 * @base_version: BaseVersion, %KMAD_MGMT_BASE_VERSION
 * @mgmt_class: %KMAD_MGMT_CLASS_SUBN_LID_ROUTED or
 *	%KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE
 * @class_version: %KMAD_SMP_CLASS_VERSION
 * @method: Method
 * @status: Status; in directed-route SMPs bit 15 is the D (direction) bit,
 *	%KMAD_SMP_DIRECTION
 * @hop_ptr: directed route: index of the current hop; reserved if LID-routed
 * @hop_cnt: directed route: number of hops, 0-63; reserved if LID-routed
 * @tid: TransactionID
 * @attr_id: AttributeID
 * @resv: reserved
 * @attr_mod: AttributeModifier
 * @mkey: M_Key
 * @dr_slid: directed route: DrSLID; reserved if LID-routed
 * @dr_dlid: directed route: DrDLID; reserved if LID-routed
 * @reserved: reserved, bytes 36-63
 * @data: SMP payload, 64 bytes
 * @initial_path: directed route: outbound port per hop; reserved if
 *	LID-routed
 * @return_path: directed route: inbound port per hop; reserved if
 *	LID-routed
 *
 * The LID-routed layout is the same with the directed-route fields
 * reserved, so one structure serves both classes.
 */
struct kmad_smp {
	__u8	base_version;
	__u8	mgmt_class;
	__u8	class_version;
	__u8	method;
	__be16	status;
	__u8	hop_ptr;
	__u8	hop_cnt;
	__be64	tid;
	__be16	attr_id;
	__be16	resv;
	__be32	attr_mod;
	__be64	mkey;
	__be16	dr_slid;
	__be16	dr_dlid;
	__u8	reserved[28];
	__u8	data[KMAD_SMP_DATA_SIZE];
	__u8	initial_path[KMAD_SMP_DR_PATH_SIZE];
	__u8	return_path[KMAD_SMP_DR_PATH_SIZE];
};

/**
 * struct kmad_sa_mad - a subnet administration MAD (IBTA 15.2.1)
 * @mad_hdr: common MAD header
 * @rmpp_hdr: RMPP header
 * @sm_key: SM_Key, bytes 36-43, as two big-endian 32-bit words, most
 *	significant first; use kmad_sa_sm_key() and kmad_sa_set_sm_key()
 * @attr_offset: AttributeOffset, record size in 8-byte words
 * @reserved: reserved
 * @comp_mask: ComponentMask
 * @data: SA record(s)
 *
 * IBTA puts the 64-bit SM_Key at byte 36, which is only 4-byte aligned.
 * Rather than packing the structure (and everything that embeds it), the
 * key is stored as two 32-bit words; ComponentMask, at byte 48, is
 * naturally aligned.  For the same reason there is no separate SA header
 * structure: on its own it would be padded before ComponentMask.
 */
struct kmad_sa_mad {
	struct kmad_mad_hdr	mad_hdr;
	struct kmad_rmpp_hdr	rmpp_hdr;
	__be32			sm_key[2];
	__be16			attr_offset;
	__be16			reserved;
	__be64			comp_mask;
	__u8			data[KMAD_SA_DATA_SIZE];
};

/**
 * struct kmad_class_port_info - ClassPortInfo attribute (IBTA 13.4.8.1)
 * @base_version: BaseVersion supported by the class manager/agent
 * @class_version: highest ClassVersion supported
 * @capability_mask: CapabilityMask
 * @cap_mask2_resp_time: CapabilityMask2 (bits 5-31) and RespTimeValue
 *	(bits 0-4)
 * @redirect_gid: RedirectGID
 * @redirect_tc_sl_fl: RedirectTC (8 bits), RedirectSL (4), RedirectFL (20)
 * @redirect_lid: RedirectLID
 * @redirect_pkey: RedirectP_Key
 * @redirect_qp: reserved (8 bits), RedirectQP (24)
 * @redirect_qkey: RedirectQ_Key
 * @trap_gid: TrapGID
 * @trap_tc_sl_fl: TrapTC (8 bits), TrapSL (4), TrapFL (20)
 * @trap_lid: TrapLID
 * @trap_pkey: TrapP_Key
 * @trap_hl_qp: TrapHL (8 bits), TrapQP (24)
 * @trap_qkey: TrapQ_Key
 */
struct kmad_class_port_info {
	__u8	base_version;
	__u8	class_version;
	__be16	capability_mask;
	__be32	cap_mask2_resp_time;
	__u8	redirect_gid[16];
	__be32	redirect_tc_sl_fl;
	__be16	redirect_lid;
	__be16	redirect_pkey;
	__be32	redirect_qp;
	__be32	redirect_qkey;
	__u8	trap_gid[16];
	__be32	trap_tc_sl_fl;
	__be16	trap_lid;
	__be16	trap_pkey;
	__be32	trap_hl_qp;
	__be32	trap_qkey;
};

#ifdef __KERNEL__

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <asm/byteorder.h>

/* Sizes: every MAD view is exactly one MAD. */
static_assert(sizeof(struct kmad_mad_hdr) == KMAD_MAD_HDR_SIZE);
static_assert(sizeof(struct kmad_mad) == KMAD_MAD_SIZE);
static_assert(sizeof(struct kmad_rmpp_hdr) == KMAD_RMPP_HDR_SIZE);
static_assert(sizeof(struct kmad_rmpp_mad) == KMAD_MAD_SIZE);
static_assert(sizeof(struct kmad_vendor_mad) == KMAD_MAD_SIZE);
static_assert(sizeof(struct kmad_dm_mad) == KMAD_MAD_SIZE);
static_assert(sizeof(struct kmad_smp) == KMAD_MAD_SIZE);
static_assert(sizeof(struct kmad_sa_mad) == KMAD_MAD_SIZE);
static_assert(sizeof(struct kmad_class_port_info) == KMAD_CLASS_PORT_INFO_SIZE);
static_assert(KMAD_CLASS_PORT_INFO_SIZE <= KMAD_MAD_DATA_SIZE);

/* Common header, IBTA 13.4.2. */
static_assert(offsetof(struct kmad_mad_hdr, method) == 3);
static_assert(offsetof(struct kmad_mad_hdr, status) == 4);
static_assert(offsetof(struct kmad_mad_hdr, class_specific) == 6);
static_assert(offsetof(struct kmad_mad_hdr, tid) == 8);
static_assert(offsetof(struct kmad_mad_hdr, attr_id) == 16);
static_assert(offsetof(struct kmad_mad_hdr, attr_mod) == 20);
static_assert(offsetof(struct kmad_mad, data) == KMAD_MAD_HDR_SIZE);

/* RMPP, vendor and DM payload starts. */
static_assert(offsetof(struct kmad_rmpp_mad, rmpp_hdr) == KMAD_MAD_HDR_SIZE);
static_assert(offsetof(struct kmad_rmpp_hdr, seg_num) == 4);
static_assert(offsetof(struct kmad_rmpp_hdr, paylen_newwin) == 8);
static_assert(offsetof(struct kmad_rmpp_mad, data) == KMAD_RMPP_MAD_HDR_SIZE);
static_assert(offsetof(struct kmad_vendor_mad, oui) == 37);
static_assert(offsetof(struct kmad_vendor_mad, data) == KMAD_VENDOR_MAD_HDR_SIZE);
static_assert(offsetof(struct kmad_dm_mad, data) == KMAD_DM_MAD_HDR_SIZE);

/* SMP, IBTA 14.2.1: the SMP overlays the common header. */
static_assert(offsetof(struct kmad_smp, status) ==
	      offsetof(struct kmad_mad_hdr, status));
static_assert(offsetof(struct kmad_smp, hop_ptr) ==
	      offsetof(struct kmad_mad_hdr, class_specific));
static_assert(offsetof(struct kmad_smp, hop_cnt) == 7);
static_assert(offsetof(struct kmad_smp, tid) == offsetof(struct kmad_mad_hdr, tid));
static_assert(offsetof(struct kmad_smp, attr_id) ==
	      offsetof(struct kmad_mad_hdr, attr_id));
static_assert(offsetof(struct kmad_smp, attr_mod) ==
	      offsetof(struct kmad_mad_hdr, attr_mod));
static_assert(offsetof(struct kmad_smp, mkey) == 24);
static_assert(offsetof(struct kmad_smp, dr_slid) == 32);
static_assert(offsetof(struct kmad_smp, dr_dlid) == 34);
static_assert(offsetof(struct kmad_smp, reserved) == 36);
static_assert(offsetof(struct kmad_smp, data) == 64);
static_assert(offsetof(struct kmad_smp, initial_path) == 128);
static_assert(offsetof(struct kmad_smp, return_path) == 192);

/* SA, IBTA 15.2.1. */
static_assert(offsetof(struct kmad_sa_mad, sm_key) == KMAD_RMPP_MAD_HDR_SIZE);
static_assert(sizeof_field(struct kmad_sa_mad, sm_key) == 8);
static_assert(offsetof(struct kmad_sa_mad, attr_offset) == 44);
static_assert(offsetof(struct kmad_sa_mad, comp_mask) == 48);
static_assert(offsetof(struct kmad_sa_mad, data) == KMAD_SA_MAD_HDR_SIZE);

/* ClassPortInfo, IBTA 13.4.8.1. */
static_assert(offsetof(struct kmad_class_port_info, cap_mask2_resp_time) == 4);
static_assert(offsetof(struct kmad_class_port_info, redirect_gid) == 8);
static_assert(offsetof(struct kmad_class_port_info, redirect_tc_sl_fl) == 24);
static_assert(offsetof(struct kmad_class_port_info, redirect_lid) == 28);
static_assert(offsetof(struct kmad_class_port_info, redirect_qp) == 32);
static_assert(offsetof(struct kmad_class_port_info, trap_gid) == 40);
static_assert(offsetof(struct kmad_class_port_info, trap_lid) == 60);
static_assert(offsetof(struct kmad_class_port_info, trap_hl_qp) == 64);
static_assert(offsetof(struct kmad_class_port_info, trap_qkey) == 68);

/**
 * kmad_method_is_response() - does a Method value denote a response?
 * @method: Method field of a MAD
 *
 * TrapRepress answers a Trap without setting the RESP bit, so it counts
 * as a response here.  Baseboard management flags responses in the
 * AttributeModifier instead; see kmad_mad_is_response().
 *
 * Return: true for a response method.
 */
static inline bool kmad_method_is_response(u8 method)
{
	return (method & KMAD_METHOD_RESP) ||
	       method == KMAD_METHOD_TRAP_REPRESS;
}

/**
 * kmad_mad_is_response() - is a MAD a response to an earlier request?
 * @hdr: common MAD header
 *
 * Like kmad_method_is_response(), and also recognises baseboard
 * management responses: BM answers a Send with a Send that has bit 0 of
 * the AttributeModifier set (IBTA 16.2).  As in ib_mad's
 * ib_response_mad(), any BM MAD with that bit counts, whatever its
 * method.  This is the rule kmad applies on every path: a response keeps
 * its TID, is matched to a request when received, and is never answered;
 * kmad_post_send() refuses one posted with a timeout (-EINVAL), except
 * an RMPP send, for which the timeout is only its ACK timeout.
 *
 * Return: true for a response.
 */
static inline bool kmad_mad_is_response(const struct kmad_mad_hdr *hdr)
{
	return kmad_method_is_response(hdr->method) ||
	       (hdr->mgmt_class == KMAD_MGMT_CLASS_BM &&
		(hdr->attr_mod & cpu_to_be32(1)));
}

/**
 * kmad_mgmt_class_is_vendor_range1() - is a class in vendor range 1?
 * @cls: MgmtClass
 *
 * Return: true for 0x09-0x0F, vendor classes without the RMPP header.
 */
static inline bool kmad_mgmt_class_is_vendor_range1(u8 cls)
{
	return cls >= KMAD_MGMT_CLASS_VENDOR_RANGE1_START &&
	       cls <= KMAD_MGMT_CLASS_VENDOR_RANGE1_END;
}

/**
 * kmad_mgmt_class_is_vendor_range2() - is a class in vendor range 2?
 * @cls: MgmtClass
 *
 * Return: true for 0x30-0x4F, the classes laid out as
 * &struct kmad_vendor_mad, with RMPP header and OUI.
 */
static inline bool kmad_mgmt_class_is_vendor_range2(u8 cls)
{
	return cls >= KMAD_MGMT_CLASS_VENDOR_RANGE2_START &&
	       cls <= KMAD_MGMT_CLASS_VENDOR_RANGE2_END;
}

/**
 * kmad_is_smp_class() - is a class one of the two SMP classes?
 * @cls: MgmtClass
 *
 * SMPs travel on QP0 only and use the &struct kmad_smp layout.
 *
 * Return: true for LID-routed and directed-route subnet management.
 */
/**
 * kmad_mgmt_class_has_rmpp() - whether a class carries the RMPP header.
 * @cls: management class.
 *
 * IBTA 13.6: SA, device management, device administration, BIS and vendor
 * range 2 MADs have an RMPP header after the common header (ib_mad's
 * ib_is_mad_class_rmpp() lists the same classes).  Only these may be
 * registered with an RMPP version.
 *
 * Return: true if MADs of @cls have an RMPP header.
 */
static inline bool kmad_mgmt_class_has_rmpp(u8 cls)
{
	return cls == KMAD_MGMT_CLASS_SUBN_ADM ||
	       cls == KMAD_MGMT_CLASS_DEVICE_MGMT ||
	       cls == KMAD_MGMT_CLASS_DEVICE_ADM ||
	       cls == KMAD_MGMT_CLASS_BIS ||
	       kmad_mgmt_class_is_vendor_range2(cls);
}

/**
 * kmad_rmpp_hdr_len() - bytes of header every RMPP segment of a class
 *	repeats before its share of the data.
 * @cls: management class.
 *
 * Return: 56 for SA (common, RMPP and SA headers), 64 for device
 * management, device administration and BIS, 40 for vendor range 2
 * (common and RMPP headers, reserved byte and OUI), 24 otherwise (as
 * ib_mad's ib_get_mad_data_offset()).
 */
static inline unsigned int kmad_rmpp_hdr_len(u8 cls)
{
	if (cls == KMAD_MGMT_CLASS_SUBN_ADM)
		return KMAD_SA_MAD_HDR_SIZE;
	if (cls == KMAD_MGMT_CLASS_DEVICE_MGMT ||
	    cls == KMAD_MGMT_CLASS_DEVICE_ADM || cls == KMAD_MGMT_CLASS_BIS)
		return 64;
	if (kmad_mgmt_class_is_vendor_range2(cls))
		return KMAD_VENDOR_MAD_HDR_SIZE;
	return KMAD_MAD_HDR_SIZE;
}

static inline bool kmad_is_smp_class(u8 cls)
{
	return cls == KMAD_MGMT_CLASS_SUBN_LID_ROUTED ||
	       cls == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
}

/**
 * kmad_mgmt_class_version() - the one ClassVersion a class defines
 * @cls: management class
 *
 * SMP (both routings) 1, SA 2, PerfMgt 1, CM 2 and CongMgt 2: the classes
 * whose ClassVersion kmad_mad_validate() checks.  Other classes (BM,
 * DevMgt, SNMP, vendor, application) may have several; kmad does not
 * check them.
 *
 * Return: the version, or 0 for a class kmad knows no single version of.
 */
static inline u8 kmad_mgmt_class_version(u8 cls)
{
	switch (cls) {
	case KMAD_MGMT_CLASS_SUBN_LID_ROUTED:
	case KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		return KMAD_SMP_CLASS_VERSION;
	case KMAD_MGMT_CLASS_SUBN_ADM:
		return KMAD_SA_CLASS_VERSION;
	case KMAD_MGMT_CLASS_PERF_MGMT:
		return KMAD_PMA_CLASS_VERSION;
	case KMAD_MGMT_CLASS_CM:
		return KMAD_CM_CLASS_VERSION;
	case KMAD_MGMT_CLASS_CONG_MGMT:
		return KMAD_CC_CLASS_VERSION;
	default:
		return 0;
	}
}

/**
 * kmad_mad_tid_hi() - upper half of the TransactionID
 * @hdr: common MAD header
 *
 * By the convention of the Linux MAD layer, which kmad follows, the
 * sending MAD layer puts an identifier of the requesting agent here so
 * that the response can be routed back to that agent.
 *
 * Return: bits 32-63 of the TransactionID, in host byte order.
 */
static inline u32 kmad_mad_tid_hi(const struct kmad_mad_hdr *hdr)
{
	return (u32)(be64_to_cpu(hdr->tid) >> 32);
}

/**
 * kmad_mad_tid_lo() - lower half of the TransactionID
 * @hdr: common MAD header
 *
 * Return: bits 0-31 of the TransactionID, in host byte order; chosen by
 * the agent that sent the request.
 */
static inline u32 kmad_mad_tid_lo(const struct kmad_mad_hdr *hdr)
{
	return (u32)be64_to_cpu(hdr->tid);
}

/**
 * kmad_smp_is_returning() - is the D bit of a directed-route SMP set?
 * @smp: directed-route SMP
 *
 * Return: true if the SMP travels along the return path.
 */
static inline bool kmad_smp_is_returning(const struct kmad_smp *smp)
{
	return !!(smp->status & cpu_to_be16(KMAD_SMP_DIRECTION));
}

/**
 * kmad_rmpp_flags() - RMPPFlags of an RMPP header
 * @rmpp: RMPP header
 *
 * Return: the %KMAD_RMPP_FLAG_ACTIVE, %KMAD_RMPP_FLAG_FIRST and
 * %KMAD_RMPP_FLAG_LAST bits.
 */
static inline u8 kmad_rmpp_flags(const struct kmad_rmpp_hdr *rmpp)
{
	return rmpp->rmpp_rtime_flags & KMAD_RMPP_FLAGS_MASK;
}

/**
 * kmad_rmpp_active() - is @mad an RMPP packet (a segment, ACK, STOP or
 *	ABORT)?
 * @mad: a MAD.
 *
 * Return: true if its class has the RMPP header (kmad_mgmt_class_has_rmpp())
 * and the header's Active flag is set: what kmad handles as RMPP for an
 * agent registered with an RMPP version.
 */
static inline bool kmad_rmpp_active(const struct kmad_mad *mad)
{
	const struct kmad_rmpp_mad *r = (const struct kmad_rmpp_mad *)mad;

	return kmad_mgmt_class_has_rmpp(mad->mad_hdr.mgmt_class) &&
	       (kmad_rmpp_flags(&r->rmpp_hdr) & KMAD_RMPP_FLAG_ACTIVE);
}

/**
 * kmad_rmpp_resp_time() - RRespTime of an RMPP header
 * @rmpp: RMPP header
 *
 * Return: RRespTime, %KMAD_RMPP_NO_RESPTIME if none is given.
 */
static inline u8 kmad_rmpp_resp_time(const struct kmad_rmpp_hdr *rmpp)
{
	return rmpp->rmpp_rtime_flags >> KMAD_RMPP_RTIME_SHIFT;
}

/**
 * kmad_sa_sm_key() - read the SM_Key of an SA MAD
 * @sa: SA MAD
 *
 * Return: SM_Key in host byte order.
 */
static inline u64 kmad_sa_sm_key(const struct kmad_sa_mad *sa)
{
	return (u64)be32_to_cpu(sa->sm_key[0]) << 32 |
	       be32_to_cpu(sa->sm_key[1]);
}

/**
 * kmad_sa_set_sm_key() - write the SM_Key of an SA MAD
 * @sa: SA MAD
 * @key: SM_Key in host byte order
 */
static inline void kmad_sa_set_sm_key(struct kmad_sa_mad *sa, u64 key)
{
	sa->sm_key[0] = cpu_to_be32((u32)(key >> 32));
	sa->sm_key[1] = cpu_to_be32((u32)(key & 0xFFFFFFFFU));
}

/**
 * kmad_cpi_resp_time() - RespTimeValue of a ClassPortInfo
 * @cpi: ClassPortInfo attribute
 *
 * Return: RespTimeValue, 0-31.
 */
static inline u8 kmad_cpi_resp_time(const struct kmad_class_port_info *cpi)
{
	return be32_to_cpu(cpi->cap_mask2_resp_time) & KMAD_CPI_RESP_TIME_MASK;
}

/**
 * kmad_cpi_cap_mask2() - CapabilityMask2 of a ClassPortInfo
 * @cpi: ClassPortInfo attribute
 *
 * Return: CapabilityMask2, 27 bits.
 */
static inline u32 kmad_cpi_cap_mask2(const struct kmad_class_port_info *cpi)
{
	return be32_to_cpu(cpi->cap_mask2_resp_time) >> KMAD_CPI_CAP_MASK2_SHIFT;
}

/**
 * enum kmad_mad_verdict - outcome of kmad_mad_validate()
 * @KMAD_MAD_VERDICT_OK: the MAD may be dispatched
 * @KMAD_MAD_VERDICT_SHORT: shorter than %KMAD_MAD_SIZE (or no buffer)
 * @KMAD_MAD_VERDICT_LONG: longer than %KMAD_MAD_SIZE
 * @KMAD_MAD_VERDICT_BASE_VERSION: BaseVersion is not
 *	%KMAD_MGMT_BASE_VERSION
 * @KMAD_MAD_VERDICT_RESERVED_CLASS: MgmtClass is a reserved value
 * @KMAD_MAD_VERDICT_CLASS_VERSION: ClassVersion is not the one defined for
 *	a class kmad knows
 * @KMAD_MAD_VERDICT_RESERVED_METHOD: Method is 0x00 or 0x80, or a reserved
 *	common method
 * @KMAD_MAD_VERDICT_RESP_METHOD: the RESP bit is set on a method that has no
 *	response of that value (e.g. Set, Send, Trap, TrapRepress)
 * @KMAD_MAD_VERDICT_CLASS_METHOD: the class does not define this method
 * @KMAD_MAD_VERDICT_METHOD_ATTR: the class does not allow this method with
 *	this attribute
 * @KMAD_MAD_VERDICT_DR_HOP_CNT: directed-route hop count above
 *	%KMAD_SMP_DR_MAX_HOP_CNT
 * @KMAD_MAD_VERDICT_DR_HOP_PTR: directed-route hop pointer beyond hop
 *	count + 1
 * @KMAD_MAD_VERDICT_DR_DIRECTION: directed-route D bit contradicts the
 *	method
 * @KMAD_MAD_VERDICT_COUNT: number of verdicts, for statistics arrays
 */
enum kmad_mad_verdict {
	KMAD_MAD_VERDICT_OK,
	KMAD_MAD_VERDICT_SHORT,
	KMAD_MAD_VERDICT_LONG,
	KMAD_MAD_VERDICT_BASE_VERSION,
	KMAD_MAD_VERDICT_RESERVED_CLASS,
	KMAD_MAD_VERDICT_CLASS_VERSION,
	KMAD_MAD_VERDICT_RESERVED_METHOD,
	KMAD_MAD_VERDICT_RESP_METHOD,
	KMAD_MAD_VERDICT_CLASS_METHOD,
	KMAD_MAD_VERDICT_METHOD_ATTR,
	KMAD_MAD_VERDICT_DR_HOP_CNT,
	KMAD_MAD_VERDICT_DR_HOP_PTR,
	KMAD_MAD_VERDICT_DR_DIRECTION,
	KMAD_MAD_VERDICT_COUNT
};

int kmad_mad_validate(const void *buf, size_t len,
		      enum kmad_mad_verdict *why);
const char *kmad_mad_verdict_name(enum kmad_mad_verdict v);

#endif /* __KERNEL__ */

#endif /* _KMAD_WIRE_H */
