#!/usr/bin/env bash
# The conformance matrix on this machine, one cell after another: for each
# Kubernetes version × addon implementation, `ocm-lab setup`, `up`,
# `conformance --junit --summary`, `down`; then one table of every cell
# (scripts/matrix-summary.mjs) and the time each step took. The same commands
# as the CI's conformance jobs (.github/workflows/conformance.yml).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
ALL_VERSIONS=(v1.35.4 v1.36.3 v1.37.2)
ALL_ADDONS=(ocm-lab upstream)

usage() {
  cat <<EOF
usage: scripts/matrix.sh [--kubernetes-version V]... [--addons ocm-lab|upstream]... [--runtime local|kind]
                         [--out DIR] [--dry-run] [--help]

Runs the conformance matrix on this machine, one cell at a time, and prints one table of all cells.
  --kubernetes-version V   a Kubernetes version to run (repeat; default: ${ALL_VERSIONS[*]})
  --addons IMPL            ocm-lab (examples/default-lab.yaml) or upstream (examples/upstream-addons.yaml)
                           (repeat; default: ${ALL_ADDONS[*]})
  --runtime R              the runtime of every cell (default: local)
  --out DIR                where each cell's summary, JUnit, transcripts and logs go (default: ./matrix-results)
  --dry-run                print the commands of every cell and run nothing

A lab that is already up with a cell's lab file is not touched: the script stops before that cell.
Exit status: 0 every cell passed; 1 a cell failed; 2 bad usage.
EOF
}

die_usage() {
  echo "matrix: $*" >&2
  echo "run 'scripts/matrix.sh --help' for usage" >&2
  exit 2
}

versions=()
addons=()
runtime=local
out="$PWD/matrix-results"
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --kubernetes-version) [ $# -ge 2 ] || die_usage "$1 needs a value"; versions+=("$2"); shift 2 ;;
    --kubernetes-version=*) versions+=("${1#*=}"); shift ;;
    --addons) [ $# -ge 2 ] || die_usage "$1 needs a value"; addons+=("$2"); shift 2 ;;
    --addons=*) addons+=("${1#*=}"); shift ;;
    --runtime) [ $# -ge 2 ] || die_usage "$1 needs a value"; runtime="$2"; shift 2 ;;
    --runtime=*) runtime="${1#*=}"; shift ;;
    --out) [ $# -ge 2 ] || die_usage "$1 needs a value"; out="$2"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=("${ALL_VERSIONS[@]}")
[ ${#addons[@]} -gt 0 ] || addons=("${ALL_ADDONS[@]}")
case "$runtime" in local | kind) ;; *) die_usage "--runtime '$runtime' is not local or kind" ;; esac

lab_file_of() {
  case "$1" in
    ocm-lab) echo examples/default-lab.yaml ;;
    upstream) echo examples/upstream-addons.yaml ;;
    *) die_usage "--addons '$1' is not ocm-lab or upstream" ;;
  esac
}
for a in "${addons[@]}"; do lab_file_of "$a" >/dev/null; done
out="$(realpath -m "$out")"

ocm_lab=(scripts/ocm-lab) # run from the repository root (cd below)
# The command line as it would be typed, for the dry run and the log.
show() { printf '%q ' "$@" | sed 's/ $//'; echo; }

current_lab_file=""
# shellcheck disable=SC2317 # run by the trap below
on_signal() {
  if [ -n "$current_lab_file" ]; then
    echo "matrix: interrupted; taking the lab of $current_lab_file down" >&2
    "${ocm_lab[@]}" --config "$current_lab_file" down >&2 || true
  fi
  exit 130
}
trap on_signal INT TERM

lab_is_up() { # LAB_FILE: does a lab of this file exist?
  local json
  json="$("${ocm_lab[@]}" --config "$1" status -o json 2>/dev/null)" || return 1
  [ "$(node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).exists === true' <<<"$json")" = true ]
}

# Runs a step of a cell with its output in the cell's log; prints its duration in seconds.
timed() { # LOG COMMAND...
  local log="$1" start status
  shift
  start=$(date +%s)
  show "$@" >>"$log"
  set +e
  "$@" >>"$log" 2>&1
  status=$?
  set -e
  echo "$(($(date +%s) - start))"
  return $status
}

cd "$root"
timings=()
summaries=()
failed=0
for version in "${versions[@]}"; do
  for impl in "${addons[@]}"; do
    lab_file="$(lab_file_of "$impl")"
    cell="$runtime-$version-$impl"
    dir="$out/$cell"
    setup_cmd=("${ocm_lab[@]}" setup --runtime "$runtime" --kubernetes-version "$version")
    up_cmd=("${ocm_lab[@]}" --config "$lab_file" up --runtime "$runtime" --kubernetes-version "$version")
    conformance_cmd=("${ocm_lab[@]}" --config "$lab_file" conformance --junit "$dir/junit.xml" --summary "$dir/summary.md" --transcript "$dir/transcripts")
    down_cmd=("${ocm_lab[@]}" --config "$lab_file" down)
    if [ "$dry_run" = 1 ]; then
      echo "# cell $cell"
      for c in setup_cmd up_cmd conformance_cmd down_cmd; do
        declare -n cmd="$c"
        show "${cmd[@]}"
        unset -n cmd
      done
      continue
    fi

    if lab_is_up "$lab_file"; then
      echo "matrix: a lab of $lab_file is already up; take it down first ('scripts/ocm-lab --config $lab_file down') — stopping before cell $cell" >&2
      exit 1
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    log="$dir/matrix.log"
    echo "matrix: cell $cell (log: $log)" >&2
    t_setup=- t_up=- t_conf=- reason=""
    current_lab_file="$lab_file"
    if t_setup=$(timed "$log" "${setup_cmd[@]}"); then
      if t_up=$(timed "$log" "${up_cmd[@]}"); then
        t_conf=$(timed "$log" "${conformance_cmd[@]}") || reason="conformance failed"
      else
        reason="'ocm-lab up' failed after ${t_up} s"
      fi
    else
      reason="'ocm-lab setup' failed after ${t_setup} s"
    fi
    if [ -n "$reason" ]; then
      failed=1
      # The lab's own logs, before down removes its directory (its PKI and kubeconfigs stay behind).
      labs="${OCM_LAB_HOME:-${XDG_STATE_HOME:-$HOME/.local/state}/ocm-lab/labs}"
      if [ -d "$labs" ]; then
        mkdir -p "$dir/lab-logs"
        (cd "$labs" && find . -path '*/logs/*' -type f -exec cp --parents {} "$dir/lab-logs/" \;) || true
      fi
    fi
    if [ ! -f "$dir/summary.md" ]; then
      node scripts/matrix-summary.mjs --failed-cell --runtime "$runtime" --kubernetes-version "$version" --addons "$impl" --reason "$reason; see $log" >"$dir/summary.md"
    fi
    t_down=$(timed "$log" "${down_cmd[@]}") || { failed=1; echo "matrix: 'ocm-lab down' failed for cell $cell; see $log" >&2; }
    current_lab_file=""
    summaries+=("$dir/summary.md")
    timings+=("| $runtime | $version | $impl | $t_setup | $t_up | $t_conf | $t_down |")
    echo "matrix: cell $cell: ${reason:-conformance passed} (setup ${t_setup} s, up ${t_up} s, conformance ${t_conf} s, down ${t_down} s)" >&2
  done
done
[ "$dry_run" = 1 ] && exit 0

node scripts/matrix-summary.mjs "${summaries[@]}" | tee "$out/matrix.md"
{
  echo
  echo "### Time per step (s)"
  echo
  echo "| runtime | Kubernetes | addons | setup | up | conformance | down |"
  echo "| --- | --- | --- | ---: | ---: | ---: | ---: |"
  printf '%s\n' "${timings[@]}"
} | tee -a "$out/matrix.md"
exit "$failed"
