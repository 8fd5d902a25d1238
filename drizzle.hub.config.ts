import { defineConfig } from 'drizzle-kit';

/** The hub's PostgreSQL schema (`npm run db:generate:hub`); the agent's SQLite one is drizzle.config.ts. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './server/hub/schema.ts',
  out: './server/hub/migrations',
});
