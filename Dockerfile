# Debian-based Node 24: the Temporal worker's native core (Rust, glibc) does not run on musl/Alpine.
# One image for both roles; docker-compose.yml picks `npm run api` or `npm run worker`.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; Node 24 runs the TypeScript sources directly (type stripping).
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY api ./api
COPY activities ./activities
COPY db ./db
COPY domain ./domain
COPY platform ./platform
COPY scripts ./scripts
COPY workers ./workers
COPY workflows ./workflows
USER node
EXPOSE 3000
# Exec form so SIGTERM reaches node and the graceful shutdown runs.
CMD ["node", "api/main.ts"]
