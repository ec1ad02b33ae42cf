import { listPolicies, updatePolicy } from '../../core/policies/commands';
import { defineRoute } from '../http/route';
import { policyListSchema, policyParams, policySchema, updatePolicySchema } from './schemas';

export const policyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/admin/policies',
    tag: 'Admin',
    access: 'admin:read',
    summary:
      "The platform policies (a fixed catalogue) with the tenant's state of each: enabled, config, and the config's schema",
    responses: { 200: { description: '`{policies}`', schema: policyListSchema } },
    handler: async ({ db }) => ({ policies: await listPolicies(db) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/admin/policies/{id}',
    tag: 'Admin',
    access: 'admin:write',
    summary:
      "Changes the tenant's `enabled` and/or `config` of a policy (config checked against the policy's own schema); audited. Takes effect at once in this process, within SHIPYARD_POLICY_CACHE elsewhere",
    params: policyParams,
    body: updatePolicySchema,
    // The cached policies are dropped once the change has committed, never before.
    transaction: 'on-demand',
    responses: {
      200: { description: 'The policy', schema: policySchema },
      400: { description: "The body is invalid, or `config` does not match the policy's schema" },
      404: { description: 'No policy with that id' },
    },
    handler: async ({ auth, params, body, deps, inTenant }) => {
      const policy = await inTenant((trx) => updatePolicy(trx, auth, params.id, body));
      deps.policies.forget(auth.tenantId);
      return policy;
    },
  }),
];
