import type { Knex } from 'knex';
import path from 'node:path';
import { loadConfig, type Config } from '../core/config';

/** Knex settings for migrations, which run as the owner role. */
export function migrationConfig(config: Config): Knex.Config {
  return {
    client: 'pg',
    connection: config.database.ownerUrl,
    migrations: {
      directory: path.join(__dirname, 'migrations'),
      // Under tsx the sources are .ts; a `npm run build` output has .js.
      loadExtensions: [path.extname(__filename)],
    },
  };
}

// For the knex CLI, should anyone use it directly.
export default migrationConfig(loadConfig());
