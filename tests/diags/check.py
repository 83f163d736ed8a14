#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The verdict of `make diags` (tests/diags/diags.sh).

    check.py <console log>
    check.py --selftest <console log that passes>

Reads kmad_sim's own description of the fabric (the "kmad_diags:" lines
of kmad_diags_fabric) and every tool run of tests/diags/guest.sh (between
"=== cmd: <command>" and "=== rc: <status>"), computes what each tool must
print for that fabric from the description and the documented rules of
Documentation/simulated-fabric.rst (node descriptions, port GUIDs, LID
plan, link speed), and compares.  It fails on any difference, on a tool
that exits non-zero, on a command it has no check for, on a failed
umad_abi_test case, on a guest that did not reach its end or unload its
modules, and on a kernel splat.  Prints one line per command and a
summary.  --selftest makes wrong answers out of a passing log (a wrong
link, LID, route, counter, description, exit status, ABI case, splat) and
fails unless every one of them fails the check.
"""
import ipaddress
import os
import re
import sys
from collections import deque

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'qemu'))
import harness  # noqa: E402  (make check's boot-leak rule)

SPLAT = re.compile(r'WARNING: |BUG: |kernel BUG at|Oops|general protection '
                   r'fault|Kernel panic|UBSAN: |Call Trace:|usercopy: |'
                   r'unreferenced object|kmemleak report|'
                   r'blocked for more than|soft lockup|'
                   r'rcu: INFO: |ODEBUG: |printk messages dropped|'
                   r'kmemleak: .*(disabled|Cannot allocate)')
KLOG = re.compile(r'^\[\s*\d+\.\d+\] ')


class Fabric:
    """kmad_sim's fabric as kmad_diags_fabric printed it."""

    def __init__(self, log):
        self.nodes = {}
        self.port_lid = {}
        self.peer = {}
        for m in re.finditer(r'kmad_diags: node (\d+) type (\d) ports (\d+) '
                             r'guid 0x([0-9a-f]+) lid (\d+) name (\S+)', log):
            n = int(m.group(1))
            self.nodes[n] = dict(type=int(m.group(2)), ports=int(m.group(3)),
                                 guid=int(m.group(4), 16),
                                 lid=int(m.group(5)), name=m.group(6))
        for m in re.finditer(r'kmad_diags: port (\d+) (\d+) lid (\d+)', log):
            self.port_lid[(int(m.group(1)), int(m.group(2)))] = int(m.group(3))
        for m in re.finditer(r'kmad_diags: link (\d+) (\d+) (\d+) (\d+)', log):
            self.peer[(int(m.group(1)), int(m.group(2)))] = \
                (int(m.group(3)), int(m.group(4)))
        self.sm = None
        m = re.search(r'kmad_diags: sm (\S+) lid (\d+) guid 0x([0-9a-f]+) '
                      r'key (\d+) act (\d+) priority (\d+) state (\d+)', log)
        if m:
            self.sm = dict(dev=m.group(1), lid=int(m.group(2)),
                           guid=int(m.group(3), 16), act=int(m.group(5)),
                           priority=int(m.group(6)), state=int(m.group(7)))
        m = re.search(r'kmad-diags: kernel \S+, (\d+) CPUs', log)
        self.cpus = int(m.group(1)) if m else None
        end = re.search(r'kmad_diags: end (\d+)', log)
        if not end or int(end.group(1)) != len(self.nodes) or not self.nodes:
            raise ValueError('no complete fabric description in the log')
        self.by_guid = {v['guid']: n for n, v in self.nodes.items()}
        self.by_name = {v['name']: n for n, v in self.nodes.items()}
        self.by_lid = {}
        for n, v in self.nodes.items():
            if self.is_switch(n):
                self.by_lid[v['lid']] = (n, 0)
            else:
                for p in range(1, v['ports'] + 1):
                    self.by_lid[self.port_lid[(n, p)]] = (n, p)

    def is_switch(self, n):
        return self.nodes[n]['type'] == 2

    def hcas(self):
        return sorted(n for n in self.nodes if not self.is_switch(n))

    def switches(self):
        return sorted(n for n in self.nodes if self.is_switch(n))

    def desc(self, n):
        """NodeDescription, simulated-fabric.rst."""
        v = self.nodes[n]
        return '%s kmad_sim %s' % (v['name'],
                                   'switch' if self.is_switch(n) else 'HCA')

    def port_guid(self, n, p):
        """A port's GUID: NodeGUID + p; a switch's is its NodeGUID."""
        g = self.nodes[n]['guid']
        return g if self.is_switch(n) else g + p

    def lid(self, n, p=1):
        return self.nodes[n]['lid'] if self.is_switch(n) else \
            self.port_lid[(n, p)]

    def links(self):
        """Every cable once, as a frozenset of two (node, port)."""
        return {frozenset((a, b)) for a, b in self.peer.items()}

    def route(self, src, dst):
        """Shortest path of nodes from node src to node dst, as a list of
        (node, in port, out port); in port 0 at src, out port 0 at dst.
        Breadth first, lowest port first, as the sim's LFTs are built."""
        prev = {src: None}
        q = deque([src])
        while q:
            n = q.popleft()
            if n == dst:
                break
            if n != src and not self.is_switch(n):
                continue    # HCAs do not forward
            for p in range(1, self.nodes[n]['ports'] + 1):
                if (n, p) not in self.peer:
                    continue
                m, mp = self.peer[(n, p)]
                if m not in prev:
                    prev[m] = (n, p, mp)
                    q.append(m)
        if dst not in prev:
            return None
        hops = []
        n, out = dst, 0
        while prev[n] is not None:
            pn, pp, inp = prev[n]
            hops.append((n, inp, out))
            n, out = pn, pp
        hops.append((src, 0, out))
        return hops[::-1]

    def lft_out(self, sw, lid):
        """The port switch sw sends LID lid out of (0: its own)."""
        dst, _ = self.by_lid[lid]
        if dst == sw:
            return 0
        path = self.route(sw, dst)
        return path[0][2]

    def last_hca_lid(self):
        """The LID of the last HCA (diags.sh's LAST_HCA_LID)."""
        return max(self.lid(n, 1) for n in self.hcas())

    def gid(self, n, p):
        """A port's GID as inet_ntop prints it: fe80::/64 and the port
        GUID."""
        return str(ipaddress.IPv6Address(0xfe80 << 112 |
                                         self.port_guid(n, p)))

    def dr_walk(self, src, path):
        """The node a directed route from node src reaches, and the port
        it arrives on (0 for src itself)."""
        n, inp = src, 0
        for p in path[1:]:
            if (n, p) not in self.peer:
                return None, None
            n, inp = self.peer[(n, p)]
        return n, inp


# The counters perfquery prints for PortCounters and, -x,
# PortCountersExtended.
PERF_KEYS = ('SymbolErrorCounter', 'LinkErrorRecoveryCounter',
             'LinkDownedCounter', 'PortRcvErrors',
             'PortRcvRemotePhysicalErrors', 'PortRcvSwitchRelayErrors',
             'PortXmitDiscards', 'PortXmitConstraintErrors',
             'PortRcvConstraintErrors', 'LocalLinkIntegrityErrors',
             'ExcessiveBufferOverrunErrors', 'QP1Dropped', 'VL15Dropped',
             'PortXmitData', 'PortRcvData', 'PortXmitPkts', 'PortRcvPkts',
             'PortXmitWait')
PERF_X_KEYS = ('PortXmitData', 'PortRcvData', 'PortXmitPkts', 'PortRcvPkts',
               'PortUnicastXmitPkts', 'PortUnicastRcvPkts',
               'PortMulticastXmitPkts', 'PortMulticastRcvPkts')


def hops(route):
    """A directed route as the tools take it, "0,1,1,2": its ports."""
    return [int(x) for x in route.split(',')]


def fields(text):
    """The 'Name:......value' lines of smpquery and perfquery; a name
    printed twice is an error (ValueError: the run fails)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'^([A-Za-z0-9_ ]+?):\.+(.*)$', line)
        if m:
            if m.group(1) in out:
                raise ValueError('%s printed twice' % m.group(1))
            out[m.group(1)] = m.group(2).strip()
    return out


class Checker:
    def __init__(self, fab, origin):
        self.fab = fab
        self.origin = origin        # the node the tools run from
        self.errors = []

    def expect(self, what, got, want):
        if got != want:
            self.errors.append('%s: got %r, expected %r' % (what, got, want))

    def fail(self, msg):
        self.errors.append(msg)

    # ibstat, ibstatus

    def ibstat_port(self, text, n, p):
        f = {}
        for line in text.splitlines():
            m = re.match(r'^\s*([A-Za-z ]+):\s*(.*)$', line)
            if m:
                f[m.group(1).strip()] = m.group(2).strip()
        self.expect('State', f.get('State'), 'Active')
        self.expect('Physical state', f.get('Physical state'), 'LinkUp')
        self.expect('Rate', f.get('Rate'), '40')
        self.expect('Base lid', f.get('Base lid'), str(self.fab.lid(n, p)))
        self.expect('LMC', f.get('LMC'), '0')
        self.expect('SM lid', f.get('SM lid'), '1')
        self.expect('Port GUID', f.get('Port GUID'),
                    '0x%016x' % self.fab.port_guid(n, p))
        self.expect('Link layer', f.get('Link layer'), 'InfiniBand')

    def c_ibstat(self, args, text):
        fab = self.fab
        if args == ['-l']:
            self.expect('CAs', text.split(),
                        sorted(fab.nodes[n]['name'] for n in fab.hcas()))
            return
        if args == ['-p']:
            self.expect('port GUIDs', sorted(text.split()),
                        sorted('0x%016x' % fab.port_guid(n, p)
                               for n in fab.hcas()
                               for p in range(1, fab.nodes[n]['ports'] + 1)))
            return
        if len(args) == 2:
            n = fab.by_name[args[0]]
            self.expect('CA line', text.splitlines()[0], "CA: '%s'" % args[0])
            self.ibstat_port(text, n, int(args[1]))
            return
        self.expect('no arguments', args, [])
        blocks = re.split(r"^CA '", text, flags=re.M)[1:]
        self.expect('CAs', sorted(b.split("'")[0] for b in blocks),
                    sorted(fab.nodes[n]['name'] for n in fab.hcas()))
        for b in blocks:
            name = b.split("'")[0]
            n = fab.by_name.get(name)
            if n is None:
                continue
            guid = '0x%016x' % fab.nodes[n]['guid']
            head, *ports = re.split(r'^\tPort \d+:', b, flags=re.M)
            self.expect(name + ' Number of ports',
                        re.search(r'Number of ports: (\d+)', head).group(1),
                        str(fab.nodes[n]['ports']))
            self.expect(name + ' Node GUID',
                        re.search(r'Node GUID: (\S+)', head).group(1), guid)
            self.expect(name + ' System image GUID',
                        re.search(r'System image GUID: (\S+)', head).group(1),
                        guid)
            self.expect(name + ' port blocks', len(ports),
                        fab.nodes[n]['ports'])
            for p, ptext in enumerate(ports, 1):
                self.ibstat_port(ptext, n, p)

    def c_ibstatus(self, args, text):
        fab = self.fab
        seen = []
        for b in re.split(r"^Infiniband device ", text, flags=re.M)[1:]:
            m = re.match(r"'(\S+)' port (\d+) status:", b)
            n, p = fab.by_name[m.group(1)], int(m.group(2))
            seen.append((n, p))
            f = dict((k.strip(), v.strip()) for k, v in
                     re.findall(r'^\t([a-z_ ]+):\s*(.*)$', b, flags=re.M))
            g = fab.port_guid(n, p)
            gid = 'fe80:0000:0000:0000:' + ':'.join(
                '%04x' % ((g >> s) & 0xffff) for s in (48, 32, 16, 0))
            self.expect('default gid', f.get('default gid'), gid)
            self.expect('base lid', f.get('base lid'), '0x%x' % fab.lid(n, p))
            self.expect('sm lid', f.get('sm lid'), '0x1')
            self.expect('state', f.get('state'), '4: ACTIVE')
            self.expect('phys state', f.get('phys state'), '5: LinkUp')
            self.expect('rate', f.get('rate'), '40 Gb/sec (4X QDR)')
            self.expect('link_layer', f.get('link_layer'), 'InfiniBand')
        self.expect('ports', sorted(seen),
                    sorted((n, p) for n in fab.hcas()
                           for p in range(1, fab.nodes[n]['ports'] + 1)))

    # ibhosts, ibswitches, ibnodes: scripts over ibnetdiscover

    def node_list(self, text, kinds):
        """One line per node of the kinds asked, each node once."""
        fab = self.fab
        got = []
        for line in text.splitlines():
            m = re.match(r'^(Ca|Switch)\t: 0x([0-9a-f]{16}) ports (\d+) '
                         r'"([^"]*)"(.*)$', line)
            if not m:
                self.fail('unexpected line %r' % line)
                continue
            n = fab.by_guid.get(int(m.group(2), 16))
            if n is None:
                self.fail('unknown node %s' % m.group(2))
                continue
            got.append(n)
            name = fab.nodes[n]['name']
            sw = fab.is_switch(n)
            self.expect(name + ' line',
                        (m.group(1), int(m.group(3)), m.group(4),
                         m.group(5)),
                        ('Switch' if sw else 'Ca', fab.nodes[n]['ports'],
                         fab.desc(n), ' base port 0 lid %d lmc 0' %
                         fab.lid(n) if sw else ''))
        self.expect('nodes', sorted(got),
                    sorted(n for n in fab.nodes
                           if ('Switch' if fab.is_switch(n) else 'Ca')
                           in kinds))

    def c_ibhosts(self, args, text):
        self.node_list(text, ('Ca',))

    def c_ibswitches(self, args, text):
        self.node_list(text, ('Switch',))

    def c_ibnodes(self, args, text):
        self.node_list(text, ('Ca', 'Switch'))

    # ibnetdiscover

    def c_ibnetdiscover(self, args, text):
        fab = self.fab
        origin = self.origin if '-C' in args else None
        if '-p' in args:
            return self.ibnetdiscover_ports(text)
        nodes = {}
        links = set()
        cur = None
        for line in text.splitlines():
            m = re.match(r'^(Switch|Ca)\s+(\d+) "([SH])-([0-9a-f]{16})"\s+# '
                         r'"([^"]*)"(.*)$', line)
            if m:
                cur = fab.by_guid.get(int(m.group(4), 16))
                if cur is None:
                    self.fail('unknown node %s' % m.group(4))
                    continue
                nodes[cur] = (m.group(1), int(m.group(2)), m.group(5),
                              m.group(6).strip())
                continue
            m = re.match(r'^\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"[SH]-([0-9a-f]{16})"'
                         r'\[(\d+)\]', line)
            if m and cur is not None:
                peer = fab.by_guid.get(int(m.group(3), 16))
                if peer is None:
                    self.fail('unknown peer %s' % m.group(3))
                    continue
                links.add(frozenset(((cur, int(m.group(1))),
                                     (peer, int(m.group(4))))))
                if m.group(2) and not fab.is_switch(cur):
                    self.expect('port GUID of %s' % fab.nodes[cur]['name'],
                                int(m.group(2), 16),
                                fab.port_guid(cur, int(m.group(1))))
        self.expect('nodes', sorted(nodes), sorted(fab.nodes))
        for n, (kind, nports, desc, rest) in nodes.items():
            name = fab.nodes[n]['name']
            self.expect(name + ' kind', kind,
                        'Switch' if fab.is_switch(n) else 'Ca')
            self.expect(name + ' ports', nports, fab.nodes[n]['ports'])
            self.expect(name + ' description', desc, fab.desc(n))
            if fab.is_switch(n):
                self.expect(name + ' lid', rest,
                            'base port 0 lid %d lmc 0' % fab.lid(n))
        self.expect('links', links, fab.links())
        m = re.search(r'^# Initiated from node ([0-9a-f]{16}) port '
                      r'([0-9a-f]{16})', text, flags=re.M)
        if not m:
            self.fail('no "Initiated from" line')
        elif origin is not None:
            self.expect('initiated from', (int(m.group(1), 16),
                                           int(m.group(2), 16)),
                        (fab.nodes[origin]['guid'],
                         fab.port_guid(origin, 1)))

    def ibnetdiscover_ports(self, text):
        fab = self.fab
        links = set()
        for line in text.splitlines():
            m = re.match(r'^(CA|SW)\s+(\d+)\s+(\d+)\s+0x([0-9a-f]{16}) 4x QDR - '
                         r'(CA|SW)\s+(\d+)\s+(\d+)\s+0x([0-9a-f]{16}) '
                         r"\( '([^']*)' - '([^']*)' \)$", line)
            if not m:
                self.fail('unexpected line %r' % line)
                continue
            ends = []
            for kind, lid, port, guid, desc in (
                    (m.group(1), m.group(2), m.group(3), m.group(4), m.group(9)),
                    (m.group(5), m.group(6), m.group(7), m.group(8), m.group(10))):
                n, _ = fab.by_lid[int(lid)]
                p = int(port)
                self.expect('kind of lid ' + lid, kind,
                            'SW' if fab.is_switch(n) else 'CA')
                self.expect('guid of lid %s port %s' % (lid, port),
                            int(guid, 16), fab.port_guid(n, p))
                self.expect('description of lid ' + lid, desc, fab.desc(n))
                ends.append((n, p))
            links.add(frozenset(ends))
        self.expect('links', links, fab.links())

    # smpquery

    def target(self, args):
        """(node, arrival port) a LID or directed route names."""
        fab = self.fab
        if '-D' in args:
            return fab.dr_walk(self.origin, hops(args[-1]))
        if '-c' in args:
            # A combined route: LID-routed to the LID, directed from there.
            route = hops(args[-1])
            n, _ = fab.by_lid[route[0]]
            if len(route) > 2:
                return fab.dr_walk(n, route[1:])
            args = args[:-1] + [str(route[0])]
        n, _ = fab.by_lid[int(args[-1])]
        if n == self.origin:
            return n, 0
        path = fab.route(self.origin, n)
        return n, path[-1][1]

    def c_smpquery(self, args, text):
        fab = self.fab
        word = self.positional(args)[0]
        op = word.lower()
        # vlarb <lid> <port>: a switch's external port.
        vl_port = None
        if op == 'vlarb' and len(args) - args.index(word) == 3:
            vl_port = int(args[-1])
            args = args[:-1]
        n, inp = self.target(args)
        if n is None:
            self.fail('the route %s leads nowhere' % args[-1])
            return
        name = fab.nodes[n]['name']
        sw = fab.is_switch(n)
        # The port an HCA answers for: the one the SMP arrived on.
        hp = inp if inp else 1
        f = fields(text)
        if op == 'nodeinfo':
            self.expect(name + ' NodeType', f.get('NodeType'),
                        'Switch' if sw else 'Channel Adapter')
            self.expect(name + ' NumPorts', f.get('NumPorts'),
                        str(fab.nodes[n]['ports']))
            g = '0x%016x' % fab.nodes[n]['guid']
            self.expect(name + ' SystemGuid', f.get('SystemGuid'), g)
            self.expect(name + ' Guid', f.get('Guid'), g)
            self.expect(name + ' PortGuid', f.get('PortGuid'),
                        '0x%016x' % fab.port_guid(n, hp))
            self.expect(name + ' DevId', f.get('DevId'),
                        '0x5a02' if sw else '0x5a01')
            self.expect(name + ' VendorId', f.get('VendorId'), '0x001405')
            self.expect(name + ' LocalPort', f.get('LocalPort'),
                        str(inp if sw or inp else 1))
        elif op == 'nodedesc':
            self.expect(name + ' Node Description',
                        f.get('Node Description'), fab.desc(n))
        elif op == 'portinfo':
            self.expect(name + ' Lid', f.get('Lid'),
                        str(fab.lid(n) if sw else fab.lid(n, hp)))
            self.expect(name + ' SMLid', f.get('SMLid'), '1')
            self.expect(name + ' LMC', f.get('LMC'), '0')
            self.expect(name + ' LinkWidthActive', f.get('LinkWidthActive'),
                        '4X')
            self.expect(name + ' LinkSpeedActive', f.get('LinkSpeedActive'),
                        '10.0 Gbps')
            self.expect(name + ' LinkState', f.get('LinkState'), 'Active')
            self.expect(name + ' PhysLinkState', f.get('PhysLinkState'),
                        'LinkUp')
            self.expect(name + ' LocalPort', f.get('LocalPort'),
                        str(inp if sw or inp else 1))
        elif op == 'pkeys':
            keys = re.findall(r'0x[0-9a-f]{4}', text)
            self.expect(name + ' pkeys', keys,
                        ['0xffff'] + ['0x0000'] * 63)
            self.expect(name + ' capacity',
                        '64 pkeys capacity for this port' in text, True)
        elif op == 'gi':
            guids = re.findall(r'0x[0-9a-f]{16}', text)
            self.expect(name + ' GUIDInfo', guids,
                        ['0x%016x' % fab.port_guid(n, hp)] +
                        ['0x0000000000000000'] * 7)
        elif op == 'sl2vl':
            # An HCA: its port; a switch: every input port to port 0.
            rows = re.findall(r'^ports: in\s+(\d+), out\s+(\d+): \|(.*)\|$',
                              text, flags=re.M)
            want = fab.nodes[n]['ports'] + 1 if sw else 1
            self.expect(name + ' SL2VL rows', [r[0] for r in rows],
                        [str(i) for i in range(want)])
            for r in rows:
                self.expect(name + ' SL2VL in %s' % r[0],
                            [int(x) for x in r[2].split('|')], [0] * 16)
        elif op == 'vlarb':
            # A switch's base port 0 has no tables; every other port has
            # a low and a high table of 8 entries, at power-up the low
            # one's entry 0 VL0 weight 255, the rest VL0 weight 0.
            if sw and not vl_port:
                self.expect(name + ' VLArb', 'No VLArbitration tables '
                            '(BSP0)' in text, True)
                return
            m = re.search(r'port (\d+) LowCap (\d+) HighCap (\d+)', text)
            self.expect(name + ' VLArb caps', m and m.groups(),
                        (str(vl_port or 0), '8', '8'))
            tables = re.findall(r'^# (Low|High) priority VL Arbitration '
                                r'Table:\nVL    : \|(.*)\|\nWEIGHT: \|(.*)\|$',
                                text, flags=re.M)
            self.expect(name + ' VLArb tables', [t[0] for t in tables],
                        ['Low', 'High'])
            for kind, vls, weights in tables:
                self.expect('%s VLArb %s VL' % (name, kind),
                            [int(x, 16) for x in vls.split('|')], [0] * 8)
                self.expect('%s VLArb %s weight' % (name, kind),
                            [int(x, 16) for x in weights.split('|')],
                            ([255] if kind == 'Low' else [0]) + [0] * 7)
        elif op == 'switchinfo':
            self.expect(name + ' is a switch', sw, True)
            self.expect(name + ' LinearFdbCap', f.get('LinearFdbCap'), '4096')
            self.expect(name + ' McastFdbCap', f.get('McastFdbCap'),
                        '1024')
            self.expect(name + ' LinearFdbTop', f.get('LinearFdbTop'),
                        str(max(fab.by_lid)))
        else:
            self.fail('no check for smpquery ' + op)

    # ibroute

    def c_ibroute(self, args, text):
        fab = self.fab
        n, _ = self.target(args)
        if '-M' in args:
            return self.ibroute_mcast(n, text)
        self.lft(n, text, 0, max(fab.by_lid))

    def lft(self, n, text, lo, hi):
        """Switch n's unicast table for LIDs lo..hi, as ibroute and
        dump_fts print it."""
        fab = self.fab
        name = fab.nodes[n]['name']
        m = re.search(r'^Unicast lids \[0x([0-9a-f]+)-0x([0-9a-f]+)\] of '
                      r'switch (?:Lid (\d+)|DR path .*?) guid '
                      r'0x([0-9a-f]{16}) \(([^)]*)\):', text, flags=re.M)
        if not m:
            self.fail(name + ': no header')
            return
        self.expect(name + ' lid range', (int(m.group(1), 16),
                                          int(m.group(2), 16)), (lo, hi))
        self.expect(name + ' guid', int(m.group(4), 16), fab.nodes[n]['guid'])
        self.expect(name + ' description', m.group(5), fab.desc(n))
        got = {}
        for lid, port, kind, guid, desc in re.findall(
                r'^0x([0-9a-f]{4}) (\d{3}) : \((Channel Adapter|Switch) '
                r"portguid 0x([0-9a-f]{16}): '([^']*)'\)$", text, flags=re.M):
            d, dp = fab.by_lid[int(lid, 16)]
            got[int(lid, 16)] = (int(port), kind, int(guid, 16), desc)
            self.expect('%s lid %s' % (name, lid), got[int(lid, 16)],
                        (fab.lft_out(n, int(lid, 16)),
                         'Switch' if fab.is_switch(d) else 'Channel Adapter',
                         fab.port_guid(d, dp), fab.desc(d)))
        want = [lid for lid in sorted(fab.by_lid) if lo <= lid <= hi]
        self.expect(name + ' lids', sorted(got), want)
        self.expect(name + ' count', re.findall(
            r'^(\d+) valid lids dumped', text, flags=re.M), [str(len(want))])

    def ibroute_mcast(self, n, text):
        """ibroute -M: MulticastFDBCap 1024 (MLIDs 0xC000-0xC3FF), every
        port mask empty at power-up, and no SM on this fabric."""
        fab = self.fab
        name = fab.nodes[n]['name']
        m = re.search(r'^Multicast mlids \[0x([0-9a-f]+)-0x([0-9a-f]+)\] of '
                      r'switch (?:Lid (\d+)|DR path .*?) guid '
                      r'0x([0-9a-f]{16}) \(([^)]*)\):', text, flags=re.M)
        if not m:
            self.fail(name + ': no multicast header')
            return
        self.expect(name + ' mlid range', (m.group(1), m.group(2)),
                    ('c000', 'c3ff'))
        self.expect(name + ' guid', int(m.group(4), 16), fab.nodes[n]['guid'])
        self.expect(name + ' description', m.group(5), fab.desc(n))
        ports = re.search(r'^     Ports: (.*)$', text, flags=re.M)
        self.expect(name + ' port columns', ports and ports.group(1).split(),
                    [str(i % 10) for i in range(fab.nodes[n]['ports'] + 1)])
        self.expect(name + ' mlid rows',
                    re.findall(r'^0x[0-9a-f]{4} ', text, flags=re.M), [])
        self.expect(name + ' count', re.findall(
            r'^(\d+) valid mlids dumped', text, flags=re.M), ['0'])

    # perfquery

    def c_perfquery(self, args, text):
        fab = self.fab
        lid = int(self.positional(args)[0])
        n, _ = fab.by_lid[lid]
        name = fab.nodes[n]['name']
        if '-R' in args:
            self.expect(name + ' reset prints nothing', text.strip(), '')
            return
        if '-l' in args:
            # -a -l: every port in turn, 1 up (an HCA has no port 0, the
            # sim's switches no enhanced port 0).
            ports = []
            for b in re.split(r'^(?=# Port counters: )', text, flags=re.M):
                m = re.match(r'# Port counters: Lid (\d+) port (\d+) ', b)
                if not m:
                    if b.strip():
                        self.fail('unexpected output %r' % b[:60])
                    continue
                self.expect(name + ' counters of lid', int(m.group(1)), lid)
                ports.append(int(m.group(2)))
                self.perf_counters(args, lid, fields(b), m.group(2))
            self.expect(name + ' ports', ports,
                        list(range(1, fab.nodes[n]['ports'] + 1)))
            return
        self.perf_counters(args, lid, fields(text),
                           '255' if '-a' in args else '1')

    def perf_counters(self, args, lid, f, sel):
        """One PortCounters answer, fields f, of PortSelect sel."""
        fab = self.fab
        n, _ = fab.by_lid[lid]
        name = fab.nodes[n]['name']
        self.expect(name + ' PortSelect', f.get('PortSelect'), sel)
        keys = PERF_X_KEYS if '-x' in args else PERF_KEYS
        self.expect(name + ' counters missing',
                    [k for k in keys if k not in f], [])
        # umad_abi_test sends to LID 999, which no port has: the switch
        # next to the origin drops those and counts them, nobody else.
        origin_sw = fab.peer[(self.origin, 1)][0]
        for k, v in f.items():
            if k == 'PortRcvSwitchRelayErrors' and n == origin_sw:
                continue
            if re.search(r'Error|Discard|Downed|Dropped|Wait|Multicast', k):
                self.expect('%s %s' % (name, k), v, '0')
        xd, xp = int(f.get('PortXmitData', -1)), int(f.get('PortXmitPkts', -1))
        rd, rp = int(f.get('PortRcvData', -1)), int(f.get('PortRcvPkts', -1))
        # Every packet is a 256-byte MAD in a UD packet: 72 words.
        self.expect(name + ' XmitData = 72 x XmitPkts', xd, 72 * xp)
        self.expect(name + ' RcvData = 72 x RcvPkts', rd, 72 * rp)
        if '-x' in args:
            self.expect(name + ' unicast xmit', f.get('PortUnicastXmitPkts'),
                        str(xp))
            self.expect(name + ' unicast rcv', f.get('PortUnicastRcvPkts'),
                        str(rp))
        if self.after_reset == lid:
            # Since the reset: its answer, this query and its answer.
            self.after_reset = None
            if not (1 <= xp <= 3 and 1 <= rp <= 3):
                self.fail('%s counters after perfquery -R: xmit %d rcv %d' %
                          (name, xp, rp))
        elif xp < 1 or rp < 1:
            self.fail('%s no traffic counted' % name)

    # iblinkinfo, ibaddr, smpdump, dump_fts, ibportstate, ibsysstat

    def positional(self, args):
        """The arguments that are not options nor the values of -C, -P."""
        return [a for i, a in enumerate(args) if not a.startswith('-') and
                (i == 0 or args[i - 1] not in ('-C', '-P'))]

    # One link as iblinkinfo prints it: LID, port, width, speed, state,
    # physical state, then the peer's (port GUID with -l), LID, port and
    # description.
    LINK = (r'(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(\S+)\s+([\d.]+ Gbps)\s+'
            r'(\w+)/\s*(\w+)\)==>\s+(?:0x([0-9a-f]{16})\s+)?(\d+)\s+(\d+)'
            r'\[\s*\]\s+"([^"]*)"\s+\(\s*\)$')

    def c_iblinkinfo(self, args, text):
        fab = self.fab
        seen = []
        head = None     # the node of the "Switch:" block, or a CA's name
        for line in text.splitlines():
            if not line.strip():
                continue
            m = re.match(r'^Switch: 0x([0-9a-f]{16}) (.*):$', line)
            if m:
                head = fab.by_guid.get(int(m.group(1), 16))
                self.expect('switch %s' % m.group(1), head is not None and
                            fab.desc(head), m.group(2))
                continue
            m = re.match(r'^CA: (.*):$', line)
            if m:
                head = m.group(1)
                continue
            # -l: GUID and description first; else a CA's port GUID.
            m = re.match(r'^0x([0-9a-f]{16}) "\s*([^"]*)"\s+' + self.LINK,
                         line)
            if m:
                guid, desc, g = int(m.group(1), 16), m.group(2), m.groups()[2:]
            else:
                m = re.match(r'^\s+(?:0x([0-9a-f]{16})\s+)?' + self.LINK,
                             line)
                if not m:
                    self.fail('unexpected line %r' % line)
                    continue
                guid = m.group(1) and int(m.group(1), 16)
                desc, g = None, m.groups()[1:]
            lid, port, width, speed, state, phys, pguid, plid, pport, pdesc = g
            # The LID names the node; its GUID, description or block
            # header, each checked below, say whether that is the right one.
            n, p = fab.by_lid[int(lid)][0], int(port)
            name = '%s port %d' % (fab.nodes[n]['name'], p)
            seen.append((n, p))
            if isinstance(head, str):
                self.expect(name + ' CA block', head, fab.desc(n))
            elif '-l' not in args:
                self.expect(name + ' switch block', head, n)
            # -l: both ends' GUIDs; plain: a CA port's own.
            self.expect(name + ' GUIDs printed',
                        (guid is not None, pguid is not None),
                        (True, True) if '-l' in args else
                        (not fab.is_switch(n), False))
            if guid is not None:
                self.expect(name + ' guid', guid, fab.port_guid(n, p))
            if desc is not None:
                self.expect(name + ' description', desc, fab.desc(n))
            self.expect(name + ' link', (width, speed, state, phys),
                        ('4X', '10.0 Gbps', 'Active', 'LinkUp'))
            if (n, p) not in fab.peer:
                self.fail(name + ' has no cable')
                continue
            m_, mp = fab.peer[(n, p)]
            self.expect(name + ' peer', (int(plid), int(pport), pdesc),
                        (fab.lid(m_, mp), mp, fab.desc(m_)))
            if pguid is not None:
                self.expect(name + ' peer guid', int(pguid, 16),
                            fab.port_guid(m_, mp))
        if '-D' in args:
            n0, _ = fab.dr_walk(self.origin, hops(args[-1]))
            want = [k for k in fab.peer if k[0] == n0]
        else:
            want = list(fab.peer)
        self.expect('ports listed', sorted(seen), sorted(want))

    def c_ibaddr(self, args, text):
        fab = self.fab
        if self.positional(args):
            n, inp = self.target(args)
        else:
            n, inp = self.origin, 1     # the port it runs on
        p = inp if inp else 1
        gid = 'GID %s' % fab.gid(n, p)
        lid = 'LID start 0x%x end 0x%x' % (fab.lid(n, p), fab.lid(n, p))
        want = gid if '-g' in args else lid if '-l' in args else \
            gid + ' ' + lid
        self.expect('ibaddr of ' + fab.nodes[n]['name'], text.strip(), want)

    def c_smpdump(self, args, text):
        """A raw SMP, LID-routed or (-D) directed, as 64 bytes of hex or
        (-s) a string: NodeInfo, PortInfo of the arrival port, or
        NodeDescription."""
        fab = self.fab
        pos = self.positional(args)
        attr = int(pos[1], 0)
        dr = '-D' in args
        if dr:
            n, inp = fab.dr_walk(self.origin, hops(pos[0]))
        else:
            n, inp = self.target([pos[0]])
        name = fab.nodes[n]['name']
        sw = fab.is_switch(n)
        hp = inp if inp else 1
        # A directed-route answer has the D bit (bit 15 of Status, IBTA
        # 14.2.1.2) set, which smpdump prints as "SMP status: 0x8000"; a
        # LID-routed one has status 0, for which it prints nothing.
        st = re.findall(r'^SMP status: 0x([0-9a-f]+)$', text, flags=re.M)
        self.expect(name + ' status', st, ['8000'] if dr else [])
        if '-s' in args:
            # guest.sh asks NodeDescription (0x10) for a string.
            self.expect(name + ' description', text.splitlines()[0],
                        fab.desc(n))
            return
        rows = re.findall(r'^((?:[0-9a-f]{4} ){7}[0-9a-f]{4})$', text,
                          flags=re.M)
        data = bytes.fromhex(''.join(rows).replace(' ', ''))
        self.expect(name + ' bytes', len(data), 64)
        if attr == 0x11:
            g = fab.nodes[n]['guid']
            want = bytes([1, 1, 2 if sw else 1, fab.nodes[n]['ports']]) + \
                g.to_bytes(8, 'big') * 2 + \
                fab.port_guid(n, hp).to_bytes(8, 'big') + \
                (64).to_bytes(2, 'big') + \
                (0x5a02 if sw else 0x5a01).to_bytes(2, 'big') + \
                (1).to_bytes(4, 'big') + \
                bytes([inp if sw or inp else 1]) + \
                (0x001405).to_bytes(3, 'big')
            self.expect(name + ' NodeInfo', data.hex(),
                        want.ljust(64, b'\0').hex())
        elif attr == 0x15:
            self.expect(name + ' PortInfo LID, SM LID',
                        (int.from_bytes(data[16:18], 'big'),
                         int.from_bytes(data[18:20], 'big')),
                        (fab.lid(n, hp), 1))
        else:
            self.fail('no check for attribute 0x%x' % attr)

    def c_dump_fts(self, args, text):
        """Every switch's unicast (or, -M, multicast) tables, switches
        found by the tool's own directed-route walk from the origin."""
        fab = self.fab
        pos = self.positional(args)
        lo = int(pos[0], 0) if pos else 0
        hi = int(pos[1], 0) if len(pos) > 1 else max(fab.by_lid)
        head = 'Multicast mlids' if '-M' in args else 'Unicast lids'
        seen = []
        for b in re.split(r'^(?=%s )' % head, text, flags=re.M):
            if not b.startswith(head):
                if b.strip():
                    self.fail('unexpected output %r' % b[:60])
                continue
            m = re.search(r'DR path slid \d+; dlid \d+; ([\d,]+) guid '
                          r'0x([0-9a-f]{16})', b)
            if not m:
                self.fail('no DR path in %r' % b[:60])
                continue
            n, _ = fab.dr_walk(self.origin, hops(m.group(1)))
            self.expect('switch at ' + m.group(1),
                        n is not None and fab.nodes[n]['guid'],
                        int(m.group(2), 16))
            if n is None:
                continue
            seen.append(n)
            if '-M' in args:
                self.ibroute_mcast(n, b)
            else:
                self.lft(n, b, lo, hi)
        self.expect('switches', sorted(seen), fab.switches())

    def port_state(self, name, f, lid):
        """An active 4X QDR port; an HCA port's LID and SM LID."""
        self.expect(name + ' link', (f.get('LinkState'),
                                     f.get('PhysLinkState'),
                                     f.get('LinkWidthActive'),
                                     f.get('LinkSpeedActive')),
                    ('Active', 'LinkUp', '4X', '10.0 Gbps'))
        if lid is not None:
            self.expect(name + ' Lid, SMLid', (f.get('Lid'), f.get('SMLid')),
                        (str(lid), '1'))

    def c_ibportstate(self, args, text):
        """query: the port, and a switch port's peer (by a directed route
        from the switch, so a combined route)."""
        fab = self.fab
        pos = self.positional(args)
        port = int(pos[1])
        if '-D' in args:
            n, _ = fab.dr_walk(self.origin, hops(pos[0]))
        else:
            n, _ = fab.by_lid[int(pos[0])]
        sw = fab.is_switch(n)
        name = '%s port %d' % (fab.nodes[n]['name'], port)
        own, _, peer = text.partition('Peer PortInfo:')
        self.expect(name + ' kind', own.splitlines()[0],
                    'Switch PortInfo:' if sw else 'CA/RT PortInfo:')
        m = re.search(r'^# Port info: .* port (\d+)$', own, flags=re.M)
        self.expect(name + ' port', m and int(m.group(1)), port)
        self.port_state(name, fields(own), None if sw else fab.lid(n, port))
        if not sw:
            self.expect(name + ' peer', peer, '')
            return
        m_, mp = fab.peer[(n, port)]
        m = re.search(r'^# Port info: .* DR path slid \d+; dlid \d+; '
                      r'([\d,]+) port (\d+)$', peer, flags=re.M)
        self.expect(name + ' peer route and port',
                    m and (m.group(1), int(m.group(2))), ('0,%d' % port, mp))
        self.port_state(name + ' peer', fields(peer),
                        None if fab.is_switch(m_) else fab.lid(m_, mp))

    def c_ibsysstat(self, args, text):
        """The OpenIB sysstat class against its server (-S) on an HCA:
        ping, the host name, one line per CPU."""
        fab = self.fab
        pos = self.positional(args)
        op = pos[1] if len(pos) > 1 else 'ping'
        if op == 'ping':
            self.expect('ping', text.strip(), 'sysstat ping succeeded')
        elif op == 'host':
            self.expect('host', text.strip(), 'diags-host.kmad')
        elif op == 'cpu':
            cpus = re.findall(r'^cpu (\d+): model .* MHZ\s+[\d.]+$', text,
                              flags=re.M)
            self.expect('cpus', cpus, [str(i) for i in range(fab.cpus)])
        else:
            self.fail('no check for ibsysstat ' + op)

    # ibping

    def c_ibping(self, args, text):
        fab = self.fab
        lid = int(args[-1])
        pongs = re.findall(r'^Pong from (\S+) \(Lid (\d+)\): time [\d.]+ ms$',
                           text, flags=re.M)
        count = int(args[args.index('-c') + 1])
        self.expect('pongs', pongs, [('diags-host.kmad', str(lid))] * count)
        self.expect('statistics', re.search(
            r'^(\d+) packets transmitted, (\d+) received, (\d+)% packet loss',
            text, flags=re.M).groups(), (str(count), str(count), '0'))
        self.expect('server is an HCA', fab.is_switch(fab.by_lid[lid][0]),
                    False)

    # sminfo

    def c_sminfo(self, args, text):
        """What the test SM agent answers, from the node it was asked from,
        by the port's SM LID, a LID or a directed route."""
        fab = self.fab
        sm = fab.sm
        if sm is None:
            self.fail('no test SM agent in the log')
            return
        src = self.origin
        if '-C' in args:
            src = fab.by_name[args[args.index('-C') + 1]]
        sm_node = fab.by_name[sm['dev']]
        pos = self.positional(args)
        if '-D' in args:
            n, inp = fab.dr_walk(src, hops(args[args.index('-D') + 1]))
            self.expect('node the route reaches', n, sm_node)
        elif pos:
            self.expect('SM LID asked', int(pos[0]), sm['lid'])
        self.expect('SM node is an HCA', fab.is_switch(sm_node), False)
        self.expect('SM port GUID', sm['guid'], fab.port_guid(sm_node, 1))
        self.expect('SM LID', sm['lid'], fab.lid(sm_node))
        # "sm lid" is the address sminfo asked: 0 for a directed route.
        m = re.search(r'^sminfo: sm lid (\d+) sm guid 0x([0-9a-f]+), '
                      r'activity count (\d+) priority (\d+) state (\d+) '
                      r'(\S+)$', text, flags=re.M)
        if not m:
            self.fail('no "sminfo: sm lid" line')
            return
        self.expect('sminfo', (int(m.group(1)), int(m.group(2), 16),
                               int(m.group(3)), int(m.group(4)),
                               int(m.group(5)), m.group(6)),
                    (0 if '-D' in args else sm['lid'], sm['guid'],
                     sm['act'], sm['priority'],
                     sm['state'], 'SMINFO_MASTER'))

    # ibtracert

    def c_ibtracert(self, args, text):
        fab = self.fab
        pos = self.positional(args)
        a, _ = fab.by_lid[int(pos[0])]
        b, _ = fab.by_lid[int(pos[1])]
        path = fab.route(a, b)
        want = []
        kind = lambda n: 'switch' if fab.is_switch(n) else 'ca'
        n0 = path[0][0]
        want.append('From %s {0x%016x} portnum %d lid %d-%d "%s"' % (
            kind(n0), fab.nodes[n0]['guid'], 0 if fab.is_switch(n0) else 1,
            fab.lid(n0), fab.lid(n0), fab.desc(n0)))
        for i in range(len(path) - 1):
            n, _, out = path[i]
            m, inp, _ = path[i + 1]
            want.append('[%d] -> %s port {0x%016x}[%d] lid %d-%d "%s"' % (
                out, kind(m), fab.port_guid(m, inp), inp, fab.lid(m),
                fab.lid(m), fab.desc(m)))
        nl = path[-1][0]
        want.append('To %s {0x%016x} portnum %d lid %d-%d "%s"' % (
            kind(nl), fab.nodes[nl]['guid'], 0 if fab.is_switch(nl) else 1,
            fab.lid(nl), fab.lid(nl), fab.desc(nl)))
        got = [l.strip() for l in text.splitlines() if l.strip()]
        self.expect('ibtracert %s %s' % tuple(pos), got, want)


def required_runs(fab):
    """Commands guest.sh must have run, word for word, so that a run that
    went missing fails the check too: derived from the fabric for its
    loops over LIDs and ports (whose bounds come from queries), and
    written out for diags.sh's fixed lists and guest.sh's fixed
    commands."""
    ca = '-C sim0 -P 1'
    req = {'ibstat', 'ibstatus', 'ibnetdiscover', 'ibnetdiscover ' + ca,
           'ibhosts ' + ca, 'ibswitches ' + ca, 'ibnodes ' + ca,
           'ibnetdiscover %s -p' % ca, 'iblinkinfo ' + ca,
           'iblinkinfo %s -l' % ca, 'dump_fts ' + ca, 'dump_fts %s -M' % ca,
           'ibaddr ' + ca}
    for lid in sorted(fab.by_lid):
        for attr in ('nodeinfo', 'nodedesc', 'portinfo', 'pkeys', 'GI',
                     'sl2vl', 'vlarb'):
            req.add('smpquery %s %s %d' % (ca, attr, lid))
        req.add('smpquery %s -x portinfo %d' % (ca, lid))
        req.add('ibaddr %s %d' % (ca, lid))
        req.add('smpdump %s %d 0x11' % (ca, lid))
        req.add('smpdump %s %d 0x15' % (ca, lid))
    for n in fab.hcas():
        lid = fab.lid(n, 1)
        req.add('perfquery %s %d 1' % (ca, lid))
        req.add('perfquery %s -x %d 1' % (ca, lid))
        req.add('ibportstate %s %d 1 query' % (ca, lid))
    for n in fab.switches():
        lid = fab.lid(n)
        for fmt in ('smpquery %s switchinfo %d', 'ibroute %s %d',
                    'ibroute %s -M %d', 'perfquery %s -a %d',
                    'perfquery %s -x -a %d', 'perfquery %s -a -l %d'):
            req.add(fmt % (ca, lid))
        for p in range(1, fab.nodes[n]['ports'] + 1):
            req.add('smpquery %s vlarb %d %d' % (ca, lid, p))
            req.add('ibportstate %s %d %d query' % (ca, lid, p))
            req.add('smpquery %s -c nodeinfo %d,0,%d' % (ca, lid, p))
    # What guest.sh runs from diags.sh's fixed lists (DR_PATHS,
    # DR_SWITCH_PATHS, TRACES, COMBINED_ROUTES, the SM's route, the last
    # HCA) and its fixed commands: the same words, so a list that lost an
    # entry fails too.
    last = fab.last_hca_lid()
    for path in ('0', '0,1', '0,1,1', '0,1,1,2', '0,1,1,2,2'):
        for attr in ('nodeinfo', 'nodedesc', 'portinfo', 'pkeys'):
            req.add('smpquery %s -D %s %s' % (ca, attr, path))
        req.add('ibaddr %s -D %s' % (ca, path))
        req.add('smpdump %s -D %s 0x11' % (ca, path))
        req.add('smpdump %s -s -D %s 0x10' % (ca, path))
    for path in ('0,1', '0,1,1', '0,1,1,2'):
        req.add('smpquery %s -D switchinfo %s' % (ca, path))
        req.add('ibroute %s -D %s' % (ca, path))
        req.add('ibroute %s -M -D %s' % (ca, path))
    for a, b in ((1, 2), (1, 4), (1, 5), (3, 1)):
        req.add('ibtracert %s %d %d' % (ca, a, b))
    for route in ('5,0', '5,0,1,3', '6,0,1,2', '6,0,1,2,3'):
        for attr in ('nodeinfo', 'nodedesc', 'portinfo'):
            req.add('smpquery %s -c %s %s' % (ca, attr, route))
    req |= {'/bin/umad_abi_test 0 2',
            '/bin/umad_abi_test --port-gone 0 2 rmmod kmad_diags_fabric '
            '&& rmmod kmad_sim',
            'ibstat -l', 'ibstat -p', 'ibstat sim1 1',
            'iblinkinfo %s -D 0' % ca, 'ibaddr %s -g %d' % (ca, last),
            'ibaddr %s -l %d' % (ca, last),
            'ibportstate %s -D 0 1 query' % ca,
            'perfquery %s -a -l %d' % (ca, last),
            'perfquery %s -R %d 1' % (ca, last),
            'dump_fts %s 2 6' % ca,
            'sminfo ' + ca, 'sminfo %s 1' % ca, 'sminfo %s -D 0' % ca,
            'sminfo -C sim3 -P 1',
            'sminfo -C sim3 -P 1 -D 0,1,1,1,2',
            'ibping %s -c 3 2' % ca}
    for op in ('', ' host', ' cpu'):
        req.add('ibsysstat %s %d%s' % (ca, last, op))
    return req


def sections(log):
    """(command, output, rc) of every run, kernel log lines left out."""
    out = []
    cur = None
    for line in log.splitlines():
        if line.startswith('=== cmd: '):
            cur = [line[9:], []]
            continue
        m = re.match(r'^=== rc: (\d+)$', line)
        if m and cur is not None:
            out.append((cur[0], '\n'.join(cur[1]), int(m.group(1))))
            cur = None
            continue
        if cur is not None and not KLOG.match(line) and \
                not line.startswith('=== time: '):
            cur[1].append(line)
    if cur is not None:
        out.append((cur[0], '\n'.join(cur[1]), None))
    return out


def splat(log):
    """The first splat in the log, or None.  Like make check (harness.py's
    early_boot_leaks()), a kmemleak report of an object start_kernel
    allocated (ACPI caches at boot, which no module can have made) is let
    through."""
    lines = log.split('\n')
    boot = harness.early_boot_leaks(lines)
    for n, line in enumerate(lines, 1):
        m = SPLAT.search(line) if n not in boot else None
        if m:
            return m.group(0)
    return None


def check(log, quiet=False):
    """Check a console log; return the number of failures."""
    say = (lambda *a: None) if quiet else print
    failed = []
    what = splat(log)
    if what:
        failed.append('kernel splat: ' + what)
    for must in ('kmad-diags: end', 'kmad-diags: modules unloaded'):
        if must not in log:
            failed.append('missing "%s"' % must)
    for m in re.finditer(r'^kmad-diags: FAILED.*$', log, flags=re.M):
        failed.append(m.group(0))
    try:
        fab = Fabric(log)
    except ValueError as e:
        failed.append(str(e))
        fab = None
    runs = sections(log)
    if fab is not None:
        origin = fab.by_name['sim0']
        ok = 0
        after_reset = None
        for cmd, text, rc in runs:
            words = cmd.split()
            tool = words[0].rsplit('/', 1)[-1]
            c = Checker(fab, origin)
            c.after_reset = after_reset
            if rc != 0:
                c.fail('exit status %s' % rc)
            elif tool in ('umad_abi_test', 'umad_abi_test32'):
                bad = re.findall(r'^umad-test: .*FAILED.*$', text, flags=re.M)
                c.errors.extend(bad)
                m = re.search(r'^umad-test: summary: (\d+) ok, 0 failed$',
                              text, flags=re.M)
                want = 6 if '--port-gone' in words else 54
                # Four more on a kernel with fault injection, which the
                # debug kernel has.
                if re.search(r'^umad-test: fault injection: on$', text,
                             flags=re.M):
                    want += 4
                elif '--port-gone' not in words and re.search(
                        r'^kmad-diags: kernel: debug$', log, flags=re.M):
                    c.fail('no fault injection on the debug kernel')
                if not m or int(m.group(1)) != want:
                    c.fail('no clean summary of %d cases' % want)
            elif hasattr(c, 'c_' + tool):
                try:
                    getattr(c, 'c_' + tool)(words[1:], text)
                except (AttributeError, KeyError, IndexError, ValueError,
                        TypeError) as e:
                    c.fail('cannot parse the output (%s: %s)' %
                           (type(e).__name__, e))
            else:
                c.fail('no check for this command')
            if tool == 'perfquery' and '-R' in words:
                after_reset = int(words[-2])
            elif c.after_reset is None:
                after_reset = None
            if c.errors:
                say('diags: %s: FAILED' % cmd)
                for e in c.errors[:10]:
                    say('diags:    %s' % e)
                failed.append(cmd)
            else:
                say('diags: %s: ok' % cmd)
                ok += 1
        if after_reset is not None:
            failed.append('no perfquery of LID %d after its -R' % after_reset)
        say('diags: %d tool runs checked, %d ok' % (len(runs), ok))
        done = {cmd for cmd, _, _ in runs}
        want = required_runs(fab)
        # The 32-bit ABI test runs where diags.sh packed it; guest.sh
        # says when it did not.
        if 'kmad-diags: no 32-bit umad_abi_test' not in log:
            want.add('/bin/umad_abi_test32 0 2')
        for cmd in sorted(want - done):
            failed.append('missing run: ' + cmd)
        # The last HCA's counters: with the others, then after its -R.
        twice = 'perfquery -C sim0 -P 1 %d 1' % fab.last_hca_lid()
        if [c for c, _, _ in runs].count(twice) != 2:
            failed.append('not run twice: ' + twice)
    if not runs:
        failed.append('no tool ran')
    say('diags: summary: %d runs, %d failed; verdict: %s' %
        (len(runs), len(failed), 'FAILED' if failed else 'ok'))
    for f in failed:
        if not any(f == r[0] for r in runs):
            say('diags: FAILED: %s' % f)
    return len(failed)


# --selftest: wrong answers a tool could print, each of which must fail.
MUTATIONS = [
    (r'(?m)^\[3\]\t"H-0014050000000400"', '[2]\t"H-0014050000000400"'),
    (r'base port 0 lid 7 lmc 0', 'base port 0 lid 8 lmc 0'),
    (r'SW     7  2 0x0014050000000700', 'SW     7  1 0x0014050000000700'),
    (r'(?m)^0x0003 002 :', '0x0003 001 :'),
    (r'activity count 4660 priority 14', 'activity count 4660 priority 15'),
    (r'sm lid 1 sm guid', 'sm lid 2 sm guid'),
    (r'(?m)^\[2\] -> switch port \{0x0014050000000700\}',
     '[3] -> switch port {0x0014050000000700}'),
    (r'Base lid: 3', 'Base lid: 33'),
    (r'(?m)^(WEIGHT: \|)0xFF\|', r'\g<1>0xFE|'),
    (r'LowCap 8 HighCap 8', 'LowCap 8 HighCap 0'),
    (r'Multicast mlids \[0xc000-0xc3ff\]', 'Multicast mlids [0xc000-0xc1ff]'),
    (r'(?m)^ MLid$', ' MLid\n0xc000      x   '),
    (r'(?m)^(PortXmitPkts:\.+)(\d+)$', r'\g<1>9\2'),
    (r'(?m)^Node Description:\.+sim1 ', 'Node Description:...............simX '),
    (r'(?m)(==>\s+7\s+)3(\[  \] "simsw2 kmad_sim switch")', r'\g<1>2\2'),
    (r'GID fe80::14:500:0:301 LID', 'GID fe80::14:500:0:302 LID'),
    (r'(?m)^0101 0203 0014 0500 0000 0600', '0101 0203 0014 0500 0000 0700'),
    (r'(?m)^0003 0001 0000 0800', '0003 0002 0000 0800'),
    (r'DR path slid 0; dlid 0; 0,1,1,2 guid', 'DR path slid 0; dlid 0; 0,1,1,1 guid'),
    (r'Unicast lids \[0x2-0x6\]', 'Unicast lids [0x2-0x7]'),
    (r'Lid 6 DR path slid 1; dlid 65535; 0,1 port 1',
     'Lid 6 DR path slid 1; dlid 65535; 0,1 port 2'),
    (r'# Port counters: Lid 6 port 2 \(', '# Port counters: Lid 6 port 3 ('),
    (r'(?m)^diags-host\.kmad$', 'other-host.kmad'),
    (r'(?m)^cpu 1: model', 'cpu 2: model'),
    (r'(-c nodedesc 6,0,1,2\nNode Description:\.+)simsw2', r'\g<1>simsw1'),
    (r'(-c nodeinfo 6,0,1,2,3\n(?:.*\n)*?LocalPort:\.+)1', r'\g<1>2'),
    (r'(?s)=== cmd: ibportstate -C sim0 -P 1 6 2 query\n.*?=== rc: 0\n', ''),
    (r'(Multicast mlids \[0xc000-0xc3ff\] of switch DR path .*\n(?:.*\n)*?)'
     r'0 valid mlids', r'\g<1>10 valid mlids'),
    (r'(=== cmd: ibswitches -C sim0 -P 1\n[^\n]*)lid 7', r'\1lid 8'),
    (r'(=== cmd: ibhosts -C sim0 -P 1\n)[^\n]*\n', r'\1'),
    (r'(?m)^umad-test: issm: ok', 'umad-test: issm: FAILED: x'),
    (r'(?m)^=== rc: 0$', '=== rc: 1'),
    (r'kmad-diags: modules unloaded', 'kmad-diags: FAILED: rmmod kmad'),
    (r'kmad-diags: end', '[ 1.0] BUG: kernel NULL pointer dereference\nkmad-diags: end'),
    (r'kmad-diags: end', 'unreferenced object 0xffff888003c1e000 (size 64):\n'
     '  backtrace:\n    [<0>] kmad_umad_open+0x1/0x2\nkmad-diags: end'),
]


def selftest(log):
    if check(log, quiet=True):
        print('diags-selftest: the log does not pass to begin with')
        return 1
    bad = 0
    for pat, rep in MUTATIONS:
        mutated, n = re.subn(pat, rep, log, count=1)
        if not n:
            print('diags-selftest: %r matches nothing' % pat)
            bad += 1
        elif not check(mutated, quiet=True):
            print('diags-selftest: %r went unnoticed' % pat)
            bad += 1
    print('diags-selftest: %d mutations, %d caught' %
          (len(MUTATIONS), len(MUTATIONS) - bad))
    return 1 if bad else 0


def scale(log):
    """DIAGS_SCALE=1: ibnetdiscover and kmad_discover over one fattree;
    both must see every node.  Prints the figure; returns 0 or 1."""
    bad = []
    what = splat(log)
    if what:
        bad.append('kernel splat: ' + what)
    for must in ('kmad-diags: end', 'kmad-diags: modules unloaded'):
        if must not in log:
            bad.append('missing "%s"' % must)
    bad += re.findall(r'^kmad-diags: FAILED.*$', log, flags=re.M)
    cfg = re.search(r'kmad-diags: scale: kmad_sim (.*)$', log, flags=re.M)
    ibn = re.search(r'kmad-diags: scale: ibnetdiscover rc (\d+) from '
                    r'([\d.]+) to ([\d.]+) switches (\d+) cas (\d+)', log)
    kd = re.search(r'kmad-diags: scale: kmad_discover: done: (\d+) nodes, '
                   r'(\d+) links, .*, (\d+) timeouts, (\d+) unreachable, '
                   r'(\d+) errors .* (\d+) ms\)', log)
    if not (cfg and ibn and kd):
        bad.append('scale lines missing')
    else:
        args = dict(a.split('=', 1) for a in cfg.group(1).split())
        hcas, leaves, spines = (int(args[k]) for k in
                                ('hcas', 'leaves', 'spines'))
        want = hcas + leaves + spines
        rc, t0, t1, sw, cas = ibn.groups()
        ibn_s = float(t1) - float(t0)
        ibn_nodes = int(sw) + int(cas)
        kd_nodes, kd_ms = int(kd.group(1)), int(kd.group(6))
        if rc != '0':
            bad.append('ibnetdiscover exit status %s' % rc)
        if (int(sw), int(cas)) != (leaves + spines, hcas):
            bad.append('ibnetdiscover: %s switches, %s CAs; expected %d, %d'
                       % (sw, cas, leaves + spines, hcas))
        if kd_nodes != want:
            bad.append('kmad_discover: %d nodes; expected %d'
                       % (kd_nodes, want))
        if int(kd.group(4)) or int(kd.group(5)):
            bad.append('kmad_discover: nodes unreachable or errors')
        print('diags-scale: fattree %s: %d nodes (%d HCAs, %d switches)' %
              (cfg.group(1), want, hcas, leaves + spines))
        print('diags-scale: ibnetdiscover (kmad_umad): %d nodes in %.2f s' %
              (ibn_nodes, ibn_s))
        print('diags-scale: kmad_discover (in kernel): %d nodes in %.3f s, '
              '%s timeouts' % (kd_nodes, kd_ms / 1000.0, kd.group(3)))
        if kd_ms:
            print('diags-scale: ratio ibnetdiscover / kmad_discover: %.1f' %
                  (ibn_s * 1000.0 / kd_ms))
    for b in bad:
        print('diags-scale: FAILED: %s' % b)
    print('diags-scale: verdict: %s' % ('FAILED' if bad else 'ok'))
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    if args and args[0] == '--scale':
        return scale(open(args[1], errors='replace').read())
    if args and args[0] == '--selftest':
        return selftest(open(args[1], errors='replace').read())
    return 1 if check(open(args[0], errors='replace').read()) else 0


if __name__ == '__main__':
    sys.exit(main())
