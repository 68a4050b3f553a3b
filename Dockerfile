# The hook server's image: built with the lockfile, run as a non-root user on a distroless Node.js
# 26 base without shell or npm. Build: docker build -t <registry>/wasmcloud-metacontroller:<tag> .
# Node.js 26 is the active LTS line, supported until 2029-04-30 (24 until 2028-04-30); it was
# chosen over 24 by the bench (docs/benchmarks-history.md); moving lines means changing both bases.
#
# Debian 13 on both sides: distroless publishes Node.js only on debian13 since it removed the
# nodejs*-debian12 builds (GoogleContainerTools/distroless 5cd38c1e, 2026-02-27), and the build
# stages use the same Debian so that a native addon, should one ever be added, links against the
# same glibc. node:26.12 follows 26.12.x patch releases; bump it deliberately.
ARG NODE_IMAGE=node:26.12-trixie-slim
# The runtime base, an argument like the build base so that scripts/image-test.sh can build on
# local stand-ins where no registry is reachable; releases use these defaults.
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs26-debian13:nonroot

# Type-checks and bundles src/ into dist/main.js with the dev dependencies (typescript, esbuild).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency needs an install script to build (esbuild's only checks that its
# platform package, an optional dependency npm installs anyway, is in place).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/runtime-modules.mjs ./scripts/
COPY src ./src
RUN npm run build

# The production dependencies, installed from the same lockfile; of them, /runtime keeps only what
# the bundle loads from node_modules at run time (pino, pino-pretty and their dependencies): the
# rest is inside dist/main.js already (scripts/runtime-modules.mjs).
FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY scripts/runtime-modules.mjs ./scripts/
RUN node scripts/runtime-modules.mjs /app /runtime

# jemalloc, Debian's build, preloaded in the runtime: glibc's malloc keeps what a burst of first
# syncs frees as holes in its heap (~20 MiB after 10,000 applications), which jemalloc's background
# thread gives back to the system (docs/benchmarks-history.md, fourth round of issue 15). Copied
# under one path on every architecture, with its licence.
FROM ${NODE_IMAGE} AS allocator
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 \
 && mkdir -p /out && cp "$(dpkg -L libjemalloc2 | grep '/libjemalloc\.so\.2$')" /usr/share/doc/libjemalloc2/copyright /out/ \
 && rm -rf /var/lib/apt/lists/*

# The runtime: the bundle, the node_modules it loads at run time (pino, which the bundle leaves
# out: its transports load files of their own) and package.json ("type": "module").
FROM ${RUNTIME_IMAGE}
WORKDIR /app
COPY --from=production-dependencies /runtime/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package-lock.json names every production package, also those inside dist/main.js that no
# node_modules/*/package.json shows: the release's SBOM (scripts/release.sh, syft) reads it.
COPY package.json package-lock.json ./
COPY --from=allocator /out/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2
COPY --from=allocator /out/copyright /usr/share/doc/libjemalloc2/copyright
# distroless' "nonroot"; manifests/deployment.yaml runs as the same numeric user and group.
USER 65532:65532
EXPOSE 8080
# node itself is PID 1 (no npm or shell in between), so SIGTERM reaches src/main.ts, whose own
# handler (PID 1 gets no default one) stops taking calls, finishes those in flight and drains NATS.
# The entrypoint is the command line (package.json "bin"): `docker run IMAGE validate -` checks
# resources from stdin; without arguments the image runs `serve`, the service.
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz.
# background_thread: jemalloc purges freed pages on a timer, also when no call allocates.
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 MALLOC_CONF=background_thread:true
# --expose-gc: once a burst of hook calls is over, the service asks V8 for the memory-reducing
# collection that V8's own memory reducer never starts in a server (src/plumbing/memory-reclaim.ts).
ENTRYPOINT ["/nodejs/bin/node", "--expose-gc", "dist/main.js"]
CMD ["serve"]
