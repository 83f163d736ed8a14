#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the hand-made seed inputs of tests/fuzz/corpus/ (committed).

    tests/fuzz/mkseeds.py        rewrite them all

Each seed is described where it is made; the input layouts are in
wire_fuzz.c and smi_fuzz.c.  After a change, run `make fuzz-replay` so
that tests/fuzz/replay.h follows.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
PERMISSIVE = 0xFFFF
D_BIT = 0x8000


def mad(cls, version, method, attr, status=0, class_specific=0,
        tid=0x0000000100000001, attr_mod=0, payload=b''):
    """A 256-byte MAD: the common header (IBTA 13.4.2), then @payload."""
    hdr = struct.pack('>BBBBHHQHHI', 1, cls, version, method, status,
                      class_specific, tid, attr, 0, attr_mod)
    return (hdr + payload).ljust(256, b'\0')


def dr_smp(method, attr, hop_ptr, hop_cnt, initial=(), ret=(),
           dr_slid=PERMISSIVE, dr_dlid=PERMISSIVE, returning=False):
    """A directed-route SMP (IBTA 14.2.1.2); paths start at entry 1."""
    smp = bytearray(mad(0x81, 1, method, attr,
                        status=D_BIT if returning else 0,
                        class_specific=hop_ptr << 8 | hop_cnt))
    struct.pack_into('>HH', smp, 32, dr_slid, dr_dlid)
    for i, port in enumerate(initial, 1):
        smp[128 + i] = port
    for i, port in enumerate(ret, 1):
        smp[192 + i] = port
    return bytes(smp)


def smi_input(flags, port, num_ports, smp, steps=()):
    """The smi target's input: node shape, SMP, then 3-byte steps."""
    return bytes([flags, port, num_ports]) + smp + b''.join(
        bytes(s) for s in steps)


NODE_INFO, PORT_INFO, NOTICE, CPI = 0x0011, 0x0015, 0x0002, 0x0001

WIRE = {
    # LID-routed SubnGet(NodeInfo), as an SM sends it
    'smp-get-nodeinfo': mad(0x01, 1, 0x01, NODE_INFO),
    # directed-route SubnGet(NodeInfo) two hops out, at its start
    'dr-get-nodeinfo': dr_smp(0x01, NODE_INFO, 0, 2, initial=(1, 3)),
    # its response, back at the requester
    'dr-getresp-nodeinfo': dr_smp(0x81, NODE_INFO, 0, 2, initial=(1, 3),
                                  ret=(2, 4), returning=True),
    # SubnTrap(Notice), LID-routed
    'smp-trap-notice': mad(0x01, 1, 0x05, NOTICE),
    # SubnAdmGetTable(PathRecord), an SA query
    'sa-gettable-pathrec': mad(0x03, 2, 0x12, 0x0035),
    # PerfMgtGet(PortCounters), a GMP
    'pma-get-portcounters': mad(0x04, 1, 0x01, 0x0012),
    # CM Send(REQ)
    'cm-send-req': mad(0x07, 2, 0x03, 0x0010),
    # a vendor range 2 Get, OpenIB OUI
    'vendor2-get': mad(0x30, 1, 0x01, 0x0010,
                       payload=bytes(12) + b'\0\x00\x14\x05'),
    # rejected by the per-class method lists (step 7 of wire.c): PerfMgt
    # has no Send, CM no Trap.  The last comparison of each list compiles
    # to a returned flag, not a branch, so libFuzzer has no edge to find
    'pma-send-rejected': mad(0x04, 1, 0x03, 0x0012),
    'cm-trap-rejected': mad(0x07, 2, 0x05, 0x0010),
    # only the common header: too short
    'short-header': mad(0x01, 1, 0x01, NODE_INFO)[:24],
}

SMI = {
    # a CA's SMA receives SubnGet(NodeInfo) with HopCount 0 (loopback)
    'ca-recv-hop0': smi_input(0x06, 1, 1,
                              dr_smp(0x01, NODE_INFO, 0, 0)),
    # an intermediate switch of a 3-hop path receives on port 2
    'switch-recv-hop1': smi_input(0x1f, 2, 36,
                                  dr_smp(0x01, PORT_INFO, 1, 3,
                                         initial=(1, 5, 7),
                                         ret=(2, 4, 6))),
    # the response returning through that switch
    'switch-recv-returning': smi_input(0x1f, 5, 36,
                                       dr_smp(0x81, PORT_INFO, 3, 3,
                                              initial=(1, 5, 7),
                                              ret=(2, 4, 6),
                                              returning=True)),
    # LID-routed parts before and after two directed hops
    'switch-lid-routed-parts': smi_input(0x19, 3, 8,
                                         dr_smp(0x01, NODE_INFO, 0, 2,
                                                initial=(3, 4),
                                                ret=(1, 2),
                                                dr_slid=0x0001,
                                                dr_dlid=0x0002)),
    # the steps a CA takes: send, receive, make_response, send back
    'ca-steps': smi_input(0x06, 1, 2,
                          dr_smp(0x01, NODE_INFO, 0, 1, initial=(1,),
                                 ret=(2,)),
                          steps=((1, 1, 2), (0, 2, 2), (3, 0, 0),
                                 (2, 0, 0), (1, 2, 2))),
}


def main():
    for target, seeds in (('wire', WIRE), ('smi', SMI)):
        d = os.path.join(HERE, 'corpus', target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)


if __name__ == '__main__':
    main()
