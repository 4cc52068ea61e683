# Debian-based Node 24: the Temporal worker's native core (Rust, glibc) does not run on musl/Alpine.
# One image for both roles; docker-compose.yml picks `npm run api` or `npm run worker`.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The runtime SDK is an npm workspace the API imports: its manifest makes the node_modules link.
COPY packages/runtime-sdk/package.json ./packages/runtime-sdk/package.json
# Production dependencies only; Node 24 runs the TypeScript sources directly (type stripping).
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# The source condition: @hosted-notes/runtime-sdk resolves to its TypeScript sources (no build step;
# docs/decisions.md 84). In NODE_OPTIONS so `node api/main.ts` here and docker-compose's commands get it.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 NODE_OPTIONS=--conditions=@hosted-notes/source
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY api ./api
COPY activities ./activities
COPY db ./db
COPY packages/runtime-sdk/package.json ./packages/runtime-sdk/package.json
COPY packages/runtime-sdk/src ./packages/runtime-sdk/src
COPY domain ./domain
COPY platform ./platform
COPY scripts ./scripts
COPY workers ./workers
COPY workflows ./workflows
USER node
EXPOSE 3000
# Exec form so SIGTERM reaches node and the graceful shutdown runs.
CMD ["node", "api/main.ts"]
