#!/usr/bin/env bash
# The action's `ocm-lab up` step. Inputs come as INPUT_* variables; the lab file, KUBECONFIG and the
# sudo switch go to $GITHUB_ENV so the job's later steps (and the down action) use the same lab.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
home="${RUNNER_TEMP:?}/ocm-lab"
ocm_lab="$home/bin/ocm-lab"

lab_file="${INPUT_LAB_FILE:-}"
case "${INPUT_ADDONS:-ocm-lab}" in
  ocm-lab) ;;
  upstream) [ -n "$lab_file" ] || lab_file="$root/examples/upstream-addons.yaml" ;;
  *)
    echo "::error title=ocm-lab::addons: '$INPUT_ADDONS' is neither ocm-lab nor upstream"
    exit 2
    ;;
esac
if [ -n "$lab_file" ]; then
  lab_file="$(cd "$(dirname "$lab_file")" && pwd)/$(basename "$lab_file")"
  export OCM_LAB_CONFIG="$lab_file"
  echo "OCM_LAB_CONFIG=$lab_file" >>"$GITHUB_ENV"
fi
if [ "$INPUT_RUNTIME" = local ]; then
  export OCM_LAB_SUDO=1
  echo "OCM_LAB_SUDO=1" >>"$GITHUB_ENV"
fi
# The engine `up` records in the lab's state; every later ocm-lab command takes it from there.
case "${INPUT_ENGINE:-auto}" in
  docker | podman)
    export OCM_LAB_ENGINE="$INPUT_ENGINE"
    engine_cli="$INPUT_ENGINE"
    ;;
  auto)
    engine_cli=docker
    if ! docker version >/dev/null 2>&1 && command -v podman >/dev/null 2>&1; then engine_cli=podman; fi
    ;;
  *)
    echo "::error title=ocm-lab::engine: '$INPUT_ENGINE' is not one of auto, docker, podman"
    exit 2
    ;;
esac
images=(${INPUT_IMAGES:-})
if [ "${#images[@]}" -gt 0 ] && [ "$INPUT_RUNTIME" != kind ]; then
  echo "::error title=ocm-lab::images: the $INPUT_RUNTIME runtime has no image registry; push images with runtime: kind"
  exit 2
fi

# Every image is looked for before the lab is made: a typo costs seconds, not a lab.
for image in "${images[@]}"; do
  if ! err="$("$engine_cli" image inspect --format '{{.Id}}' "$image" 2>&1 >/dev/null)"; then
    echo "::error title=ocm-lab::images: $image is not an image of this runner's $engine_cli engine (build or pull it before this step): $err"
    exit 2
  fi
done

args=(up --runtime "$INPUT_RUNTIME" --artifacts "${INPUT_ARTIFACTS:-auto}")
[ -z "${INPUT_KUBERNETES_VERSION:-}" ] || args+=(--kubernetes-version "$INPUT_KUBERNETES_VERSION")
[ -z "${INPUT_OCM_VERSION:-}" ] || args+=(--ocm-version "$INPUT_OCM_VERSION")
"$ocm_lab" "${args[@]}"

kubeconfig="$home/kubeconfig"
(umask 077 && "$ocm_lab" kubeconfig >"$kubeconfig")
echo "KUBECONFIG=$kubeconfig" >>"$GITHUB_ENV"
echo "kubeconfig=$kubeconfig" >>"$GITHUB_OUTPUT"
if [ "$INPUT_RUNTIME" = kind ]; then
  echo "registry=$("$ocm_lab" registry -o json | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).host)')" >>"$GITHUB_OUTPUT"
  [ "${#images[@]}" -eq 0 ] || "$ocm_lab" registry push "${images[@]}"
fi
