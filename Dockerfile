# hiresync: multi-stage build, small non-root runtime image.
#   docker build -t hiresync .
#   docker run --rm --env-file .env hiresync migrate      # one-off
#   docker run -d --env-file .env -p 9464:9464 hiresync   # the worker (default command)

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci refuses a lockfile that lacks other platforms' optional packages (the
# registry it was made against does not serve them); npm install then installs
# the same locked versions.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim AS runtime
# A small young generation and a capped heap keep peak RSS flat and low (the
# live set is a few pages); see bench/RESULTS.md.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-semi-space-size=8 --max-old-space-size=512"
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist/src ./dist/src
COPY --from=build --chown=node:node /app/dist/migrations ./dist/migrations
USER node
EXPOSE 9464
# Healthy when the worker's /healthz says Postgres and Redis answer and its schedules exist.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HIRESYNC_HTTP_PORT || 9464) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/cli.js"]
CMD ["worker"]
