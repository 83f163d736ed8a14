#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn kmad_bench's console output into the `make bench` table and JSON.

    report.py --json OUT.json [--machine KEY=VALUE]... [--rxe RXELOG] LOG...

Each LOG is the console of one guest boot of kmad_bench.  RXELOG, if
given, is the console of the rxe part (tests/bench/rxe/rxe.sh: kmad
against ib_mad on the stock kernel): its "kmad vs ib_mad" tables come
first.  kmad_bench prints one
"kmad_bench: result {...}" line per measurement with one sample per repeat;
this script takes the median, minimum and maximum of each, prints the
tables (ratios first: absolute times under QEMU TCG mean little), and
writes everything, raw samples included, to OUT.json.

Exit status 1 if a guest log has a kernel splat, a kmad_bench error, no
"done" line, or lacks a measurement the tables need.

A slow host is no failure.  kmad_bench measures again what the host spoiled
by stalling the guest and says so in the figure's "stalls" (measurements
made again) and "noisy" (samples that still include a stall); the tables
mark a figure with noisy samples with "*", and a list after them names
every figure with stalls.  Neither changes the exit status.
"""

import argparse
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'qemu'))
from harness import SPLATS  # noqa: E402

RESULT_RE = re.compile(r'kmad_bench: result (\{.*\})\s*$')
ERROR_RE = re.compile(r'kmad_bench: error (.*)$')
DONE_RE = re.compile(r'kmad_bench: done, (\d+) errors')
# The per-operation ratios issue 5 sets a target for.
RATIO_TARGET = 1.5
# (name, label, ratio shown with the target, ratio shown at all)
SCALED_OPS = [
    ('match', 'response match', True, True),
    ('arm', 'timeout arm, posting order', True, True),
    ('expire', 'timeout expiry', True, True),
    ('arm_random', 'timeout arm, random order', False, True),
    ('touch_random', '  (read a random send)', False, False),
    ('post', 'post the N (incl. a fence)', False, False),
]


def parse(paths):
    results, problems = [], []
    for path in paths:
        done = False
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                m = RESULT_RE.search(line)
                if m:
                    results.append(json.loads(m.group(1)))
                    continue
                m = ERROR_RE.search(line)
                if m:
                    problems.append(f'{path}: kmad_bench error: {m.group(1)}')
                    continue
                if DONE_RE.search(line):
                    done = True
                for rx, what in SPLATS:
                    if rx.search(line):
                        problems.append(f'{path}: kernel {what}: {line.strip()}')
        if not done:
            problems.append(f'{path}: kmad_bench did not finish '
                            '(no "done" line)')
    for r in results:
        s = r['samples']
        r['median'] = statistics.median(s)
        r['min'] = min(s)
        r['max'] = max(s)
    return results, problems


class Results:
    def __init__(self, results):
        self.results = results
        self.missing = []

    def find(self, name, **params):
        for r in self.results:
            if r['name'] == name and all(r.get(k) == v
                                         for k, v in params.items()):
                return r
        self.missing.append(f'{name} {params}')
        return None


def fmt_ns(ns):
    if ns >= 1e9:
        return f'{ns / 1e9:.2f} s'
    if ns >= 1e6:
        return f'{ns / 1e6:.1f} ms'
    if ns >= 1e3:
        return f'{ns / 1e3:.2f} us'
    return f'{ns:.0f} ns'


def noisy(*rs):
    """' *' if any of the results has samples that include a stall."""
    return ' *' if any(r and r.get('noisy') for r in rs) else ''


def spread(r, fmt):
    return (f'{fmt(r["median"])} [{fmt(r["min"])} .. {fmt(r["max"])}]' +
            noisy(r))


def stalls(results):
    """Lines naming the figures the host stalled, or []."""
    out = []
    for r in results:
        if not r.get('stalls') and not r.get('noisy'):
            continue
        params = ', '.join(f'{k}={r[k]}' for k in ('cpus', 'n', 'agents')
                           if k in r)
        out.append(f'  {r["name"]} ({params}): {r.get("stalls", 0)} '
                   f'measurement(s) made again, {r.get("noisy", 0)} of '
                   f'{len(r["samples"])} sample(s) noisy')
    return out


def table(rows, head):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    out = ['  '.join(str(x).ljust(w) for x, w in zip(head, widths)).rstrip()]
    out.append('  '.join('-' * w for w in widths))
    for row in rows:
        out.append('  '.join(str(x).ljust(w)
                             for x, w in zip(row, widths)).rstrip())
    return '\n'.join(out)


def report(res, machine):
    lines, ratios = [], {}
    scale_ns = sorted({r['n'] for r in res.results if r['name'] == 'match'})
    lo, hi = (scale_ns[0], scale_ns[-1]) if scale_ns else (None, None)

    lines.append('kmad bench: medians of %s repeats, [min .. max]' %
                 machine.get('repeats', '?'))
    lines.append('machine: ' + ', '.join(f'{k}={v}' for k, v in
                                         machine.items()))
    lines.append('')

    # Ratios first.
    rows = []
    if lo is not None and hi != lo:
        for op, label, target, shown in SCALED_OPS:
            if not shown:
                continue
            a, b = res.find(op, n=lo), res.find(op, n=hi)
            if not a or not b:
                continue
            ratio = b['median'] / a['median'] if a['median'] else float('inf')
            ratios[f'{op}_n{hi}_vs_n{lo}'] = ratio
            verdict = ''
            if target:
                verdict = ('met' if ratio <= RATIO_TARGET else 'MISSED') + \
                    f' (target <= {RATIO_TARGET})'
            rows.append([f'{label.strip()}: N={hi} : N={lo}',
                         f'{ratio:.2f}' + noisy(a, b), verdict])
    rtt = {}
    for cpus in (1, 2):
        for agents in (1, 2, 4):
            r = res.find('rtt', cpus=cpus, agents=agents)
            if r:
                rtt[cpus, agents] = r
    for agents in (1, 2, 4):
        if (1, agents) in rtt and (2, agents) in rtt:
            ratio = rtt[2, agents]['median'] / rtt[1, agents]['median']
            ratios[f'rtt_{agents}agents_2cpu_vs_1cpu'] = ratio
            rows.append([f'round trips/s, {agents} agent(s): 2 vCPUs : 1',
                         f'{ratio:.2f}' + noisy(rtt[2, agents],
                                                rtt[1, agents]), ''])
    for cpus in (1, 2):
        if (cpus, 1) in rtt and (cpus, 4) in rtt:
            ratio = rtt[cpus, 4]['median'] / rtt[cpus, 1]['median']
            ratios[f'rtt_{cpus}cpu_4agents_vs_1'] = ratio
            rows.append([f'round trips/s, {cpus} vCPU(s): 4 agents : 1',
                         f'{ratio:.2f}' + noisy(rtt[cpus, 4], rtt[cpus, 1]),
                         ''])
    lines.append('Ratios (from the medians)')
    lines.append(table(rows, ['', 'ratio', '']))
    lines.append('')

    if rtt:
        rows = []
        for agents in (1, 2, 4):
            row = [str(agents)]
            for cpus in (1, 2):
                r = rtt.get((cpus, agents))
                row.append(spread(r, lambda v: f'{v:.0f}') if r else '-')
            rows.append(row)
        lines.append('Round trips per second (request, matched response, '
                     'callback), %d in flight per agent' %
                     next(iter(rtt.values())).get('window', 0))
        lines.append(table(rows, ['agents', '1 vCPU', '2 vCPUs']))
        lines.append('')

    if scale_ns:
        m = res.find('match', n=lo)
        rows = []
        for op, label, _, _ in SCALED_OPS:
            row = [label]
            for n in scale_ns:
                r = res.find(op, n=n)
                row.append(spread(r, fmt_ns) if r else '-')
            rows.append(row)
        lines.append('Cost per send with N sends outstanding (match and '
                     'expiry: batches of %s minus batches of %s; 2 vCPUs)'
                     % (m.get('k_big', '?'), m.get('k_small', '?')))
        lines.append(table(rows, ['operation'] + [f'N={n}'
                                                  for n in scale_ns]))
        lines.append('')
        rows = []
        for n in scale_ns:
            u = res.find('unregister', n=n)
            slab = res.find('mem_slab', n=n)
            mem = res.find('mem_total', n=n)
            rows.append([str(n), spread(u, fmt_ns) if u else '-',
                         fmt_ns(u['median'] / n) if u else '-',
                         f'{slab["median"]:.0f}' if slab else '-',
                         f'{mem["median"]:.0f}' if mem else '-'])
        lines.append('Unregister with N outstanding; memory per outstanding '
                     'send (bytes; meaningful for large N)')
        lines.append(table(rows, ['N', 'unregister', 'per send',
                                  'slab B/send', 'total B/send']))
        lines.append('')
        rows = []
        for n in scale_ns:
            row = [str(n)]
            for part in ('before', 'walk', 'after'):
                r = res.find('unregister_' + part, n=n)
                row.append(f'{fmt_ns(r["median"])} '
                           f'({fmt_ns(r["median"] / n)}/send)' if r else '-')
            rows.append(row)
        lines.append('Unregister, its phases (medians; kmad_cancel '
                     'tracepoint): until the first send is flushed; the '
                     'flush walk; from its end to the return (callbacks)')
        lines.append(table(rows, ['N', 'before the walk', 'the walk',
                                  'after the walk']))
        lines.append('')

    storm = res.find('timeout_storm')
    if storm:
        late = res.find('timeout_storm_late_max')
        posts = res.find('timeout_storm_posts')
        cancel = res.find('cancel_storm')
        calls = res.find('cancel_storm_calls')
        n = storm['n']
        rows = [
            [f'timeout storm: {n} sends, timeout {storm["timeout_ms"]} ms, '
             '1 retry: first post to last callback', spread(storm, fmt_ns)],
            ['  posting them', spread(posts, fmt_ns) if posts else '-'],
            ['  worst deadline -> callback delay',
             spread(late, lambda v: fmt_ns(v * 1000)) if late else '-'],
        ]
        if cancel:
            rows += [
                [f'cancel storm: {n} sends: first cancel to last callback',
                 spread(cancel, fmt_ns)],
                ['  the kmad_cancel_send() calls',
                 spread(calls, fmt_ns) if calls else '-'],
                ['  per send', fmt_ns(cancel['median'] / n)],
            ]
        lines.append('Storms (2 vCPUs)')
        lines.append(table(rows, ['', 'median [min .. max]']))
        lines.append('')

    rmpp = sorted((r for r in res.results if r['name'] == 'rmpp_throughput'),
                  key=lambda r: (r['bytes'], r['cpus']))
    if rmpp:
        def mbs(v):
            return f'{v / 1e6:.1f}'
        rows = [[f'{r["bytes"] // 1024} KiB', str(r['cpus']),
                 spread(r, mbs)] for r in rmpp]
        lines.append('RMPP throughput (MB/s): an SA GetTable answered by one '
                     'RMPP response of that much data (200 bytes a segment); '
                     'request posted -> whole response reassembled at the '
                     'requester')
        lines.append(table(rows, ['payload', 'vCPUs', 'median [min .. max]']))
    flows = sorted((r for r in res.results if r['name'] == 'flow_burst'),
                   key=lambda r: (r.get('cpus', 0), not r['limit']))
    if flows:
        rows = []
        for r in flows:
            rows.append([f'{r["n"]} answered Gets at once, limit '
                         f'{r["limit"] or "none"}',
                         spread(r, lambda v: f'{v:.0f}')])
            resent = [x for x in res.results
                      if x['name'] == 'flow_burst_resent' and
                      x['limit'] == r['limit'] and
                      x.get('cpus') == r.get('cpus')]
            if resent:
                rows.append(['  resent after a timeout (lost)',
                             spread(resent[0], lambda v: f'{v:.0f}')])
        unlimited = [r for r in flows if not r['limit']]
        limited = [r for r in flows if r['limit']]
        if unlimited and limited and unlimited[0]['median']:
            ratio = limited[0]['median'] / unlimited[0]['median']
            ratios['flow_burst_limited_vs_none'] = ratio
            rows.append(['  limited : none', f'{ratio:.2f}'])
        lines.append('Solicited flow control: round trips per second of a '
                     'burst, the backlog draining as responses come back')
        lines.append(table(rows, ['', 'median [min .. max]']))
        lines.append('')

    stalled = stalls(res.results)
    if stalled:
        lines.append('Stalled by the host (not a failure): measurements '
                     'made again, and samples that still include a stall '
                     '(marked "*" above)')
        lines += stalled
        lines.append('')
    return '\n'.join(lines), ratios

# ---- kmad vs ib_mad over rxe (tests/bench/rxe/): kept apart from the
# kmad_bench tables above so that both can change without touching the
# other.

RXE_SAMPLE_RE = re.compile(r'rxe_bench: sample (\{.*\})\s*$')
RXE_ERROR_RE = re.compile(r'rxe_bench: error (.*)$')
RXE_DONE_RE = re.compile(r'rxe_bench: done, (\d+) errors')
RXE_VERDICT_RE = re.compile(r'^interop: rxebench: (.*)$')
RXE_STACKS = ('ib_mad', 'kmad')
# (name, label, unit): 'ns' times, 'B' bytes per send, '%' percent
RXE_SCALED = [
    ('rtt', 'round trip (post -> answered callback)', 'ns'),
    ('rtt_min', '  the fastest probe', 'ns'),
    ('rtt_slow_pct', '  probes taking 1 ms or more', '%'),
    ('cancel', 'cancel one send (the call)', 'ns'),
    ('cancel_cb', 'cancel one send (call -> callback)', 'ns'),
    ('unregister', 'unregister, whole call', 'ns'),
    ('unregister_per_send', 'unregister, per outstanding send', 'ns'),
    ('fill', 'timeout arm, posting order (fill, per send)', 'ns'),
    ('fill_random', 'timeout arm, random (fill, per send)', 'ns'),
    ('expire_late', 'timeout expiry (post + timeout -> callback)', 'ns'),
    ('mem_caches', 'memory per outstanding send (slab caches)', 'B'),
    ('mem_slab', 'memory per outstanding send (all slab)', 'B'),
]
# Figures a complete run has for both stacks.
RXE_REQUIRED = ('rtt', 'cancel', 'unregister', 'fill', 'expire_late',
                'mem_caches', 'rate')


def parse_rxe(path):
    """The rxe log's samples, {(name, stack, n): [one value per
    repetition]}, and its problems.

    The samples are read from the results block the guest prints last with
    the console quiet (tests/interop/guest.sh), where no kernel message can
    have cut into a line; without that block, from the whole log.
    """
    with open(path, encoding='utf-8', errors='replace') as f:
        log = f.read().splitlines()
    problems, done, verdict = [], False, None
    try:
        begin = log.index('kmad-interop: results begin')
        end = log.index('kmad-interop: results end', begin)
        block = log[begin:end]
    except ValueError:
        problems.append(f'{path}: no results block; reading the whole log')
        block = log
    for line in log:
        for rx, what in SPLATS:
            if rx.search(line):
                problems.append(f'{path}: kernel {what}: {line.strip()}')
    seen, groups = set(), {}
    for line in block:
        m = RXE_VERDICT_RE.search(line.rstrip())
        if m:
            verdict = m.group(1)
        if RXE_DONE_RE.search(line):
            done = True
        m = RXE_ERROR_RE.search(line)
        if m:
            problems.append(f'{path}: rxe_bench error: {m.group(1)}')
        m = RXE_SAMPLE_RE.search(line)
        if not m:
            continue
        try:
            s = json.loads(m.group(1))
        except ValueError:
            problems.append(f'{path}: garbled sample: {line.strip()}')
            continue
        key = (s['name'], s['stack'], s['n'], s['rep'])
        if key in seen:
            continue
        seen.add(key)
        groups.setdefault(key[:3], []).append(s['v'])
        if s['name'] == 'unregister' and s['n']:
            groups.setdefault(('unregister_per_send', s['stack'], s['n']),
                              []).append(s['v'] / s['n'])
    if not done:
        problems.append(f'{path}: rxe_bench did not finish (no "done" line)')
    if verdict is None:
        problems.append(f'{path}: no "interop: rxebench:" result line')
    elif not verdict.startswith('ok'):
        problems.append(f'{path}: rxebench {verdict}')
    return groups, problems


def rxe_stats(values):
    return {'median': statistics.median(values), 'min': min(values),
            'max': max(values), 'samples': values}


def rxe_fmt(unit):
    if unit == 'B':
        return lambda v: f'{v:.0f} B'
    if unit == '%':
        return lambda v: f'{v:.0f} %'
    return fmt_ns


def rxe_report(groups):
    """The "kmad vs ib_mad" tables; returns (text, ratios)."""
    st = {k: rxe_stats(v) for k, v in groups.items()}
    lines, ratios = [], {}
    ns = sorted({k[2] for k in st if k[0] == 'rtt'})
    reps = max((len(v['samples']) for v in st.values()), default=0)
    lines.append('kmad vs ib_mad over rxe (stock kernel, QEMU TCG, same '
                 'boot, same responder): medians of %d repetitions, '
                 '[min .. max]' % reps)
    lines.append('')
    if not ns:
        lines.append('(no rxe samples)')
        return '\n'.join(lines), ratios
    lo, hi = ns[0], ns[-1]

    def med(name, stack, n):
        r = st.get((name, stack, n))
        return r['median'] if r else None

    def ratio(a, b, unit=None):
        # A byte figure is a difference of counters other users move too:
        # at small N it can be 0 or negative, and then means nothing.
        if unit == 'B' and (a is None or b is None or a <= 0 or b <= 0):
            return None
        return a / b if a is not None and b else None

    def rfmt(x):
        return '-' if x is None else (f'{x:.3f}' if x < 0.1 else
                                      f'{x:.2f}')

    rows = []
    for name, label, unit in RXE_SCALED:
        row = [label]
        for n in ns:
            x = ratio(med(name, 'kmad', n), med(name, 'ib_mad', n), unit)
            if x is not None:
                ratios[f'rxe_{name}_kmad_vs_ib_mad_n{n}'] = x
            row.append(rfmt(x))
        rows.append(row)
    lines.append('Ratio kmad : ib_mad (below 1: kmad cheaper), N sends '
                 'outstanding; "-" for memory: a difference of 0 or less '
                 '(other users of the slab moved more than N sends)')
    lines.append(table(rows, [''] + [f'N={n}' for n in ns]))
    lines.append('')

    rows = []
    for name, label, unit in RXE_SCALED:
        row = [label]
        for stack in RXE_STACKS:
            x = ratio(med(name, stack, hi), med(name, stack, lo), unit)
            if x is not None:
                ratios[f'rxe_{name}_{stack}_n{hi}_vs_n{lo}'] = x
            row.append(rfmt(x))
        rows.append(row)
    lines.append(f'Growth with N: N={hi} : N={lo}, each stack')
    lines.append(table(rows, [''] + list(RXE_STACKS)))
    lines.append('')

    rows = []
    for name, label, unit in RXE_SCALED:
        f = rxe_fmt(unit)
        for n in ns:
            row = [label if n == lo else '', str(n)]
            for stack in RXE_STACKS:
                r = st.get((name, stack, n))
                row.append(f'{f(r["median"])} [{f(r["min"])} .. '
                           f'{f(r["max"])}]' if r else '-')
            rows.append(row)
    lines.append('Each figure with N outstanding')
    lines.append(table(rows, ['figure', 'N'] + list(RXE_STACKS)))
    lines.append('')

    agents = sorted({k[2] for k in st if k[0] == 'rate'})
    if agents:
        rows = []
        for a in agents:
            row = [str(a)]
            for stack in RXE_STACKS:
                r = st.get(('rate', stack, a))
                row.append(f'{r["median"]:.0f} [{r["min"]:.0f} .. '
                           f'{r["max"]:.0f}]' if r else '-')
            x = ratio(med('rate', 'kmad', a), med('rate', 'ib_mad', a))
            if x is not None:
                ratios[f'rxe_rate_{a}agents_kmad_vs_ib_mad'] = x
            row.append(rfmt(x))
            rows.append(row)
        lines.append('Round trips per second, 16 in flight per requester '
                     '(above 1: kmad faster)')
        lines.append(table(rows, ['requesters'] + list(RXE_STACKS) +
                           ['kmad : ib_mad']))
        lines.append('')
    parts = [('kmad_ib_post_send', 'handed to kmad_ib (kprobe)'),
             ('kmad_cq_event', "kmad_ib's first CQ event (kprobe)"),
             ('kmad_cq_drain_work', "kmad's CQ drain starts (kprobe)"),
             ('rtt_to_hw_done', 'send completion (kmad_send_hw_done)'),
             ('rtt_to_recv', 'response received (kmad_recv)'),
             ('rtt_to_resp_match', 'response matched (kmad_resp_match)'),
             ('rtt_to_callback', 'callback starts (kmad_send_callback)'),
             ('rtt', 'callback reached the benchmark (round trip)')]
    if any(('rtt_to_callback', 'kmad', n) in st for n in ns):
        rows = []
        for name, label in parts:
            row = [label]
            for n in ns:
                r = st.get((name, 'kmad', n))
                row.append(fmt_ns(r['median']) if r else '-')
            rows.append(row)
        lines.append("Where kmad's probe round trip goes: from the post to "
                     "each of kmad's tracepoints for the probe (medians)")
        lines.append(table(rows, ['kmad, from the post to'] +
                           [f'N={n}' for n in ns]))
        lines.append('')
    rcu = st.get(('synchronize_rcu', 'kernel', 0))
    if rcu:
        lines.append('Reference: one synchronize_rcu() in this guest: '
                     f'{fmt_ns(rcu["median"])} [{fmt_ns(rcu["min"])} .. '
                     f'{fmt_ns(rcu["max"])}]')
        lines.append('')
    return '\n'.join(lines), ratios


def rxe_part(path):
    """Text, ratios, JSON results and problems of the rxe log at @path."""
    if not path:
        return '', {}, None, []
    if not os.path.exists(path):
        return '', {}, None, [f'{path}: no rxe bench log']
    groups, problems = parse_rxe(path)
    text, ratios = rxe_report(groups)
    results = [dict(name=k[0], stack=k[1], n=k[2], **rxe_stats(v))
               for k, v in sorted(groups.items())]
    for name in RXE_REQUIRED:
        for stack in RXE_STACKS:
            if not any(k[0] == name and k[1] == stack for k in groups):
                problems.append(f'rxe: missing measurement: {name} {stack}')
    return text, ratios, results, problems


def transport_table(res, ratios):
    """The "kmad vs transport" table: one request and its response at a
    time, through kmad (ULP to ULP) and through kmad_sim's raw QP pair (the
    provider's data path alone), per vCPU count; adds the ratios to
    @ratios.  Empty if the run has no rtt_latency figures."""
    rows = []
    for cpus in sorted({r['cpus'] for r in res.results
                        if r['name'] == 'rtt_latency'}):
        k = res.find('rtt_latency', cpus=cpus, path='kmad')
        t = res.find('rtt_latency', cpus=cpus, path='raw')
        if not k or not t:
            continue
        ratio = k['median'] / t['median'] if t['median'] else float('inf')
        ratios[f'kmad_vs_transport_rtt_{cpus}cpu'] = ratio
        rows.append([f'{cpus} vCPU(s)', f'{ratio:.2f}',
                     'met' if ratio <= 2 else 'missed',
                     spread(k, fmt_ns), spread(t, fmt_ns)])
    if not rows:
        return ''
    return ('kmad vs transport: round trip of one request and its response '
            '(kmad: post to send callback; transport: raw QP pair, polled)\n' +
            table(rows, ['guest', 'kmad : transport', '(target <= 2)',
                         'kmad', 'transport']) + '\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--json', required=True)
    ap.add_argument('--machine', action='append', default=[],
                    metavar='KEY=VALUE')
    ap.add_argument('--rxe', metavar='RXELOG',
                    help='console log of tests/bench/rxe/rxe.sh')
    ap.add_argument('logs', nargs='*')
    args = ap.parse_args()

    machine = dict(kv.split('=', 1) for kv in args.machine)
    rxe_text, rxe_ratios, rxe_results, problems = rxe_part(args.rxe)
    if rxe_text:
        print(rxe_text)
    results, ratios, text = [], {}, ''
    if args.logs:
        results, more = parse(args.logs)
        problems += more
        res = Results(results)
        text, ratios = report(res, machine)
        transport = transport_table(res, ratios)
        if transport:
            print(transport)
        print(text)
        problems += [f'missing measurement: {m}'
                     for m in sorted(set(res.missing))]
    ratios.update(rxe_ratios)
    with open(args.json, 'w', encoding='utf-8') as f:
        json.dump({'machine': machine, 'ratios': ratios,
                   'results': results, 'rxe_results': rxe_results,
                   'problems': problems}, f, indent=1)
    print(f'JSON: {args.json}')
    for p in problems:
        print(f'BENCH PROBLEM: {p}')
    if problems:
        print('make bench: FAILED')
        return 1
    print('make bench: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
