#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make fuzz`: build drivers/kmad/wire.c and smi.c in user space with
# libFuzzer, ASan and UBSan, replay the committed reproducers, then fuzz
# each target.  Documentation/fuzzing.rst describes it.
#
#   FUZZ_S=<seconds>      fuzz each target this long instead of
#                         FUZZ_RUNS executions
#   FUZZ_RUNS=<n>         executions per target (default 10000000)
#   FUZZ_TARGETS='wire'   a subset of the targets (default 'wire smi')
#
# The working corpus is build/fuzz/corpus/<target>/ (kept between runs),
# each run's whole libFuzzer log build/fuzz/<target>.log, crashing inputs
# build/fuzz/artifacts/<target>-crash-* (or -timeout-, -leak-, -oom-).
# Fails on a crash, a failing reproducer, or a tests/fuzz/replay.h that
# does not match replay/ and corpus/.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
fuzz="$root/tests/fuzz"
out="$root/build/fuzz"
runs=${FUZZ_RUNS:-10000000}
targets=${FUZZ_TARGETS:-wire smi}
declare -A max_len=([wire]=300 [smi]=307)

"$root/tests/qemu/deps.sh" fuzz
mkdir -p "$out/artifacts"
fail=0

if python3 "$fuzz/mkreplay.py" --check; then
	echo ">> tests/fuzz/replay.h is up to date"
else
	echo ">> tests/fuzz/replay.h is STALE: run 'make fuzz-replay' and commit it" >&2
	fail=1
fi

# -fsanitize=fuzzer instruments every file for coverage and links
# libFuzzer's main().  The kmad sources are compiled as they are, with
# the kernel headers they include taken from tests/fuzz/compat/.
# shellcheck disable=SC2054 # the commas are -fsanitize='s
cflags=(-g -O1 -fno-omit-frame-pointer -fno-strict-aliasing -Wall -Werror
	-fsanitize=fuzzer,address,undefined,implicit-integer-truncation
	-fno-sanitize-recover=all -D__KERNEL__
	-I "$fuzz/compat" -I "$root/include")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

summary=()
for t in $targets; do
	[ -n "${max_len[$t]:-}" ] || { echo "run.sh: unknown target '$t'" >&2; exit 2; }
	bin="$out/${t}_fuzz"
	echo ">> building $t: tests/fuzz/${t}_fuzz.c + drivers/kmad/$t.c"
	clang "${cflags[@]}" -o "$bin" "$fuzz/${t}_fuzz.c" "$root/drivers/kmad/$t.c"

	mapfile -t repro < <(find "$fuzz/replay" -maxdepth 1 -type f \
		-name "$t-*" 2>/dev/null | sort)
	if [ ${#repro[@]} -gt 0 ]; then
		echo ">> $t: replaying ${#repro[@]} reproducer(s) from tests/fuzz/replay/"
		if ! "$bin" "${repro[@]}" > "$out/$t-replay.log" 2>&1; then
			sed -n '/^Running:/p; /^==[0-9]*==ERROR\|runtime error\|^[a-z]*_fuzz: /,/^SUMMARY/p' \
				"$out/$t-replay.log" | head -n 60 >&2
			echo ">> $t: a reproducer still fails; log: build/fuzz/$t-replay.log" >&2
			summary+=("$t: reproducer FAILED")
			fail=1
			continue
		fi
	fi

	corpus="$out/corpus/$t"
	mkdir -p "$corpus"
	if [ -n "${FUZZ_S:-}" ]; then
		limit=(-max_total_time="$FUZZ_S")
		what="$FUZZ_S s"
	else
		limit=(-runs="$runs")
		what="$runs executions"
	fi
	echo ">> fuzzing $t for $what (corpus build/fuzz/corpus/$t, log build/fuzz/$t.log)"
	start=$(date +%s)
	rc=0
	# New inputs go to the first corpus directory, the working one.
	"$bin" "${limit[@]}" -max_len="${max_len[$t]}" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
		"$corpus" "$fuzz/corpus/$t" > "$out/$t.log" 2>&1 &
	pid=$!
	# Progress: libFuzzer's "pulse" lines, at every power of two.
	tail -n +1 -f --pid=$pid "$out/$t.log" 2>/dev/null |
		grep --line-buffered -E '^#[0-9]+[[:space:]]+(pulse|DONE)' |
		sed -u 's/^/   /' || true
	wait $pid || rc=$?
	secs=$(( $(date +%s) - start ))
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out/$t.log" | tail -n 1 || true)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
	cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([^ ]*\).*/cov \1, ft \2, corpus \3/p' \
		"$out/$t.log" | tail -n 1)
	if [ $rc != 0 ]; then
		# the report, up to its SUMMARY line, and the input
		sed -n '/^==[0-9]*==ERROR\|runtime error\|^[a-z]*_fuzz: /,/^SUMMARY/p' \
			"$out/$t.log" | head -n 60 >&2
		grep -A2 '^MS: ' "$out/$t.log" | head -n 3 >&2 || true
		input=$(ls -t "$out/artifacts/$t-"* 2>/dev/null | head -n 1)
		echo ">> $t: FAILED (exit $rc); input: ${input:-none saved}" >&2
		echo "   keep it as tests/fuzz/replay/$t-<short-name>, then make fuzz-replay" >&2
		summary+=("$t: FAILED after ${execs:-?} executions in ${secs} s${cov:+; $cov}")
		fail=1
	else
		[ -n "$done_line" ] || { echo ">> $t: no DONE line in build/fuzz/$t.log" >&2; fail=1; }
		rate=$(( ${execs:-0} / (secs > 0 ? secs : 1) ))
		summary+=("$t: ${execs:-?} executions in ${secs} s ($rate exec/s); $cov")
	fi
done

echo ">> fuzz summary"
printf '   %s\n' "${summary[@]}"
if [ "$fail" = 0 ]; then
	echo ">> fuzz: clean"
else
	echo ">> fuzz: FAILED" >&2
fi
exit "$fail"
