import {
  activateLicense,
  approvePendingCluster,
  deactivateLicense,
  dismissPendingCluster,
  endBetaGrace,
  readLicenseStatus,
  readLicenseUsage,
  type LicenseContext,
} from '../../core/license/commands';
import { listPendingClusters } from '../../core/license/store';
import type { AppDeps } from '../deps';
import { defineRoute } from '../http/route';
import {
  activateLicenseSchema,
  approvedClusterSchema,
  clusterIdParams,
  licenseStatusSchema,
  licenseUsageSchema,
  pendingClustersSchema,
} from './schemas';

// Who may do what: any caller of the tenant reads its license and usage (the admin UI's banner
// shows to everyone); tenant admins (admin:read) see parked registrations; only admin:write
// changes the license or decides on a parked registration.

const TAG = 'License';
const contextOf = (deps: AppDeps): LicenseContext => ({
  config: deps.config,
  publicKey: deps.licensePublicKey,
  temporal: deps.temporal,
});

/**
 * After a license change committed: this process's read-only guard reads it again, and the
 * tenant's Beta grace workflow ends. A signal that cannot be sent is only logged: the workflow
 * checks the license again before it disconnects anything.
 */
async function licenseChanged(deps: AppDeps, tenantId: string): Promise<void> {
  deps.readOnlyTenants.forget(tenantId);
  await endBetaGrace(deps.temporal, tenantId).catch((err: unknown) =>
    deps.logger.warn({ err, tenantId }, 'could not signal the Beta grace workflow of a license change'),
  );
}

const notFoundResponse = { description: 'No pending registration of that cluster in this tenant' };

export const licenseRoutes = [
  defineRoute({
    method: 'GET',
    path: '/license',
    tag: TAG,
    access: 'authenticated',
    summary:
      "The tenant's license status: edition, limits, live usage, warnings and the Beta timeline. The first read past a Beta end starts the read-only grace",
    responses: {
      200: { description: 'LicenseStatus', schema: licenseStatusSchema },
      503: { description: 'The first read past the Beta end could not start the Beta grace workflow; nothing changed' },
    },
    handler: async ({ db, auth, deps }) => {
      const status = await readLicenseStatus(db, auth, contextOf(deps));
      // A status read is when a license changed elsewhere takes effect on this process's writes.
      deps.readOnlyTenants.forget(auth.tenantId);
      return status;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/license/usage',
    tag: TAG,
    access: 'authenticated',
    summary: 'Live usage of the limited resources (connected clusters, their nodes) against the limits',
    responses: { 200: { description: '`{resource_limits, resource_usage}`', schema: licenseUsageSchema } },
    handler: ({ db, deps }) => readLicenseUsage(db, deps.licensePublicKey),
  }),
  defineRoute({
    method: 'POST',
    path: '/license/activate',
    tag: TAG,
    access: 'admin:write',
    // The way out of the Beta read-only window.
    readOnlyExempt: true,
    transaction: 'on-demand',
    summary:
      "Verifies a signed license key and makes it the tenant's license (audited); a paid key lifts the Beta read-only block",
    body: activateLicenseSchema,
    responses: {
      200: { description: 'The new LicenseStatus', schema: licenseStatusSchema },
      400: {
        description:
          'The key is malformed, its signature does not verify, or its prefix names another edition than its payload; nothing changed',
      },
    },
    handler: async ({ body, auth, deps, inTenant }) => {
      const context = contextOf(deps);
      await inTenant((trx) => activateLicense(trx, auth, body.license_key, context));
      await licenseChanged(deps, auth.tenantId);
      return inTenant((trx) => readLicenseStatus(trx, auth, context));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/license/deactivate',
    tag: TAG,
    access: 'admin:write',
    transaction: 'on-demand',
    summary: "Removes the tenant's license (audited): free limits from now on",
    optionalBody: true,
    body: { type: 'object', properties: {}, additionalProperties: false },
    responses: { 200: { description: 'The new LicenseStatus (free)', schema: licenseStatusSchema } },
    handler: async ({ auth, deps, inTenant }) => {
      await inTenant((trx) => deactivateLicense(trx, auth));
      await licenseChanged(deps, auth.tenantId);
      return inTenant((trx) => readLicenseStatus(trx, auth, contextOf(deps)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/license/pending-clusters',
    tag: TAG,
    access: 'admin:read',
    summary: 'Cluster registrations parked past the cluster limit, oldest first (an empty array when none)',
    responses: { 200: { description: 'PendingClusterRegistration[]', schema: pendingClustersSchema } },
    handler: ({ db }) => listPendingClusters(db),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/license/pending-clusters/{cluster_id}',
    tag: TAG,
    access: 'admin:write',
    summary:
      'Dismisses a parked registration (audited): no capacity granted; the agent parks again on its next attempt',
    params: clusterIdParams,
    responses: { 204: { description: 'Dismissed' }, 404: notFoundResponse },
    handler: ({ db, auth, params }) => dismissPendingCluster(db, auth, params.cluster_id),
  }),
  defineRoute({
    method: 'POST',
    path: '/license/pending-clusters/{cluster_id}/approve',
    tag: TAG,
    access: 'admin:write',
    summary:
      "Approves a parked registration (audited): the tenant's cluster limit rises by 1 and the agent gets in on its next attempt",
    params: clusterIdParams,
    responses: { 200: { description: 'The approval', schema: approvedClusterSchema }, 404: notFoundResponse },
    handler: async ({ db, auth, params }) => ({
      cluster_id: params.cluster_id,
      ...(await approvePendingCluster(db, auth, params.cluster_id)),
    }),
  }),
];
