import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { escapeLiteral } from 'pg';
import { idOr, UUID, uuidOrNullSql } from '../ids';
import type { SessionClaims } from './sessionTokens';
import { newAgentToken, sha256 } from './tokens';
import { statement } from '../../db/statements';
import { withTenant } from '../../db/tenancy';

/**
 * Postgres channel on which a change to what users may do is announced at commit, with the
 * tenant id as payload (triggers: db/migrations/20261123004000_access_change_notifications.ts).
 */
export const ACCESS_CHANGED_CHANNEL = 'shipyard_access_changed';

// SQL for authentication. Token lookups happen before the tenant is known, so they read
// through the system role (BYPASSRLS, read-only); everything else runs in the caller's tenant.

export interface ApiKeyCandidate {
  id: string;
  tenant_id: string;
  user_id: string;
  token_hash: string;
  scopes: string[];
  expires_at: Date | null;
}

const activeApiKeysByPrefix = statement<ApiKeyCandidate, { prefix: string }>((q, { prefix }) =>
  q('api_keys')
    .where({ prefix })
    .whereNull('revoked_at')
    .select('id', 'tenant_id', 'user_id', 'token_hash', 'scopes', 'expires_at'),
);

export function findActiveApiKeysByPrefix(system: Knex, prefix: string): Promise<ApiKeyCandidate[]> {
  return activeApiKeysByPrefix.rows(system, { prefix });
}

const activeAgentToken = statement<{ id: string; tenant_id: string; cluster_id: string }, { tokenSha256: string }>(
  (q, { tokenSha256 }) =>
    q('agent_tokens')
      .where({ token_sha256: tokenSha256 })
      .whereNull('revoked_at')
      .first('id', 'tenant_id', 'cluster_id'),
);

export async function findActiveAgentToken(
  system: Knex,
  tokenSha256: string,
): Promise<{ id: string; tenant_id: string; cluster_id: string } | undefined> {
  return activeAgentToken.first(system, { tokenSha256 });
}

const tenantBy = statement<{ id: string }, { ref: string }, 'id' | 'slug'>((q, { ref }, column) =>
  q('tenants').where(column, ref).first('id'),
);

/** A tenant's id from its id or slug (a cross-tenant read: the system role's). */
export async function findTenantId(system: Knex, idOrSlug: string): Promise<string | undefined> {
  const row = await tenantBy.first(system, { ref: idOrSlug }, idOr(idOrSlug, 'slug'));
  return row?.id;
}

/**
 * The id of the tenant `tenant` names (an id or a slug), created when it does not exist: a
 * slug becomes the new tenant's slug and name, an unknown id gets the slug `tenant-<first 8>`.
 */
export async function ensureTenant(app: Knex, system: Knex, tenant: string): Promise<string> {
  const found = await findTenantId(system, tenant);
  if (found) return found;
  const tenantId = UUID.test(tenant) ? tenant : randomUUID();
  const slug = UUID.test(tenant) ? `tenant-${tenantId.slice(0, 8)}` : tenant;
  // Two processes may create it at once (API processes starting together): the loser's insert
  // does nothing and both return the winner's id.
  await withTenant(app, tenantId, (trx) =>
    trx('tenants').insert({ id: tenantId, slug, name: slug }).onConflict().ignore(),
  );
  return (await findTenantId(system, tenant)) ?? tenantId;
}

/** Records use at most once a minute per key, so busy keys do not turn reads into writes. */
export function touchApiKey(trx: Knex, keyId: string): Promise<number> {
  return trx('api_keys')
    .where({ id: keyId })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', trx.raw("now() - interval '1 minute'")))
    .update({ last_used_at: trx.fn.now() });
}

const LAST_LOGIN_RESOLUTION_MS = 60_000;

const userBySubject = statement<
  { id: string; email: string; name: string; idp_groups: string[]; last_login: Date | null },
  { tenantId: string; subject: string }
>((q, { tenantId, subject }) =>
  q('users').where({ tenant_id: tenantId, subject }).first('id', 'email', 'name', 'idp_groups', 'last_login'),
);

/**
 * Inserts the user on first sight; afterwards refreshes email, name, identity-provider groups
 * and last_login. Reads first and writes only when something changed or last_login is over a
 * minute old: an upsert locks the row even when it changes nothing, which would queue a user's
 * concurrent requests.
 *
 * Email is unique in a tenant. A subject seen for the first time with the email of an existing
 * user (a `dev|…` user from the CLI, an account re-created in the provider) is linked to that
 * user only when the identity provider says it verified the email: otherwise anyone who can
 * register an unverified address at the provider could take over the account. Returns
 * undefined for such a sign-in. A known subject whose new email another user still holds keeps
 * its stored email until that user's next sign-in frees it.
 */
export async function upsertSessionUser(trx: Knex, claims: SessionClaims): Promise<string | undefined> {
  const groups = [...new Set(claims.groups)].sort();
  const existing = await userBySubject.first(trx, { tenantId: claims.tenantId, subject: claims.subject });
  if (!existing) {
    const onEmailTaken = trx('users')
      .insert({
        tenant_id: claims.tenantId,
        subject: claims.subject,
        email: claims.email,
        name: claims.name,
        idp_groups: groups,
        last_login: trx.fn.now(),
      })
      .onConflict(['tenant_id', 'email']);
    const [row] = await (
      claims.emailVerified ? onEmailTaken.merge(['subject', 'name', 'idp_groups', 'last_login']) : onEmailTaken.ignore()
    ).returning('id');
    return row?.id;
  }
  const fresh =
    existing.email === claims.email &&
    existing.name === claims.name &&
    existing.idp_groups.join('\n') === groups.join('\n') &&
    existing.last_login &&
    Date.now() - new Date(existing.last_login).getTime() < LAST_LOGIN_RESOLUTION_MS;
  if (fresh) return existing.id;
  await trx('users')
    .where({ id: existing.id })
    .update({
      email: trx.raw(
        'case when exists (select 1 from users o where o.email = ? and o.id <> users.id) then users.email else ? end',
        [claims.email, claims.email],
      ),
      name: claims.name,
      idp_groups: groups,
      last_login: trx.fn.now(),
    });
  return existing.id;
}

/**
 * The statement that fails a tenant transaction, with SQLSTATE 28000, unless the API key is
 * still in force (db/migrations/20261124000200_api_key_in_force.ts). A literal, not a parameter:
 * it travels with BEGIN in one simple query (db/tenancy.ts withTenant).
 */
export const apiKeyInForce = (keyId: string) => `call api_key_in_force(${escapeLiteral(keyId)})`;

/** A transaction that apiKeyInForce stopped. */
export const isKeyOutOfForce = (err: unknown) => (err as { code?: string } | undefined)?.code === '28000';

/** The foreign-key violation of a user row whose tenant does not exist. */
export const isUnknownTenant = (err: unknown) => {
  const { code, constraint } = (err ?? {}) as { code?: string; constraint?: string };
  return code === '23503' && constraint === 'users_tenant_id_fkey';
};

export interface GrantedRole {
  /** A built-in role's name or a role bundle's id. */
  key: string;
  /** Display name: the built-in name or the bundle's name. */
  name: string;
  /** The bundle's permissions; null for built-in roles (defined in code). */
  permissions: string[] | null;
}

/**
 * Every role a user holds, in one query: direct assignments, roles of teams the user belongs
 * to (directly or through an identity-provider group mapped to the team), and roles mapped to
 * the user's identity-provider groups.
 */
export async function rolesOfUser(trx: Knex, userId: string, groups: string[]): Promise<GrantedRole[]> {
  const { rows } = await trx.raw(
    `with keys as (
       select role from user_roles where user_id = :userId
       union
       select tr.role from team_roles tr join team_members tm on tm.team_id = tr.team_id where tm.user_id = :userId
       union
       select tr.role from team_roles tr join team_group_mappings g on g.team_id = tr.team_id
        where g.group_name = any(:groups)
       union
       select role from group_roles where group_name = any(:groups)
     )
     select k.role as key, coalesce(b.name, k.role) as name, b.permissions
       from keys k
       left join role_bundles b on b.id = ${uuidOrNullSql('k.role')}
      order by 2`,
    { userId, groups },
  );
  return rows;
}

/** Revokes every active token of a cluster: that agent fails on its very next request. */
export function revokeAgentTokens(trx: Knex, clusterId: string): Promise<number> {
  return trx('agent_tokens')
    .where({ cluster_id: clusterId })
    .whereNull('revoked_at')
    .update({ revoked_at: trx.fn.now() });
}

/**
 * Issues a cluster's agent token, revoking any it had (so this is also rotation). Only the
 * digest is stored; the token is returned once.
 */
export async function issueAgentToken(trx: Knex, tenantId: string, clusterId: string): Promise<string> {
  await revokeAgentTokens(trx, clusterId);
  const token = newAgentToken();
  await trx('agent_tokens').insert({ tenant_id: tenantId, cluster_id: clusterId, token_sha256: sha256(token) });
  return token;
}
