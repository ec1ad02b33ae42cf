import { isBuiltInRole } from '../../core/auth/permissions';
import { signDevSessionToken } from '../../core/auth/sessionTokens';
import type { Config } from '../../core/config';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { ensureTenant, findTenantId } from '../../core/auth/store';

/** The tenant a token was asked for does not exist, and creating it was not asked for. */
export class UnknownTenantError extends Error {
  constructor(tenant: string) {
    super(`no tenant "${tenant}" (give --create-tenant to create it)`);
  }
}

export interface DevTokenRequest {
  /** A tenant id (uuid) or slug. */
  tenant: string;
  /** Create the tenant when it does not exist (default); false refuses an unknown tenant. */
  createTenant?: boolean;
  email: string;
  name?: string;
  groups?: string[];
  /** Role names (built-in or role bundle) to assign directly to the user. */
  roles?: string[];
  ttlSeconds?: number;
  /** Default: session tokens'; the codec sign-in's for `operator-login`. */
  audience?: string;
}

/**
 * Mints a session token the API accepts in its default dev configuration: ensures the tenant
 * (`ensureTenant`) and the user exist, assigns the requested roles directly, and signs with the local dev key.
 */
export async function issueDevToken(
  config: Config,
  request: DevTokenRequest,
): Promise<{ token: string; tenantId: string; userId: string }> {
  const limits = config.limits.database.maintenance;
  const app = createPool(config.database.appUrl, 1, { limits });
  const system = createPool(config.database.systemUrl, 1, { limits });
  try {
    const tenantId =
      request.createTenant === false
        ? await findTenantId(system, request.tenant)
        : await ensureTenant(app, system, request.tenant);
    if (!tenantId) throw new UnknownTenantError(request.tenant);
    const subject = `dev|${request.email}`;
    const name = request.name ?? request.email.split('@')[0];
    const userId = await withTenant(app, tenantId, async (trx) => {
      // By email, as sign-in links users: a user an identity provider created keeps its subject.
      const [user] = await trx('users')
        .insert({ tenant_id: tenantId, subject, email: request.email, name })
        .onConflict(['tenant_id', 'email'])
        .merge(['name'])
        .returning('id');
      for (const role of request.roles ?? []) {
        const key = isBuiltInRole(role) ? role : (await trx('role_bundles').where({ name: role }).first('id'))?.id;
        if (!key) throw new Error(`unknown role "${role}" (built-in: admin, editor, viewer, or a role bundle name)`);
        await trx('user_roles')
          .insert({ tenant_id: tenantId, user_id: user.id, role: key })
          .onConflict(['user_id', 'role'])
          .ignore();
      }
      return user.id as string;
    });
    const token = await signDevSessionToken(
      config,
      { subject, email: request.email, name, tenantId, groups: request.groups ?? [] },
      request.ttlSeconds ?? 3600,
      request.audience,
    );
    return { token, tenantId, userId };
  } finally {
    await Promise.all([app.destroy(), system.destroy()]);
  }
}
