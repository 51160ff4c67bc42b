# Build stage: install everything, generate the Prisma client, compile TypeScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev

# Run stage: the compiled service and its production dependencies only.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/prisma ./prisma
EXPOSE 4000
USER node
# The node flag is one V8 reads only at start (src/service/node-flags.ts).
# gsindex serve applies the committed migrations (MIGRATE_ON_START), then runs the API, the scheduler, the workers and the management server.
CMD ["node", "--max-semi-space-size=32", "bin/gsindex.js", "serve"]
