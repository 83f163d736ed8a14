#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The verdict of `make opensm` (tests/opensm/opensm.sh).

    check.py <console log>

The truth is kmad_sim's ibsim netlist, which the guest prints (nodes,
NodeGUIDs, port counts, descriptions, cables).  Every tool run of
tests/opensm/guest.sh (between "=== cmd: <side> <command>" and "=== rc:
<status>") and OpenSM's log on each side ("=== osmlog: <side>") are
checked against it, for side "kmad" (OpenSM through kmad_umad on kmad_sim)
and side "ibsim" (OpenSM through libumad2sim.so on ibsim, same netlist):

  registrations    (kmad) OpenSM's agent registrations, made one by one
                   by umad_reg_probe as libibumad makes them, succeed;
  SUBNET UP        OpenSM logged SUBNET UP;
  sminfo MASTER    sminfo: OpenSM, on sim0 port 1's GUID, is MASTER;
  topology         ibnetdiscover finds the netlist's nodes and cables;
  unique LIDs      every port and switch has a LID, no two the same;
  ports ACTIVE     every cabled port's PortInfo says Active;
  LFTs route       following the switches' LFTs (ibroute) from every
                   switch reaches the owner of every LID;
  MFTs             ibroute -M of every switch: MLIDs from 0xC000 (kmad:
                   to 0xC3FF, MulticastFDBCap 1024), every port a mask
                   names is port 0 or a cabled port of that switch;
  ibtracert        a trace between every ordered pair of HCA ports ends
                   at the right node;
  NodeRecord/LID   saquery NR <lid>: one record, the right node, for every
                   LID;
  NodeRecord all   saquery NR: a record for every port of every node (an
                   answer of several MADs: RMPP);
  PathRecord       saquery PR between every ordered pair of HCA ports:
                   one record, the right LIDs;
  LinkRecord       saquery LR: one record each way for every cable, with
                   the LIDs and ports of both ends;
  PortInfoRecord   saquery PIR: a record for every HCA port and every
                   switch port, port 0 included (several MADs: RMPP),
                   each Active, an endport's LID its record's;
  SM records       saquery SMIR: one record, the SM's LID and GUID,
                   MASTER; saquery -s: the SM's port is the one IsSM port;
  SA info          saquery ClassPortInfo: SA class version 2, OpenSM's
                   CapabilityMask and RespTimeValue; saquery -g: one
                   group, the IPoIB broadcast group OpenSM creates;
  port errors      ibqueryerrors: every node and cabled port checked (its
                   own discovery, each node's PMA, PathRecords for its SL
                   table), none with errors, no PMA query failed,
                   nothing but the summary printed;
  link down/up     (kmad) a cut cable is seen Down and swept, then mended
                   and swept back to Active;
  trap 128         (kmad) OpenSM received Trap 128 from the cut cable's
                   switch after the cut, and again after the mend;
  M_Key            (kmad) OpenSM run again with an M_Key at ProtectBits 2
                   (m_key, m_key_protection_level in its config file):
                   SUBNET UP with no SMP timeout in its log; smpquery of
                   an HCA's PortInfo and a switch's NodeInfo without the
                   key, or with a wrong one, gets no answer; with it
                   (-y), an answer, PortInfo with ProtectBits 2 and
                   MkeyViolations counting the refused PortInfo Gets;
                   ibstat (sysfs) still reads every HCA port, Active,
                   without a violation; OpenSM's log reports one Trap
                   256 (Bad M_Key) per
                   refused SMP, from the HCA's or the switch's LID, with
                   its attribute and the key it carried;
  guest            no kernel splat, the guest reached its end and unloaded
                   its modules.

Then the check checks itself: wrong answers made out of the log (a wrong
route, LID, state, GUID, exit status, a splat) must each fail a check
that passed; each that does not is one more failure.  Prints a
side-by-side table with OpenSM's timings and a last line
"N passed, N failed"; exits 1 on any failure.

The answers to "NodeRecord all" and "PortInfoRecord" (several MADs) and
"PathRecord" (one record in a MAD with room for three, whose length only
the RMPP header gives) need RMPP: kmad does it.  On the ibsim side
"NodeRecord all" and "PortInfoRecord" are never counted: ibsim has no
RMPP (their results are printed).
"""
import re
import sys
from datetime import datetime

SPLAT = re.compile(r'WARNING: |BUG: |kernel BUG at|Oops|general protection '
                   r'fault|Kernel panic|UBSAN: |Call Trace:|usercopy: |'
                   r'unreferenced object|kmemleak report|'
                   r'blocked for more than|soft lockup|'
                   r'rcu: INFO: |ODEBUG: |printk messages dropped|'
                   r'kmemleak: .*(disabled|Cannot allocate)')
KLOG = re.compile(r'^\[\s*\d+\.\d+\] ')
OSM_CONSOLE = re.compile(r'^OpenSM\[\d+\]: ')
SIDES = ('kmad', 'ibsim')
CHECKS = [
    ('umad_reg', "OpenSM's agent registrations"),
    ('subnet_up', 'SUBNET UP'),
    ('sminfo', 'sminfo: OpenSM MASTER'),
    ('topology', 'ibnetdiscover: netlist nodes, cables'),
    ('lids', 'unique LID on every port'),
    ('active', 'every cabled port ACTIVE'),
    ('lft', 'switch LFTs route every LID'),
    ('mft', 'ibroute -M: switch MFTs'),
    ('tracert', 'ibtracert between HCA pairs'),
    ('nr_lid', 'saquery NodeRecord by LID'),
    ('nr_all', 'saquery NodeRecord table (RMPP)'),
    ('pr', 'saquery PathRecord HCA pairs'),
    ('lr', 'saquery LinkRecord: every cable'),
    ('pir', 'saquery PortInfoRecord table (RMPP)'),
    ('sm_records', 'saquery SMInfoRecord, IsSM port'),
    ('sa_info', 'saquery ClassPortInfo, groups'),
    ('errors', 'ibqueryerrors: no port errors'),
    ('link', 'link cut, mended, ACTIVE again'),
    ('trap', 'Trap 128 from the switch, cut and mend'),
    ('mkey', 'M_Key ProtectBits 2: no key, no answer'),
    ('pkeytrap', 'Trap 257: GMP outside the partition'),
    ('guest', 'no splat, guest ended cleanly'),
]
# Checks that do not depend on OpenSM having brought the subnet up.
INDEPENDENT = ('umad_reg', 'subnet_up', 'topology', 'guest')
# Checks a side does not do, and why (printed in the table).
NOT_RUN = {
    ('ibsim', 'umad_reg'): '(kernel: kmad side)',
    ('ibsim', 'link'): 'not run (ibsim: console only)',
    ('ibsim', 'trap'): 'not run (ibsim: console only)',
    ('ibsim', 'mkey'): 'not run (kmad side)',
    ('ibsim', 'pkeytrap'): 'not run (kmad side)',
    ('ibsim', 'guest'): '(kernel: kmad side)',
}


class Net:
    """The fabric as kmad_sim's ibsim netlist describes it."""

    def __init__(self, text):
        self.nodes = {}         # name -> dict(kind, ports, guid, desc)
        self.links = set()      # frozenset(((guid, port), (guid, port)))
        guid = None
        cur = None
        peers = []
        for line in text.splitlines():
            m = re.match(r'^(?:caguid|switchguid)=0x([0-9a-f]+)$', line)
            if m:
                guid = int(m.group(1), 16)
                continue
            m = re.match(r'^(Hca|Switch)\t(\d+) "([^"]+)"\t+# "([^"]*)"', line)
            if m:
                cur = m.group(3)
                self.nodes[cur] = dict(kind=m.group(1), ports=int(m.group(2)),
                                       guid=guid, desc=m.group(4))
                continue
            m = re.match(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\]$', line)
            if m and cur:
                peers.append((cur, int(m.group(1)), m.group(2),
                              int(m.group(3))))
        if not self.nodes:
            raise ValueError('no netlist in the log')
        for a, ap, b, bp in peers:
            self.links.add(frozenset(((self.nodes[a]['guid'], ap),
                                      (self.nodes[b]['guid'], bp))))
        self.by_guid = {v['guid']: k for k, v in self.nodes.items()}

    def is_switch(self, name):
        return self.nodes[name]['kind'] == 'Switch'

    def port_guid(self, name, port):
        """ibsim and kmad_sim: an HCA port's GUID is NodeGUID + port."""
        g = self.nodes[name]['guid']
        return g if self.is_switch(name) else g + port

    def hca_ports(self):
        """(name, port) of every cabled HCA port."""
        out = []
        for link in self.links:
            for guid, port in link:
                name = self.by_guid[guid]
                if not self.is_switch(name):
                    out.append((name, port))
        return sorted(out)

    def peer(self, guid, port):
        for link in self.links:
            if (guid, port) in link:
                other = [e for e in link if e != (guid, port)]
                return other[0] if other else (guid, port)
        return None


def sections(log):
    """(side, command, output, rc) of every run, kernel lines left out."""
    out = []
    cur = None
    for line in log.splitlines():
        if line.startswith('=== cmd: '):
            side, _, cmd = line[9:].partition(' ')
            cur = [side, cmd, []]
            continue
        m = re.match(r'^=== rc: (\d+)$', line)
        if m and cur is not None:
            out.append((cur[0], cur[1], '\n'.join(cur[2]), int(m.group(1))))
            cur = None
            continue
        # OpenSM's syslog lines reach the console (no syslogd in the guest).
        if cur is not None and not KLOG.match(line) and \
                not OSM_CONSOLE.match(line):
            cur[2].append(line)
    if cur is not None:
        out.append((cur[0], cur[1], '\n'.join(cur[2]), None))
    return out


def block(log, start, end='=== osmlog end'):
    m = re.search('^' + re.escape(start) + r'\n(.*?)^' + re.escape(end) + '$',
                  log, flags=re.M | re.S)
    if not m:
        return None
    return '\n'.join(l for l in m.group(1).splitlines() if not KLOG.match(l))


def osm_events(text):
    """(seconds, message) of each OpenSM log line; banners without a
    timestamp get the time of the line before."""
    out = []
    t = None
    for line in text.splitlines():
        m = re.match(r'^\w{3} [ \d]\d (\d\d):(\d\d):(\d\d) (\d{6}) \[[0-9A-F]+\] '
                     r'0x[0-9a-f]{2} -> (.*)$', line)
        if m:
            t = (int(m.group(1)) * 3600 + int(m.group(2)) * 60 +
                 int(m.group(3)) + int(m.group(4)) / 1e6)
            out.append((t, m.group(5)))
        elif t is not None and line.strip():
            out.append((t, line.strip()))
    return out


def parse_ports(text):
    """ibnetdiscover -p: {(NodeGUID, port): (kind, lid)} and the links (it
    prints port GUIDs: an HCA's is NodeGUID + port)."""
    ports = {}
    links = set()
    for line in text.splitlines():
        m = re.match(r'^(CA|SW)\s+(\d+)\s+(\d+)\s+0x([0-9a-f]{16}) \S+ \S+ '
                     r'- (CA|SW)\s+(\d+)\s+(\d+)\s+0x([0-9a-f]{16}) ', line)
        if not m:
            continue
        a = (int(m.group(4), 16), int(m.group(3)))
        b = (int(m.group(8), 16), int(m.group(7)))
        if m.group(1) == 'CA':
            a = (a[0] - a[1], a[1])
        if m.group(5) == 'CA':
            b = (b[0] - b[1], b[1])
        for key, val in ((a, (m.group(1), int(m.group(2)))),
                         (b, (m.group(5), int(m.group(6))))):
            # A port seen twice (once from each end) with two LIDs is
            # kept as a conflict, which c_lids() reports.
            if ports.setdefault(key, val) != val:
                ports[key] = ('conflict', 0)
        links.add(frozenset((a, b)))
    return ports, links


class Side:
    """The results of one side's checks: {check: (ok, text)}."""

    def __init__(self, name, net, runs, log):
        self.name = name
        self.net = net
        self.runs = [(c, t, rc) for s, c, t, rc in runs if s == name]
        self.mkey_runs = [(c, t, rc) for s, c, t, rc in runs if s == 'mkey'
                          and not c.startswith('umad_peer ')]
        self.pkey_runs = [(c, t, rc) for s, c, t, rc in runs if s == 'mkey'
                          and c.startswith('umad_peer ')]
        self.log = log
        self.res = {}
        self.figures = {}

    def set(self, key, ok, text):
        self.res[key] = (ok, text)

    def find(self, pattern):
        return [(c, t, rc) for c, t, rc in self.runs if re.search(pattern, c)]

    def check(self):
        for key, _ in CHECKS:
            if (self.name, key) in NOT_RUN:
                continue
            try:
                getattr(self, 'c_' + key)()
            except (KeyError, IndexError, ValueError, TypeError,
                    AttributeError) as e:
                self.set(key, False, 'cannot parse (%s: %s)' %
                         (type(e).__name__, e))
        # Without SUBNET UP what the tools found is not OpenSM's work
        # (kmad_sim with sm=1 brings its ports up itself): none of it
        # counts.
        if not self.res['subnet_up'][0]:
            for key, (ok, text) in self.res.items():
                if ok and key not in INDEPENDENT:
                    self.set(key, False, 'OpenSM not up (tools: %s)' % text)

    def c_umad_reg(self):
        lines = re.findall(r'^umad-probe: (class .*)$', self.log, flags=re.M)
        bad = [l for l in lines if not re.search(r': ok \(id \d+\)$', l)]
        if len(lines) != 6:
            bad.append('%d of 6 registrations probed' % len(lines))
        self.set('umad_reg', not bad, '; '.join(bad[:2]) or
                 '%d/6 ok' % len(lines))

    def c_subnet_up(self):
        text = block(self.log, '=== osmlog: ' + self.name)
        if text is None:
            self.set('subnet_up', False, 'no OpenSM log')
            return
        ev = osm_events(text)
        errs = sum(1 for _, msg in ev if re.search(r'\bERR [0-9A-F]{4}:', msg))
        self.figures['OpenSM ERR lines'] = str(errs)
        ups = [t for t, msg in ev if msg == 'SUBNET UP']
        self.figures['SUBNET UPs (sweeps)'] = str(len(ups))
        if not ups or not ev:
            self.set('subnet_up', False, 'no SUBNET UP')
            return
        heavy = [t for t, msg in ev if 'INITIATING HEAVY SWEEP' in msg and
                 t <= ups[0]]
        self.figures['time to SUBNET UP'] = '%.3f s' % (ups[0] - ev[0][0])
        if heavy:
            self.figures['first heavy sweep'] = '%.3f s' % (ups[0] - heavy[-1])
        self.set('subnet_up', True, '%.3f s' % (ups[0] - ev[0][0]))

    def sm_guid(self):
        return self.net.port_guid('sim0', 1)

    def c_sminfo(self):
        runs = self.find(r'^sminfo')
        if not runs or runs[0][2] != 0:
            self.set('sminfo', False, 'sminfo failed' if runs else 'not run')
            return
        m = re.search(r'sm lid (\d+) sm guid 0x([0-9a-f]+), activity count '
                      r'\d+ priority \d+ state (\d) (\S+)', runs[0][1])
        if not m:
            self.set('sminfo', False, 'unexpected output')
        elif int(m.group(2), 16) != self.sm_guid():
            self.set('sminfo', False, 'SM guid 0x%s, not sim0 port 1\'s' %
                     m.group(2))
        elif m.group(3) != '3' or m.group(4) != 'SMINFO_MASTER':
            self.set('sminfo', False, 'state %s %s' % (m.group(3), m.group(4)))
        else:
            self.set('sminfo', True, 'MASTER, lid %s' % m.group(1))

    def c_topology(self):
        runs = [r for r in self.find(r'^ibnetdiscover') if '-p' not in r[0]]
        if not runs or runs[0][2] != 0:
            self.set('topology', False, 'ibnetdiscover failed' if runs
                     else 'not run')
            return
        text = runs[0][1]
        nodes = {}
        links = set()
        cur = None
        for line in text.splitlines():
            m = re.match(r'^(Switch|Ca)\s+(\d+) "[SH]-([0-9a-f]{16})"\s+# '
                         r'"([^"]*)"', line)
            if m:
                cur = int(m.group(3), 16)
                nodes[cur] = (m.group(1), int(m.group(2)), m.group(4))
                continue
            m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]{16})"'
                         r'\[(\d+)\]', line)
            if m and cur is not None:
                links.add(frozenset(((cur, int(m.group(1))),
                                     (int(m.group(2), 16), int(m.group(3))))))
        want = {v['guid']: ('Switch' if v['kind'] == 'Switch' else 'Ca',
                            v['ports'], v['desc'])
                for v in self.net.nodes.values()}
        bad = []
        if nodes != want:
            bad.append('nodes differ: %d found, %d in the netlist' %
                       (len(nodes), len(want)))
        if links != self.net.links:
            bad.append('cables differ: %d found, %d in the netlist' %
                       (len(links), len(self.net.links)))
        self.set('topology', not bad, '; '.join(bad) or
                 '%d nodes, %d cables' % (len(nodes), len(links)))

    def port_lids(self):
        runs = [r for r in self.find(r'^ibnetdiscover .*-p') if r[2] == 0]
        if not runs:
            return None, None
        return parse_ports(runs[0][1])

    def c_lids(self):
        ports, links = self.port_lids()
        if ports is None:
            self.set('lids', False, 'no ibnetdiscover -p')
            return
        owner = {}
        bad = []
        for (guid, port), (kind, lid) in ports.items():
            name = self.net.by_guid.get(guid)
            if name is None:
                bad.append('unknown guid %x' % guid)
                continue
            key = name if kind == 'SW' else (name, port)
            if kind == 'conflict':
                bad.append('%s port %d: two LIDs' % (name, port))
            elif lid == 0 or lid >= 0xc000:
                bad.append('%s: LID %d' % (key, lid))
            elif owner.setdefault(lid, key) != key:
                bad.append('LID %d: %s and %s' % (lid, owner[lid], key))
        if links != self.net.links:
            bad.append('ibnetdiscover -p: %d cables, netlist %d' %
                       (len(links), len(self.net.links)))
        want = len(self.net.hca_ports()) + sum(
            1 for n in self.net.nodes if self.net.is_switch(n))
        if len(owner) != want:
            bad.append('%d LIDs, %d wanted' % (len(owner), want))
        self.set('lids', not bad, '; '.join(bad[:3]) or
                 '%d LIDs, unique' % len(owner))

    def lid_map(self):
        """{lid: (guid, port)} of every endport (switch port 0)."""
        ports, _ = self.port_lids()
        out = {}
        for (guid, port), (kind, lid) in ports.items():
            out[lid] = (guid, 0 if kind == 'SW' else port)
        return out

    def c_active(self):
        runs = self.find(r'^smpquery .*portinfo')
        bad = []
        n = 0
        for cmd, text, rc in runs:
            m = re.search(r'^LinkState:\.+(\S+)', text, flags=re.M)
            n += 1
            if rc != 0 or not m or m.group(1) != 'Active':
                bad.append('%s: %s' % (cmd.split()[-2:] if rc == 0 else cmd,
                                       m.group(1) if m else 'rc %s' % rc))
        # Cabled ports: two per cable; each queried once from its side
        # (switch ports by switch LID and port, HCA ports by their LID).
        want = 2 * len(self.net.links)
        if n != want:
            bad.append('%d ports queried, %d cabled' % (n, want))
        self.set('active', not bad, '; '.join(str(b) for b in bad[:3]) or
                 '%d/%d Active' % (n, want))

    def c_mft(self):
        """ibroute -M of every switch: the MLID range, and every port a
        mask names is port 0 or one of that switch's cabled ports."""
        bad = []
        seen = set()
        rows = 0
        for cmd, text, rc in self.find(r'^ibroute .*-M'):
            m = re.search(r'^Multicast mlids \[0x([0-9a-f]+)-0x([0-9a-f]+)\] '
                          r'of switch Lid \d+ guid 0x([0-9a-f]{16})', text,
                          flags=re.M)
            if rc != 0 or not m:
                bad.append('%s: rc %s' % (cmd, rc))
                continue
            guid = int(m.group(3), 16)
            seen.add(guid)
            if m.group(1) != 'c000' or \
                    (self.name == 'kmad' and m.group(2) != 'c3ff'):
                bad.append('%x: MLIDs 0x%s-0x%s' % (guid, m.group(1),
                                                    m.group(2)))
            found = re.findall(r'^0x([0-9a-f]{4})      (.*)$', text,
                               flags=re.M)
            rows += len(found)
            for mlid, mask in found:
                for p in range(0, len(mask), 2):
                    if mask[p] == 'x' and p // 2 and \
                            self.net.peer(guid, p // 2) is None:
                        bad.append('%x: MLID 0x%s to uncabled port %d' %
                                   (guid, mlid, p // 2))
            if '%d valid mlids dumped' % len(found) not in text:
                bad.append('%x: MLID count' % guid)
        switches = {self.net.nodes[n]['guid'] for n in self.net.nodes
                    if self.net.is_switch(n)}
        if seen != switches:
            bad.append('ibroute -M ran on %d of %d switches' %
                       (len(seen), len(switches)))
        self.set('mft', not bad, '; '.join(bad[:3]) or
                 '%d switches, %d MLID rows' % (len(seen), rows))

    def c_lft(self):
        lids = self.lid_map()
        lft = {}
        bad = []
        for cmd, text, rc in self.find(r'^ibroute(?!.* -M)'):
            m = re.search(r'^Unicast lids \[0x0-0x[0-9a-f]+\] of switch Lid '
                          r'(\d+) guid 0x([0-9a-f]{16})', text, flags=re.M)
            if rc != 0 or not m:
                bad.append('%s: rc %s' % (cmd, rc))
                continue
            table = {}
            for lid, port in re.findall(r'^0x([0-9a-f]{4}) (\d{3}) :', text,
                                        flags=re.M):
                table[int(lid, 16)] = int(port)
            lft[int(m.group(2), 16)] = table
        switches = [self.net.nodes[n]['guid'] for n in self.net.nodes
                    if self.net.is_switch(n)]
        if sorted(lft) != sorted(switches):
            bad.append('ibroute ran on %d of %d switches' %
                       (len(lft), len(switches)))
        routed = 0
        for sw in switches:
            for lid, dest in sorted(lids.items()):
                cur, hops = sw, 0
                while True:
                    out = lft.get(cur, {}).get(lid)
                    if out is None:
                        bad.append('switch %x: no LFT entry for LID %d' %
                                   (cur, lid))
                        break
                    if out == 0:
                        if dest != (cur, 0):
                            bad.append('switch %x keeps LID %d' % (cur, lid))
                        else:
                            routed += 1
                        break
                    peer = self.net.peer(cur, out)
                    if peer is None:
                        bad.append('switch %x: LID %d to uncabled port %d' %
                                   (cur, lid, out))
                        break
                    name = self.net.by_guid[peer[0]]
                    if not self.net.is_switch(name):
                        if dest != peer:
                            bad.append('LID %d reaches %s port %d' %
                                       (lid, name, peer[1]))
                        else:
                            routed += 1
                        break
                    cur, hops = peer[0], hops + 1
                    if hops > 16:
                        bad.append('LID %d loops' % lid)
                        break
        want = len(switches) * len(lids)
        if routed != want:
            bad.append('%d of %d routed' % (routed, want))
        self.set('lft', not bad, '; '.join(bad[:3]) or
                 '%d switches x %d LIDs routed' % (len(switches), len(lids)))

    def hca_lids(self):
        return sorted(lid for lid, (g, p) in self.lid_map().items() if p)

    def c_tracert(self):
        lids = self.lid_map()
        want = {(a, b) for a in self.hca_lids() for b in self.hca_lids()
                if a != b}
        ok = set()
        bad = []
        for cmd, text, rc in self.find(r'^ibtracert'):
            a, b = (int(x) for x in cmd.split()[-2:])
            g, p = lids[b]
            m = re.search(r'^To ca \{0x([0-9a-f]{16})\} portnum (\d+) lid '
                          r'(\d+)-', text, flags=re.M)
            if rc == 0 and m and int(m.group(1), 16) == g and \
                    int(m.group(3)) == b:
                ok.add((a, b))
            else:
                bad.append('%d->%d' % (a, b))
        if ok != want:
            bad.append('%d of %d pairs' % (len(ok), len(want)))
        self.set('tracert', not bad, '; '.join(bad[:4]) or
                 '%d/%d pairs' % (len(ok), len(want)))

    @staticmethod
    def records(text, kind):
        return text.count('%s dump:' % kind)

    def c_nr_lid(self):
        lids = self.lid_map()
        ok = 0
        bad = []
        runs = self.find(r'^saquery .*NR \d+$')
        for cmd, text, rc in runs:
            lid = int(cmd.split()[-1])
            guids = re.findall(r'node_guid\.+0x([0-9a-f]+)', text)
            if rc == 0 and len(guids) == 1 and \
                    int(guids[0], 16) == lids[lid][0]:
                ok += 1
            else:
                bad.append('LID %d: rc %s, %d records' % (lid, rc, len(guids)))
        if ok != len(lids) or len(runs) != len(lids):
            bad.append('%d of %d LIDs' % (ok, len(lids)))
        self.set('nr_lid', not bad, '; '.join(bad[:3]) or
                 '%d/%d LIDs, 1 record each' % (ok, len(lids)))

    def c_nr_all(self):
        runs = self.find(r'^saquery .*NR$')
        want = len(self.net.hca_ports()) + sum(
            1 for n in self.net.nodes if self.net.is_switch(n))
        if not runs:
            self.set('nr_all', False, 'not run')
            return
        cmd, text, rc = runs[0]
        got = {(int(g, 16), int(p)) for g, p in re.findall(
            r'node_guid\.+0x([0-9a-f]+)\n(?:.*\n)*?\s*port_num\.+(\d+)', text)}
        n = self.records(text, 'NodeRecord')
        ok = rc == 0 and n == want and len(got) == want
        self.set('nr_all', ok, '%d records of %d (rc %s)' % (n, want, rc))

    def c_pr(self):
        want = {(a, b) for a in self.hca_lids() for b in self.hca_lids()
                if a != b}
        ok = set()
        bad = []
        for cmd, text, rc in self.find(r'^saquery .*PR --slid'):
            a, b = int(cmd.split()[-3]), int(cmd.split()[-1])
            slid = re.findall(r'^\s*slid\.+(\d+)$', text, flags=re.M)
            dlid = re.findall(r'^\s*dlid\.+(\d+)$', text, flags=re.M)
            if rc == 0 and self.records(text, 'PathRecord') == 1 and \
                    slid == [str(a)] and dlid == [str(b)]:
                ok.add((a, b))
            else:
                bad.append('%d->%d: rc %s, %d records' %
                           (a, b, rc, self.records(text, 'PathRecord')))
        if ok != want:
            bad.append('%d of %d pairs' % (len(ok), len(want)))
        self.set('pr', not bad, '; '.join(bad[:3]) or
                 '%d/%d pairs, 1 record each' % (len(ok), len(want)))

    def lid_of(self):
        """{(NodeGUID, port): LID} of every cabled port (a switch's: its
        LID), from ibnetdiscover -p."""
        ports, _ = self.port_lids()
        return {k: lid for k, (_, lid) in ports.items()}

    def one(self, pattern):
        """The first run whose command matches: (text, rc), or None."""
        runs = self.find(pattern)
        return (runs[0][1], runs[0][2]) if runs else None

    def c_lr(self):
        run = self.one(r'^saquery .*LR$')
        if not run:
            self.set('lr', False, 'not run')
            return
        text, rc = run
        lid = self.lid_of()
        want = set()
        for link in self.net.links:
            (ga, pa), (gb, pb) = sorted(link)
            want.add((lid[(ga, pa)], pa, lid[(gb, pb)], pb))
            want.add((lid[(gb, pb)], pb, lid[(ga, pa)], pa))
        got = [tuple(int(x) for x in r) for r in re.findall(
            r'FromLID\.+(\d+)\n\s*FromPort\.+(\d+)\n\s*ToPort\.+(\d+)\n'
            r'\s*ToLID\.+(\d+)', text)]
        got = [(a, ap, b, bp) for a, ap, bp, b in got]
        ok = rc == 0 and sorted(got) == sorted(want) and \
            self.records(text, 'LinkRecord') == len(got)
        self.set('lr', ok, '%d records, %d wanted (rc %s)' %
                 (len(got), len(want), rc))

    def c_pir(self):
        run = self.one(r'^saquery .*PIR$')
        if not run:
            self.set('pir', False, 'not run')
            return
        text, rc = run
        lid = self.lid_of()
        want = set()
        for name, v in self.net.nodes.items():
            if self.net.is_switch(name):
                sw = {l for (g, _), l in lid.items() if g == v['guid']}
                want |= {(l, p) for l in sw for p in range(v['ports'] + 1)}
        want |= {(lid[(self.net.nodes[n]['guid'], p)], p)
                 for n, p in self.net.hca_ports()}
        switch_lids = {l for (g, _), l in lid.items()
                       if self.net.is_switch(self.net.by_guid[g])}
        got = []
        bad = []
        # Each record: its port Active; an HCA port's and a switch's port
        # 0's PortInfo.LID the record's LID.
        for rec in text.split('PortInfoRecord dump:')[1:]:
            m = re.search(r'EndPortLid\.+(\d+)\n\s*PortNum\.+(\d+)', rec)
            if not m:
                bad.append('a record without its RID')
                continue
            key = (int(m.group(1)), int(m.group(2)))
            got.append(key)
            state = re.findall(r'^\s*LinkState:\.+(\S+)$', rec, flags=re.M)
            plid = re.findall(r'^\s*Lid:\.+(\d+)$', rec, flags=re.M)
            if state != ['Active']:
                bad.append('%s: LinkState %s' % (key, state))
            if (key[1] == 0 or key[0] not in switch_lids) and \
                    plid != [str(key[0])]:
                bad.append('%s: Lid %s' % (key, plid))
        if sorted(got) != sorted(want):
            bad.append('%d records of %d' % (len(got), len(want)))
        ok = rc == 0 and not bad
        self.set('pir', ok, '%d records of %d, Active (rc %s)' %
                 (len(got), len(want), rc) if ok else
                 '; '.join(bad[:3]) + ' (rc %s)' % rc)

    def c_sm_records(self):
        smir, issm = self.one(r'^saquery .*SMIR$'), self.one(r'^saquery .*-s$')
        if not smir or not issm:
            self.set('sm_records', False, 'not run')
            return
        bad = []
        sm_lid = self.lid_of()[(self.net.nodes['sim0']['guid'], 1)]
        recs = re.findall(r'LID\.+(\d+)\n\s*SMInfo dump:\n\s*GUID\.+'
                          r'0x([0-9a-f]+)\n(?:.*\n)*?\s*SMState\.+(\d+)',
                          smir[0])
        if smir[1] != 0 or recs != [(str(sm_lid), '%016x' % self.sm_guid(),
                                     '3')] or \
                self.records(smir[0], 'SMInfoRecord') != 1:
            bad.append('SMIR: %s (rc %s)' % (recs, smir[1]))
        on, _, off = issm[0].partition('IsSMdisabled ports')
        ports = re.findall(r'EndPortLid\.+(\d+)\n\s*PortNum\.+(\d+)\n'
                           r'(?:.*\n)*?\s*capability_mask\.+0x([0-9a-fA-F]+)',
                           on)
        # The IsSM bit of CapabilityMask is bit 1.
        if issm[1] != 0 or [p[:2] for p in ports] != [(str(sm_lid), '1')] \
                or not all(int(p[2], 16) & 2 for p in ports) or \
                'dump:' in off:
            bad.append('IsSM ports: %s (rc %s)' % (ports, issm[1]))
        self.set('sm_records', not bad, '; '.join(bad) or
                 'MASTER, IsSM LID %d' % sm_lid)

    def c_sa_info(self):
        cpi, groups = self.one(r'^saquery .*ClassPortInfo$'), \
            self.one(r'^saquery .*-g$')
        if not cpi or not groups:
            self.set('sa_info', False, 'not run')
            return
        bad = []
        vers = re.findall(r'(Base|Class) version\.+(\d+)', cpi[0])
        # OpenSM 3.3.23's SA on either side: CapabilityMask 0x2602,
        # RespTimeValue 0x10 (its default subnet timeout).
        caps = re.findall(r'(Capability mask|Response time value)\.+(\S+)',
                          cpi[0])
        if cpi[1] != 0 or vers != [('Base', '1'), ('Class', '2')] or \
                caps != [('Capability mask', '0x2602'),
                         ('Response time value', '0x10')]:
            bad.append('ClassPortInfo: %s %s (rc %s)' % (vers, caps, cpi[1]))
        # One group: IPoIB's broadcast group of the default partition,
        # with a multicast LID.
        recs = re.findall(r'MGID\.+(\S+)\n\s*Mlid\.+0x([0-9A-Fa-f]+)\n'
                          r'(?:.*\n)*?\s*pkey\.+0x([0-9A-Fa-f]+)', groups[0])
        if groups[1] != 0 or len(recs) != 1 or \
                self.records(groups[0], 'MCMemberRecord group') != 1 or \
                recs[0][0] != 'ff12:401b:ffff::ffff:ffff' or \
                not 0xc000 <= int(recs[0][1], 16) <= 0xc3ff or \
                int(recs[0][2], 16) != 0xffff:
            bad.append('groups: %s (rc %s)' % (recs, groups[1]))
        self.set('sa_info', not bad, '; '.join(bad) or
                 'SA class 2, the IPoIB group')

    def c_errors(self):
        run = self.one(r'^ibqueryerrors')
        if not run:
            self.set('errors', False, 'not run')
            return
        text, rc = run
        m = re.search(r'## Summary: (\d+) nodes checked, (\d+) bad nodes '
                      r'found\n##\s+(\d+) ports checked, (\d+) ports have '
                      r'errors beyond threshold', text)
        want = (len(self.net.nodes), 0, 2 * len(self.net.links), 0)
        got = m and tuple(int(x) for x in m.groups())
        # A PMA that does not answer is counted "checked" all the same:
        # ibqueryerrors says so only in warnings and a summary line.
        pma = re.findall(r'.*(?:query failed|PMA query failures).*', text)
        # Nothing but the summary (a port with errors prints its block).
        other = [l for l in text.splitlines() if l.strip() and not re.match(
            r'^(## Summary: |##\s+\d+ ports checked|## Thresholds:|'
            r'## Suppressed:|ibwarn: \[\d+\] sim_connect: )', l)]
        ok = rc == 0 and got == want and not pma and not other and \
            len(re.findall(r'## Summary: ', text)) == 1
        if pma or other:
            got = (pma + other)[:2]
        self.set('errors', ok, '%d nodes, %d ports, none bad' %
                 (want[0], want[2]) if ok else
                 'nodes, bad, ports, bad: %s, wanted %s (rc %s)' %
                 (got, want, rc))

    def c_link(self):
        log = self.log
        bad = []
        cut = self.find(r'^ibstat \S+ 1$')
        if len(cut) != 2:
            self.set('link', False, 'ibstat after the cut and mend not run')
            return
        if not re.search(r'State: Down', cut[0][1]):
            bad.append('not Down after the cut')
        if not re.search(r'State: Active', cut[1][1]) or \
                not re.search(r'Base lid: [1-9]', cut[1][1]):
            bad.append('not Active with a LID after the mend')
        for must in ('OpenSM swept the cut', 'OpenSM swept the mend'):
            if 'kmad-opensm: kmad: ' + must not in log:
                bad.append(must + ': no')
        m = re.search(r'kmad-opensm: kmad: \S+ port 1 Active again at '
                      r'([\d.]+)s \(mended at ([\d.]+)s\)', log)
        m2 = re.search(r'kmad-opensm: kmad: OpenSM swept the mend: SUBNET UP '
                       r'at ([\d.]+)s', log)
        if m:
            self.figures['mend to Active'] = '%.1f s' % (
                float(m.group(1)) - float(m.group(2)))
        if m and m2:
            self.figures['mend to SUBNET UP'] = '%.1f s' % (
                float(m2.group(1)) - float(m.group(2)))
        self.set('link', not bad, '; '.join(bad) or
                 'Down, swept, Active again')

    def c_trap(self):
        """OpenSM's log: Trap 128 from the switch at the other end of the
        cut cable ("LID n" per trap), once by the cut, once more by the
        mend."""
        cut = re.search(r'^kmad-opensm: kmad: Trap 128 after the cut:(.*)$',
                        self.log, flags=re.M)
        mend = re.search(r'^kmad-opensm: kmad: Trap 128 after the mend:(.*)$',
                         self.log, flags=re.M)
        if not cut or not mend:
            self.set('trap', False, 'not run')
            return
        lids = [re.findall(r'LID (\d+)', m.group(1)) for m in (cut, mend)]
        want = None
        m = re.search(r'^kmad-opensm: kmad: link (\S+):(\d+) cut', self.log,
                      flags=re.M)
        if m and m.group(1) in self.net.nodes and self.port_lids()[0]:
            peer = self.net.peer(self.net.nodes[m.group(1)]['guid'],
                                 int(m.group(2)))
            for lid, where in self.lid_map().items():
                if peer and where == (peer[0], 0):
                    want = lid
        bad = []
        if len(lids[0]) != 1:
            bad.append('%d traps by the cut' % len(lids[0]))
        if len(lids[1]) != 2:
            bad.append('%d traps by the mend' % len(lids[1]))
        if want is None or any(int(x) != want for x in lids[1]):
            bad.append('from LIDs %s, not the switch %s' %
                       (' '.join(lids[1]), want))
        self.set('trap', not bad, '; '.join(bad) or
                 'from LID %s, after the cut and after the mend' % want)

    def c_mkey(self):
        """The M_Key run: OpenSM up with no SMP timeout; no answer
        without the key or with a wrong one, an answer with it."""
        m = re.search(r'^kmad-opensm: mkey: HCA LID (\d+), switch LID (\d+), '
                      r'M_Key (0x[0-9a-f]+)$', self.log, flags=re.M)
        text = block(self.log, '=== osmlog: mkey')
        if not m or text is None:
            self.set('mkey', False, 'not run')
            return
        ca, sw, key = m.groups()
        ev = osm_events(text)
        bad = []
        if not any(msg == 'SUBNET UP' for _, msg in ev):
            bad.append('no SUBNET UP')
        tmo = [msg for _, msg in ev if re.search(r'ERR [0-9A-F]{4}:', msg)
               and re.search(r'(?i)timeout', msg)]
        if tmo:
            bad.append('OpenSM: ' + tmo[0][:60])
        want = [
            ('smpquery -C sim0 -P 1 portinfo %s' % ca, False),
            ('smpquery -C sim0 -P 1 -y %s portinfo %s' % (key, ca), True),
            ('smpquery -C sim0 -P 1 nodeinfo %s' % sw, False),
            ('smpquery -C sim0 -P 1 -y %s nodeinfo %s' % (key, sw), True),
            ('smpquery -C sim0 -P 1 -y 0x99 portinfo %s' % ca, False),
            ('ibstat', True),
            ('smpquery -C sim0 -P 1 -y %s portinfo %s' % (key, ca), True),
        ]
        runs = self.mkey_runs
        if [c for c, _, _ in runs] != [c for c, _ in want]:
            self.set('mkey', False, '%d of %d runs' % (len(runs), len(want)))
            return
        viol = 0
        for (cmd, answered), (_, out, rc) in zip(want, runs):
            if answered != (rc == 0):
                bad.append('%s: rc %s' % (cmd.split(' ', 4)[-1], rc))
            if not answered and 'portinfo' in cmd:
                viol += 1
            if cmd == 'ibstat':
                n = len(re.findall(r'State: Active', out))
                want_ca = sum(v['ports'] for v in self.net.nodes.values()
                              if v['kind'] != 'Switch')
                if n != want_ca:
                    bad.append('ibstat: %d of %d HCA ports Active' %
                               (n, want_ca))
            if answered and 'portinfo' in cmd:
                # smpquery prints no M_Key ("<not displayed>").
                pb = re.search(r'^ProtectBits:\.+(\d+)$', out, flags=re.M)
                mv = re.search(r'^MkeyViolations:\.+(\d+)$', out, flags=re.M)
                if not pb or pb.group(1) != '2' or not mv or \
                        int(mv.group(1)) != viol:
                    bad.append('PortInfo with the key: ProtectBits %s, '
                               'MkeyViolations %s (wanted 2, %d)' %
                               (pb and pb.group(1), mv and mv.group(1), viol))
        # One Trap 256 (Bad M_Key) per refused SMP, from the SMA that
        # refused it, naming the attribute and the key it carried.
        got = re.findall(r'Reporting Security Notice "Bad M_Key" from LID '
                         r'(\d+), GUID 0x[0-9a-f]+, Method 0x1, Attribute '
                         r'(0x[0-9a-f]+), AttrMod 0x0, M_Key (0x[0-9a-f]+)',
                         text)
        traps = [(lid, attr, int(k, 16)) for lid, attr, k in got]
        if traps != [(ca, '0x15', 0), (sw, '0x11', 0), (ca, '0x15', 0x99)]:
            bad.append('Trap 256 notices %s' % traps)
        self.set('mkey', not bad, '; '.join(bad[:3]) or
                 'HCA %s and switch %s: answered with the key only; '
                 '3 Trap 256' % (ca, sw))

    def c_pkeytrap(self):
        """The GMP the SM's port sends in partition P1 (0x8001) to an HCA
        that is not in it: unanswered, and that HCA's Trap 257 in
        OpenSM's log, naming the key, the two LIDs and QPs."""
        m = re.search(r'^kmad-opensm: pkey: sim0 port 1 LID (\d+), 0x8001 '
                      r'at index (\S+)$', self.log, flags=re.M)
        ca = re.search(r'^kmad-opensm: mkey: HCA LID (\d+),', self.log,
                       flags=re.M)
        text = block(self.log, '=== osmlog: mkey')
        if not m or not ca or text is None:
            self.set('pkeytrap', False, 'not run')
            return
        sm, idx = m.groups()
        ca = ca.group(1)
        if idx == 'none':
            self.set('pkeytrap', False, 'OpenSM gave the SM port no 0x8001')
            return
        bad = []
        runs = self.pkey_runs
        if len(runs) != 1:
            bad.append('%d umad_peer runs' % len(runs))
        elif runs[0][2] == 0:
            bad.append('the GMP outside the partition was answered')
        notices = re.findall(r'Received Generic Notice type:2 num:257 '
                             r'\(Bad P_Key\) Producer:1 \([^)]*\) from '
                             r'LID:(\d+) ', text)
        keys = re.findall(r'Bad P_Key:(0x[0-9a-f]+) on SL:(\d+) from '
                          r'LID1:(\d+) QP1:(0x[0-9a-f]+) to LID2:(\d+) '
                          r'QP2:(0x[0-9a-f]+)', text)
        if notices != [ca]:
            bad.append('Trap 257 notices from LIDs %s, wanted %s' %
                       (notices, ca))
        if keys != [('0x8001', '0', sm, '0x1', ca, '0x1')]:
            bad.append('Bad P_Key lines %s' % keys)
        self.set('pkeytrap', not bad, '; '.join(bad[:3]) or
                 'P_Key 0x8001 (index %s) from LID %s to HCA %s: dropped, '
                 'Trap 257' % (idx, sm, ca))

    def c_guest(self):
        bad = []
        m = SPLAT.search(self.log)
        if m:
            bad.append('kernel splat: ' + m.group(0))
        for must in ('kmad-opensm: end', 'kmad-opensm: modules unloaded'):
            if must not in self.log:
                bad.append('missing "%s"' % must)
        bad += re.findall(r'^kmad-opensm: FAILED.*$', self.log, flags=re.M)
        self.set('guest', not bad, '; '.join(bad[:3]) or 'clean')


def evaluate(log):
    """{side: Side}, checked."""
    net_text = block(log, '=== netlist', '=== netlist end')
    net = Net(net_text or '')
    runs = sections(log)
    out = {}
    for s in SIDES:
        out[s] = Side(s, net, runs, log)
        out[s].check()
    return out


# A failure that is the reference's limit, not kmad's: shown, not counted.
EXCUSED = {
    ('ibsim', 'nr_all'): 'ibsim has no RMPP, not counted',
    ('ibsim', 'pir'): 'ibsim has no RMPP, not counted',
}


def counted(side, key):
    """Whether a check's failure counts (not a reference's limit)."""
    return (side, key) not in EXCUSED


def uncounted_why(side, key):
    return EXCUSED[side, key]


def failures(sides):
    return {(s, k) for s, side in sides.items()
            for k, (ok, _) in side.res.items() if not ok and counted(s, k)}


# Wrong answers a tool could print, each of which must fail a check.
MUTATIONS = [
    ('wrong route in an LFT (kmad)', 'kmad',
     r'(?s)(=== cmd: kmad ibroute.*?^0x0001 )(\d{3})',
     lambda m: m.group(1) + '%03d' % ((int(m.group(2)) % 3) + 1)),
    ('wrong route in an LFT (ibsim)', 'ibsim',
     r'(?s)(=== cmd: ibsim ibroute.*?^0x0001 )(\d{3})',
     lambda m: m.group(1) + '%03d' % ((int(m.group(2)) % 3) + 1)),
    ('MFT range of a MulticastFDBCap 512', 'kmad',
     r'(Multicast mlids \[0xc000-0x)c3ff', r'\g<1>c1ff'),
    ('a port not Active', 'kmad',
     r'(?s)(=== cmd: kmad smpquery.*?^LinkState:\.+)Active', r'\1Init'),
    ('SM not MASTER', 'ibsim', r'state 3 SMINFO_MASTER', 'state 2 SMINFO_STANDBY'),
    ('duplicate LID', 'kmad',
     r'(?m)^(=== cmd: kmad ibnetdiscover -C sim0 -P 1 -p\n(?:.*\n)*?CA\s+)'
     r'(\d+)(\s+\d+\s+0x[0-9a-f]{16} \S+ \S+ - SW\s+)(\d+)',
     lambda m: m.group(1) + m.group(4) + m.group(3) + m.group(4)),
    ('a cable missing', 'kmad',
     r'(?m)^(=== cmd: kmad ibnetdiscover -C sim0 -P 1\n(?:.*\n)*?)\[1\]', r'\1[9]'),
    ('NodeRecord of the wrong node', 'kmad',
     r'(?s)(=== cmd: kmad saquery -C sim0 -P 1 NR \d+\n.*?node_guid\.+0x)([0-9a-f])',
     lambda m: m.group(1) + ('1' if m.group(2) != '1' else '2')),
    ('PathRecord of the wrong LID', 'ibsim',
     r'(?s)(=== cmd: ibsim saquery PR --slid \d+ --dlid \d+\n.*?dlid\.+)(\d+)',
     lambda m: m.group(1) + '9' + m.group(2)),
    ('a LinkRecord to the wrong port', 'kmad',
     r'(=== cmd: kmad saquery -C sim0 -P 1 LR\n(?:.*\n)*?\s*ToPort\.+)(\d)',
     lambda m: m.group(1) + str(int(m.group(2)) % 3 + 1)),
    ('a PortInfoRecord of a wrong port', 'kmad',
     r'(=== cmd: kmad saquery -C sim0 -P 1 PIR\n(?:.*\n)*?\s*PortNum\.+)0',
     r'\g<1>9'),
    ('SMInfoRecord not MASTER', 'ibsim',
     r'(=== cmd: ibsim saquery SMIR\n(?:.*\n)*?\s*SMState\.+)3', r'\g<1>2'),
    ('a PMA not answering', 'kmad',
     r'(=== cmd: kmad ibqueryerrors[^\n]*\n(?:.*\n)*?## Suppressed:)',
     r'\1\n##          19 PMA query failures'),
    ('two more groups, of zeros', 'kmad',
     r'(=== cmd: kmad saquery -C sim0 -P 1 -g\n(?:.*\n)*?)(=== rc)',
     r'\1MCMemberRecord group dump:\n\t\tMGID....::\n\t\tMlid....0x0\n\2'),
    ('a port with errors', 'kmad',
     r'(=== cmd: kmad ibqueryerrors[^\n]*\n(?:.*\n)*?.*ports checked, )0',
     r'\g<1>1'),
    ('a tool failing', 'kmad', r'(?s)(=== cmd: kmad ibtracert[^\n]*\n.*?=== rc: )0',
     r'\g<1>1'),
    ('link stays Down', 'kmad', r'kmad-opensm: kmad: OpenSM swept the mend',
     'kmad-opensm: kmad: no sweep of the mend'),
    ('no Trap 128 by the mend', 'kmad',
     r'^(kmad-opensm: kmad: Trap 128 after the mend: LID \d+ ).*$', r'\1'),
    ('M_Key not enforced', 'kmad',
     r'(?s)(=== cmd: mkey smpquery -C sim0 -P 1 portinfo \d+\n.*?=== rc: )\d+',
     r'\g<1>0'),
    ('M_Key ProtectBits 1', 'kmad', r'(?m)^(ProtectBits:\.+)2$', r'\g<1>1'),
    ('no Trap 256 from the switch', 'kmad',
     r'(Reporting Security Notice "Bad M_Key" from LID \d+, GUID 0x[0-9a-f]+, '
     r'Method 0x1, Attribute )0x11', r'\g<1>0x15'),
    ('ibstat failing under M_Key', 'kmad',
     r'(?s)(=== cmd: mkey ibstat\n.*?=== rc: )0', r'\g<1>1'),
    ('M_Key violations not counted', 'kmad',
     r'(?s)(=== cmd: mkey smpquery -C sim0 -P 1 -y \S+ portinfo \d+\n.*?'
     r'^MkeyViolations:\.+)1$', r'\g<1>0'),
    ('no Trap 257', 'kmad', r'Bad P_Key:0x8001', 'Bad P_Key:0xffff'),
    ('the GMP outside its partition answered', 'kmad',
     r'(?s)(=== cmd: mkey umad_peer query[^\n]*\n.*?=== rc: )\d+', r'\g<1>0'),
    ('a kernel splat', 'kmad', r'kmad-opensm: end',
     '[ 1.0] BUG: kernel NULL pointer dereference\nkmad-opensm: end'),
]


def selftest(log, base):
    """Failures of the self-check: mutations that fail nothing new."""
    out = []
    for name, _, pat, rep in MUTATIONS:
        mutated, n = re.subn(pat, rep, log, count=1, flags=re.M)
        if not n:
            out.append('%s: pattern matches nothing' % name)
            continue
        try:
            new = failures(evaluate(mutated)) - base
        except ValueError:
            new = {'netlist'}
        if not new:
            out.append('%s: not caught' % name)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    with open(sys.argv[1], errors='replace') as f:
        log = f.read()
    try:
        sides = evaluate(log)
    except ValueError as e:
        print('opensm: %s' % e)
        print('0 passed, 1 failed')
        return 1
    base = failures(sides)
    self_bad = selftest(log, base)
    w = 37
    cw = 44
    print('opensm: %-*s | %-*s | %s' % (w, 'check', cw,
                                       'kmad: kmad_umad + kmad_sim',
                                       'ibsim: libumad2sim.so + ibsim'))
    print('opensm: %s' % ('-' * (w + 2 * cw + 6)))
    figs = ['time to SUBNET UP', 'first heavy sweep', 'SUBNET UPs (sweeps)',
            'OpenSM ERR lines', 'mend to Active', 'mend to SUBNET UP']
    for f in figs:
        print('opensm: %-*s | %-*s | %s' % (
            w, f, cw, sides['kmad'].figures.get(f, '-'),
            sides['ibsim'].figures.get(f, '-')))
    passed = failed = 0
    for key, title in CHECKS:
        cells = []
        for s in SIDES:
            if (s, key) in NOT_RUN:
                cells.append(NOT_RUN[(s, key)])
                continue
            ok, text = sides[s].res.get(key, (False, 'no result'))
            if ok:
                passed += 1
                cells.append('ok: ' + text)
            elif counted(s, key):
                failed += 1
                cells.append('FAILED: %s' % text)
            else:
                cells.append('FAILED (%s): %s' % (uncounted_why(s, key),
                                                  text))
        print('opensm: %-*s | %-*s | %s' % (w, title, cw, cells[0], cells[1]))
    print('opensm: %s' % ('-' * (w + 2 * cw + 6)))
    for s in SIDES:
        for key, (ok, text) in sides[s].res.items():
            if not ok:
                print('opensm: %s: %s: %s' % (s, key, text))
    if self_bad:
        failed += 1
        for b in self_bad:
            print('opensm: self-check: %s' % b)
        print('opensm: self-check: FAILED')
    else:
        passed += 1
        print('opensm: self-check: %d wrong answers made from the log, each '
              'caught' % len(MUTATIONS))
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
