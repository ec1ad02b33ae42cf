import type { Config } from '../../core/config';
import { issueDevToken } from '../cli/devToken';

/** Who the HTTP benchmarks call as: headers for each kind of token, and the key's revocation. */
export interface BenchCaller {
  tenantId: string;
  session: Record<string, string>;
  apiKey: Record<string, string>;
  revokeKey(): Promise<void>;
}

/** An API key with `scopes`, made through the API as the bearer of `token`, and its revocation. */
export async function benchApiKey(
  base: string,
  token: string,
  scopes: string[],
  name: string,
): Promise<{ token: string; revoke(): Promise<void> }> {
  const session = { authorization: `Bearer ${token}` };
  const created = await fetch(`${base}/api/v1/admin/api-keys`, {
    method: 'POST',
    headers: { ...session, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `${name}-${Date.now()}`, scopes }),
  });
  if (created.status !== 201) throw new Error(`could not create the bench API key: ${created.status}`);
  const key = (await created.json()) as { id: string; token: string };
  return {
    token: key.token,
    async revoke() {
      await fetch(`${base}/api/v1/admin/api-keys/${key.id}`, { method: 'DELETE', headers: session });
    },
  };
}

/**
 * An admin of the tenant `bench` (a session token) and an `admin:read` API key it creates
 * through the API at `base`; the caller revokes the key when done.
 */
export async function benchCaller(config: Config, base: string): Promise<BenchCaller> {
  const { token, tenantId } = await issueDevToken(config, {
    tenant: 'bench',
    email: 'bench@bench.test',
    roles: ['admin'],
  });
  const key = await benchApiKey(base, token, ['admin:read'], 'bench');
  return {
    tenantId,
    session: { authorization: `Bearer ${token}` },
    apiKey: { authorization: `Bearer ${key.token}` },
    revokeKey: key.revoke,
  };
}
