# syntax=docker/dockerfile:1
#
# One image for every service of the licensing platform. The SERVICE variable picks the entry point:
#   docker build -t licensing-platform:latest .
#   docker run -e SERVICE=license-service ... licensing-platform:latest
# Each service applies its own migrations at boot (under a PostgreSQL advisory lock), so there is
# no separate migration step.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------
# build: install exactly what the lockfile says, compile with SWC into dist/ (no type check: CI
# runs tsc on every commit), build the console (Vite, into dist/apps/console, served by the gateway
# at /console), drop dev deps.
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NX_DAEMON=false \
    NX_NO_CLOUD=true \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    SCARF_ANALYTICS=false

COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig*.json ./
COPY apps ./apps
COPY libs ./libs
COPY tools ./tools
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# ---------------------------------------------------------------------------------------------
# relay: the on-premise relay (apps/relay, docs/relay.md), a customer's image, not the platform's:
#   docker build --target relay -t licensing-relay:latest .
#   docker run -v relay-data:/data -v ./product.pem:/etc/licensing-relay/product.pem:ro \
#     -p 8700:8700 licensing-relay:latest
# Its database (and private key) lives on the /data volume. Before the relay file is loaded, run
# `init` (and later `start --file`) with the same volume: the arguments replace CMD.
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS relay
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app

COPY --from=build /app/package.json ./package.json
COPY --from=build /app/tsconfig.base.json ./tsconfig.base.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/tools/register-paths.js ./tools/register-paths.js

# The data directory belongs to the relay's user; nothing else is writable.
RUN mkdir -p /data /etc/licensing-relay && chown 1000:1000 /data
VOLUME /data
USER 1000:1000
EXPOSE 8700

# node is PID 1 and receives SIGTERM itself: the relay stops serving, then closes its database.
ENTRYPOINT ["node", "-r", "./tools/register-paths.js", "dist/apps/relay/src/main.js"]
CMD ["start", "--data", "/data", "--public-key", "/etc/licensing-relay/product.pem", "--host", "0.0.0.0", "--port", "8700"]

# ---------------------------------------------------------------------------------------------
# runtime: production dependencies, compiled output and the alias resolver, run as `node`.
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG SERVICE=gateway
ENV NODE_ENV=production \
    SERVICE=${SERVICE} \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app

# Owned by root and read-only for the service user: the process never writes to its own code.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/tsconfig.base.json ./tsconfig.base.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/tools/register-paths.js ./tools/register-paths.js
# The operator command line, for creating organizations: node tools/operator.js org create "Acme"
COPY --from=build /app/tools/operator.js ./tools/operator.js
COPY --from=build /app/tools/build-if-checkout.js ./tools/build-if-checkout.js

# The `node` user of the base image, by uid so that Kubernetes can verify runAsNonRoot.
USER 1000:1000

# The gateway's HTTP API (and its /health/live, /health/ready). The other services listen only on their
# HEALTH_PORT (3101 product, 3102 license, 3103 revocation, 3104 analytics, 3105 webhook).
EXPOSE 3000

# `exec` replaces the shell with node, so node itself receives SIGTERM (from `docker stop` or the
# kubelet) and runs Nest's graceful shutdown: stop consuming, drain in-flight work, close pools.
CMD ["sh", "-c", "exec node -r ./tools/register-paths.js dist/apps/$SERVICE/src/main.js"]
