#!/usr/bin/env bash
# Compare BenchmarkComputedRead across revisions, load-independently:
# instructions per request (callgrind, as tests/bench/callgrind.sh counts
# them) plus allocs/op and B/op (go test -benchmem, 300x), one table.
#
#   tests/bench/callgrind-revs.sh 8774b1d 2e25837 main
#   tests/bench/callgrind-revs.sh 8774b1d@2e25837 main   # REV@DATAREV: REV's code, demo/ (the seed) from DATAREV
#
# One revision takes about 1–5 min of builds (cached: seconds) plus
# about 2.5–5 min of benchmarks (9 cases) on 2 cores.
# Each spec gets its own detached worktree $WORK/<name>, its own test
# binary and its own database callgrind_revs_<name> (created fresh, migrated and
# seeded by the benchmark itself through COMPUTED_BENCH_DATABASE_URL, so
# each schema version seeds its own). Cases are those of the revision's own
# BenchmarkComputedRead. One valgrind at a time.
#
# env: REPO (this repository)  WORK ($TMPDIR/cryptointel-callgrind-revs)  N1 N2 (10 210; callgrind.sh has 10 60, whose run-to-run noise is ±3–5%)
#      GOGC (off: no collection, so a cycle that falls inside N1..N2 in one
#      run and not in another cannot move Ir/req by up to ~40%; the GC's
#      share shows as B/op instead; GOGC=400 is callgrind.sh's)  CASES ("latest search" to narrow)  REPEAT (1; -benchmem
#      runs, revisions alternating, the last one reported)  KEEP=1 keeps
#      worktrees, binaries and databases (else removed at the end)
#      PGBASE (postgres://cryptointel:cryptointel@127.0.0.1:5432)
set -euo pipefail
REPO=${REPO:-$(git -C "$(dirname "$0")" rev-parse --show-toplevel)}
WORK=${WORK:-${TMPDIR:-/tmp}/cryptointel-callgrind-revs}
N1=${N1:-10}
N2=${N2:-210}
GOGC_CG=${GOGC:-off}
REPEAT=${REPEAT:-1}
PGBASE=${PGBASE:-postgres://cryptointel:cryptointel@127.0.0.1:5432}
[ $# -gt 0 ] || { sed -n '2,23p' "$0"; exit 2; }
mkdir -p "$WORK/out"
t0=$(date +%s)

names=()
declare -A dir bin dburl cases
for spec in "$@"; do
  rev=${spec%%@*}
  data=""
  [ "$spec" != "$rev" ] && data=${spec#*@}
  short=$(git -C "$REPO" rev-parse --short=7 "$rev^{commit}")
  name=$short
  if [ -n "$data" ]; then
    dshort=$(git -C "$REPO" rev-parse --short=7 "$data^{commit}")
    name="$short-d$dshort"
  fi
  names+=("$name")
  d="$WORK/$name"
  dir[$name]=$d
  if [ ! -d "$d" ]; then
    git -C "$REPO" worktree add --detach "$d" "$short" >/dev/null
    if [ -n "$data" ]; then
      # the seed of DATAREV; demo's own tests stay REV's (not built here)
      git -C "$d" checkout "$dshort" -- demo/
      for f in "$d"/demo/*_test.go; do
        rel=demo/$(basename "$f")
        if git -C "$d" cat-file -e "$short:$rel" 2>/dev/null; then
          git -C "$d" checkout "$short" -- "$rel"
        else
          rm -f "$f"
        fi
      done
    fi
  fi
  b="$WORK/bin.$name"
  bin[$name]=$b
  echo "# build $name" >&2
  (cd "$d" && nice go test -c -o "$b" ./tests/)
  db="callgrind_revs_${name//-/_}"
  psql "$PGBASE/${PGADMINDB:-cryptointel}?sslmode=disable" -qX -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1
  dburl[$name]="$PGBASE/$db?sslmode=disable"
  # the cases of this revision's benchmark: {"name", "/target", ...}
  cs=$({ grep -oE '^[[:space:]]*\{"[a-z0-9_]+", "/' "$d/tests/computed_bench_test.go" || true; } | grep -oE '"[a-z0-9_]+"' | tr -d '"' | tr '\n' ' ')
  [ -n "$cs" ] || echo "# $name: no BenchmarkComputedRead cases found" >&2
  if [ -n "${CASES:-}" ]; then
    keep=""
    for c in $cs; do [[ " $CASES " == *" $c "* ]] && keep+="$c "; done
    cs=$keep
  fi
  cases[$name]=$cs
done
tb=$(date +%s)

# -benchmem runs (these also migrate and seed each database natively)
for ((i = 1; i <= REPEAT; i++)); do
  for n in "${names[@]}"; do
    echo "# benchmem $n ($i/$REPEAT)" >&2
    (cd "${dir[$n]}/tests" && COMPUTED_BENCH_DATABASE_URL=${dburl[$n]} nice "${bin[$n]}" \
      -test.run '^$' -test.bench '^BenchmarkComputedRead$' -test.benchmem -test.benchtime 300x) >"$WORK/out/mem.$n" 2>&1 ||
      { cat "$WORK/out/mem.$n" >&2; exit 1; }
  done
done

# callgrind, as tests/bench/callgrind.sh (same flags), with the prebuilt binary
total() { # args: name case iterations; prints the instructions of the whole run
  local n=$1 f="$WORK/out/cg.$1.$2.$3"
  (cd "${dir[$n]}/tests" && COMPUTED_BENCH_DATABASE_URL=${dburl[$n]} GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=$GOGC_CG \
    nice valgrind --tool=callgrind --callgrind-out-file="$f" \
    "${bin[$n]}" -test.run '^$' -test.bench "^BenchmarkComputedRead\$/^$2\$" -test.benchtime "${3}x" >"$f.out" 2>"$f.log") ||
    { echo "valgrind failed: $n $2 $3 (see $f.log)" >&2; echo 0; return; }
  awk '/^summary:/ {print $2; exit}' "$f"
}
declare -A ir
for n in "${names[@]}"; do
  for c in ${cases[$n]}; do
    echo "# callgrind $n $c" >&2
    a=$(total "$n" "$c" "$N1")
    b=$(total "$n" "$c" "$N2")
    ir[$n.$c]=$(((b - a) / (N2 - N1)))
    rm -f "$WORK/out/cg.$n.$c.$N1" # keep the N2 profile for callgrind_annotate
  done
done

# table
allcases=()
for n in "${names[@]}"; do
  for c in ${cases[$n]}; do [[ " ${allcases[*]:-} " == *" $c "* ]] || allcases+=("$c"); done
done
field() { # name case metric-unit: the value before unit on the case's line
  awk -v c="BenchmarkComputedRead/$2-" -v u="$3" 'index($1, c) == 1 { for (i = 2; i <= NF; i++) if ($i == u) print $(i-1) }' "$WORK/out/mem.$1"
}
body() { # approximate response bytes: MB/s × ns/op
  awk -v c="BenchmarkComputedRead/$2-" 'index($1, c) == 1 { for (i = 2; i <= NF; i++) { if ($i == "ns/op") ns = $(i-1); if ($i == "MB/s") mb = $(i-1) } printf "%.1f", mb * ns / 1e6 }' "$WORK/out/mem.$1"
}
first=${names[0]}
echo
echo "BenchmarkComputedRead: instructions per request (callgrind, N=$N1→$N2, GOMAXPROCS=1 GOGC=$GOGC_CG), allocs/op and B/op (300x); Δ vs $first; body ≈ KB per response (MB/s × ns/op)"
echo
hdr="| case |"
sep="|---|"
for n in "${names[@]}"; do
  hdr+=" $n Ir/req | Δ | allocs | B/op | body KB |"
  sep+="---:|---:|---:|---:|---:|"
done
echo "$hdr"
echo "$sep"
for c in "${allcases[@]}"; do
  row="| $c |"
  for n in "${names[@]}"; do
    v=${ir[$n.$c]:-}
    if [ -z "$v" ]; then
      row+=" – | | | | |"
      continue
    fi
    base=${ir[$first.$c]:-}
    d=""
    [ -n "$base" ] && [ "$base" -gt 0 ] && d=$(awk -v a="$base" -v b="$v" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }')
    row+=" $v | $d | $(field "$n" "$c" allocs/op) | $(field "$n" "$c" B/op) | $(body "$n" "$c") |"
  done
  echo "$row"
done
te=$(date +%s)
echo
echo "time: builds $((tb - t0)) s, benches $((te - tb)) s, total $((te - t0)) s for ${#names[@]} revision(s)"

if [ "${KEEP:-}" != 1 ]; then
  for n in "${names[@]}"; do
    psql "$PGBASE/${PGADMINDB:-cryptointel}?sslmode=disable" -qX -c "DROP DATABASE IF EXISTS callgrind_revs_${n//-/_}" >/dev/null 2>&1 || true
    git -C "$REPO" worktree remove --force "${dir[$n]}" || true
    rm -f "${bin[$n]}"
  done
fi
