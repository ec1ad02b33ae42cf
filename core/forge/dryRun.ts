import type { CallerPrincipal } from '../auth/principal';
import type { Config } from '../config';
import { maskSecrets, type ConfigObject } from '../crypto/secretConfig';
import { ruleOf } from './approvalRules';
import { checkParametersSize, inTenant, planOfStart, type ForgeCommandDeps } from './runCommands';
import { renderTemplate, scriptVariable } from './template';
import type { MoldAction, RunStepSpec } from './types';

// A dry run: what a run of a mold with these parameters would do, found as a start finds it
// (the same parameter checks, policy and templating caps), with nothing started or stored.
// Secrets in the rendered configs are masked as integrations mask theirs.

/** A step's config with its parameters filled in as its activity would fill them (activities/forge). */
function renderConfig(
  step: RunStepSpec,
  parameters: Record<string, unknown>,
  caps: Config['forgeTemplates'],
): ConfigObject {
  const { config } = step;
  const render = (value: unknown, maxBytes: number, what: string, escape?: (text: string) => string) =>
    renderTemplate(value, parameters, { maxBytes, what, escape });
  const body = config.body === undefined ? {} : { body: render(config.body, caps.bodyBytes, 'the body') };
  switch (step.type) {
    case 'api-call':
      return {
        ...config,
        url: render(config.url, caps.urlBytes, 'the URL'),
        headers: render(config.headers ?? {}, caps.headersBytes, 'the headers'),
        ...body,
      };
    case 'vcs-host-a-action':
      return { ...config, path: render(config.path, caps.urlBytes, 'the path', encodeURIComponent), ...body };
    case 'script':
      // A script's text takes no references: parameters reach it as its environment.
      return {
        ...config,
        environment: Object.fromEntries(
          Object.entries(parameters).map(([name, value]) => [
            scriptVariable(name),
            typeof value === 'string' ? value : JSON.stringify(value),
          ]),
        ),
      };
    case 'approval':
      return config;
  }
}

function plannedStep(
  step: RunStepSpec,
  action: MoldAction,
  parameters: Record<string, unknown>,
  caps: Config['forgeTemplates'],
) {
  const { config, secrets } = maskSecrets(renderConfig(step, parameters, caps));
  const needsApproval = step.type === 'approval' || step.requiresApproval;
  const rule = ruleOf(action);
  return {
    position: step.position,
    name: step.name,
    type: step.type,
    requires_approval: step.requiresApproval,
    config,
    secrets,
    approval: needsApproval
      ? {
          teams: rule.teams,
          roles: rule.roles,
          users: rule.users,
          count: rule.count,
          allow_self_approval: rule.allowSelfApproval,
          timeout: step.approvalTimeout ?? null,
        }
      : null,
  };
}

/** The plan of a run (`dry_run: true`): the mold version, the resolved parameters, and each step as it would run. */
export async function planRun(
  deps: ForgeCommandDeps,
  caller: CallerPrincipal,
  request: { moldSlug: string; parameters: Record<string, unknown> },
) {
  checkParametersSize(request.parameters, deps.config.forge.parametersMaxBytes);
  return inTenant(deps, caller, async (trx) => {
    const { mold, values, actions, steps } = await planOfStart(trx, deps, caller, request);
    const parameters = maskSecrets(values);
    return {
      dry_run: true as const,
      mold_slug: mold.slug,
      mold_version: mold.version,
      parameters: parameters.config,
      secrets: parameters.secrets,
      steps: steps.map((step) => plannedStep(step, actions[step.position], values, deps.config.forgeTemplates)),
    };
  });
}
