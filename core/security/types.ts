import type { FindingSeverity } from '../scorecards/types';

// The security findings' vocabulary, defined once for schemas, stores and the database's CHECK
// constraints (test/integration/vocabulary.test.ts holds them together). Severities are the
// scorecard rules' (a failing rule opens a finding of its severity).

export { FINDING_SEVERITIES, type FindingSeverity } from '../scorecards/types';

export const FINDING_STATUSES = ['open', 'acknowledged', 'resolved', 'false_positive'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

/** `scorecard` findings come from failing rules; callers report `scanner` and `manual` ones. */
export const FINDING_SOURCES = ['scorecard', 'scanner', 'manual'] as const;
export type FindingSource = (typeof FINDING_SOURCES)[number];

export interface SecurityFinding {
  id: string;
  entity_id: string;
  entity_name: string;
  type: string;
  severity: FindingSeverity;
  status: FindingStatus;
  title: string;
  description: string | null;
  remediation: string | null;
  source: FindingSource;
  fingerprint: string;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
}

export interface FindingInput {
  entity_id: string;
  type: string;
  severity: FindingSeverity;
  title: string;
  description?: string;
  remediation?: string;
  source: FindingSource;
  /** Default: derived from the type and title (findingRules.defaultFingerprint). */
  fingerprint?: string;
}

export interface FindingFilter {
  severity?: FindingSeverity;
  entity_id?: string;
  type?: string;
  status?: FindingStatus;
}
