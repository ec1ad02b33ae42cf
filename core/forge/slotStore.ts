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
 * The start of a run over the tenant's rate (its own, else `defaultPerMinute`), or undefined.
 * Under a lock per tenant, so concurrent starts count one another: the lock and the count go
 * out together. `retryAfterSeconds`: until the oldest start of the last minute leaves the window.
 */
export async function runStartRefusal(
  trx: Knex,
  tenantId: string,
  defaultPerMinute: number,
): Promise<{ perMinute: number; retryAfterSeconds: number } | undefined> {
  const [, { rows }] = await Promise.all([
    lockTenantShare(trx, tenantId, 'start'),
    trx.raw<{ rows: { starts: number; per_minute: number; wait: number | null }[] }>(
      `select count(*)::int as starts,
              coalesce((select run_starts_per_minute from forge_tenant_limits where tenant_id = ?), ?) as per_minute,
              ceil(extract(epoch from min(created_at) + interval '1 minute' - now()))::int as wait
         from runs where tenant_id = ? and created_at > now() - interval '1 minute'`,
      [tenantId, defaultPerMinute, tenantId],
    ),
  ]);
  const [window] = rows;
  if (window.starts < window.per_minute) return undefined;
  return { perMinute: window.per_minute, retryAfterSeconds: Math.max(1, window.wait ?? 1) };
}

/** Slots counted against a tenant: those of unfinished runs whose lease has not run out. */
const LIVE_SLOT = `s.tenant_id = :tenantId and s.kind = :kind
  and (s.expires_at is null or s.expires_at > now())
  and exists (select from runs r where r.id = s.run_id and r.status in ('pending', 'running', 'awaiting_approval'))`;

/** How a tenant's slots of one kind are handed out. */
export interface SlotTerms {
  /** The limit of a tenant without an override of its own (forge_tenant_limits). */
  defaultLimit: number;
  /** How long a granted slot lasts unless given back; undefined: until the run ends. */
  leaseSeconds?: number;
  /** How long a request stays queued unless asked again. */
  waitSeconds: number;
}

/** The override of each kind's limit in forge_tenant_limits. */
const LIMIT_COLUMN: Record<SlotKind, string> = { run: 'running_runs', action: 'action_slots' };

/** The tenant's limit of the kind: its override, else the default. */
const limitOf = (kind: SlotKind) =>
  `coalesce((select ${LIMIT_COLUMN[kind]} from forge_tenant_limits where tenant_id = :tenantId), :defaultLimit)`;

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

interface SlotRequest extends SlotTerms {
  tenantId: string;
  runId: string;
  workflowId: string;
  kind: SlotKind;
  /** A kind the run must have been granted in this exchange before it asks for this one. */
  after?: SlotKind;
}

/**
 * Takes a slot when fewer than the tenant's limit are held and no earlier request of the tenant
 * still waits for one; else queues the request (or renews its place). Asking again for a slot
 * already granted changes nothing (a retried local activity). Three statements that need no
 * answer from one another (the request, the grant if its turn has come, the outcome), so they
 * go out together; the caller holds the tenant's lock of the kind. Answers whether it has the slot.
 */
async function requestSlot(trx: Knex, request: SlotRequest): Promise<boolean> {
  const { kind } = request;
  const bindings = { ...request, after: request.after ?? null, leaseSeconds: request.leaseSeconds ?? null };
  const asks = request.after
    ? 'exists (select from forge_slots a where a.run_id = :runId and a.kind = :after and a.granted_at is not null)'
    : 'true';
  // Its place: a run slot's is the run's creation (the older run starts first); an action slot's,
  // the request's own time (a run that gives one back and asks again queues behind the others).
  const place = kind === 'run' ? '(select created_at from runs where id = :runId)' : 'now()';
  const queued = trx.raw(
    `insert into forge_slots (tenant_id, run_id, kind, workflow_id, requested_at, expires_at)
     select :tenantId, :runId, :kind, :workflowId, ${place}, now() + make_interval(secs => :waitSeconds)
     where ${asks}
     on conflict (run_id, kind) do update
       -- A waiting request renews its place; a granted one keeps its lease.
       set expires_at = case when forge_slots.granted_at is null
                             then excluded.expires_at else forge_slots.expires_at end`,
    bindings,
  );
  const granted = trx.raw(
    `update forge_slots me
        set granted_at = now(),
            expires_at = now() + make_interval(secs => :leaseSeconds)
      where me.run_id = :runId and me.kind = :kind and me.granted_at is null
        and (select count(*) filter (where s.granted_at is not null
                                          or (s.requested_at, s.run_id) < (me.requested_at, me.run_id))
               from forge_slots s where ${LIVE_SLOT} and s.run_id <> :runId)
            ${kind === 'run' ? `+ ${UNASKED_OLDER_RUNS}` : ''} < ${limitOf(kind)}`,
    bindings,
  );
  const outcome = trx.raw<{ rows: { granted: boolean }[] }>(
    `select exists (select from forge_slots where run_id = :runId and kind = :kind and granted_at is not null)
       as granted`,
    bindings,
  );
  const [, , { rows }] = await Promise.all([queued, granted, outcome]);
  return rows[0].granted;
}

/** The workflows of the requests of `kind` that may take a slot now, oldest first. */
async function wakeable(trx: Knex, tenantId: string, kind: SlotKind, defaultLimit: number): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { workflow_id: string }[] }>(
    `select s.workflow_id from forge_slots s
      where ${LIVE_SLOT} and s.granted_at is null
      order by s.requested_at, s.run_id
      limit greatest(0, ${limitOf(kind)}
        - (select count(*) from forge_slots s where ${LIVE_SLOT} and s.granted_at is not null))`,
    { tenantId, kind, defaultLimit },
  );
  return rows.map((row) => row.workflow_id);
}

/**
 * In one transaction, gives back the run's slots (or withdraws its requests) of the kinds in
 * `release`, then takes or queues for those in `acquire`, in order, stopping at the first it
 * cannot have (a run queued for its run slot asks for no action slot). Answers the kinds
 * granted, and the workflows of the requests that may now take a slot given back, so the
 * caller can wake them. The tenant's locks of the kinds involved are taken in one order. Every
 * statement goes out in one write, COMMIT behind them: one round trip.
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
  // Each statement is sent as it is issued here (Promise.resolve calls its `then`), so they go
  // out in this order: the locks, the release, the requests, then who may now take a slot.
  const locks = SLOT_KINDS.filter((kind) => release.includes(kind) || acquire.includes(kind)).map((kind) =>
    Promise.resolve(lockTenantShare(trx, tenantId, kind)),
  );
  const released = Promise.resolve(
    release.length ? trx('forge_slots').where({ run_id: runId }).whereIn('kind', release).delete() : 0,
  );
  const grants = acquire.map((kind, index) =>
    requestSlot(trx, { ...exchange, ...exchange.terms(kind), kind, after: acquire[index - 1] }),
  );
  const woken = release.map((kind) => wakeable(trx, tenantId, kind, exchange.terms(kind).defaultLimit));
  const [granting, wake] = await Promise.all([Promise.all(grants), Promise.all(woken), Promise.all(locks), released]);
  const granted = acquire.filter((_kind, index) => granting[index]);
  return { granted, wake: [...new Set(wake.flat())] };
}

/** Drops every slot and request of a run that has ended without giving them back (reconciliation). */
export async function dropRunSlots(trx: Knex, runId: string): Promise<void> {
  await trx('forge_slots').where({ run_id: runId }).delete();
}
