#!/usr/bin/env bash
# A Docker engine of its own for tests and the kind test script: Debian's
# dockerd with its own socket, data root, exec root and pidfile, a default OCI
# runtime that fits this machine's capability bounding set (scripts/runc-bounded),
# its own default bridge and address pool (apart from the local runtime's ranges
# and from any other engine's), and Docker's iptables ON (its inter-network
# isolation is what enforces the VPC rule on kind).
#
#   scripts/docker-engine.sh start          start it (idempotent); prints its DOCKER_HOST on stdout
#   scripts/docker-engine.sh stop [--purge] remove its containers and networks, stop it, and put the
#                                           host back as it was at start (iptables chains and rules,
#                                           FORWARD policy, ip_forward, bridges); --purge also deletes
#                                           the data root (its images)
#   scripts/docker-engine.sh restart        stop dockerd as a host shutdown or `systemctl restart docker` does (its
#                                           containers are stopped, nothing is removed), then start it again with the
#                                           same settings: Docker restarts containers by their restart policies
#   scripts/docker-engine.sh host           print its DOCKER_HOST
#
# Settings (environment): OCM_LAB_DOCKER_RUN_DIR (default /run/ocm-lab-test-docker: socket, pidfile,
# exec root, log and the "before" state), OCM_LAB_DOCKER_DATA_ROOT (default /var/lib/ocm-lab-test-docker),
# OCM_LAB_DOCKER_BRIDGE (default ocmlabtd0), OCM_LAB_DOCKER_BIP (default 10.201.0.1/24),
# OCM_LAB_DOCKER_POOL (default 10.200.0.0/16, split in /24s for user networks).
#
# Another dockerd on the same host (e.g. a developer's) shares the DOCKER* iptables chains: dockerd
# flushes them when it starts, so `start` puts back the rules that were there before, and `stop`
# removes only rules that name this engine's bridges or live in chains that did not exist before.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
RUN_DIR="${OCM_LAB_DOCKER_RUN_DIR:-/run/ocm-lab-test-docker}"
DATA_ROOT="${OCM_LAB_DOCKER_DATA_ROOT:-/var/lib/ocm-lab-test-docker}"
BRIDGE="${OCM_LAB_DOCKER_BRIDGE:-ocmlabtd0}"
BIP="${OCM_LAB_DOCKER_BIP:-10.201.0.1/24}"
POOL="${OCM_LAB_DOCKER_POOL:-10.200.0.0/16}"
SOCK="$RUN_DIR/docker.sock"
HOST="unix://$SOCK"
EXEC_ROOT="$RUN_DIR/exec"
PIDFILE="$RUN_DIR/dockerd.pid"
LOG="$RUN_DIR/dockerd.log"
BEFORE="$RUN_DIR/before"
export PATH="$PATH:/usr/sbin:/sbin"

say() { echo "docker-engine: $*" >&2; }
die() { say "$*"; exit 1; }

dockerd_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

answers() { docker -H "$HOST" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

rules_of() { iptables-save -t "$1" | grep -E '^-A ' || true; }
chains_of() { iptables-save -t "$1" | sed -n 's/^:\([^ ]*\) .*/\1/p'; }

record_before() {
  mkdir -p "$BEFORE"
  for t in filter nat; do
    rules_of "$t" >"$BEFORE/$t.rules"
    chains_of "$t" >"$BEFORE/$t.chains"
    iptables-save -t "$t" | sed -n 's/^:\([A-Z]*\) \([A-Z]*\) .*/\1 \2/p' >"$BEFORE/$t.policies"
  done
  sysctl -n net.ipv4.ip_forward >"$BEFORE/ip_forward"
  if [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then cat /proc/sys/net/bridge/bridge-nf-call-iptables >"$BEFORE/bridge-nf-call-iptables"; fi
  ip -o link show type bridge | awk -F': ' '{print $2}' | cut -d@ -f1 >"$BEFORE/bridges"
}

# dockerd flushes DOCKER, DOCKER-ISOLATION-STAGE-* when it starts: put back what another engine had there
# (at the first start, and, after a restart, what it had when this engine stopped: $BEFORE/$t.others).
restore_flushed_rules() {
  local t now missing line chain rest
  for t in filter nat; do
    now="$(mktemp)"
    rules_of "$t" >"$now"
    missing="$(cat "$BEFORE/$t.rules" "$BEFORE/$t.others" 2>/dev/null | grep -E '^-A DOCKER' | awk '!seen[$0]++' | grep -Fxv -f "$now" || true)"
    rm -f "$now"
    [ -n "$missing" ] || continue
    say "putting back $(echo "$missing" | wc -l) rule(s) of another engine that dockerd flushed in table $t"
    # In reverse, each inserted at the top: they end up in their old order, before the RETURN rules.
    while IFS= read -r line; do
      chain="$(echo "$line" | awk '{print $2}')"
      rest="${line#-A "$chain"}"
      eval "iptables -t $t -I $chain 1 $rest" || say "could not put back in $t: $line"
    done < <(echo "$missing" | tac)
  done
}

start() {
  if dockerd_pid >/dev/null && answers; then
    echo "$HOST"
    return 0
  fi
  [ "$(id -u)" = 0 ] || die "needs root (dockerd, iptables, bridges)"
  for tool in dockerd docker iptables-save ip sysctl node; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found; install Debian's docker.io (OCM_LAB_DOCKER=1 scripts/bootstrap.sh) and iptables"
  done
  mkdir -p "$RUN_DIR" "$DATA_ROOT"
  chmod 0700 "$RUN_DIR"
  [ -f "$BEFORE/ip_forward" ] || record_before
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    # dockerd takes either a bridge of ours (-b) or an address for docker0 (--bip), not both: address it ourselves.
    ip link add "$BRIDGE" type bridge
    ip addr add "$BIP" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  cat >"$RUN_DIR/daemon.json" <<JSON
{
  "runtimes": { "ocm-lab-bounded": { "path": "$here/runc-bounded" } },
  "default-runtime": "ocm-lab-bounded",
  "bridge": "$BRIDGE",
  "default-address-pools": [{ "base": "$POOL", "size": 24 }],
  "iptables": true,
  "ip-forward": true,
  "live-restore": false,
  "log-level": "warn"
}
JSON
  say "starting dockerd ($HOST, data root $DATA_ROOT, log $LOG)"
  setsid dockerd --config-file "$RUN_DIR/daemon.json" --host "$HOST" --data-root "$DATA_ROOT" \
    --exec-root "$EXEC_ROOT" --pidfile "$PIDFILE" </dev/null >>"$LOG" 2>&1 &
  local pid=$! i
  for ((i = 0; i < 120; i++)); do
    if answers; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      say "dockerd exited while starting; last lines of $LOG:"
      tail -n 20 "$LOG" >&2
      stop_engine --quiet || true
      exit 1
    fi
    sleep 0.5
  done
  if ! answers; then
    say "dockerd did not answer on $HOST within 60 s; last lines of $LOG:"
    tail -n 20 "$LOG" >&2
    stop_engine --quiet || true
    exit 1
  fi
  restore_flushed_rules
  echo "$HOST"
}

mentions_any() { # LINE WORD... : does the rule name one of the words as a whole argument?
  local line=" $1 " w
  shift
  for w in "$@"; do case "$line" in *" $w "*) return 0 ;; esac; done
  return 1
}

cleanup_iptables() {
  local bridges=("$@") t line chain target new_chains now
  for t in filter nat; do
    [ -f "$BEFORE/$t.rules" ] || continue
    new_chains=()
    # Only chains dockerd makes (DOCKER, DOCKER-USER, DOCKER-ISOLATION-STAGE-*): a lab of the local runtime may have made its own OCMLAB-* chains meanwhile.
    while IFS= read -r c; do new_chains+=("$c"); done < <(chains_of "$t" | grep -Fxv -f "$BEFORE/$t.chains" | grep -E "^DOCKER" || true)
    now="$(mktemp)"
    rules_of "$t" | grep -Fxv -f "$BEFORE/$t.rules" >"$now" || true
    while IFS= read -r line; do
      chain="$(echo "$line" | awk '{print $2}')"
      target="$(echo "$line" | sed -n 's/.* -j \([^ ]*\).*/\1/p')"
      if mentions_any "$chain" "${new_chains[@]}"; then continue; fi # goes with its chain below
      if mentions_any "$line" "${bridges[@]}" || { [ -n "$target" ] && mentions_any "$target" "${new_chains[@]}"; }; then
        eval "iptables -t $t -D ${line#-A }" || say "could not delete from $t: $line"
      fi
    done <"$now"
    rm -f "$now"
    for c in "${new_chains[@]}"; do iptables -t "$t" -F "$c" || true; done
    for c in "${new_chains[@]}"; do iptables -t "$t" -X "$c" || say "could not delete chain $c of $t"; done
  done
  if [ -f "$BEFORE/filter.policies" ]; then
    local policy
    policy="$(awk '$1 == "FORWARD" {print $2}' "$BEFORE/filter.policies")"
    [ -n "$policy" ] && iptables -P FORWARD "$policy"
  fi
  [ -f "$BEFORE/ip_forward" ] && sysctl -qw net.ipv4.ip_forward="$(cat "$BEFORE/ip_forward")"
  if [ -f "$BEFORE/bridge-nf-call-iptables" ] && [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then
    cat "$BEFORE/bridge-nf-call-iptables" >/proc/sys/net/bridge/bridge-nf-call-iptables
  fi
}

unmount_under() { # DIR: unmount it and everything mounted below it, deepest first (dockerd mounts its roots)
  local dir="$1"
  awk -v d="$dir" '{ gsub(/\\040/, " ", $2); if ($2 == d || index($2, d "/") == 1) print $2 }' /proc/self/mounts | sort -r | while IFS= read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
  done
}

# Before a restart: the DOCKER* rules of other engines now (none naming one of this engine's bridges), for restore_flushed_rules.
record_others() {
  local bridges=("$BRIDGE") n t line
  for n in $(docker -H "$HOST" network ls -q --filter type=custom --no-trunc); do
    bridges+=("$(docker -H "$HOST" network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$n" 2>/dev/null || true)")
    bridges+=("br-${n:0:12}")
  done
  for t in filter nat; do
    : >"$BEFORE/$t.others"
    while IFS= read -r line; do
      mentions_any "$line" "${bridges[@]}" || echo "$line" >>"$BEFORE/$t.others"
    done < <(rules_of "$t" | grep -E '^-A DOCKER' || true)
  done
}

# dockerd's own shutdown (SIGTERM): it stops every container (stop signal, then SIGKILL after its timeout) and removes nothing.
stop_dockerd() {
  local pid i
  pid="$(dockerd_pid)" || return 0
  kill -TERM "$pid"
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $((i++)) -lt 120 ]; do sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then say "dockerd ($pid) did not stop in 60 s; killing it"; kill -KILL "$pid" || true; fi
}

stop_engine() {
  local quiet="${1:-}" bridges=("$BRIDGE")
  [ "$(id -u)" = 0 ] || die "needs root"
  if dockerd_pid >/dev/null && answers; then
    # Let dockerd undo its own per-network rules and bridges: remove containers, then networks.
    local ids nets
    ids="$(docker -H "$HOST" ps -aq)"
    [ -z "$ids" ] || docker -H "$HOST" rm -f $ids >/dev/null || say "could not remove containers: $ids"
    nets="$(docker -H "$HOST" network ls -q --filter type=custom --no-trunc)"
    for n in $nets; do
      local name
      name="$(docker -H "$HOST" network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$n" 2>/dev/null || true)"
      bridges+=("${name:-br-${n:0:12}}")
    done
    printf '%s\n' "${bridges[@]}" >"$RUN_DIR/bridges"
    [ -z "$nets" ] || docker -H "$HOST" network rm $nets >/dev/null || say "could not remove networks"
  elif [ -f "$RUN_DIR/bridges" ]; then
    while IFS= read -r b; do bridges+=("$b"); done <"$RUN_DIR/bridges"
  fi
  stop_dockerd
  # Processes still using this engine's exec root (containerd, shims): ours, ended by pid.
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "$EXEC_ROOT/"; then
      say "ending leftover process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" | cut -c1-120)"
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
  cleanup_iptables "${bridges[@]}"
  for b in "${bridges[@]}"; do
    if ip link show "$b" >/dev/null 2>&1 && ! grep -qFx "$b" "$BEFORE/bridges" 2>/dev/null; then ip link del "$b" || say "could not delete bridge $b"; fi
  done
  unmount_under "$EXEC_ROOT"
  unmount_under "$DATA_ROOT"
  rm -rf --one-file-system "$EXEC_ROOT" "$BEFORE" "$RUN_DIR/bridges" "$RUN_DIR/daemon.json" "$PIDFILE" "$SOCK"
  [ "$quiet" = --quiet ] || say "stopped; host iptables, FORWARD policy, ip_forward and bridges are as before start"
}

case "${1:-}" in
  start) start ;;
  stop)
    stop_engine
    if [ "${2:-}" = --purge ]; then unmount_under "$DATA_ROOT"; rm -rf --one-file-system "$DATA_ROOT" "$RUN_DIR"; say "data root $DATA_ROOT removed"; fi
    ;;
  restart)
    [ "$(id -u)" = 0 ] || die "needs root"
    dockerd_pid >/dev/null || die "no dockerd of this engine runs ($PIDFILE)"
    say "stopping dockerd (its containers stop, nothing is removed)"
    answers && record_others
    stop_dockerd
    start
    ;;
  host) echo "$HOST" ;;
  *) echo "usage: $0 start | stop [--purge] | restart | host" >&2; exit 2 ;;
esac
