#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of kmad's QEMU + KUnit harness.

  harness.py plan   --suite GLOB --out DIR TESTDIR...
      Find the KUnit modules built in each TESTDIR and the suites each one
      holds (from the sources listed in the module's .mod file), keep those
      with a suite matching GLOB, and write DIR/load (module load order for
      the guest), DIR/modules (paths of the .ko files) and DIR/expected
      (suite names that must run).

  harness.py report --kernel-src SRC --out DIR [--host-results FILE]...
      Judge DIR/console.log: parse the KTAP with the kernel's own parser
      (tools/testing/kunit/kunit.py parse), scan the whole log for kernel
      splats, check that every expected suite ran and that the guest got to
      its end marker.  Print a per-suite summary and, last, the line
      'N passed, N failed[, N skipped]'.  Exit 1 if anything failed.
      With --host-only there was no guest: the host checks alone.
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys

SUITE_RE = re.compile(
    r'struct\s+kunit_suite\s+\w+\s*=\s*\{[^}]*?\.name\s*=\s*"([^"]+)"', re.S)

# Kernel splats.  Any of these anywhere in the console log fails the run,
# whatever the KUnit verdicts say.
SPLATS = [
    (re.compile(r'\bWARNING: '), 'WARNING'),
    (re.compile(r'\bBUG: '), 'BUG'),
    (re.compile(r'kernel BUG at'), 'BUG'),
    (re.compile(r'\bOops\b'), 'Oops'),
    (re.compile(r'general protection fault'), 'general protection fault'),
    (re.compile(r'Kernel panic'), 'panic'),
    (re.compile(r'UBSAN: '), 'UBSAN'),
    (re.compile(r'possible (circular|recursive) locking'), 'lockdep'),
    (re.compile(r'inconsistent lock state'), 'lockdep'),
    (re.compile(r'suspicious RCU usage'), 'lockdep (RCU)'),
    (re.compile(r'INFO: task .* blocked for more than'), 'hung task'),
    (re.compile(r'soft lockup'), 'soft lockup'),
    (re.compile(r'rcu: INFO: .*(detected (expedited )?stalls|'
                r'self-detected stall)'), 'RCU stall'),
    (re.compile(r'unreferenced object 0x'), 'kmemleak'),
    (re.compile(r'kmemleak: .*(disabled|Cannot allocate)'),
     'kmemleak off'),
    (re.compile(r'printk messages dropped'), 'console lines lost'),
    (re.compile(r'ODEBUG: '), 'debugobjects'),
    (re.compile(r'list_(add|del) corruption'), 'list corruption'),
    (re.compile(r'Call Trace:'), 'stack trace'),
]

HARNESS = 'kmad-harness: '


def suites_in_source(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return SUITE_RE.findall(f.read())
    except OSError:
        return []


def find_modules(testdir):
    """Yield (module name, .ko path, [suite names]) for a built test dir."""
    for root, _dirs, files in os.walk(testdir):
        for name in sorted(files):
            if not name.endswith('.ko'):
                continue
            base = name[:-3]
            mod_file = os.path.join(root, base + '.mod')
            suites = []
            try:
                with open(mod_file, encoding='utf-8') as f:
                    objs = f.read().split()
            except OSError:
                objs = []
            for obj in objs:
                src = obj[:-2] + '.c' if obj.endswith('.o') else obj
                if not os.path.isabs(src):
                    src = os.path.join(root, os.path.basename(src))
                suites += suites_in_source(src)
            yield base, os.path.join(root, name), suites


def sources_suites(testdir):
    """Yield (path, suite) for every suite a C source of testdir defines,
    built or not."""
    for root, _dirs, files in os.walk(testdir):
        for name in sorted(files):
            if name.endswith('.c') and not name.endswith('.mod.c'):
                path = os.path.join(root, name)
                for suite in suites_in_source(path):
                    yield path, suite


def cmd_plan(args):
    glob = args.suite or '*'
    os.makedirs(args.out, exist_ok=True)
    load, kos, expected = [], [], []
    for testdir in args.testdirs:
        found = list(find_modules(testdir))
        if not found:
            print(f'harness: no KUnit modules built in {testdir}',
                  file=sys.stderr)
            return 1
        built = {s for _mod, _ko, suites in found for s in suites}
        for src, suite in sources_suites(testdir):
            if suite not in built:
                print(f'harness: {src}: suite {suite} is in no built '
                      'module (a source missing from Kbuild?)',
                      file=sys.stderr)
                return 1
        for mod, ko, suites in found:
            if not suites:
                print(f'harness: {ko}: no kunit_suite found in its sources',
                      file=sys.stderr)
                return 1
            picked = [s for s in suites if fnmatch.fnmatchcase(s, glob)]
            if picked:
                load.append(mod)
                kos.append(ko)
                expected += picked
    if not expected:
        # 3, not 1: check.sh then runs the host checks alone if they match.
        print(f'harness: no KUnit suite matches SUITE={glob}',
              file=sys.stderr)
        return 3
    for fname, lines in (('load', load), ('modules', kos),
                         ('expected', expected)):
        with open(os.path.join(args.out, fname), 'w', encoding='utf-8') as f:
            f.write(''.join(x + '\n' for x in lines))
    return 0


def early_boot_leaks(log):
    """Line numbers (1-based) of kmemleak reports whose object was
    allocated from start_kernel: early boot allocations that kmemleak
    cannot see referenced (ACPI caches), which no module can have made.
    Every other report counts as a splat."""
    found = set()
    n = 0
    while n < len(log):
        if 'unreferenced object 0x' not in log[n]:
            n += 1
            continue
        end = n + 1
        while end < len(log) and strip_ts(log[end]).startswith(' '):
            end += 1
        if any('start_kernel+' in l for l in log[n:end]):
            found.add(n + 1)
        n = end
    return found


def strip_ts(line):
    return re.sub(r'^\[\s*\d+\.\d+\]\s?', '', line)


def walk_cases(group, suite, out):
    """Flatten kunit.py's JSON into (suite, case, status) rows."""
    for case in group.get('test_cases', []):
        # At the top level a leaf is a suite whose cases never showed up.
        out.append((suite or case['name'], case['name'], case['status']))
    for sub in group.get('sub_groups', []):
        walk_cases(sub, suite or sub['name'], out)


def guest_results(args, problems):
    """The guest's KUnit results, its splats and the suites it had to run."""
    log_path = os.path.join(args.out, 'console.log')
    with open(log_path, encoding='utf-8', errors='replace') as f:
        log = f.read().splitlines()
    with open(os.path.join(args.out, 'expected'), encoding='utf-8') as f:
        expected = f.read().split()

    # The built-in executor prints its own empty KTAP document at boot;
    # ours starts at the harness's begin marker.
    begin = next((i for i, l in enumerate(log)
                  if strip_ts(l).startswith(HARNESS + 'begin')), None)
    ended = any(strip_ts(l).startswith(HARNESS + 'end') for l in log)
    if begin is None:
        problems.append('guest never reached the harness (boot failed?)')
        begin = len(log)
    if not ended:
        problems.append('guest did not reach its end marker '
                        '(timeout, hang or panic)')

    for l in log:
        s = strip_ts(l)
        if s.startswith(HARNESS + 'FAILED'):
            problems.append(s[len(HARNESS):])

    boot_leaks = early_boot_leaks(log)
    splats = []
    for n, l in enumerate(log, 1):
        if n in boot_leaks:
            continue
        for rx, what in SPLATS:
            if rx.search(l):
                splats.append((n, what, strip_ts(l).strip()))
                break
    if boot_leaks:
        print(f'>> ignoring {len(boot_leaks)} kmemleak report(s) of objects '
              'allocated by start_kernel (boot, not kmad)')

    ktap = os.path.join(args.out, 'ktap.log')
    with open(ktap, 'w', encoding='utf-8') as f:
        f.write('\n'.join(log[begin:]) + '\n')
    jpath = os.path.join(args.out, 'results.json')
    if os.path.exists(jpath):
        os.unlink(jpath)
    kunit = os.path.join(args.kernel_src, 'tools/testing/kunit/kunit.py')
    print(f'>> kunit.py parse {ktap}', flush=True)
    subprocess.run([sys.executable, kunit, 'parse', f'--json={jpath}',
                    os.path.abspath(ktap)], check=False)

    rows = []
    if os.path.exists(jpath):
        with open(jpath, encoding='utf-8') as f:
            walk_cases(json.load(f), None, rows)
    else:
        problems.append('kunit.py parse wrote no results')
    # A suite or parameterised case printed "not ok" while every result
    # under it reads ok (one of its lines lost): kunit.py's JSON keeps
    # only the leaves, so the KTAP lines themselves are read.
    not_ok = [strip_ts(l).strip() for l in log[begin:]
              if re.match(r'\s*not ok \d+ ', strip_ts(l))]
    if not_ok and all(r[2] in ('PASS', 'SKIP') for r in rows):
        problems.append(f'KTAP says "{not_ok[0]}" but no case failed')

    return rows, splats, expected, log_path


def cmd_report(args):
    problems = []
    if args.host_only:
        rows, splats, expected, log_path = [], [], [], None
    else:
        rows, splats, expected, log_path = guest_results(args, problems)

    # Host-side checks (e.g. the ABI check) report as extra suites, one
    # 'PASS name' / 'FAIL name' line per case.
    for hr in args.host_results or []:
        suite = os.path.splitext(os.path.basename(hr))[0]
        try:
            with open(hr, encoding='utf-8') as f:
                for line in f:
                    parts = line.split(None, 1)
                    if len(parts) == 2 and parts[0] in ('PASS', 'FAIL'):
                        rows.append((suite, parts[1].strip(), parts[0]))
        except OSError:
            problems.append(f'host check {suite} wrote no results')
        if not any(r[0] == suite for r in rows):
            problems.append(f'host check {suite} reported no cases')

    ran = {r[0] for r in rows}
    for s in expected:
        if s not in ran:
            problems.append(f'suite {s} never ran (module failed to load '
                            'or crashed?)')

    print()
    print(f'{"suite":28} {"passed":>7} {"failed":>7} {"skipped":>8}')
    per = {}
    for suite, _case, status in rows:
        p = per.setdefault(suite, [0, 0, 0])
        if status == 'PASS':
            p[0] += 1
        elif status == 'SKIP':
            p[2] += 1
        else:
            p[1] += 1
    for suite, (p, f, s) in per.items():
        print(f'{suite:28} {p:7} {f:7} {s:8}')
    for suite, case, status in rows:
        if status not in ('PASS', 'SKIP'):
            print(f'FAILED: {suite}.{case} ({status})')

    # A case that did not run is not a pass: every case runs on the
    # kernels make check builds, so a skip means a test lost its
    # precondition (failslab, a replay file...).  KMAD_ALLOW_SKIP=1
    # accepts skips, for kernels of one's own.
    nskip = sum(v[2] for v in per.values())
    if nskip and os.environ.get('KMAD_ALLOW_SKIP') != '1':
        for suite, case, status in rows:
            if status == 'SKIP':
                print(f'SKIPPED: {suite}.{case}')
        problems.append(f'{nskip} case(s) skipped (KMAD_ALLOW_SKIP=1 '
                        'to accept)')
    if splats:
        print(f'\nkernel splats in {log_path}:')
        for n, what, text in splats[:20]:
            print(f'  line {n}: [{what}] {text}')
        if len(splats) > 20:
            print(f'  ... {len(splats) - 20} more')
        problems.append(f'{len(splats)} kernel splat line(s)')
    for p in problems:
        print(f'HARNESS FAILURE: {p}')

    passed = sum(v[0] for v in per.values())
    failed = sum(v[1] for v in per.values()) + len(problems)
    skipped = sum(v[2] for v in per.values())
    if failed and log_path:
        print(f'\nconsole log: {log_path}')
    tail = f', {skipped} skipped' if skipped else ''
    print(f'{passed} passed, {failed} failed{tail}')
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('plan')
    p.add_argument('--suite', default='*')
    p.add_argument('--out', required=True)
    p.add_argument('testdirs', nargs='+')
    r = sub.add_parser('report')
    r.add_argument('--kernel-src', required=True)
    r.add_argument('--out', required=True)
    r.add_argument('--host-results', action='append')
    r.add_argument('--host-only', action='store_true')
    args = ap.parse_args()
    return cmd_plan(args) if args.cmd == 'plan' else cmd_report(args)


if __name__ == '__main__':
    sys.exit(main())
