import { SCHEDULED_KEY, SINGLETON_KEY, WORKFLOW_KINDS, workflowId } from '../../core/searchAttributes';
import { DATABASE_BACKUP_WORKFLOW_ID } from '../../core/database/types';
import { forgeWorkflowId } from '../../core/forge/types';
import { betaGraceWorkflowId } from '../../core/license/licenseWorkflows';
import { scoreTenantWorkflowId } from '../../core/scorecards/scorecardWorkflows';
import { BACKFILL_WORKFLOW_ID } from '../../search/backfill';
import { recrawlOperationId } from '../../search/crawlControl';
import { REINDEX_WORKFLOW_ID } from '../../search/reindex';

const uuid = '0b9f3c1e-8d2a-4c59-9a57-3f1e2d4c5b6a';

test('a workflow id is its kind, then a uuid, "singleton" or "scheduled"', () => {
  expect(workflowId('forge-run', uuid)).toBe(`forge-run-${uuid}`);
  expect(workflowId('database-backup', SINGLETON_KEY)).toBe('database-backup-singleton');
  expect(workflowId('retention', SCHEDULED_KEY)).toBe('retention-scheduled');
});

test('a key that is not a uuid or one of the two words is refused: ids are shown in the clear', () => {
  for (const key of ['payments-api', 'ada@example.test', '', `${uuid}-x`])
    expect(() => workflowId('search-crawl', key)).toThrow(/never other data/);
});

test('every workflow id we start follows the scheme under its ShipyardKind', () => {
  const ids: [string, string][] = [
    [forgeWorkflowId(uuid), 'forge-run'],
    [betaGraceWorkflowId(uuid), 'beta-grace'],
    [scoreTenantWorkflowId(uuid), 'scorecards'],
    [recrawlOperationId(uuid), 'search-crawl'],
    [DATABASE_BACKUP_WORKFLOW_ID, 'database-backup'],
    [BACKFILL_WORKFLOW_ID, 'search-backfill'],
    [REINDEX_WORKFLOW_ID, 'search-reindex'],
  ];
  for (const [id, kind] of ids) {
    expect(WORKFLOW_KINDS).toContain(kind);
    expect([id, new RegExp(`^${kind}-(${uuid}|${SINGLETON_KEY}|${SCHEDULED_KEY})$`).test(id)]).toEqual([id, true]);
  }
});
