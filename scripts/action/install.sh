#!/usr/bin/env bash
# The action's first step: put an `ocm-lab` command on the job's PATH.
#   INPUT_VERSION empty: the action's own source (built here when it is not built yet);
#   a version: that npm package; a path to a .tgz: that packed package.
# The command runs as root through sudo when the lab needs it (runtime local: OCM_LAB_SUDO=1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
home="${RUNNER_TEMP:?RUNNER_TEMP is not set: this script runs as a step of the ocm-lab action}/ocm-lab"
mkdir -p "$home/bin"

if [ -z "${INPUT_VERSION:-}" ]; then
  if [ ! -f "$root/dist/cli/main.js" ] || [ ! -d "$root/node_modules" ]; then
    echo "ocm-lab: building the action's own source in $root"
    (cd "$root" && npm ci --no-audit --no-fund && npx tsc -p tsconfig.json)
  fi
  cli="$root/dist/cli/main.js"
else
  spec="$INPUT_VERSION"
  case "$spec" in
    *.tgz) spec="$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")" ;;
    *) spec="ocm-lab@$spec" ;;
  esac
  echo "ocm-lab: installing $spec"
  npm install --prefix "$home/package" --no-audit --no-fund --omit=dev "$spec"
  cli="$home/package/node_modules/ocm-lab/dist/cli/main.js"
fi

echo "package=$(cd "$(dirname "$cli")/../.." && pwd)" >>"$GITHUB_OUTPUT"
node_bin="$(command -v node)"
cat >"$home/bin/ocm-lab" <<WRAPPER
#!/usr/bin/env bash
if [ "\${OCM_LAB_SUDO:-}" = 1 ] && [ "\$(id -u)" != 0 ]; then
  exec sudo -E "$node_bin" "$cli" "\$@"
fi
exec "$node_bin" "$cli" "\$@"
WRAPPER
chmod 0755 "$home/bin/ocm-lab"
echo "$home/bin" >>"$GITHUB_PATH"
"$home/bin/ocm-lab" --version
