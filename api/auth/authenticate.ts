import { verify as bcryptVerify } from '@node-rs/bcrypt';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { RefusedAction } from '../../core/audit/store';
import { ApiError, rateLimited } from '../../core/errors';
import { withTenant } from '../../db/tenancy';
import type { ApiKeyCache, CachedApiKey } from './apiKeyCache';
import { sessionPrincipalKey, type CachedUserPrincipal, type SessionPrincipalCache } from './sessionPrincipalCache';
import { ApiKeyFailureBudget } from './failureLimiter';
import { KeyedGate } from '../../core/keyedGate';
import type { ResourceLimits } from '../../core/limitsConfig';
import { BUILT_IN_ROLES, expandScopes, isBuiltInRole, type Scope } from '../../core/auth/permissions';
import type { Principal } from '../../core/auth/principal';
import type { SessionClaims, SessionVerifier } from '../../core/auth/sessionTokens';
import {
  apiKeyInForce,
  findActiveAgentToken,
  findActiveApiKeysByPrefix,
  ensureTenant,
  isUnknownTenant,
  rolesOfUser,
  touchApiKey,
  upsertSessionUser,
} from '../../core/auth/store';
import { apiKeyLookupPrefix, looksLikeAgentToken, looksLikeApiKey, sha256 } from '../../core/auth/tokens';

/**
 * What a route requires of its caller: nothing, any user or API key, a permission, an agent
 * token, or a platform operator (see `Authenticator.isOperator`).
 */
export type Access = 'public' | 'authenticated' | 'agent' | 'operator' | Scope;

/** A verified token, before its tenant's transaction has started. */
export type Identity =
  | { kind: 'user'; tenantId: string; claims: SessionClaims }
  | { kind: 'api_key'; tenantId: string; key: CachedApiKey }
  | { kind: 'agent'; tenantId: string; clusterId: string; tokenId: string };

const agentPrincipal = ({ tenantId, clusterId, tokenId }: Extract<Identity, { kind: 'agent' }>): Principal => ({
  kind: 'agent',
  tenantId,
  clusterId,
  tokenId,
});

/** A signed-in user's principal, valid until their token expires. */
const sessionPrincipal = (cached: CachedUserPrincipal, claims: SessionClaims): Principal => ({
  ...cached,
  expiresAt: claims.expiresAt,
});

/** One answer for every authentication failure, so nothing can be learned from it. */
export const unauthorized = () => new ApiError('UNAUTHORIZED', 'Authentication required');

export interface AuthenticatorDeps {
  db: Knex;
  system: Knex;
  verifySession: SessionVerifier;
  apiKeyCache: ApiKeyCache;
  sessionPrincipals: SessionPrincipalCache;
  logger: Logger;
  /** The platform tenant's slug or id (config.platformTenant). */
  platformTenant: string;
  /** Failure budgets and the cap on concurrent bcrypt checks (config.limits.auth). */
  limits: ResourceLimits['auth'];
}

/** How often a key's last_used is written at most (per process; the SQL also guards). */
const LAST_USED_INTERVAL_MS = 60_000;
/** How long a check waits for one of the process's bcrypt slots before a 503. */
const CHECK_WAIT_MS = 1_000;
/** The one key of the bcrypt gate: its cap is the process's, whoever's key is checked. */
const EVERY_CHECK = 'bcrypt';

export class Authenticator {
  private readonly lastUseRecorded = new Map<string, number>();
  private readonly failedValidations: ApiKeyFailureBudget;
  /** bcrypt checks running in this process, whichever key or client they are for. */
  private readonly checks: KeyedGate;
  /** The platform tenant's id once it is known to exist; cleared when finding or creating it fails. */
  private platformTenant?: Promise<string>;

  constructor(private readonly deps: AuthenticatorDeps) {
    this.failedValidations = new ApiKeyFailureBudget(deps.limits);
    this.checks = new KeyedGate(deps.limits.concurrentChecks);
  }

  /**
   * Verifies the bearer token for a route's access level. Every failure is the same 401, but
   * a client that keeps failing with one API-key prefix gets a 429 (`client`: its address).
   */
  async identify(
    authorization: string | undefined,
    access: Exclude<Access, 'public'>,
    client: string,
  ): Promise<Identity> {
    const token = /^Bearer ([^\s]+)$/.exec(authorization ?? '')?.[1];
    if (!token) throw unauthorized();
    // Agent tokens work on agent routes only, and only agent tokens work there.
    if (access === 'agent') {
      if (!looksLikeAgentToken(token)) throw unauthorized();
      const row = await findActiveAgentToken(this.deps.system, sha256(token));
      if (!row) throw unauthorized();
      return { kind: 'agent', tenantId: row.tenant_id, clusterId: row.cluster_id, tokenId: row.id };
    }
    if (looksLikeAgentToken(token)) throw unauthorized();
    if (looksLikeApiKey(token)) {
      const key = await this.apiKey(token, client);
      return { kind: 'api_key', tenantId: key.tenantId, key };
    }
    const claims = await this.deps.verifySession(token).catch(() => {
      throw unauthorized();
    });
    return { kind: 'user', tenantId: claims.tenantId, claims };
  }

  private async apiKey(token: string, client: string): Promise<CachedApiKey> {
    const key = await this.deps.apiKeyCache.getOrLoad(sha256(token), () => this.verifyApiKey(token, client));
    // Expiry is checked on every use, cached or not.
    if (!key || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) throw unauthorized();
    this.recordUse(key);
    return key;
  }

  /**
   * The active key whose bcrypt hash matches the token, looked up by its prefix. Runs only on
   * a cache miss; bcrypt runs natively off the event loop, at most `concurrentChecks` at once
   * in the process (past that a check waits a moment, then is a 503: the process is busy, not
   * the caller at fault).
   */
  private async verifyApiKey(token: string, client: string): Promise<CachedApiKey | undefined> {
    const prefix = apiKeyLookupPrefix(token);
    const retryAfterMs = this.failedValidations.retryAfterMs(prefix, client);
    if (retryAfterMs > 0) {
      throw rateLimited('Too many failed authentications; try again later', Math.ceil(retryAfterMs / 1000));
    }
    const forgive = this.failedValidations.charge(prefix, client);
    const release = await this.checks.enter(EVERY_CHECK, CHECK_WAIT_MS);
    if (!release) {
      forgive();
      throw new ApiError('SERVICE_UNAVAILABLE', 'Too many authentications under way; try again shortly', [], {
        'retry-after': '1',
      });
    }
    try {
      const key = await this.matchApiKey(token, prefix);
      if (key) forgive();
      return key;
    } finally {
      release();
    }
  }

  private async matchApiKey(token: string, prefix: string): Promise<CachedApiKey | undefined> {
    const candidates = await findActiveApiKeysByPrefix(this.deps.system, prefix);
    for (const candidate of candidates) {
      if (await bcryptVerify(token, candidate.token_hash)) {
        return {
          keyId: candidate.id,
          tenantId: candidate.tenant_id,
          userId: candidate.user_id,
          scopes: candidate.scopes,
          expiresAt: candidate.expires_at,
        };
      }
    }
    return undefined;
  }

  /** last_used is written in the background, at most once a minute: a request never waits for it. */
  private recordUse(key: CachedApiKey): void {
    const now = Date.now();
    if (now - (this.lastUseRecorded.get(key.keyId) ?? 0) < LAST_USED_INTERVAL_MS) return;
    this.lastUseRecorded.set(key.keyId, now);
    withTenant(this.deps.db, key.tenantId, (trx) => touchApiKey(trx, key.keyId)).catch((err) =>
      this.deps.logger.warn({ err, api_key_id: key.keyId }, 'could not record api key use'),
    );
  }

  /**
   * A platform operator administers the platform itself, across tenants: an admin (admin:write)
   * or service (internal:service) caller of the configured platform tenant. Scopes alone never
   * make an operator: a tenant admin can grant any scope inside their own tenant. Only callers
   * whose scopes qualify cost a lookup of the platform tenant's id.
   */
  private async isOperator(tenantId: string, permissions: Set<Scope>): Promise<boolean> {
    if (!permissions.has('admin:write') && !permissions.has('internal:service')) return false;
    return tenantId === (await this.platformTenantId());
  }

  /**
   * The platform tenant's id, the tenant created if it does not exist yet (the API does so at
   * start: see createDeps), so its first operator is one at once. Kept once known; a failure
   * (the database down at start) is not kept, and the next call tries again.
   */
  platformTenantId(): Promise<string> {
    this.platformTenant ??= ensureTenant(this.deps.db, this.deps.system, this.deps.platformTenant).catch((err) => {
      this.platformTenant = undefined;
      throw err;
    });
    return this.platformTenant;
  }

  /**
   * What every transaction of the identity's request checks first: an API key cached here may
   * have been revoked through another API process a moment ago, before its notification came.
   */
  precondition(identity: Identity): string | undefined {
    return identity.kind === 'api_key' ? apiKeyInForce(identity.key.keyId) : undefined;
  }

  /**
   * Who the caller is, when that takes no transaction: a signed-in user whose principal is
   * cached, an agent. Undefined when `principal` must run in the tenant's transaction: a user
   * not cached (upserted there), an API key (each transaction checks it is still in force).
   */
  principalWithoutTransaction(identity: Identity): Principal | undefined {
    switch (identity.kind) {
      case 'agent':
        return agentPrincipal(identity);
      case 'api_key':
        return undefined;
      case 'user': {
        const cached = this.deps.sessionPrincipals.hit(sessionPrincipalKey(identity.claims));
        return cached && sessionPrincipal(cached, identity.claims);
      }
    }
  }

  /** Resolves who the caller is inside its tenant's transaction (users are upserted here). */
  async principal(trx: Knex.Transaction, identity: Identity): Promise<Principal> {
    switch (identity.kind) {
      case 'agent':
        return agentPrincipal(identity);
      case 'api_key': {
        const permissions = expandScopes(identity.key.scopes);
        return {
          kind: 'api_key',
          tenantId: identity.tenantId,
          apiKeyId: identity.key.keyId,
          userId: identity.key.userId,
          permissions,
          operator: await this.isOperator(identity.tenantId, permissions),
        };
      }
      case 'user': {
        const { claims } = identity;
        const principal = await this.deps.sessionPrincipals.getOrLoadCommitted(
          sessionPrincipalKey(claims),
          () => this.loadUserPrincipal(trx, claims),
          trx.executionPromise,
        );
        return sessionPrincipal(principal, claims);
      }
    }
  }

  /** Upserts a signed-in user (in the caller's transaction) and resolves their roles. */
  private async loadUserPrincipal(trx: Knex.Transaction, claims: SessionClaims): Promise<CachedUserPrincipal> {
    // A token for a tenant that does not exist fails the user's foreign key: same 401. Any
    // other error (the database down, a bug) is the server's, not the caller's.
    const userId = await upsertSessionUser(trx, claims).catch((err: unknown) => {
      throw isUnknownTenant(err) ? unauthorized() : err;
    });
    if (!userId) {
      this.deps.logger.warn(
        { tenant_id: claims.tenantId },
        'sign-in refused: a new subject with the unverified email of an existing user',
      );
      throw unauthorized();
    }
    const roles = await rolesOfUser(trx, userId, claims.groups);
    const granted = roles.flatMap((role) =>
      isBuiltInRole(role.key) ? BUILT_IN_ROLES[role.key].permissions : (role.permissions ?? []),
    );
    const permissions = expandScopes(granted);
    return {
      kind: 'user',
      tenantId: claims.tenantId,
      userId,
      email: claims.email,
      name: claims.name,
      groups: claims.groups,
      roles: roles.map((role) => role.name),
      permissions,
      operator: await this.isOperator(claims.tenantId, permissions),
    };
  }
}

/**
 * 403 unless the principal holds what the route requires. A refused operator route (`operation`:
 * its method and path) is a RefusedAction: the router audits it in the caller's tenant, so a
 * tenant admin probing the platform's routes leaves a trace.
 */
export function authorize(principal: Principal, access: Exclude<Access, 'public'>, operation: string): void {
  if (access === 'agent' || access === 'authenticated') return;
  if (access === 'operator') {
    if (principal.kind === 'agent' || !principal.operator)
      throw new RefusedAction(new ApiError('FORBIDDEN', 'This operation is for platform operators'), {
        eventType: 'platform.operator_required',
        action: operation,
      });
    return;
  }
  if (principal.kind === 'agent' || !principal.permissions.has(access)) {
    throw new ApiError('FORBIDDEN', `This operation requires the ${access} permission`);
  }
}
