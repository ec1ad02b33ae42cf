import knex from 'knex';
import { loadConfig } from '../core/config';
import { migrationConfigFor } from '../core/migrations';

/** `tsx scripts/migrate.ts latest|rollback|status`: applies or inspects the schema as the owner role. */
async function main(command: string): Promise<void> {
  const db = knex(migrationConfigFor(loadConfig()));
  try {
    if (command === 'latest') {
      const [batch, applied] = await db.migrate.latest();
      console.log(applied.length ? `batch ${batch}: ${applied.join(', ')}` : 'migrations: up to date');
    } else if (command === 'rollback') {
      const [batch, undone] = await db.migrate.rollback();
      console.log(`rolled back batch ${batch}: ${undone.join(', ') || 'nothing'}`);
    } else if (command === 'status') {
      const [done, pending] = await db.migrate.list();
      console.log(`applied ${done.length}, pending ${pending.length}`);
    } else {
      throw new Error(`unknown command "${command}" (use latest, rollback or status)`);
    }
  } finally {
    await db.destroy();
  }
}

main(process.argv[2] ?? 'latest').catch((err) => {
  console.error(`migration failed: ${err.message}`);
  process.exit(1);
});
