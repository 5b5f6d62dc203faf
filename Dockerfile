# ocm-lab:<version> (the package version), our image: the ocm-lab CLI as the entry point. Addon Deployments run it with
# `args: [internal, …]` (the entry point stays) or `command: [ocm-lab, …]` (found on PATH).
#
# Offline, `ocm-lab setup --runtime kind` builds it FROM ocm-lab/node-base:<node version> (the lab's
# Debian base plus the node that runs the CLI; nothing is pulled) over a context of package.json,
# dist/, manifests/ and the production node_modules only. On a connected machine, from a checkout
# after `npm ci && npm run build`, on the official image of a Node.js LTS line (22, 24 or 26):
#   docker build -t ocm-lab:dev .
# (that context's node_modules also holds the dev dependencies: larger, same behaviour).
ARG BASE_IMAGE=node:24-bookworm-slim
FROM ${BASE_IMAGE}
WORKDIR /opt/ocm-lab
COPY package.json ./
COPY node_modules ./node_modules
COPY manifests ./manifests
COPY dist ./dist
# `ocm-lab` on PATH for `command: [ocm-lab, …]` (tsc writes main.js without the executable bit).
RUN chmod 0755 dist/cli/main.js && ln -s /opt/ocm-lab/dist/cli/main.js /usr/local/bin/ocm-lab
WORKDIR /
ENV NODE_ENV=production
ENTRYPOINT ["node", "/opt/ocm-lab/dist/cli/main.js"]
