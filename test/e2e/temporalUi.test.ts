import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CODEC_SIGN_IN_COOKIE, codecSignInAudience } from '../../core/auth/codecSignIn';
import type { Config } from '../../core/config';
import { issueDevToken } from '../../scripts/cli/devToken';
import {
  callApi,
  sessionToken,
  startApi,
  startWorkers,
  testConfig,
  testDeps,
  type TestApi,
  type TestWorkers,
} from '../support/harness';
import { freePort, ROOT, stop, until } from '../support/processes';
import { FAKES_HOST } from '../support/testEnv';

// An operator reads a forge run in the Temporal Web UI, decoded, after the dev sign-in
// (`shipyard operator-login`'s link); a tenant admin, or nobody, sees the same page with its
// payloads still encrypted, and the codec endpoint refuses their browser. Headless Chromium
// (Debian's, driven by playwright-core) against a Temporal UI server of the test's own, whose
// codec endpoint is this test's API. With SHIPYARD_UPDATE_SCREENSHOTS=1 the screenshots of both
// replace docs/images' (docs/temporal-ui.md shows them).

const run = randomUUID().slice(0, 8);
const PARAMETER = `param-${run}-payments`;
const CODEC_CALL = /\/api\/v1\/temporal-codec\/decode$/;
const SCREENSHOTS = path.join(ROOT, 'docs', 'images');
const VIEWPORT = { viewport: { width: 1440, height: 900 } };

let config: Config;
let ui: ChildProcess;
let uiDir: string;
let api: TestApi;
let workers: TestWorkers;
let target: Server;
let browser: Browser;
let historyUrl: string;
let tenantAdmin: string;

/** A sign-in token as `operator-login` signs one, here for anyone (the CLI makes operators only). */
async function signInToken(tenant: string, email: string): Promise<string> {
  const issued = await issueDevToken(config, {
    tenant,
    email,
    roles: ['admin'],
    ttlSeconds: 600,
    audience: codecSignInAudience(config),
  });
  return issued.token;
}

beforeAll(async () => {
  const uiPort = await freePort();
  const base = testConfig();
  // The UI's origin is the one the API lets call its codec from a browser.
  config = testConfig({ temporal: { ...base.temporal, uiUrl: `http://127.0.0.1:${uiPort}` } });
  workers = await startWorkers(['forge'], { config });
  api = await startApi({ deps: await testDeps(config) });
  uiDir = await mkdtemp(path.join(tmpdir(), 'shipyard-temporal-ui-'));
  ui = spawn(
    'bash',
    [
      path.join(ROOT, 'scripts', 'services'),
      'temporal-ui',
      uiDir,
      String(uiPort),
      config.temporal.address,
      `${api.url}/api/v1/temporal-codec`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  ui.stderr?.resume();
  await until('the Temporal UI', 180, async () => ((await fetch(`${config.temporal.uiUrl}/`)).ok ? true : undefined));

  // The action's target refuses with a 400, so the step's failure (the URL with the parameter
  // in it) goes into the run's history, encrypted.
  target = createServer((req, res) => {
    req.resume();
    res.writeHead(400, { 'content-type': 'text/plain' }).end('refused');
  });
  await new Promise<void>((resolve) => target.listen(0, FAKES_HOST, resolve));
  const targetUrl = `http://${FAKES_HOST}:${(target.address() as AddressInfo).port}`;
  tenantAdmin = (await sessionToken({ tenant: `codec-ui-${run}`, email: 'admin@codec-ui.test', roles: ['admin'] }))
    .token;
  const mold = await callApi(api, tenantAdmin, 'POST', '/forge/molds', {
    slug: `codec-ui-${run}`,
    name: 'Read in the Temporal UI',
    parameters: [{ name: 'service', type: 'string', required: true }],
    actions: [
      { name: 'announce', type: 'api-call', config: { url: `${targetUrl}/deploy/\${{ parameters.service }}` } },
    ],
  });
  expect(mold.status).toBe(201);
  const started = await callApi(api, tenantAdmin, 'POST', '/forge/runs', {
    mold_slug: mold.body.slug,
    parameters: { service: PARAMETER },
  });
  expect(started.status).toBe(201);
  const ended = await until('the run failed', 60, async () => {
    const { body } = await callApi(api, tenantAdmin, 'GET', `/forge/runs/${started.body.id}`);
    return body.status === 'failed' ? body : undefined;
  });
  expect(ended.error).toContain(PARAMETER);
  const { namespace } = config.temporal;
  const { runId } = await api.deps.temporal.workflow.getHandle(started.body.workflow_id).describe();
  historyUrl = `${config.temporal.uiUrl}/namespaces/${namespace}/workflows/${started.body.workflow_id}/${runId}/history`;

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    // Playwright gives the browser a fresh, temporary --user-data-dir of its own.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (ui) await stop(ui);
  if (uiDir) await rm(uiDir, { recursive: true, force: true });
  target?.closeAllConnections();
  await new Promise((resolve) => target?.close(resolve));
  await api?.close();
  await workers?.stop();
});

/** The statuses the codec endpoint answered the page's decode calls with, as they come. */
function codecStatuses(page: Page): number[] {
  const statuses: number[] = [];
  page.on('response', (response) => {
    if (CODEC_CALL.test(new URL(response.url()).pathname) && response.request().method() === 'POST')
      statuses.push(response.status());
  });
  return statuses;
}

/**
 * Opens the run's history page with the step's failure (whose message carries the parameter, in
 * the URL it names) unfolded, once the UI has asked the codec for it.
 */
async function openHistory(context: BrowserContext) {
  const page = await context.newPage();
  const statuses = codecStatuses(page);
  await page.goto(historyUrl);
  // Event types are never encrypted: the row is there whoever looks.
  const failure = page.getByText('Activity Task Failed').first();
  await failure.click({ timeout: 30_000 });
  await page.getByText('encodedAttributes').first().waitFor({ timeout: 30_000 });
  await until('the codec answered', 30, async () => (statuses.length > 0 ? true : undefined));
  await page.getByText('encodedAttributes').first().scrollIntoViewIfNeeded();
  return { page, statuses };
}

async function saveScreenshot(page: Page, name: string) {
  const file = path.join(config.dataDir, 'test', name);
  await mkdir(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file });
  if (process.env.SHIPYARD_UPDATE_SCREENSHOTS === '1') await copyFile(file, path.join(SCREENSHOTS, name));
}

test("an operator signed in with operator-login's link reads the run's parameter in plaintext on its history page", async () => {
  const { stdout } = await promisify(execFile)(
    path.join(ROOT, 'scripts', 'shipyard.js'),
    ['operator-login', '--email', `ops-${run}@platform.test`, '--ttl', '10m', '--api-url', api.url],
    { encoding: 'utf8' },
  );
  const link = stdout.trim();
  expect(link).toMatch(new RegExp(`^${api.url}/api/v1/temporal-codec/sign-in\\?token=`));
  const context = await browser.newContext(VIEWPORT);
  const signIn = await context.newPage();
  const signedIn = await signIn.goto(link);
  expect(signedIn?.status()).toBe(200);
  const [cookie] = await context.cookies();
  expect(cookie).toEqual(
    expect.objectContaining({
      name: CODEC_SIGN_IN_COOKIE,
      httpOnly: true,
      sameSite: 'Strict',
      path: '/api/v1/temporal-codec/',
    }),
  );
  // Short-lived: it ends with the link's token, ten minutes from now.
  expect(cookie.expires * 1000).toBeLessThanOrEqual(Date.now() + 600_000);

  const { page, statuses } = await openHistory(context);
  await page.getByText(PARAMETER).first().waitFor({ timeout: 30_000 });
  expect(statuses.every((status) => status === 200)).toBe(true);
  await saveScreenshot(page, 'temporal-ui-operator.png');
  await context.close();
}, 120_000);

test('not signed in, the same page shows no plaintext: the codec endpoint answers 401', async () => {
  const context = await browser.newContext(VIEWPORT);
  const { page, statuses } = await openHistory(context);
  expect(await page.locator('body').innerText()).not.toContain(PARAMETER);
  expect(new Set(statuses)).toEqual(new Set([401]));
  await saveScreenshot(page, 'temporal-ui-not-signed-in.png');
  await context.close();
}, 120_000);

test("a tenant admin's link is refused (403, no cookie); with a sign-in cookie of theirs anyway, the codec answers 403 and the page shows no plaintext", async () => {
  const token = await signInToken(`codec-ui-${run}`, 'admin@codec-ui.test');
  const context = await browser.newContext(VIEWPORT);
  const signIn = await context.newPage();
  expect((await signIn.goto(`${api.url}/api/v1/temporal-codec/sign-in?token=${token}`))?.status()).toBe(403);
  expect(await context.cookies()).toEqual([]);
  // As if the cookie had been had some other way: the codec checks whom it names every time.
  await context.addCookies([
    {
      name: CODEC_SIGN_IN_COOKIE,
      value: token,
      url: `${api.url}/api/v1/temporal-codec/`,
      httpOnly: true,
      sameSite: 'Strict',
    },
  ]);
  const { page, statuses } = await openHistory(context);
  expect(await page.locator('body').innerText()).not.toContain(PARAMETER);
  expect(new Set(statuses)).toEqual(new Set([403]));
  await context.close();
}, 120_000);

test('the sign-in token works on the codec calls only: another route ignores the cookie, and as a bearer token it is refused everywhere', async () => {
  const token = await signInToken(testConfig().platformTenant, `ops-${run}@platform.test`);
  const cookie = { cookie: `${CODEC_SIGN_IN_COOKIE}=${token}` };
  const decode = (headers: Record<string, string>) =>
    fetch(`${api.url}/api/v1/temporal-codec/decode`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [] }),
    });
  expect((await decode(cookie)).status).toBe(200);
  // Another operator route, and a route any signed-in user may call: the cookie is nobody there.
  for (const other of ['/api/v1/database/info', '/api/v1/me'])
    expect([other, (await fetch(`${api.url}${other}`, { headers: cookie })).status]).toEqual([other, 401]);
  // Nor is its token a session token, on the codec itself or anywhere else.
  expect((await decode({ authorization: `Bearer ${token}` })).status).toBe(401);
  expect((await callApi(api, token, 'GET', '/me')).status).toBe(401);
  // And a session token is no sign-in link: the sign-in route refuses an operator's as a bad link.
  const session = (await sessionToken({ tenant: testConfig().platformTenant, email: `ops-${run}@platform.test` }))
    .token;
  expect((await fetch(`${api.url}/api/v1/temporal-codec/sign-in?token=${session}`)).status).toBe(400);
});
