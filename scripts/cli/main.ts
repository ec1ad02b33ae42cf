import { parseArgs } from 'node:util';
import { loadConfig } from '../../api/config';
import { issueDevToken } from './devToken';

// The operator CLI: `npx shipyard <command> …`. One function per command.

const USAGE = `usage:
  shipyard token --tenant <id-or-slug> --email <email> [--name N] [--groups a,b] [--roles admin,…] [--ttl 1h]
      prints a session token the local API accepts (dev signing key); creates the tenant and
      user when missing and assigns the roles directly`;

const DURATION = /^(\d+)([smhd])$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

function parseDuration(value: string): number {
  const match = DURATION.exec(value);
  if (!match) throw new Error(`--ttl must look like 90s, 30m, 1h or 7d, got "${value}"`);
  return Number(match[1]) * UNIT_SECONDS[match[2]];
}

const list = (value: string | undefined) => (value ? value.split(',').map((item) => item.trim()).filter(Boolean) : []);

async function token(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      groups: { type: 'string' },
      roles: { type: 'string' },
      ttl: { type: 'string', default: '1h' },
    },
  });
  if (!values.tenant || !values.email) throw new Error('--tenant and --email are required');
  const { token: jwt } = await issueDevToken(loadConfig(), {
    tenant: values.tenant,
    email: values.email,
    name: values.name,
    groups: list(values.groups),
    roles: list(values.roles),
    ttlSeconds: parseDuration(values.ttl ?? '1h'),
  });
  process.stdout.write(`${jwt}\n`);
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = { token };

async function main([command, ...args]: string[]): Promise<void> {
  const run = command ? COMMANDS[command] : undefined;
  if (!run) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  await run(args);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`shipyard: ${err.message}\n`);
  process.exit(1);
});
