#!/usr/bin/env bash
# Instructions per computed request, counted by callgrind: deterministic
# (unlike time) however busy the machine is, so two builds compare on a
# shared machine. Runs BenchmarkComputedRead/<case> under
# `valgrind --tool=callgrind` twice, with N1 and N2 iterations, and prints
# (Ir(N2) − Ir(N1)) / (N2 − N1): the set-up (connecting, seeding,
# parsing) cancels out. The server's goroutines are counted, PostgreSQL's
# work is not (it runs in its own processes).
#
#   tests/bench/callgrind.sh latest graphql_3hop     # cases of BenchmarkComputedRead
#   N1=20 N2=120 tests/bench/callgrind.sh latest
#
# It needs COMPUTED_BENCH_DATABASE_URL (a database the benchmark seeds once
# and reuses) or TEST_DATABASE_URL; `make pg-up` prints a server URL.
set -euo pipefail
cd "$(dirname "$0")/../.."
n1=${N1:-10}
n2=${N2:-60}
[ $# -gt 0 ] || set -- latest graphql_3hop
bin=$(mktemp -d)/tests.test
go test -c -o "$bin" ./tests/
out=$(mktemp -d)
total() { # args: case iterations; prints the instructions of the whole run
  local f="$out/cg.$1.$2"
  # GOMAXPROCS=1 and GOGC fixed: one scheduler thread and the same
  # collection schedule in both runs. Go's asynchronous preemption signals
  # crash callgrind, so they are off.
  GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=${GOGC:-400} valgrind --tool=callgrind --callgrind-out-file="$f" \
    "$bin" -test.run '^$' -test.bench "^BenchmarkComputedRead\$/^$1\$" -test.benchtime "${2}x" >/dev/null 2>"$f.log"
  awk '/^summary:/ {print $2; exit}' "$f"
}
for c in "$@"; do
  a=$(total "$c" "$n1")
  b=$(total "$c" "$n2")
  echo "$c: $(( (b - a) / (n2 - n1) )) instructions per request (callgrind, N=$n1→$n2)"
done
rm -rf "$out" "$(dirname "$bin")"
