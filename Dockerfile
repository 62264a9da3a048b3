# syntax=docker/dockerfile:1
# The Writ image: one `writ` executable for both the data plane (`serve`, the default) and the
# controller (`controller`); the Helm chart (charts/writ) picks the subcommand.
#
# The image runs compiled JavaScript on Node 24: the build stage installs every dependency and
# runs `npm run build` (tsc, src/ -> dist/, plus the SQL migrations); the runtime stage has the
# production dependencies only (`npm ci --omit=dev`: no tsx, no TypeScript), dist/, bin/ and
# package.json. bin/writ.mjs runs dist/cli/main.js because src/ is not in the image (see its
# header); tsx is a devDependency, for `npm start`, the tests and the hack/ scripts.
#
# Not built by the test suite (no container engine runs there); test/integration/
# production-install.test.ts runs the same steps in a temporary folder (npm ci --omit=dev, the
# build's output, `writ serve` answering /readyz against Postgres). docs/operator.md says how to
# build and run it.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY hack/build ./hack/build
COPY src ./src
RUN npm run build

FROM node:24-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
# The `node` user of the base image (uid/gid 1000), the chart's runAsUser/runAsGroup. Nothing
# is written under /app; the root filesystem may be read-only (the chart mounts an emptyDir at
# /tmp for temporary files).
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "bin/writ.mjs"]
CMD ["serve"]
