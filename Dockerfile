# ocm-lab:<version> (the package version), our image: the ocm-lab CLI as the entry point. Addon Deployments run it with
# `args: [internal, …]` (the entry point stays) or `command: [ocm-lab, …]` (found on PATH).
#
# On the official path (`up --runtime kind`, artifacts official or auto) ocm-lab builds it FROM the
# official Node.js 24 image below, pinned by digest (OFFICIAL_NODE_BASE in src/images/lab-images.ts,
# the same digest), over a context of package.json, dist/, manifests/ and the production
# node_modules only. On the built path it is built FROM ocm-lab/node-base:<node version> (the lab's
# Debian base plus the node that runs the CLI; nothing is pulled). From a checkout after
# `npm ci && npm run build`: docker build -t ocm-lab:$(node -p "require('./package.json').version") .
# (that context's node_modules also holds the dev dependencies: larger, same behaviour).
ARG BASE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
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
