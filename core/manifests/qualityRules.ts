import type { SourceNote } from './types';

// The quality analysis of a manifest (POST /manifests/analyze): a score from 0 to 100 and, per
// field that makes an entity usable to others, whether it is there, weak, missing or invalid.

export const QUALITY_FIELDS = ['owner', 'description', 'lifecycle', 'tier', 'links', 'readme'] as const;
export type QualityField = (typeof QUALITY_FIELDS)[number];

export const QUALITY_STATUSES = ['ok', 'weak', 'missing', 'invalid'] as const;
export type QualityStatus = (typeof QUALITY_STATUSES)[number];

/** Points per field (they sum to 100); a weak field earns half. */
export const QUALITY_WEIGHTS: Record<QualityField, number> = {
  owner: 25,
  description: 20,
  lifecycle: 15,
  links: 15,
  readme: 15,
  tier: 10,
};

/** Below these, a description or README says too little to help anyone (weak). */
export const WEAK_DESCRIPTION_CHARS = 40;
export const WEAK_README_CHARS = 200;
/** One link is a start; a repository and the docs or a runbook make two. */
export const GOOD_LINK_COUNT = 2;

export interface QualityCheck {
  field: QualityField;
  status: QualityStatus;
  points: number;
  weight: number;
  message: string;
}

export interface QualityReport {
  score: number;
  checks: QualityCheck[];
  missing: QualityField[];
  weak: QualityField[];
}

const FIELD_PATHS: Record<QualityField, string> = {
  owner: 'spec.owner',
  description: 'metadata.description',
  lifecycle: 'spec.lifecycle',
  tier: 'spec.tier',
  links: 'metadata.links',
  readme: 'spec.readme',
};

const textOf = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof (value as { content?: unknown } | null)?.content === 'string'
      ? (value as { content: string }).content
      : undefined;

/** How one field fares: its status and why. `value` is what the document holds there. */
function judge(field: QualityField, value: unknown, name: unknown): { status: QualityStatus; message: string } {
  const missing = { status: 'missing' as const, message: `${FIELD_PATHS[field]} is not set` };
  if (value === undefined || value === null || value === '') return missing;
  switch (field) {
    case 'description': {
      const text = String(value).trim();
      if (text.toLowerCase() === String(name).trim().toLowerCase()) {
        return { status: 'weak', message: 'the description repeats the name' };
      }
      if (text.length < WEAK_DESCRIPTION_CHARS) {
        return {
          status: 'weak',
          message: `the description has ${text.length} characters (${WEAK_DESCRIPTION_CHARS} or more say what it is)`,
        };
      }
      break;
    }
    case 'links': {
      const count = (value as unknown[]).length;
      if (count === 0) return missing;
      if (count < GOOD_LINK_COUNT)
        return {
          status: 'weak',
          message: `${count} link (a repository and docs or a runbook make ${GOOD_LINK_COUNT})`,
        };
      break;
    }
    case 'readme': {
      const text = (textOf(value) ?? '').trim();
      if (!text) return missing;
      if (text.length < WEAK_README_CHARS) {
        return { status: 'weak', message: `the README has ${text.length} characters (${WEAK_README_CHARS} or more)` };
      }
      break;
    }
  }
  return { status: 'ok', message: `${FIELD_PATHS[field]} is set` };
}

/**
 * The quality of a manifest: 0–100 from the weights above. It reads what the document holds even
 * when it is invalid; a field with a problem under its path counts as `invalid` (no points).
 */
export function analyzeManifest(value: unknown, problems: SourceNote[]): QualityReport {
  const document = (value ?? {}) as { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
  const metadata = typeof document.metadata === 'object' && document.metadata ? document.metadata : {};
  const spec = typeof document.spec === 'object' && document.spec ? document.spec : {};
  const values: Record<QualityField, unknown> = {
    owner: spec.owner,
    description: metadata.description,
    lifecycle: spec.lifecycle,
    tier: spec.tier,
    links: metadata.links,
    readme: spec.readme,
  };
  const checks = QUALITY_FIELDS.map((field): QualityCheck => {
    const weight = QUALITY_WEIGHTS[field];
    const path = FIELD_PATHS[field];
    const problem = problems.find(
      (p) => p.path === path || p.path.startsWith(`${path}.`) || p.path.startsWith(`${path}[`),
    );
    if (problem) return { field, status: 'invalid', points: 0, weight, message: `${path}: ${problem.message}` };
    const { status, message } = judge(field, values[field], metadata.name);
    const points = status === 'ok' ? weight : status === 'weak' ? Math.floor(weight / 2) : 0;
    return { field, status, points, weight, message };
  });
  return {
    score: checks.reduce((sum, check) => sum + check.points, 0),
    checks,
    missing: checks.filter((c) => c.status === 'missing').map((c) => c.field),
    weak: checks.filter((c) => c.status === 'weak').map((c) => c.field),
  };
}
