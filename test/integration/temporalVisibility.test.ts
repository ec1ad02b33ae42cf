import { randomUUID } from 'node:crypto';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { ScheduleNotFoundError } from '@temporalio/client';
import { forgeWorkflowId } from '../../core/forge/types';
import { RETENTION_SCHEDULE_ID } from '../../core/retention/retentionRules';
import { retentionSchedule } from '../../core/retention/retentionSchedule';
import { ensureSchedule } from '../../core/schedules';
import type { TypedSearchAttributes } from '@temporalio/common';
import { SHIPYARD_KIND, SHIPYARD_MOLD, SHIPYARD_TENANT } from '../../core/searchAttributes';
import { useForgeSuite } from '../support/forgeRuns';
import { sessionToken, testConfig } from '../support/harness';
import { until } from '../support/processes';

// What an operator finds in the Temporal Web UI: workflows filtered by the search attributes
// (opaque ids and a kind, indexed in the clear) with a memo that names the mold and who started
// the run (encrypted like every payload, readable through the codec endpoint).

const forge = useForgeSuite();
const { call, createMold, startRun } = forge;

// A platform operator, before any admin's call: the API keeps a miss of the platform tenant a
// minute, so the tenant must exist by the first call that asks.
let operator: string;
beforeAll(async () => {
  ({ token: operator } = await sessionToken({
    tenant: testConfig().platformTenant,
    email: `ops-${forge.suite.run}@platform.test`,
    roles: ['admin'],
  }));
});

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** Every workflow the visibility query finds, once it finds at least one (visibility lags). */
const listed = (client: Client, query: string) =>
  until(`a workflow matching ${query}`, 30, async () => {
    const found: WorkflowExecutionInfo[] = [];
    for await (const info of client.workflow.list({ query })) found.push(info);
    return found.length ? found : undefined;
  });

describe('a forge run in Temporal visibility', () => {
  let temporal: Client;
  let moldName: string;
  let mold: { id: string; slug: string };
  let run: { id: string; started_by: string };
  let info: WorkflowExecutionInfo;

  beforeAll(async () => {
    temporal = forge.suite.api.deps.temporal;
    moldName = `Payments deploy ${forge.suite.run}`;
    mold = await createMold({ name: moldName });
    run = await startRun(mold.slug);
    const query = `ShipyardTenant = '${forge.suite.writerTenantId}' AND ShipyardMold = '${mold.id}' AND ShipyardKind = 'forge-run'`;
    const found = await listed(temporal, query);
    expect(found.map((workflow) => workflow.workflowId)).toEqual([forgeWorkflowId(run.id)]);
    info = found[0];
  }, 60_000);

  test('is found by tenant, mold and kind, and carries those opaque ids as its search attributes', () => {
    expect(info.typedSearchAttributes.get(SHIPYARD_TENANT)).toBe(forge.suite.writerTenantId);
    expect(info.typedSearchAttributes.get(SHIPYARD_MOLD)).toBe(mold.id);
    expect(info.typedSearchAttributes.get(SHIPYARD_KIND)).toBe('forge-run');
  });

  test("another tenant's filter does not find it", async () => {
    const query = `ShipyardTenant = '${randomUUID()}' AND ShipyardMold = '${mold.id}'`;
    const found: string[] = [];
    for await (const workflow of temporal.workflow.list({ query })) found.push(workflow.workflowId);
    expect(found).toEqual([]);
  });

  test('its memo, decoded by our data converter, names the mold and who started the run', () => {
    expect(info.memo).toEqual({ moldName, moldSlug: mold.slug, startedBy: run.started_by });
    expect(run.started_by).toBe('dev@forge.test');
  });

  test('its raw memo (what Temporal stores and the UI gets) is ciphertext: no mold name, slug or starter in the clear', () => {
    const fields = info.raw.memo?.fields ?? {};
    expect(Object.keys(fields).sort()).toEqual(['moldName', 'moldSlug', 'startedBy']);
    for (const payload of Object.values(fields)) {
      expect(text(payload.metadata?.encoding)).toBe('binary/encrypted');
      const stored =
        text(payload.data) +
        Object.values(payload.metadata ?? {})
          .map(text)
          .join('');
      for (const secret of [moldName, mold.slug, run.started_by]) expect(stored).not.toContain(secret);
    }
  });

  test('the codec endpoint (which the Web UI and the CLI call) opens the memo for a platform operator', async () => {
    const payloads = Object.values(info.raw.memo?.fields ?? {}).map(({ metadata, data }) => ({
      metadata: Object.fromEntries(
        Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
      ),
      data: Buffer.from(data ?? []).toString('base64'),
    }));
    const res = await call(operator, 'POST', '/temporal-codec/decode', { payloads });
    expect(res.status).toBe(200);
    const opened = res.body.payloads.map((payload: { data: string }) =>
      JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')),
    );
    expect(opened.sort()).toEqual([moldName, mold.slug, run.started_by].sort());
  });
});

test('the worker probe of GET /system carries ShipyardKind = worker-probe', async () => {
  const res = await forge.call(operator, 'GET', '/system');
  expect(res.status).toBe(200);
  const found = await listed(
    forge.suite.api.deps.temporal,
    `ShipyardKind = 'worker-probe' AND WorkflowType = 'workerProbe'`,
  );
  expect(found.every((workflow) => workflow.workflowId.startsWith('worker-probe-'))).toBe(true);
}, 60_000);

test("the retention schedule's action starts each prune with ShipyardKind = retention", async () => {
  const temporal = forge.suite.api.deps.temporal;
  const handle = temporal.schedule.getHandle(RETENTION_SCHEDULE_ID);
  const existed = await handle.describe().then(
    () => true,
    (err) => {
      if (err instanceof ScheduleNotFoundError) return false;
      throw err;
    },
  );
  await ensureSchedule(temporal, retentionSchedule(testConfig()));
  try {
    const schedule = await handle.describe();
    expect(schedule.action.type).toBe('startWorkflow');
    if (schedule.action.type !== 'startWorkflow') return;
    // Decoded from the server's answer, so the class, not the pairs a start takes.
    const attributes = schedule.action.typedSearchAttributes as TypedSearchAttributes;
    expect(attributes.get(SHIPYARD_KIND)).toBe('retention');
    // Its runs' ids follow the scheme: `<kind>-scheduled-<start time>` (Temporal appends the time).
    expect(schedule.action.workflowId).toBe('retention-scheduled');
    expect(attributes.getAll()).toHaveLength(1);
  } finally {
    // Left as found: this suite runs no platform worker for the prunes it would start.
    if (!existed) await handle.delete();
  }
});
