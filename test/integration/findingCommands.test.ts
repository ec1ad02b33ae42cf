import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { SystemActor } from '../../core/audit/actor';
import { recordFinding, resolveFindings } from '../../core/security/findingCommands';
import { createPool } from '../../db/pool';
import { withTenant } from '../../db/tenancy';
import { seedEntity } from '../support/clusterFixtures';
import { sessionToken, testConfig } from '../support/harness';

// The finding commands as scorecard evaluation calls them (a system actor, fingerprint = the
// rule id): open once, refresh, resolve, reopen, and the critical finding's one governance action.

const run = randomUUID().slice(0, 8);
let db: Knex;
let tenantId: string;
let actor: SystemActor;

beforeAll(async () => {
  db = createPool(testConfig().database.appUrl, 2);
  ({ tenantId } = await sessionToken({ tenant: `findcmd-${run}`, email: 'admin@f.test', roles: ['admin'] }));
  actor = { kind: 'system', tenantId, name: 'scorecards' };
  await withTenant(db, tenantId, (trx) =>
    trx('teams').insert({ tenant_id: tenantId, name: 'Payments', slug: 'payments' }),
  );
});
afterAll(() => db.destroy());

const inTenant = <T>(work: (trx: Knex.Transaction) => Promise<T>) => withTenant(db, tenantId, work);

const scorecardFinding = (entityId: string, severity: 'critical' | 'high' = 'high') => ({
  entity_id: entityId,
  type: 'missing_owner',
  severity,
  title: 'No owner',
  source: 'scorecard' as const,
  fingerprint: 'rule-1',
});

test('a failing rule opens one finding per entity and rule; a repeat refreshes it; passing again resolves it; failing again reopens it', async () => {
  const entityId = await seedEntity(db, tenantId, `svc-${run}`, 'payments');
  const first = await inTenant((trx) => recordFinding(trx, actor, scorecardFinding(entityId)));
  expect(first).toMatchObject({ opened: true, reopened: false, finding: { status: 'open', source: 'scorecard' } });
  const again = await inTenant((trx) =>
    recordFinding(trx, actor, { ...scorecardFinding(entityId), title: 'Owner missing' }),
  );
  expect(again).toMatchObject({
    opened: false,
    reopened: false,
    finding: { id: first.finding.id, title: 'Owner missing' },
  });

  const resolved = await inTenant((trx) =>
    resolveFindings(trx, actor, { entityId, source: 'scorecard', fingerprints: ['rule-1', 'rule-unknown'] }),
  );
  expect(resolved).toEqual([{ id: first.finding.id, type: 'missing_owner', fingerprint: 'rule-1' }]);
  const row = await inTenant((trx) => trx('security_findings').where({ id: first.finding.id }).first());
  expect(row).toMatchObject({ status: 'resolved' });
  expect(row.resolved_at).not.toBeNull();

  const reopened = await inTenant((trx) => recordFinding(trx, actor, scorecardFinding(entityId)));
  expect(reopened).toMatchObject({
    opened: false,
    reopened: true,
    finding: { id: first.finding.id, status: 'open', resolved_at: null },
  });
  const audit = await inTenant((trx) =>
    trx('audit_log').where({ target_type: 'entity', target_id: entityId }).orderBy('id').pluck('event_type'),
  );
  expect(audit).toEqual(['security_finding.opened', 'security_finding.status_changed', 'security_finding.reopened']);
});

test('a critical finding opens one governance action for the owning team, once, however often it is reported', async () => {
  const entityId = await seedEntity(db, tenantId, `crit-${run}`, 'payments');
  const { finding } = await inTenant((trx) => recordFinding(trx, actor, scorecardFinding(entityId, 'critical')));
  await inTenant((trx) => recordFinding(trx, actor, scorecardFinding(entityId, 'critical')));
  await inTenant((trx) => resolveFindings(trx, actor, { entityId, source: 'scorecard', fingerprints: ['rule-1'] }));
  await inTenant((trx) => recordFinding(trx, actor, scorecardFinding(entityId, 'critical')));
  const actions = await inTenant((trx) => trx('governance_actions').where({ entity_id: entityId }));
  expect(actions).toHaveLength(1);
  expect(actions[0]).toMatchObject({
    source_type: 'finding',
    source_id: finding.id,
    assigned_to: 'payments',
    priority: 'critical',
    status: 'open',
    created_by: 'scorecards',
  });
});
