import { ApplicationFailure } from '@temporalio/activity';
import type { activeIntegrationOfType } from '../../core/integrations/store';
import type { EgressClient } from '../../core/egress/egressClient';
import { httpAction, renderOrFail, type HttpActionResult, type TemplateLimits } from './apiCall';

/** The action's config, its defaults filled in when the run's steps were built. */
export interface VcsHostActionConfig {
  method: string;
  path: string;
  body?: unknown;
  integration_id?: string;
  timeout_seconds: number;
}

/**
 * A call to the source host's REST API with the tenant's vcs-host-a integration: its base URL
 * and token are read here, inside the activity, so the token never enters workflow history.
 * The call goes through the egress guard like any other; a redirect to another origin does not
 * carry the token.
 */
export async function vcsHostAction(
  egress: EgressClient,
  findIntegration: (id?: string) => ReturnType<typeof activeIntegrationOfType>,
  config: VcsHostActionConfig,
  parameters: Record<string, unknown>,
  limits: TemplateLimits,
  signal: AbortSignal,
): Promise<HttpActionResult> {
  const found = await findIntegration(config.integration_id);
  if ('problem' in found) throw ApplicationFailure.nonRetryable(found.problem, 'IntegrationUnavailable');
  const { base_url, token } = found.integration.config as { base_url: string; token: string };
  // Values are encoded into the path: a parameter can fill a segment but not add or climb any.
  const path = String(
    renderOrFail(config.path, parameters, { maxBytes: limits.urlBytes, what: 'the path', escape: encodeURIComponent }),
  );
  return httpAction(
    egress,
    {
      method: config.method,
      url: `${base_url.replace(/\/+$/, '')}${path}`,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      body: config.body,
      timeoutSeconds: config.timeout_seconds,
    },
    parameters,
    limits,
    signal,
  );
}
