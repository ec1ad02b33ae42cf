# One image for the API, the Temporal workers and the migration; docker-compose.yml picks the
# command (node dist/api/server.js | dist/workers/main.js <pool> | dist/scripts/migrate.js latest).

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies, TypeScript → dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# swagger-ui-dist pulls in @scarf/scarf, whose install script phones home unless told not to.
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
# `npm install --no-save`, not `npm ci`, as scripts/lib/common.sh explains (the lock cannot list
# every platform build of @node-rs/bcrypt's optional packages): the same locked versions.
RUN npm install --no-save --no-audit --no-fund --loglevel=error
# .dockerignore keeps node_modules, dist, .data and .git out; tsconfig.build.json decides what
# is compiled (not test/).
COPY . .
RUN npm run build

# ---- deps: production dependencies only ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm install --no-save --omit=dev --no-audit --no-fund --loglevel=error && npm cache clean --force

# ---- runtime ----
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# Forge scripts run only inside bubblewrap; the forge worker's container must also allow user
# namespaces (README: Security → Script sandbox). timeout and prlimit are in the base image.
# postgresql-client: the platform worker's database backups run its pg_dump (bookworm's is 15,
# as the server in docker-compose.yml; pg_dump must be at least the server's major).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap postgresql-client \
  && rm -rf /var/lib/apt/lists/*
# Files stay root-owned (read-only to the app); the process runs as the image's `node` user.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
# dist/ holds everything the commands load: api/, workers/, activities/, db/ (with the compiled
# migrations knexfile points at), search/, and workflows/, which each worker bundles at start
# from the path next to the compiled worker (require.resolve('../workflows')).
COPY --from=build /app/dist ./dist
# The API's local signing key for session tokens (used when no identity provider is configured:
# AUTH_JWKS_URL / AUTH_PUBLIC_KEY) lives here; the operator CLI in the same container signs with
# it. The only folder the `node` user may write; docker-compose keeps it on a volume.
ENV SHIPYARD_DATA=/var/lib/shipyard
RUN mkdir -p /var/lib/shipyard && chown node:node /var/lib/shipyard
USER node
EXPOSE 8080
# A smaller young generation: see docs/operations.md, "The API's memory".
CMD ["node", "--max-semi-space-size=16", "dist/api/server.js"]
