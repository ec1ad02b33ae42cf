import { randomUUID } from 'node:crypto';
import { codecSignInAudience } from '../../core/auth/codecSignIn';
import { issueDevToken } from '../../scripts/cli/devToken';
import { startFakeIdp, type FakeIdp } from '../support/fakeIdp';
import { sessionToken, startApi, testConfig, testDeps, type TestApi } from '../support/harness';

// Production: the Temporal UI behind the identity provider passes the signed-in user's access
// token to the codec endpoint (codec.passAccessToken), which verifies it as a session token:
// a platform operator's decodes, a tenant admin's is refused. The dev sign-in link, signed with
// the dev key, is no use there.

const run = randomUUID().slice(0, 8);
let idp: FakeIdp;
let api: TestApi;
let platformTenantId: string;
let otherTenantId: string;

beforeAll(async () => {
  idp = await startFakeIdp('shipyard');
  const config = testConfig();
  // The users and their roles, as an administrator would have set them up; the provider vouches for the emails.
  ({ tenantId: platformTenantId } = await sessionToken({
    tenant: config.platformTenant,
    email: `ops-${run}@platform.test`,
    roles: ['admin'],
  }));
  ({ tenantId: otherTenantId } = await sessionToken({
    tenant: `codec-oidc-${run}`,
    email: `admin-${run}@tenant.test`,
    roles: ['admin'],
  }));
  api = await startApi({
    deps: await testDeps({ ...config, auth: { ...config.auth, issuer: idp.issuer, jwksUrl: idp.jwksUrl } }),
  });
});

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

const decode = (authorization: string) =>
  fetch(`${api.url}/api/v1/temporal-codec/decode?preserveStorageRefs=true`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', 'x-namespace': 'default' },
    body: JSON.stringify({ payloads: [] }),
  });

const accessToken = (email: string, tenantId: string) =>
  idp.sign({ sub: `idp|${email}`, email, email_verified: true, name: email, tenant_id: tenantId, groups: [] });

test("the identity provider's access token of a platform operator opens the codec, as the UI passes it", async () => {
  const res = await decode(`Bearer ${await accessToken(`ops-${run}@platform.test`, platformTenantId)}`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ payloads: [] });
});

test("a tenant admin's access token is refused (403), and no token at all is a 401", async () => {
  expect((await decode(`Bearer ${await accessToken(`admin-${run}@tenant.test`, otherTenantId)}`)).status).toBe(403);
  expect((await decode('')).status).toBe(401);
});

test("operator-login's link, signed with the dev key, does not sign in where the provider's keys are the ones trusted", async () => {
  const config = testConfig();
  const { token } = await issueDevToken(config, {
    tenant: config.platformTenant,
    email: `ops-${run}@platform.test`,
    audience: codecSignInAudience(config),
  });
  const res = await fetch(`${api.url}/api/v1/temporal-codec/sign-in?token=${token}`);
  expect(res.status).toBe(400);
  expect(res.headers.get('set-cookie')).toBeNull();
});
