import type { Knex } from 'knex';
import type { Scope } from '../auth/permissions';
import { keysetStatement, type KeysetOrder, type KeysetWindow } from '../paging';
import { statement } from '../../db/statements';
import type { ApiKeyListFilter } from './types';
import { toIso, toIsoOrNull } from '../timestamps';

/** Postgres channel on which a revocation is announced at commit, with the key's id as payload. */
export const API_KEY_REVOKED_CHANNEL = 'shipyard_api_key_revoked';

interface ApiKeyRow {
  id: string;
  user_id: string;
  created_by_key_id: string | null;
  name: string;
  description: string;
  prefix: string;
  scopes: Scope[];
  last_used_at: Date | null;
  expires_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
}

/** The listing shape: never the token, never its hash. */
export function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    prefix: row.prefix,
    scopes: row.scopes,
    created_by: row.user_id,
    created_by_key_id: row.created_by_key_id,
    last_used: toIsoOrNull(row.last_used_at),
    expires_at: toIsoOrNull(row.expires_at),
    created_at: toIso(row.created_at),
    revoked: row.revoked_at !== null,
    revoked_at: toIsoOrNull(row.revoked_at),
  };
}

const LISTED = [
  'id',
  'user_id',
  'created_by_key_id',
  'name',
  'description',
  'prefix',
  'scopes',
  'last_used_at',
  'expires_at',
  'created_at',
  'revoked_at',
];

/** Newest first. */
const LIST_ORDER: KeysetOrder = {
  columns: [
    { column: 'created_at', kind: 'timestamp' },
    { column: 'id', kind: 'uuid' },
  ],
  direction: 'desc',
};

const unexpired = (q: Knex) => (b: Knex.QueryBuilder) =>
  b.whereNull('expires_at').orWhere('expires_at', '>', q.fn.now());

const apiKeyPage = keysetStatement({
  order: LIST_ORDER,
  build: (q, _values, filter: ApiKeyListFilter) =>
    q('api_keys')
      .select(LISTED)
      .modify((b) => {
        if (filter === 'revoked') b.whereNotNull('revoked_at');
        if (filter === 'active') b.whereNull('revoked_at').andWhere(unexpired(q));
        if (filter === 'expired') b.whereNull('revoked_at').andWhere('expires_at', '<=', q.fn.now());
      }),
  toItem: toApiKey,
});

/** A page of the keys in the state `filter` names (the filter applies before paging). */
export function listApiKeys(trx: Knex, filter: ApiKeyListFilter, window: KeysetWindow) {
  return apiKeyPage(trx, window, {}, filter);
}

const activeKeyCount = statement<{ count: string }, { userId: string }>((q, { userId }) =>
  q('api_keys').where({ user_id: userId }).whereNull('revoked_at').andWhere(unexpired(q)).count('* as count'),
);

/** Active means not revoked and not expired: the keys that count against the per-user limit. */
export async function countActiveKeysOfUser(trx: Knex, userId: string): Promise<number> {
  const [{ count }] = await activeKeyCount.rows(trx, { userId });
  return Number(count);
}

/** Serialises key creation per user, so concurrent requests cannot both pass the limit check. */
export async function lockUserForKeyCreation(trx: Knex, userId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`api-keys:${userId}`]);
}

export async function insertApiKey(
  trx: Knex,
  key: {
    tenantId: string;
    userId: string;
    createdByKeyId: string | null;
    name: string;
    description: string;
    prefix: string;
    tokenHash: string;
    scopes: string[];
    expiresAt: string | null;
  },
): Promise<string> {
  const [row] = await trx('api_keys')
    .insert({
      tenant_id: key.tenantId,
      user_id: key.userId,
      created_by_key_id: key.createdByKeyId,
      name: key.name,
      description: key.description,
      prefix: key.prefix,
      token_hash: key.tokenHash,
      scopes: key.scopes,
      expires_at: key.expiresAt,
    })
    .returning('id');
  return row.id;
}

/**
 * Revokes a key and announces it to every API process (delivered when the transaction
 * commits). Revoking twice keeps the first timestamp. Returns undefined when no such key.
 */
export async function revokeApiKey(trx: Knex, id: string) {
  const [row]: ApiKeyRow[] = await trx('api_keys')
    .where({ id })
    .update({ revoked_at: trx.raw('coalesce(revoked_at, now())') })
    .returning(LISTED);
  if (!row) return undefined;
  await trx.raw('select pg_notify(?, ?)', [API_KEY_REVOKED_CHANNEL, id]);
  return toApiKey(row);
}

const keyExpiry = statement<{ expires_at: Date | null }, { id: string }>((q, { id }) =>
  q('api_keys').where({ id }).first('expires_at'),
);

/** When a key stops working; null when it does not expire. */
export async function apiKeyExpiry(trx: Knex, id: string): Promise<Date | null> {
  const row = await keyExpiry.first(trx, { id });
  return row?.expires_at ?? null;
}
