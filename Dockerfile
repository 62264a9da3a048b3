# syntax=docker/dockerfile:1
# The Writ image: one `writ` executable for both the data plane (`serve`, the default) and the
# controller (`controller`); the Helm chart (charts/writ) picks the subcommand.
#
# The image runs the TypeScript sources directly: bin/writ.mjs registers tsx's loader, so there
# is no build step, and tsx is needed at run time. package.json lists tsx under
# devDependencies, so a plain `npm ci --omit=dev` would leave it out. Until tsx moves to
# "dependencies", the image installs every dependency (NPM_CI_FLAGS=--include=dev); once it
# has moved, build with --build-arg NPM_CI_FLAGS=--omit=dev for a smaller image. The check below
# fails the build when tsx is missing either way.
#
# Not built by the test suite (no container engine runs there); docs/operator.md says how to
# build and run it.

FROM node:20-slim AS deps
WORKDIR /app
ARG NPM_CI_FLAGS=--include=dev
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci ${NPM_CI_FLAGS} --no-audit --no-fund && npm cache clean --force
RUN node --input-type=module -e "await import('tsx/esm/api')" \
  || (echo "tsx is not installed: it must be a runtime dependency (see the comment at the top)" >&2; exit 1)

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
# The `node` user of the base image (uid/gid 1000), the chart's runAsUser/runAsGroup. The root
# filesystem may be read-only: tsx caches compiled modules under /tmp (the chart mounts an
# emptyDir there).
USER 1000:1000
EXPOSE 8080
ENTRYPOINT ["node", "bin/writ.mjs"]
CMD ["serve"]
