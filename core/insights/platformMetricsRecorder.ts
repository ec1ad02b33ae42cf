import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal';
import { withTenant } from '../../db/tenancy';
import { actorOf, callerKindOf, utcDay, type ActorKind, type CallerKind } from './platformMetricsRules';
import { addActors, addApiCalls } from './platformMetricsStore';

interface TenantActivity {
  calls: Map<string, number>;
  actors: Map<string, { day: string; actor_kind: ActorKind; actor_id: string }>;
}

/**
 * The API calls of this process, by tenant, day and caller kind, and who made them: counted in
 * memory on the request path (a map update, no I/O) and written every `flushMs` by `flush`, one
 * short transaction per tenant that called. An actor already written today is not written again,
 * so a busy user costs one row a day. A crash or a failed write loses at
 * most one interval's counts of the process.
 */
export class PlatformActivityRecorder {
  private pending = new Map<string, TenantActivity>();
  /** Actors written today (`tenant day kind id`), forgotten when the day changes. */
  private written = new Set<string>();
  private writtenDay = '';
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
  ) {}

  /** Counts one authorized call. */
  record(principal: Principal, at: Date = new Date()): void {
    const day = utcDay(at);
    let activity = this.pending.get(principal.tenantId);
    if (!activity) {
      activity = { calls: new Map(), actors: new Map() };
      this.pending.set(principal.tenantId, activity);
    }
    const callKey = `${day} ${callerKindOf(principal)}`;
    activity.calls.set(callKey, (activity.calls.get(callKey) ?? 0) + 1);
    const actor = actorOf(principal);
    if (!actor) return;
    const actorKey = `${principal.tenantId} ${day} ${actor.kind} ${actor.id}`;
    if (this.writtenDay === day && this.written.has(actorKey)) return;
    activity.actors.set(actorKey, { day, actor_kind: actor.kind, actor_id: actor.id });
  }

  /** Writes what was counted since the last flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /** Flushes every `flushMs` until `stop`. */
  start(flushMs: number): void {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    const today = utcDay(new Date());
    if (this.writtenDay !== today) {
      this.written.clear();
      this.writtenDay = today;
    }
    for (const [tenantId, activity] of batch) {
      const calls = [...activity.calls].map(([key, count]) => {
        const [day, caller_kind] = key.split(' ') as [string, CallerKind];
        return { day, caller_kind, calls: count };
      });
      try {
        await withTenant(this.db, tenantId, async (trx) => {
          await addApiCalls(trx, tenantId, calls);
          await addActors(trx, tenantId, [...activity.actors.values()]);
        });
        for (const [key, actor] of activity.actors) if (actor.day === today) this.written.add(key);
      } catch (err) {
        // Dropped, not kept: a tenant deleted meanwhile would otherwise fail every flush.
        this.logger.warn({ err, tenant_id: tenantId }, 'could not record platform activity; its counts are lost');
      }
    }
  }
}
