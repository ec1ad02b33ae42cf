import { parseArgs } from 'node:util';
import { loadConfig } from '../../core/config';
import { apiUrlBesideTemporalUi, CODEC_SIGN_IN_MAX_SECONDS, codecSignInAudience } from '../../core/auth/codecSignIn';
import { issueDevToken, UnknownTenantError } from './devToken';
import { setForgeLimits } from './forgeLimits';
import { mintDevLicenseKey } from './licenseKey';
import { EDITION_PREFIX, LICENSE_TYPES, type LicensedEdition, type LicenseType } from '../../core/license/keys';
import { seedCatalog } from './seedCatalog';

// The operator CLI: `npx shipyard <command> …`. One function per command.

const TOKEN_USAGE = `  shipyard token --tenant <id-or-slug> --email <email> [--create-tenant] [--name N] [--groups a,b]
                 [--roles admin,…] [--ttl 1h]
      prints a session token the local API accepts (dev signing key) for the user with that
      email, created when missing, with the roles assigned directly. An unknown tenant is refused
      unless --create-tenant is given.
        --tenant         the tenant's id or slug
        --email          the user's email (their identity)
        --create-tenant  create the tenant when it does not exist
        --name           the user's display name (default: the email's local part)
        --groups         identity-provider groups the token claims, comma-separated
        --roles          roles to assign: admin, editor, viewer or a role bundle's name
        --ttl            how long the token lasts: 90s, 30m, 1h (default), 7d`;

const SEED_USAGE = `  shipyard seed --tenant <id-or-slug> [--entities 1000] [--teams N]
      fills the tenant (created when missing) with a generated catalog: teams, entities and
      relations, in bulk; the same counts again add nothing
        --tenant    the tenant's id or slug
        --entities  how many entities (default 1000)
        --teams     how many teams (default: one per 2,000 entities, at least 10)`;

const FORGE_LIMITS_USAGE = `  shipyard forge-limits --tenant <id-or-slug> [--running-runs N] [--action-slots N] [--run-starts-per-minute N]
      sets the tenant's forge limits (\`default\` clears one: the configured default applies
      again) and prints the limits in force; see docs/limits.md, "Forge runs"
        --tenant                 the tenant's id or slug (it must exist)
        --running-runs           runs of the tenant running at once (others wait pending)
        --action-slots           actions of the tenant running at once
        --run-starts-per-minute  runs the tenant may start a minute (more: 429)`;

const LICENSE_USAGE = `  shipyard license --edition <beta|standard|airgapped> --licensee <name> [--clusters N] [--nodes N]
                   [--expires 2027-12-31] [--issued 2026-11-27] [--type selfhosted|saas|partner]
      prints a license key signed with the local development license key (under the data folder),
      which the API accepts while SHIPYARD_LICENSE_PUBLIC_KEY is unset (never in production);
      see docs/licensing.md
        --edition   the edition the key grants
        --licensee  who it is licensed to
        --clusters  the key's own cluster count (default 0: the edition's)
        --nodes     the key's own node count (default 0: the edition's)
        --expires   the last day it is valid (UTC, through 23:59:59); default: never expires
        --issued    the issue date (default now); a Beta key's free period runs from it
        --type      selfhosted (default), saas or partner`;

const OPERATOR_LOGIN_USAGE = `  shipyard operator-login --email <email> [--ttl 1h] [--api-url URL]
      prints a link that signs a browser in to the codec endpoint as a platform operator (an admin
      of the platform tenant, created when missing), so the Temporal UI shows workflow payloads
      decoded; development only (dev signing key). See docs/temporal-ui.md
        --email    the operator's email (their identity)
        --ttl      how long the sign-in lasts: 90s, 30m, 1h (default), at most 12h
        --api-url  the API as the browser reaches it (default: the API's PORT on the host of
                   TEMPORAL_UI_URL, so the cookie is same-site with the UI)`;

const USAGE = `usage:
  shipyard --help          this text
${TOKEN_USAGE}
${OPERATOR_LOGIN_USAGE}
${SEED_USAGE}
${FORGE_LIMITS_USAGE}
${LICENSE_USAGE}`;

const HELP = new Set(['--help', '-h', 'help']);

/** Prints a command's usage when its arguments ask for help, and says whether it did. */
function printedHelp(args: string[], usage: string): boolean {
  if (!args.some((arg) => HELP.has(arg))) return false;
  process.stdout.write(`usage:\n${usage}\n`);
  return true;
}

/** A mistake in how the CLI was called (exit code 2), as opposed to a failure while running (1). */
class UsageError extends Error {}

const DURATION = /^(\d+)([smhd])$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** A positive duration in seconds: a token that is already expired is never what was meant. */
function parseDuration(value: string): number {
  const match = DURATION.exec(value);
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2]] : 0;
  if (seconds <= 0)
    throw new UsageError(`--ttl must be a positive duration such as 90s, 30m, 1h or 7d, got "${value}"`);
  return seconds;
}

const list = (value: string | undefined) =>
  value
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : [];

async function token(args: string[]): Promise<void> {
  if (printedHelp(args, TOKEN_USAGE)) return;
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      email: { type: 'string' },
      'create-tenant': { type: 'boolean', default: false },
      name: { type: 'string' },
      groups: { type: 'string' },
      roles: { type: 'string' },
      ttl: { type: 'string', default: '1h' },
    },
  });
  if (!values.tenant || !values.email) throw new UsageError('--tenant and --email are required');
  // Checked before anything is created.
  const ttlSeconds = parseDuration(values.ttl);
  const { token: jwt } = await issueDevToken(loadConfig(), {
    tenant: values.tenant,
    createTenant: values['create-tenant'],
    email: values.email,
    name: values.name,
    groups: list(values.groups),
    roles: list(values.roles),
    ttlSeconds,
  });
  process.stdout.write(`${jwt}\n`);
}

async function operatorLogin(args: string[]): Promise<void> {
  if (printedHelp(args, OPERATOR_LOGIN_USAGE)) return;
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, ttl: { type: 'string', default: '1h' }, 'api-url': { type: 'string' } },
  });
  if (!values.email) throw new UsageError('--email is required');
  const ttlSeconds = parseDuration(values.ttl);
  if (ttlSeconds > CODEC_SIGN_IN_MAX_SECONDS) throw new UsageError(`--ttl must be at most 12h, got "${values.ttl}"`);
  const config = loadConfig();
  const { token: signInToken } = await issueDevToken(config, {
    tenant: config.platformTenant,
    email: values.email,
    roles: ['admin'],
    ttlSeconds,
    audience: codecSignInAudience(config),
  });
  const link = new URL('/api/v1/temporal-codec/sign-in', values['api-url'] ?? apiUrlBesideTemporalUi(config));
  link.searchParams.set('token', signInToken);
  process.stdout.write(`${link.href}\n`);
}

/** A whole number of at least `min` (`name` is the option, for the message). */
function count(name: string, value: string, min: number): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min)
    throw new UsageError(`--${name} must be a whole number of at least ${min}`);
  return parsed;
}

async function seed(args: string[]): Promise<void> {
  if (printedHelp(args, SEED_USAGE)) return;
  const { values } = parseArgs({
    args,
    options: { tenant: { type: 'string' }, entities: { type: 'string', default: '1000' }, teams: { type: 'string' } },
  });
  if (!values.tenant) throw new UsageError('--tenant is required');
  const entities = count('entities', values.entities, 1);
  const teams = values.teams === undefined ? undefined : count('teams', values.teams, 1);
  const result = await seedCatalog(loadConfig(), { tenant: values.tenant, entities, teams });
  process.stdout.write(
    `seeded tenant ${values.tenant} (${result.tenantId}): ${result.entities} new entities, ` +
      `${result.relations} new relations, ${result.teams} teams, in ${result.seconds.toFixed(1)} s\n`,
  );
}

/** A limit's new value: a whole number of at least 1, or `default` (null: the override is cleared). */
function limitValue(name: string, value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  return value === 'default' ? null : count(name, value, 1);
}

async function forgeLimits(args: string[]): Promise<void> {
  if (printedHelp(args, FORGE_LIMITS_USAGE)) return;
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      'running-runs': { type: 'string' },
      'action-slots': { type: 'string' },
      'run-starts-per-minute': { type: 'string' },
    },
  });
  if (!values.tenant) throw new UsageError('--tenant is required');
  const override = {
    runningRuns: limitValue('running-runs', values['running-runs']),
    actionSlots: limitValue('action-slots', values['action-slots']),
    runStartsPerMinute: limitValue('run-starts-per-minute', values['run-starts-per-minute']),
  };
  const { tenantId, limits } = await setForgeLimits(loadConfig(), { tenant: values.tenant, override });
  process.stdout.write(
    `forge limits of tenant ${values.tenant} (${tenantId}): ${limits.runningRuns} running runs, ` +
      `${limits.actionSlots} concurrent actions, ${limits.runStartsPerMinute} run starts a minute\n`,
  );
}

/** A date option (`2027-12-31` or a full ISO time) as an ISO time; `endOfDay` for a bare date. */
function dateOption(name: string, value: string, endOfDay: boolean): string {
  const bare = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const time = Date.parse(bare && endOfDay ? `${value}T23:59:59.000Z` : value);
  if (Number.isNaN(time)) throw new UsageError(`--${name} must be a date such as 2027-12-31, got "${value}"`);
  return new Date(time).toISOString();
}

async function license(args: string[]): Promise<void> {
  if (printedHelp(args, LICENSE_USAGE)) return;
  const { values } = parseArgs({
    args,
    options: {
      edition: { type: 'string' },
      licensee: { type: 'string' },
      clusters: { type: 'string', default: '0' },
      nodes: { type: 'string', default: '0' },
      expires: { type: 'string' },
      issued: { type: 'string' },
      type: { type: 'string', default: 'selfhosted' },
    },
  });
  const { edition, licensee } = values;
  if (!edition || !(edition in EDITION_PREFIX))
    throw new UsageError(`--edition must be one of ${Object.keys(EDITION_PREFIX).join(', ')}`);
  if (!licensee) throw new UsageError('--licensee is required');
  if (!(LICENSE_TYPES as readonly string[]).includes(values.type))
    throw new UsageError(`--type must be one of ${LICENSE_TYPES.join(', ')}`);
  const key = mintDevLicenseKey(loadConfig(), {
    edition: edition as LicensedEdition,
    type: values.type as LicenseType,
    clusters: count('clusters', values.clusters, 0),
    nodes: count('nodes', values.nodes, 0),
    licensee,
    issued_at: values.issued ? dateOption('issued', values.issued, false) : new Date().toISOString(),
    expires_at: values.expires ? dateOption('expires', values.expires, true) : null,
  });
  process.stdout.write(`${key}\n`);
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  token,
  'operator-login': operatorLogin,
  seed,
  'forge-limits': forgeLimits,
  license,
};

async function main([command, ...args]: string[]): Promise<void> {
  // Asked for, usage is the answer (stdout, exit 0); a wrong call gets it as an error (stderr, 2).
  if (command && HELP.has(command)) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const run = command ? COMMANDS[command] : undefined;
  if (!run) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  await run(args);
}

const isUsageError = (err: { code?: unknown }) =>
  err instanceof UsageError || err instanceof UnknownTenantError || String(err.code).startsWith('ERR_PARSE_ARGS');

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`shipyard: ${err.message}\n`);
  if (isUsageError(err)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  process.exit(1);
});
