import type { Knex } from 'knex';
import type { Config } from '../core/config';
import { openDueInitiativeActions } from '../core/scorecards/initiativeCommands';
import { tenantsWithDueInitiatives } from '../core/scorecards/initiativeStore';
import { requestFullRescoreOfEveryTenant } from '../core/scorecards/queueStore';
import { withTenant } from '../db/tenancy';
import type { QueuedBatch, RangeBatch } from '../core/scorecards/scorecardWorkflows';
import { scoreQueuedBatch, scoreRangeBatch } from '../core/scorecards/scoringCommands';

export function createScorecardActivities(deps: { db: Knex; system: Knex; config: Config }) {
  return {
    /** Scores the entities of the tenant's next queued rows, in one tenant transaction. */
    async scoreQueued(input: { tenant_id: string; limit: number }): Promise<QueuedBatch> {
      return scoreQueuedBatch(deps.db, input.tenant_id, input.limit);
    },
    /** Scores the tenant's next `limit` entities after `after_id` (a full pass's batch). */
    async scoreRange(input: { tenant_id: string; after_id: string | null; limit: number }): Promise<RangeBatch> {
      return scoreRangeBatch(
        deps.db,
        input.tenant_id,
        input.after_id,
        input.limit,
        deps.config.scorecards.passConcurrency,
      );
    },
    /** Queues a full re-score of every tenant (the system role); the waker starts their workflows. */
    async queueRescoreOfEveryTenant(): Promise<number> {
      return requestFullRescoreOfEveryTenant(deps.system);
    },
    /** Tenants with an initiative past its date and no actions opened yet (the system role). */
    async listTenantsWithDueInitiatives(): Promise<string[]> {
      return tenantsWithDueInitiatives(deps.system);
    },
    /** Opens the governance actions of the tenant's initiatives past their date, in one tenant transaction. */
    async openInitiativeActions(input: { tenant_id: string }): Promise<{ initiatives: number; actions: number }> {
      return withTenant(deps.db, input.tenant_id, (trx) => openDueInitiativeActions(trx, input.tenant_id));
    },
  };
}

export type ScorecardActivities = ReturnType<typeof createScorecardActivities>;
