// Prisma 7 CLI configuration. `.env` is not read; DATABASE_URL may be unset for `prisma generate`
// (env() would throw), so it is read directly here.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/gsindex" },
});
