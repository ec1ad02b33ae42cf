import { randomUUID } from 'node:crypto';
import { withTenant } from '../../db/tenancy';
import { useForgeSuite } from '../support/forgeRuns';
import { sessionToken } from '../support/harness';
import { until } from '../support/processes';

// Who may approve a run, through HTTP against real workflows: the starter never (unless the
// rule allows it), an outsider of the step's rule never (403, audited), a rule of two distinct
// approvers resumes only at the second; who is still needed shows on the run; only the rule's
// users are notified; a rule naming what the tenant lacks is refused when the mold is saved.

const forge = useForgeSuite();
const { call, createMold, startRun, waitForGate, waitForStatus } = forge;

let writer: string;
let approver: string;
/** Two members of team `sre-<run>` (editors), and an editor outside it. */
const sre: { token: string; email: string; userId: string }[] = [];
let outsider: { token: string; email: string; userId: string };
let teamSlug: string;

beforeAll(async () => {
  ({ writer, approver } = forge.suite);
  const tenant = `forge-${forge.suite.run}`;
  const editor = async (name: string) => {
    const email = `${name}@forge.test`;
    const issued = await sessionToken({ tenant, email, roles: ['editor'] });
    // A user exists once they have called the API.
    expect((await call(issued.token, 'GET', '/forge/molds')).status).toBe(200);
    return { token: issued.token, email, userId: issued.userId };
  };
  sre.push(await editor('sre-one'), await editor('sre-two'));
  outsider = await editor('outsider');
  teamSlug = `sre-${forge.suite.run}`;
  const team = await call(writer, 'POST', '/admin/teams', { name: `SRE ${forge.suite.run}`, slug: teamSlug });
  expect(team.status).toBe(201);
  for (const member of sre) {
    const added = await call(writer, 'POST', `/admin/teams/${team.body.id}/members`, {
      user_id: member.userId,
      role: 'member',
    });
    expect(added.status).toBe(201);
  }
}, 60_000);

const gated = (approvers?: Record<string, unknown>) =>
  createMold({
    actions: [
      { name: 'gate', type: 'approval', ...(approvers && { approvers }) },
      { name: 'say', type: 'script', config: { script: 'echo approved' } },
    ],
  });

const failuresOf = async (runId: string) => {
  const { items } = (await call(writer, 'GET', '/admin/activity?limit=100')).body;
  return items
    .filter((i: { targetId: string; status: string }) => i.targetId === runId && i.status === 'failure')
    .map((i: { eventType: string; actor: string; errorMessage: string }) => [i.eventType, i.actor, i.errorMessage]);
};

test('without a rule the starter may not approve or reject their own run (403, audited as a failure); another forge:write user may', async () => {
  const started = await startRun((await gated()).slug);
  await waitForGate(started.id, 0);
  for (const decision of ['approve', 'reject']) {
    const refused = await call(writer, 'POST', `/forge/runs/${started.id}/${decision}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/starter may not approve or reject it/);
  }
  expect(await failuresOf(started.id)).toEqual([
    ['forge.run.reject', 'dev@forge.test', expect.stringMatching(/starter may not/)],
    ['forge.run.approve', 'dev@forge.test', expect.stringMatching(/starter may not/)],
  ]);
  const approved = await call(approver, 'POST', `/forge/runs/${started.id}/approve`);
  expect(approved.status).toBe(200);
  const done = await waitForStatus(started.id, ['completed', 'failed']);
  expect(done.status).toBe('completed');
  expect(done.decisions).toEqual([
    expect.objectContaining({ decision: 'approve', actor: 'approver@forge.test', satisfied_rule: 'forge:write' }),
  ]);
}, 60_000);

test('allow_self_approval lets the starter approve their own run', async () => {
  const started = await startRun((await gated({ allow_self_approval: true })).slug);
  await waitForGate(started.id, 0);
  expect((await call(writer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(200);
  expect((await waitForStatus(started.id, ['completed', 'failed'])).status).toBe('completed');
}, 60_000);

test('an outsider of the rule is refused (403 naming the rule, audited as a failure); a reject by an eligible approver ends the run', async () => {
  const started = await startRun((await gated({ teams: [teamSlug] })).slug);
  await waitForGate(started.id, 0);
  const refused = await call(outsider.token, 'POST', `/forge/runs/${started.id}/approve`, { comment: 'me too' });
  expect(refused.status).toBe(403);
  expect(refused.body.error).toEqual(
    expect.objectContaining({
      code: 'FORBIDDEN',
      message: `Only the step's approvers may decide on it: members of team ${teamSlug}`,
    }),
  );
  expect((await call(approver, 'POST', `/forge/runs/${started.id}/reject`)).status).toBe(403);
  expect(await failuresOf(started.id)).toEqual([
    ['forge.run.reject', 'approver@forge.test', expect.stringMatching(/^Only the step's approvers/)],
    ['forge.run.approve', outsider.email, expect.stringMatching(/^Only the step's approvers/)],
  ]);
  expect((await call(writer, 'GET', `/forge/runs/${started.id}`)).body.status).toBe('awaiting_approval');

  const rejected = await call(sre[0].token, 'POST', `/forge/runs/${started.id}/reject`, { comment: 'no' });
  expect(rejected.status).toBe(200);
  const done = await waitForStatus(started.id, ['failed', 'completed']);
  expect(done.error).toBe(`rejected by ${sre[0].email}`);
  expect(done.decisions).toEqual([
    expect.objectContaining({
      decision: 'reject',
      actor: sre[0].email,
      satisfied_rule: `team:${teamSlug}`,
      comment: 'no',
    }),
  ]);
}, 60_000);

test('two approvals from a team: the first is recorded and the run waits, showing who is still needed; the same person again is a 409; the second distinct approver resumes it', async () => {
  const started = await startRun((await gated({ teams: [teamSlug], count: 2 })).slug);
  await waitForGate(started.id, 0);
  const waiting = (await call(writer, 'GET', `/forge/runs/${started.id}`)).body;
  expect(waiting.approval).toEqual({
    step_position: 0,
    required: 2,
    received: 0,
    remaining: 2,
    eligible: { teams: [teamSlug], roles: [], users: [], any_forge_writer: false },
    allow_self_approval: false,
    timeout: null,
    expires_at: null,
  });

  const first = await call(sre[0].token, 'POST', `/forge/runs/${started.id}/approve`, { comment: 'one' });
  expect(first.status).toBe(200);
  expect(first.body.status).toBe('awaiting_approval');
  expect(first.body.approval).toEqual(expect.objectContaining({ received: 1, remaining: 1 }));
  const again = await call(sre[0].token, 'POST', `/forge/runs/${started.id}/approve`);
  expect(again.status).toBe(409);
  expect(again.body.error.message).toMatch(/an approver counts once/);
  // Nothing resumed it meanwhile: the workflow was not signalled.
  expect((await call(writer, 'GET', `/forge/runs/${started.id}`)).body.steps[1].status).toBe('pending');

  expect((await call(sre[1].token, 'POST', `/forge/runs/${started.id}/approve`, { comment: 'two' })).status).toBe(200);
  const done = await waitForStatus(started.id, ['completed', 'failed']);
  expect(done.status).toBe('completed');
  expect(done.approval).toBeNull();
  expect(done.decisions.map((d: { actor: string; satisfied_rule: string }) => [d.actor, d.satisfied_rule])).toEqual([
    [sre[0].email, `team:${teamSlug}`],
    [sre[1].email, `team:${teamSlug}`],
  ]);
}, 60_000);

test("a run waiting for approval notifies the rule's users who may decide (forge:write), not every forge:write user; timeouts show when the step expires", async () => {
  const started = await startRun((await gated({ users: [sre[1].email], roles: ['viewer'] }).then((m) => m)).slug);
  await waitForGate(started.id, 0);
  const notified = async (token: string) =>
    ((await call(token, 'GET', '/notifications')).body.notifications as { payload: { run_id: string } }[]).filter(
      (n) => n.payload.run_id === started.id,
    );
  await until('the named approver to be notified', 10, async () =>
    (await notified(sre[1].token)).length ? true : undefined,
  );
  expect(await notified(sre[0].token)).toEqual([]);
  expect(await notified(approver)).toEqual([]);
  // The viewer holds the role the rule names, but not forge:write, which deciding needs: not notified.
  expect(await notified(forge.suite.viewer)).toEqual([]);
  expect((await call(forge.suite.viewer, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(403);

  const timed = await startRun(
    (
      await createMold({
        actions: [{ name: 'gate', type: 'approval', approval_timeout: '72h' }],
      })
    ).slug,
  );
  await waitForGate(timed.id, 0);
  const { approval, steps } = (await call(writer, 'GET', `/forge/runs/${timed.id}`)).body;
  expect(approval.timeout).toBe('72h');
  expect(Date.parse(approval.expires_at) - Date.parse(steps[0].started_at)).toBe(72 * 3600 * 1000);
  expect((await call(writer, 'POST', `/forge/runs/${timed.id}/cancel`)).status).toBe(200);
}, 60_000);

test('an approve that arrives once the step is past its timeout (its timer firing) is a 409, never answered as accepted', async () => {
  const started = await startRun(
    (await createMold({ actions: [{ name: 'gate', type: 'approval', approval_timeout: '1h' }] })).slug,
  );
  await waitForGate(started.id, 0);
  // As if the hour had passed: the step began waiting two hours ago (the workflow's timer is the real hour).
  await withTenant(forge.suite.api.deps.db, forge.suite.writerTenantId, (trx) =>
    trx('run_steps')
      .where({ run_id: started.id, position: 0 })
      .update({ started_at: trx.raw("now() - interval '2 hours'") }),
  );
  const late = await call(approver, 'POST', `/forge/runs/${started.id}/approve`);
  expect(late.status).toBe(409);
  expect(late.body.error.message).toBe(
    'Cannot approve a run that is awaiting_approval: step 0 was not approved within 1h',
  );
  expect((await call(writer, 'GET', `/forge/runs/${started.id}`)).body.decisions).toEqual([]);
  expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(200);
}, 60_000);

test('a mold whose rule names a team, user or role the tenant lacks, or sets approvers where no approval is, is a 400 naming each', async () => {
  const ghost = `ghost-${randomUUID().slice(0, 8)}`;
  const res = await call(writer, 'POST', '/forge/molds', {
    slug: `bad-${randomUUID().slice(0, 8)}`,
    name: 'bad',
    actions: [
      {
        name: 'gate',
        type: 'approval',
        approvers: { teams: [teamSlug, ghost], users: ['nobody@forge.test'], roles: ['editor', 'no-such-role'] },
      },
    ],
  });
  expect(res.status).toBe(400);
  expect(res.body.error.details).toEqual([
    { field: 'body.actions.0.approvers.teams.1', message: `team "${ghost}" does not exist in this tenant` },
    { field: 'body.actions.0.approvers.roles.1', message: 'role "no-such-role" does not exist in this tenant' },
    { field: 'body.actions.0.approvers.users.0', message: 'user "nobody@forge.test" does not exist in this tenant' },
  ]);

  const mold = await createMold({ actions: [{ name: 'gate', type: 'approval' }] });
  const misplaced = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, {
    actions: [
      { name: 'call', type: 'script', config: { script: 'true' }, approvers: { count: 2 }, approval_timeout: '40d' },
    ],
  });
  expect(misplaced.status).toBe(400);
  expect(misplaced.body.error.details).toEqual([
    { field: 'body.actions.0.approvers', message: 'applies only to an approval action or one with requires_approval' },
    {
      field: 'body.actions.0.approval_timeout',
      message: 'applies only to an approval action or one with requires_approval',
    },
    { field: 'body.actions.0.approval_timeout', message: 'must be at most 30d' },
  ]);
  const badFormat = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, {
    actions: [{ name: 'gate', type: 'approval', approval_timeout: '3 days' }],
  });
  expect(badFormat.status).toBe(400);
});

test("another tenant's user cannot approve a run, nor name this tenant's team in a rule", async () => {
  const started = await startRun((await gated()).slug);
  await waitForGate(started.id, 0);
  const stranger = await sessionToken({
    tenant: `forge-other-${forge.suite.run}`,
    email: 'x@else.test',
    roles: ['admin'],
  });
  expect((await call(stranger.token, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(404);
  const named = await call(stranger.token, 'POST', '/forge/molds', {
    slug: 'steal',
    name: 'steal',
    actions: [{ name: 'gate', type: 'approval', approvers: { teams: [teamSlug] } }],
  });
  expect(named.status).toBe(400);
  expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(200);
}, 60_000);

test('production_molds_need_approval does not count a gate its starter may approve themselves (allow_self_approval)', async () => {
  const prod = await call(writer, 'POST', '/entities', {
    name: `payments-${randomUUID().slice(0, 6)}`,
    type: 'service',
    lifecycle: 'production',
    owner: 'team-a',
  });
  expect(prod.status).toBe(201);
  const deploy = (approvers: Record<string, unknown>) =>
    createMold({
      parameters: [{ name: 'service', type: 'string', required: true }],
      actions: [
        { name: 'gate', type: 'approval', approvers },
        { name: 'deploy', type: 'script', config: { script: 'echo "$PARAM_SERVICE"' } },
      ],
    });
  const selfGated = await deploy({ allow_self_approval: true });
  const gated = await deploy({ count: 1 });
  const policy = '/admin/policies/production_molds_need_approval';
  expect((await call(writer, 'PUT', policy, { enabled: true })).status).toBe(200);
  try {
    const parameters = { service: prod.body.service_id };
    const refused = await call(writer, 'POST', '/forge/runs', { mold_slug: selfGated.slug, parameters });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('policy production_molds_need_approval');
    const allowed = await call(writer, 'POST', '/forge/runs', { mold_slug: gated.slug, parameters });
    expect(allowed.status).toBe(201);
    expect((await call(writer, 'POST', `/forge/runs/${allowed.body.id}/cancel`)).status).toBe(200);
  } finally {
    await call(writer, 'PUT', policy, { enabled: false });
  }
}, 60_000);
