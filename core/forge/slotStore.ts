import type { Knex } from 'knex';
import type { Config } from '../config';
import { SLOT_KINDS, type SlotKind } from './types';

// SQL of a tenant's share of the forge pool: its limits (config defaults, overridden per tenant
// in forge_tenant_limits), the slots its runs hold or wait for, and its recent run starts. Every
// function runs in the tenant's transaction (row-level security keeps it to that tenant).

export interface TenantForgeLimits {
  runningRuns: number;
  actionSlots: number;
  runStartsPerMinute: number;
}

/** A tenant's override of the defaults; a field left out (or null) takes the configured default. */
export type TenantForgeLimitsOverride = { [K in keyof TenantForgeLimits]?: number | null };

interface LimitsRow {
  running_runs: number | null;
  action_slots: number | null;
  run_starts_per_minute: number | null;
}

/** The tenant's limits: its override where it has one, else the configured default. */
export async function tenantForgeLimits(trx: Knex, defaults: Config['forge']): Promise<TenantForgeLimits> {
  const row = await trx<LimitsRow>('forge_tenant_limits').first(
    'running_runs',
    'action_slots',
    'run_starts_per_minute',
  );
  return {
    runningRuns: row?.running_runs ?? defaults.runningRunsPerTenant,
    actionSlots: row?.action_slots ?? defaults.actionSlotsPerTenant,
    runStartsPerMinute: row?.run_starts_per_minute ?? defaults.runStartsPerMinute,
  };
}

/** Sets (or, with null, clears) the tenant's overrides; fields not given keep their value. */
export async function setTenantForgeLimits(
  trx: Knex,
  tenantId: string,
  override: TenantForgeLimitsOverride,
): Promise<void> {
  const columns = {
    ...(override.runningRuns !== undefined && { running_runs: override.runningRuns }),
    ...(override.actionSlots !== undefined && { action_slots: override.actionSlots }),
    ...(override.runStartsPerMinute !== undefined && { run_starts_per_minute: override.runStartsPerMinute }),
  };
  await trx('forge_tenant_limits')
    .insert({ tenant_id: tenantId, ...columns })
    .onConflict('tenant_id')
    .merge({ ...columns, updated_at: trx.fn.now() });
}

/** Advisory-lock class of a tenant's slots and starts (the object: a hash of tenant and purpose). */
const FORGE_SHARE_LOCK = 0x5_107;

const lockTenantShare = (trx: Knex, tenantId: string, purpose: string) =>
  trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [FORGE_SHARE_LOCK, `${tenantId}:${purpose}`]);

/**
 * The start of a run over the tenant's rate, or undefined. Under a lock per tenant, so
 * concurrent starts count one another; `retryAfterSeconds`: until the oldest start of the last
 * minute leaves the window.
 */
export async function runStartRefusal(
  trx: Knex,
  tenantId: string,
  perMinute: number,
): Promise<{ retryAfterSeconds: number } | undefined> {
  await lockTenantShare(trx, tenantId, 'start');
  const {
    rows: [window],
  } = await trx.raw<{ rows: { starts: number; wait: number | null }[] }>(
    `select count(*)::int as starts,
            ceil(extract(epoch from min(created_at) + interval '1 minute' - now()))::int as wait
       from runs where tenant_id = ? and created_at > now() - interval '1 minute'`,
    [tenantId],
  );
  if (window.starts < perMinute) return undefined;
  return { retryAfterSeconds: Math.max(1, window.wait ?? 1) };
}

/** Slots counted against a tenant: those of unfinished runs whose lease has not run out. */
const LIVE_SLOT = `s.tenant_id = :tenantId and s.kind = :kind
  and (s.expires_at is null or s.expires_at > now())
  and exists (select from runs r where r.id = s.run_id and r.status in ('pending', 'running', 'awaiting_approval'))`;

/** How a tenant's slots of one kind are handed out. */
export interface SlotTerms {
  /** The tenant's limit. */
  limit: number;
  /** How long a granted slot lasts unless given back; undefined: until the run ends. */
  leaseSeconds?: number;
  /** How long a request stays queued unless asked again. */
  waitSeconds: number;
}

interface SlotRequest extends SlotTerms {
  tenantId: string;
  runId: string;
  workflowId: string;
  kind: SlotKind;
}

/** The request's place in its queue. */
const MY_PLACE = '(select requested_at, run_id from forge_slots where run_id = :runId and kind = :kind)';

/**
 * Runs of the tenant created before this one, still pending and not yet asking for a run slot:
 * workflows started a moment apart ask in any order, and the older run goes first. Only for a
 * minute after its creation: a run whose workflow never asks is reconciled, and must not hold
 * the queue meanwhile.
 */
const UNASKED_OLDER_RUNS = `(select count(*) from runs r
  where r.tenant_id = :tenantId and r.status = 'pending'
    and (r.created_at, r.id) < (select created_at, id from runs where id = :runId)
    and r.created_at > now() - interval '1 minute'
    and not exists (select from forge_slots x where x.run_id = r.id and x.kind = 'run'))`;

/**
 * Takes a slot when fewer than `limit` are held and no earlier request of the tenant still
 * waits for one; else queues the request (or renews its place) and answers false. Asking again
 * for a slot already granted answers true (a retried local activity). The caller holds the
 * tenant's lock of the kind.
 */
async function acquireSlot(trx: Knex, request: SlotRequest): Promise<boolean> {
  const { tenantId, runId, kind } = request;
  // Its place: a run slot's is the run's creation (the older run starts first); an action slot's,
  // the request's own time (a run that gives one back and asks again queues behind the others).
  const place = kind === 'run' ? trx.raw('(select created_at from runs where id = ?)', [runId]) : trx.fn.now();
  const {
    rows: [mine],
  } = await trx.raw<{ rows: { granted: boolean }[] }>(
    `insert into forge_slots (tenant_id, run_id, kind, workflow_id, requested_at, expires_at)
     values (?, ?, ?, ?, ?, now() + make_interval(secs => ?))
     on conflict (run_id, kind) do update
       -- A waiting request renews its place; a granted one keeps its lease.
       set expires_at = case when forge_slots.granted_at is null
                             then excluded.expires_at else forge_slots.expires_at end
     returning granted_at is not null as granted`,
    [tenantId, runId, kind, request.workflowId, place, request.waitSeconds],
  );
  if (mine.granted) return true;
  const {
    rows: [taken],
  } = await trx.raw<{ rows: { held: number; ahead: number }[] }>(
    `select count(*) filter (where s.granted_at is not null)::int as held,
            count(*) filter (where s.granted_at is null and (s.requested_at, s.run_id) < ${MY_PLACE})::int
              ${kind === 'run' ? `+ ${UNASKED_OLDER_RUNS}::int` : ''} as ahead
       from forge_slots s where ${LIVE_SLOT} and s.run_id <> :runId`,
    { tenantId, kind, runId },
  );
  if (taken.held + taken.ahead >= request.limit) return false;
  await trx('forge_slots')
    .where({ run_id: runId, kind })
    .update({
      granted_at: trx.fn.now(),
      expires_at:
        request.leaseSeconds === undefined ? null : trx.raw('now() + make_interval(secs => ?)', [request.leaseSeconds]),
    });
  return true;
}

/** The workflows of the requests of `kind` that may take a slot now, oldest first. */
async function wakeable(trx: Knex, tenantId: string, kind: SlotKind, limit: number): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { workflow_id: string }[] }>(
    `select s.workflow_id from forge_slots s
      where ${LIVE_SLOT} and s.granted_at is null
      order by s.requested_at, s.run_id
      limit greatest(0, :limit - (select count(*) from forge_slots s where ${LIVE_SLOT} and s.granted_at is not null))`,
    { tenantId, kind, limit },
  );
  return rows.map((row) => row.workflow_id);
}

/**
 * In one transaction, gives back the run's slots (or withdraws its requests) of the kinds in
 * `release`, then takes or queues for those in `acquire`, in order, stopping at the first it
 * cannot have (a run queued for its run slot asks for no action slot). Answers the kinds
 * granted, and the workflows of the requests that may now take a slot given back, so the
 * caller can wake them. The tenant's locks of the kinds involved are taken in one order.
 */
export async function exchangeSlots(
  trx: Knex,
  exchange: {
    tenantId: string;
    runId: string;
    workflowId: string;
    release: SlotKind[];
    acquire: SlotKind[];
    terms: (kind: SlotKind) => SlotTerms;
  },
): Promise<{ granted: SlotKind[]; wake: string[] }> {
  const { tenantId, runId, release, acquire } = exchange;
  for (const kind of SLOT_KINDS)
    if (release.includes(kind) || acquire.includes(kind)) await lockTenantShare(trx, tenantId, kind);
  if (release.length) await trx('forge_slots').where({ run_id: runId }).whereIn('kind', release).delete();
  const granted: SlotKind[] = [];
  for (const kind of acquire) {
    if (!(await acquireSlot(trx, { ...exchange, ...exchange.terms(kind), kind }))) break;
    granted.push(kind);
  }
  const wake = await Promise.all(release.map((kind) => wakeable(trx, tenantId, kind, exchange.terms(kind).limit)));
  return { granted, wake: [...new Set(wake.flat())] };
}

/** Drops every slot and request of a run that has ended without giving them back (reconciliation). */
export async function dropRunSlots(trx: Knex, runId: string): Promise<void> {
  await trx('forge_slots').where({ run_id: runId }).delete();
}
