import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { SCHEDULED_KEY, shipyardSearchAttributes, workflowId, type WorkflowKind } from './searchAttributes';
import { TASK_QUEUES, type WorkerPool } from './taskQueues';

/** A recurring workflow of a worker pool: what it starts, on which queue, how often. */
export interface RecurringWorkflow {
  /** Fixed, so creating it is idempotent: one schedule per namespace. */
  scheduleId: string;
  workflowType: string;
  pool: WorkerPool;
  everyMs: number;
  args: unknown[];
  /** ShipyardKind of each run, for the Web UI's filter. */
  kind: WorkflowKind;
}

/**
 * Creates the schedule, or brings an existing one in line with `recurring` (interval, args), so
 * every start of its pool may call it: the fixed id means there is never a second schedule. An
 * operator's pause survives a restart. A run still going when the next is due makes that one
 * skip, never run beside it.
 */
export async function ensureSchedule(client: Client, recurring: RecurringWorkflow): Promise<void> {
  const spec = { intervals: [{ every: recurring.everyMs }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: recurring.workflowType,
    workflowId: workflowId(recurring.kind, SCHEDULED_KEY),
    taskQueue: TASK_QUEUES[recurring.pool],
    args: recurring.args,
    typedSearchAttributes: shipyardSearchAttributes({ kind: recurring.kind }),
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP };
  try {
    await client.schedule.create({ scheduleId: recurring.scheduleId, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule
      .getHandle(recurring.scheduleId)
      .update((previous) => ({ ...previous, spec, action, policies, state: previous.state }));
  }
}
