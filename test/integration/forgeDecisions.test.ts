import { randomUUID } from 'node:crypto';
import { insertDecision, lockRunForDecision, markRun } from '../../core/forge/runStore';
import { withTenant } from '../../db/tenancy';
import { useForgeSuite } from '../support/forgeRuns';
import type { TestApi } from '../support/harness';
import { processesCarrying, until } from '../support/processes';

// Approve, reject and cancel through HTTP, delivered to real workflows as signals.

const forge = useForgeSuite();
const { call, createMold, startRun, storeRunWithoutWorkflow, logMessages, waitForLog, waitForGate, waitForStatus } =
  forge;
let api: TestApi;
let writer: string;
let approver: string;
let writerTenantId: string;
beforeAll(() => ({ api, writer, approver, writerTenantId } = forge.suite));

describe('decisions', () => {
  test('approve by signal resumes a waiting run; a run keeps the mold version it started with', async () => {
    const mold = await createMold({
      actions: [
        { name: 'gate', type: 'approval' },
        { name: 'say', type: 'script', config: { script: 'echo original' } },
      ],
    });
    const late = await startRun(mold.slug);
    await waitForStatus(late.id, ['awaiting_approval']);
    await call(writer, 'PUT', `/forge/molds/${mold.slug}`, {
      actions: [
        { name: 'gate', type: 'approval' },
        { name: 'say', type: 'script', config: { script: 'echo changed' } },
      ],
    });
    const approved = await call(approver, 'POST', `/forge/runs/${late.id}/approve`, { comment: 'ship it' });
    expect(approved.status).toBe(200);
    const done = await waitForStatus(late.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(done.mold_version).toBe(1);
    expect(done.decisions).toEqual([
      expect.objectContaining({ decision: 'approve', actor: 'approver@forge.test', comment: 'ship it' }),
    ]);
    const messages = (await call(writer, 'GET', `/forge/runs/${late.id}/logs`)).body.lines.map(
      (l: { message: string }) => l.message,
    );
    expect(messages).toContain('original');
    expect(messages).toContain('approved by approver@forge.test: ship it');
    const again = await call(approver, 'POST', `/forge/runs/${late.id}/approve`);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('Cannot approve a run that is completed');
  }, 60_000);

  test('reject by signal ends a waiting run as failed (rejected); approve is then refused', async () => {
    const mold = await createMold({
      requires_approval: true,
      actions: [{ name: 'say', type: 'script', config: { script: 'echo hi' } }],
    });
    const started = await startRun(mold.slug);
    await waitForStatus(started.id, ['awaiting_approval']);
    expect((await call(approver, 'POST', `/forge/runs/${started.id}/approve`, { unknown: 1 })).status).toBe(400);
    expect((await call(approver, 'POST', `/forge/runs/${started.id}/reject`, { comment: 'not today' })).status).toBe(
      200,
    );
    const done = await waitForStatus(started.id, ['failed', 'completed']);
    expect(done).toEqual(expect.objectContaining({ status: 'failed', error: 'rejected by approver@forge.test' }));
    expect(done.steps[0]).toEqual(expect.objectContaining({ status: 'failed', error: 'rejected' }));
    expect((await call(approver, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(409);
  }, 60_000);

  test('cancel by signal kills a running script (its processes on the host are gone within seconds) and ends the run cancelled, the comment in the log', async () => {
    const mold = await createMold({
      parameters: [{ name: 'marker', type: 'string', required: true }],
      actions: [
        { name: 'long', type: 'script', config: { script: 'sleep 30 & echo started; sleep 30; echo finished' } },
      ],
    });
    const token = randomUUID();
    const marker = `PARAM_MARKER=${token}`;
    const started = await startRun(mold.slug, { marker: token });
    // Streamed while the script runs.
    await waitForLog(started.id, /^started$/);
    // timeout, bwrap (prlimit became it) and its pid 1 inside, the shell and the sleep it started.
    expect(processesCarrying(marker).length).toBeGreaterThanOrEqual(5);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`, { comment: 'wrong branch' })).status).toBe(
      200,
    );
    await until(`every process of the script gone`, 5, async () =>
      processesCarrying(marker).length === 0 ? true : undefined,
    );
    const done = await waitForStatus(started.id, ['cancelled', 'failed', 'completed'], 20);
    expect(done.status).toBe('cancelled');
    expect(done.steps[0].status).toBe('cancelled');
    const messages = await logMessages(started.id);
    expect(messages).toContain('cancelled by dev@forge.test: wrong branch');
    expect(messages).not.toContain('finished');
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(409);
  }, 60_000);

  test('cancel also ends a run waiting for approval', async () => {
    const mold = await createMold({ actions: [{ name: 'gate', type: 'approval' }] });
    const started = await startRun(mold.slug);
    await waitForStatus(started.id, ['awaiting_approval']);
    expect((await call(writer, 'POST', `/forge/runs/${started.id}/cancel`)).status).toBe(200);
    expect((await waitForStatus(started.id, ['cancelled'])).steps[0].status).toBe('cancelled');
  }, 60_000);

  const twoGates = () =>
    createMold({
      actions: [
        { name: 'first-gate', type: 'approval' },
        { name: 'second-gate', type: 'approval' },
        { name: 'say', type: 'script', config: { script: 'echo done' } },
      ],
    });

  test('two concurrent approves of the waiting step: exactly one 200 and one 409 naming the status; the next step takes its own approve', async () => {
    const started = await startRun((await twoGates()).slug);
    await waitForGate(started.id, 0);
    const replies = await Promise.all([1, 2].map(() => call(approver, 'POST', `/forge/runs/${started.id}/approve`)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = replies.find((r) => r.status === 409)!.body.error;
    expect(refused.message).toMatch(/^Cannot approve a run that is (awaiting_approval|running)/);
    expect(refused.details).toEqual([
      { field: 'status', message: expect.stringMatching(/^(awaiting_approval|running)$/) },
    ]);

    await waitForGate(started.id, 1);
    expect((await call(approver, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(200);
    const done = await waitForStatus(started.id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe('completed');
    expect(
      done.decisions.map((d: { decision: string; step_position: number }) => [d.decision, d.step_position]),
    ).toEqual([
      ['approve', 0],
      ['approve', 1],
    ]);
  }, 60_000);

  test('approve and reject at once: one 200, one 409, and the run ends as the accepted decision says', async () => {
    const started = await startRun((await twoGates()).slug);
    await waitForGate(started.id, 0);
    const [approve, reject] = await Promise.all(
      ['approve', 'reject'].map((d) => call(approver, 'POST', `/forge/runs/${started.id}/${d}`)),
    );
    expect([approve.status, reject.status].sort()).toEqual([200, 409]);
    if (approve.status === 200) {
      await waitForGate(started.id, 1);
      expect((await call(approver, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(200);
    }
    const done = await waitForStatus(started.id, ['completed', 'failed', 'cancelled']);
    expect(done.status).toBe(approve.status === 200 ? 'completed' : 'failed');
    expect(done.decisions[0].decision).toBe(approve.status === 200 ? 'approve' : 'reject');
  }, 60_000);

  test('reject of a completed run is a 409 naming its status', async () => {
    const mold = await createMold({ actions: [{ name: 'say', type: 'script', config: { script: 'echo hi' } }] });
    const done = await waitForStatus((await startRun(mold.slug)).id, ['completed', 'failed']);
    const res = await call(approver, 'POST', `/forge/runs/${done.id}/reject`);
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual(
      expect.objectContaining({
        code: 'CONFLICT',
        message: 'Cannot reject a run that is completed',
        details: [{ field: 'status', message: 'completed' }],
      }),
    );
  }, 60_000);

  test('starts and decisions are audited in /admin/activity, a refused decision as a failure with its reason', async () => {
    const started = await startRun((await twoGates()).slug);
    await waitForGate(started.id, 0);
    await call(approver, 'POST', `/forge/runs/${started.id}/approve`, { comment: 'fine' });
    await call(writer, 'POST', `/forge/runs/${started.id}/cancel`);
    await waitForStatus(started.id, ['cancelled']);
    expect((await call(approver, 'POST', `/forge/runs/${started.id}/approve`)).status).toBe(409);
    const { items } = (await call(writer, 'GET', '/admin/activity?limit=100')).body;
    const ofRun = items.filter(
      (i: { targetType: string; targetId: string }) => i.targetType === 'run' && i.targetId === started.id,
    );
    expect(
      ofRun.map((i: { eventType: string; actor: string; status: string; errorMessage: string | null }) => [
        i.eventType,
        i.actor,
        i.status,
        i.errorMessage,
      ]),
    ).toEqual([
      ['forge.run.approve', 'approver@forge.test', 'failure', 'Cannot approve a run that is cancelled'],
      ['forge.run.cancel', 'dev@forge.test', 'success', null],
      ['forge.run.approve', 'approver@forge.test', 'success', null],
      ['forge.run.started', 'dev@forge.test', 'success', null],
    ]);
  }, 60_000);

  test('once a cancel is accepted the run cannot end completed or failed: the final write answers cancel-accepted', async () => {
    const runId = await storeRunWithoutWorkflow();
    await withTenant(api.deps.db, writerTenantId, (trx) =>
      insertDecision(trx, { tenantId: writerTenantId, runId, kind: 'cancel', position: null, actor: 'dev@forge.test' }),
    );
    const outcome = (status: 'completed' | 'failed' | 'running') =>
      withTenant(api.deps.db, writerTenantId, (trx) => markRun(trx, runId, status));
    expect(await outcome('running')).toBe('written');
    expect(await outcome('completed')).toBe('cancel-accepted');
    expect(await outcome('failed')).toBe('cancel-accepted');
    expect((await call(writer, 'GET', `/forge/runs/${runId}`)).body.status).toBe('running');
    expect(
      await withTenant(api.deps.db, writerTenantId, (trx) =>
        insertDecision(trx, { tenantId: writerTenantId, runId, kind: 'cancel', position: null, actor: 'again' }),
      ),
    ).toBeUndefined();
  });
  test('a cancel committed while an ending waits for the run row counts: the ending answers cancel-accepted and writes nothing', async () => {
    const runId = await storeRunWithoutWorkflow();
    await withTenant(api.deps.db, writerTenantId, (trx) => markRun(trx, runId, 'running'));
    let commitCancel!: () => void;
    const cancelHeld = new Promise<void>((resolve) => (commitCancel = resolve));
    let lockTaken!: () => void;
    const locked = new Promise<void>((resolve) => (lockTaken = resolve));
    // The API's decision: the run row locked, the cancel inserted, the commit held back.
    const deciding = withTenant(api.deps.db, writerTenantId, async (trx) => {
      await lockRunForDecision(trx, runId);
      await insertDecision(trx, { tenantId: writerTenantId, runId, kind: 'cancel', position: null, actor: 'racer' });
      lockTaken();
      await cancelHeld;
    });
    await locked;
    const ending = withTenant(api.deps.db, writerTenantId, (trx) => markRun(trx, runId, 'completed'));
    await until('the ending waits for the run row', 10, async () => {
      const { rows } = await api.deps.db.raw(
        `select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%"runs"%'`,
      );
      return rows.length > 0 || undefined;
    });
    commitCancel();
    await deciding;
    expect(await ending).toBe('cancel-accepted');
    expect((await call(writer, 'GET', `/forge/runs/${runId}`)).body.status).toBe('running');
  });

  test('a finished run takes no other status (already-finished), and a run that is not there none at all (not-visible)', async () => {
    const runId = await storeRunWithoutWorkflow();
    const outcome = (id: string, status: 'completed' | 'running' | 'awaiting_approval') =>
      withTenant(api.deps.db, writerTenantId, (trx) => markRun(trx, id, status));
    expect(await outcome(runId, 'completed')).toBe('written');
    expect(await outcome(runId, 'running')).toBe('already-finished');
    expect(await outcome(runId, 'awaiting_approval')).toBe('already-finished');
    expect(await outcome(runId, 'completed')).toBe('already-finished');
    expect((await call(writer, 'GET', `/forge/runs/${runId}`)).body.status).toBe('completed');
    expect(await outcome(randomUUID(), 'running')).toBe('not-visible');
    expect(await outcome(randomUUID(), 'completed')).toBe('not-visible');
  });
});
