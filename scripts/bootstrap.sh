#!/usr/bin/env bash
# Makes a fresh checkout runnable: system tools (when root and apt exists), npm
# dependencies and the compiled CLI. Cheap when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
# The nodelet runs containers with runc, enters network namespaces with nsenter and gives exec a terminal with script.
command -v runc >/dev/null 2>&1 || need_apt+=(runc)
command -v nsenter >/dev/null 2>&1 || need_apt+=(util-linux)
command -v script >/dev/null 2>&1 || need_apt+=(bsdutils)
# A real registry (distribution) on loopback: the image-pull tests (test/unit/oci-registry.test.ts), the kind
# labs' image registry (built from this binary) and the simulated connected world (scripts/test-connected.sh).
installing_registry=0
if ! command -v docker-registry >/dev/null 2>&1; then need_apt+=(docker-registry); installing_registry=1; fi
# Debian's Docker engine for the kind runtime's tests (scripts/docker-engine.sh runs its own dockerd): only when asked.
installing_docker=0
if [ "${OCM_LAB_DOCKER:-0}" = 1 ] && ! command -v dockerd >/dev/null 2>&1; then need_apt+=(docker.io); installing_docker=1; fi
# Debian's rootful Podman for the kind runtime's Podman case (test/kind/podman-lab.test.ts): only when asked.
# netavark (the lab isolates its VPC networks with its isolate option) and aardvark-dns are only Recommends of podman.
if [ "${OCM_LAB_PODMAN:-0}" = 1 ] && ! command -v podman >/dev/null 2>&1; then need_apt+=(podman netavark aardvark-dns conmon catatonit uidmap slirp4netns fuse-overlayfs); fi
# The connected suite runs this repository's matrix workflow with act, whose local cells' steps run through sudo.
if [ "${OCM_LAB_CONNECTED:-0}" = 1 ] && ! command -v sudo >/dev/null 2>&1; then need_apt+=(sudo); fi
# A real browser for the tests of `ocm-lab ui`'s page (test/support/headless-chromium.ts): only for the tests.
if [ "${OCM_LAB_TESTS:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then need_apt+=(chromium); fi
# The kind runtime's offline node image is debootstrapped from Debian's packages.
if [ "${OCM_LAB_DOCKER:-0}" = 1 ] && ! command -v debootstrap >/dev/null 2>&1; then need_apt+=(debootstrap); fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing ${need_apt[*]} with apt-get" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
    # docker.io starts its own dockerd (docker.service) on systemd hosts; the tests start theirs, so keep it off.
    if [ "$installing_docker" = 1 ] && command -v systemctl >/dev/null 2>&1; then systemctl disable --now docker.service docker.socket >/dev/null 2>&1 || true; fi
    # docker-registry starts a registry on :5000 as a service; the tests start their own on free ports.
    if [ "$installing_registry" = 1 ] && command -v systemctl >/dev/null 2>&1; then systemctl disable --now docker-registry.service >/dev/null 2>&1 || true; fi
  else
    echo "bootstrap: missing ${need_apt[*]}; without them the lab falls back to loopback addresses (isolation not enforced)" >&2
  fi
fi

# A node_modules that is a symlink belongs to another checkout (a git worktree's): npm ci would empty it there.
if [ -L node_modules ]; then
  echo "bootstrap: node_modules is a symlink to $(readlink node_modules); not installing into it" >&2
elif [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing npm dependencies" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

if [ ! -f dist/cli/main.js ] || [ -n "$(find src package.json tsconfig.json -newer dist/cli/main.js -print -quit)" ]; then
  echo "bootstrap: compiling TypeScript" >&2
  npx tsc -p tsconfig.json >&2
  touch dist/cli/main.js
fi
