import { parseHttpUrl } from '../egress/egressRules';
import { parameterReferences, scriptVariable, startsWithReference } from './template';
import type { ErrorDetail } from '../errors';
import { approvalProblems } from './approvalRules';
import type { MoldAction, MoldParameter, RunStepSpec } from './types';

// The rules of a mold that one JSON Schema cannot say, and the check of a run's parameter
// values against a mold's definitions. Pure functions: each returns per-field problems.

const isSelect = (p: MoldParameter) => p.type === 'select' || p.type === 'multi-select';

/** Each name given more than once, once per repeat: one pass with a Set, not an indexOf per name. */
function duplicates(names: string[]): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    if (seen.has(name)) return true;
    seen.add(name);
    return false;
  });
}

/** Does `value` fit parameter `p`? Returns why not, or null. */
function valueProblem(p: MoldParameter, value: unknown): string | null {
  // A Set: a multi-select value checked against a list would scan it once per item.
  const options = new Set(p.options ?? []);
  switch (p.type) {
    case 'string':
      return typeof value === 'string' ? null : 'must be a string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'select':
      return typeof value === 'string' && options.has(value) ? null : `must be one of: ${(p.options ?? []).join(', ')}`;
    case 'multi-select':
      return Array.isArray(value) && value.every((v) => typeof v === 'string' && options.has(v))
        ? null
        : `must be a list drawn from: ${(p.options ?? []).join(', ')}`;
  }
}

/** An api-call's URL is absolute http(s), or begins with a parameter that supplies it. */
function urlProblem(url: string): string | null {
  return startsWithReference(url) || parseHttpUrl(url)
    ? null
    : 'must be an absolute http(s) URL or begin with a ${{ parameters.name }} reference';
}

/**
 * A script's text takes no references: pasted into shell code, a value could add commands.
 * Parameters reach scripts as environment variables instead.
 */
function scriptTextProblem(script: unknown): string | null {
  const variables = [...new Set(parameterReferences(script).map(({ name }) => `"$${scriptVariable(name)}"`))];
  return variables.length
    ? `parameters reach scripts as $PARAM_<NAME> environment variables, not through \${{ }} references: write ${variables.join(', ')}`
    : null;
}

/**
 * Per action: its URL (api-call), its script text (script), and every parameter reference in
 * its config, which must name a defined parameter.
 */
function actionProblems(action: MoldAction, index: number, parameterNames: Set<string>): ErrorDetail[] {
  const field = `body.actions.${index}.config`;
  const config = (action.config ?? {}) as Record<string, unknown>;
  if (action.type === 'script') {
    // Its other fields are numbers: the text is the only place a reference could be.
    const problem = scriptTextProblem(config.script);
    return problem ? [{ field: `${field}.script`, message: problem }] : [];
  }
  const problems: ErrorDetail[] = [];
  if (action.type === 'api-call' && typeof config.url === 'string') {
    const problem = urlProblem(config.url);
    if (problem) problems.push({ field: `${field}.url`, message: problem });
  }
  for (const { path, name } of parameterReferences(config)) {
    if (!parameterNames.has(name))
      problems.push({
        field: `${field}${path}`,
        message: `refers to "${name}", which is not a parameter of this mold`,
      });
  }
  return problems;
}

/** Names that differ but reach a script as one variable (`a-b`, `a_b`): one would hide the other. */
function scriptVariableClashes(names: string[]): ErrorDetail[] {
  return [...new Set(duplicates(names.map(scriptVariable)))].map((variable) => ({
    field: 'body.parameters',
    message: `parameters ${names
      .filter((name) => scriptVariable(name) === variable)
      .map((name) => `"${name}"`)
      .join(', ')} would all reach scripts as $${variable}`,
  }));
}

export function moldProblems(mold: {
  parameters?: readonly MoldParameter[];
  actions?: readonly MoldAction[];
  requires_approval?: boolean;
}): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const parameters = mold.parameters ?? [];
  for (const name of duplicates(parameters.map((p) => p.name))) {
    problems.push({ field: 'body.parameters', message: `parameter "${name}" is defined more than once` });
  }
  parameters.forEach((p, i) => {
    const field = `body.parameters.${i}`;
    if (isSelect(p) && !p.options?.length)
      problems.push({ field: `${field}.options`, message: `a ${p.type} parameter needs options` });
    if (!isSelect(p) && p.options)
      problems.push({ field: `${field}.options`, message: `only select and multi-select parameters take options` });
    if (p.default !== undefined) {
      const problem = valueProblem(p, p.default);
      if (problem) problems.push({ field: `${field}.default`, message: `default ${problem}` });
    }
  });
  const actions = mold.actions ?? [];
  for (const name of duplicates(actions.map((a) => a.name))) {
    problems.push({ field: 'body.actions', message: `action "${name}" is defined more than once` });
  }
  const parameterNames = new Set(parameters.map((p) => p.name));
  if (actions.some((action) => action.type === 'script')) problems.push(...scriptVariableClashes([...parameterNames]));
  actions.forEach((action, i) => problems.push(...actionProblems(action, i, parameterNames)));
  problems.push(...approvalProblems(actions, mold.requires_approval ?? false));
  return problems;
}

/**
 * The parameters `steps` read: every one when a script is among them (they all reach it), else
 * those their configs refer to.
 */
export function parametersUsedBy(steps: readonly Pick<RunStepSpec, 'type' | 'config'>[]): Set<string> | 'all' {
  if (steps.some((step) => step.type === 'script')) return 'all';
  return new Set(steps.flatMap((step) => parameterReferences(step.config).map(({ name }) => name)));
}

/**
 * Checks a run's parameter values against the mold: unknown names, missing required values,
 * wrong types and options. Returns the values with declared defaults filled in.
 */
export function checkRunParameters(
  definitions: readonly MoldParameter[],
  values: Record<string, unknown>,
): { values: Record<string, unknown>; problems: ErrorDetail[] } {
  const problems: ErrorDetail[] = [];
  const known = new Set(definitions.map((p) => p.name));
  for (const name of Object.keys(values)) {
    if (!known.has(name)) problems.push({ field: `parameters.${name}`, message: 'is not a parameter of this mold' });
  }
  const resolved: Record<string, unknown> = {};
  for (const p of definitions) {
    const value = values[p.name] ?? p.default;
    if (value === undefined || value === null) {
      if (p.required) problems.push({ field: `parameters.${p.name}`, message: 'is required' });
      continue;
    }
    const problem = valueProblem(p, value);
    if (problem) problems.push({ field: `parameters.${p.name}`, message: problem });
    else resolved[p.name] = value;
  }
  return { values: resolved, problems };
}
