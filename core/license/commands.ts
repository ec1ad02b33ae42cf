import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import { recordAudit, recordSystemAudit, RefusedAction } from '../audit/store';
import type { CallerPrincipal } from '../auth/principal';
import type { Config } from '../config';
import { ApiError, notFound } from '../errors';
import { shipyardSearchAttributes } from '../searchAttributes';
import { TASK_QUEUES } from '../taskQueues';
import { withTenant } from '../../db/tenancy';
import { resourceLimits, type ResourceLimits } from './editions';
import { verifyLicenseKey } from './keys';
import {
  betaGraceWorkflowId,
  LICENSE_CHANGED_SIGNAL,
  type BetaGraceInput,
  type BetaGraceWorkflow,
} from './licenseWorkflows';
import { betaEndsAt, licenseStatus, resourceUsage, type LicenseStatus, type ResourceUsage } from './rules';
import {
  approvedClusters,
  deleteLicense,
  deletePendingCluster,
  disconnectExcessClusters,
  grantCluster,
  licenseUsage,
  lockLicensePastBetaGrace,
  readVerifiedLicense,
  startBetaGrace,
  tenantLimits,
  upsertLicense,
  type Disconnection,
} from './store';
import { recordEvent } from '../webhooks/events';

// The multi-step license operations: each runs in the caller's tenant transaction, audits what
// it changed, and tells the tenant's Beta grace workflow when that changes its course.

/** What the license commands need from the process. */
export interface LicenseContext {
  config: Config;
  /** The key license keys are verified with (core/license/keys.ts licensePublicKey). */
  publicKey: KeyObject;
  temporal: Client;
}

/**
 * The tenant's license status. The first read past a Beta end marks the grace start and starts
 * the tenant's Beta grace workflow, inside the transaction: should Temporal be unreachable the
 * mark rolls back with it and the next read tries again, so no tenant is left in a grace no
 * workflow ends. (The connection waits on Temporal once per tenant, at that one read.)
 */
export async function readLicenseStatus(
  trx: Knex,
  caller: CallerPrincipal,
  context: LicenseContext,
): Promise<LicenseStatus> {
  const { row, verified } = await readVerifiedLicense(trx, context.publicKey);
  if (row && verified && row.edition === 'beta' && !row.beta_grace_ends_at && row.beta_ends_at) {
    const graceEnds = await startBetaGrace(trx, context.config.license.betaGraceMs);
    if (graceEnds) {
      row.beta_grace_ends_at = graceEnds;
      await recordAudit(trx, caller, {
        eventType: 'license.beta_grace_started',
        action: `The Beta period ended: read-only until ${graceEnds.toISOString()}, then auto-disconnect`,
        targetType: 'license',
        targetId: row.key_prefix,
        metadata: { beta_ends_at: row.beta_ends_at, beta_grace_ends_at: graceEnds },
      });
      await startGraceWorkflow(context, {
        tenant_id: caller.tenantId,
        grace_ends_at: graceEnds.toISOString(),
        grace_ms: context.config.license.betaGraceMs,
      });
    }
  }
  const [approved, used] = await Promise.all([approvedClusters(trx), licenseUsage(trx)]);
  const limits = resourceLimits(verified ? row : undefined, approved);
  return licenseStatus(row, verified, limits, used, new Date());
}

/** The tenant's limits and live usage, its stored key verified again as the status does. */
export async function readLicenseUsage(
  trx: Knex,
  publicKey: KeyObject,
): Promise<{ resource_limits: ResourceLimits; resource_usage: ResourceUsage[] }> {
  const limits = await tenantLimits(trx, publicKey);
  return { resource_limits: limits, resource_usage: resourceUsage(await licenseUsage(trx), limits) };
}

async function startGraceWorkflow(context: LicenseContext, input: BetaGraceInput): Promise<void> {
  try {
    await context.temporal.workflow.start<BetaGraceWorkflow>('betaGrace', {
      workflowId: betaGraceWorkflowId(input.tenant_id),
      taskQueue: TASK_QUEUES.platform,
      args: [input],
      typedSearchAttributes: shipyardSearchAttributes({ kind: 'beta-grace', tenantId: input.tenant_id }),
    });
  } catch (err) {
    // A grace of an earlier key still winding down: it ends on the license-changed signal.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'The Beta grace could not be started (the workflow service is unreachable); nothing was changed, retry shortly',
      [],
      { 'Retry-After': '5' },
    );
  }
}

/** Ends the tenant's Beta grace workflow, if one runs: its license changed. */
export async function endBetaGrace(temporal: Client, tenantId: string): Promise<void> {
  try {
    await temporal.workflow.getHandle(betaGraceWorkflowId(tenantId)).signal(LICENSE_CHANGED_SIGNAL);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/**
 * Verifies and stores a license key for the caller's tenant. A key that does not verify changes
 * nothing and is audited as a refused activation.
 */
export async function activateLicense(
  trx: Knex,
  caller: CallerPrincipal,
  key: string,
  context: LicenseContext,
): Promise<void> {
  const attempt = { eventType: 'license.activated', action: 'Activate a license key', targetType: 'license' };
  let verified;
  try {
    verified = verifyLicenseKey(key, context.publicKey);
  } catch (err) {
    if (err instanceof ApiError) throw new RefusedAction(err, attempt);
    throw err;
  }
  const { payload, keyPrefix } = verified;
  const betaEnds =
    payload.edition === 'beta'
      ? betaEndsAt(new Date(payload.issued_at), context.config.license.betaPeriodMonths)
      : null;
  await upsertLicense(trx, caller.tenantId, key, keyPrefix, payload, betaEnds);
  await recordAudit(trx, caller, {
    ...attempt,
    action: `Activated a ${payload.edition} license for ${payload.licensee}`,
    targetId: keyPrefix,
    metadata: {
      edition: payload.edition,
      type: payload.type,
      clusters: payload.clusters,
      nodes: payload.nodes,
      expires_at: payload.expires_at,
      beta_ends_at: betaEnds,
    },
  });
  await recordEvent(trx, caller.tenantId, 'license.activated', {
    license: {
      edition: payload.edition,
      type: payload.type,
      licensee: payload.licensee,
      key_prefix: keyPrefix,
      expires_at: payload.expires_at,
    },
  });
}

/** Removes the caller's tenant's license: free limits from now on. */
export async function deactivateLicense(trx: Knex, caller: CallerPrincipal): Promise<void> {
  const removed = await deleteLicense(trx);
  await recordAudit(trx, caller, {
    eventType: 'license.deactivated',
    action: removed ? `Deactivated the ${removed.edition} license of ${removed.licensee}` : 'Deactivated (no license)',
    targetType: 'license',
    targetId: removed?.key_prefix,
    metadata: { edition: removed?.edition ?? 'free' },
  });
}

/** Dismisses a parked registration: no capacity granted; the agent parks again on its next try. */
export async function dismissPendingCluster(trx: Knex, caller: CallerPrincipal, clusterId: string): Promise<void> {
  const dismissed = await deletePendingCluster(trx, clusterId);
  if (!dismissed) throw notFound('Pending cluster registration');
  await recordAudit(trx, caller, {
    eventType: 'license.cluster_dismissed',
    action: `Dismissed the pending registration of cluster ${clusterId}`,
    targetType: 'cluster',
    targetId: clusterId,
    metadata: { attempts: dismissed.attempts },
  });
}

/** Approves a parked registration: one more cluster allowed; the agent gets in on its next try. */
export async function approvePendingCluster(
  trx: Knex,
  caller: CallerPrincipal,
  clusterId: string,
): Promise<{ approved_clusters: number }> {
  const approved = await deletePendingCluster(trx, clusterId);
  if (!approved) throw notFound('Pending cluster registration');
  const total = await grantCluster(trx, caller.tenantId);
  await recordAudit(trx, caller, {
    eventType: 'license.cluster_approved',
    action: `Approved cluster ${clusterId}: one more cluster allowed (${total} approved in all)`,
    targetType: 'cluster',
    targetId: clusterId,
    metadata: { approved_clusters: total, attempts: approved.attempts },
  });
  return { approved_clusters: total };
}

/**
 * Auto-disconnect of one tenant, in its own transaction: if its Beta grace is still over (a key
 * activated since the tenant was listed ends that), keeps one cluster and revokes the others'
 * agent tokens, audited. The license row is locked so an activation waits for it, or it for one.
 */
export async function disconnectTenantPastGrace(db: Knex, tenantId: string, graceMs: number): Promise<Disconnection> {
  return withTenant(db, tenantId, async (trx) => {
    if (!(await lockLicensePastBetaGrace(trx, graceMs))) return { kept: null, revoked: [] };
    const disconnection = await disconnectExcessClusters(trx);
    if (disconnection.revoked.length > 0) {
      await recordSystemAudit(trx, tenantId, 'system:auto-disconnect', {
        eventType: 'license.auto_disconnected',
        action: `The Beta grace ended: kept cluster ${disconnection.kept}, revoked the agent tokens of ${disconnection.revoked.join(', ')}`,
        targetType: 'cluster',
        targetId: disconnection.kept ?? undefined,
        metadata: { kept: disconnection.kept, revoked: disconnection.revoked },
      });
    }
    return disconnection;
  });
}
