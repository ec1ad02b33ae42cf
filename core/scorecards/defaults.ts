import type { Check } from './checks';
import type { FindingSeverity, GradingThresholds } from './types';

// The set a tenant starts with (docs/scorecards.md, "Default set"): seeded once, the first time
// the tenant's scorecards are used, and then the tenant's to change or delete.

export const DEFAULT_GRADING: GradingThresholds = { a_plus: 95, a: 85, b: 70, c: 55, d: 40 };

interface DefaultRule {
  name: string;
  weight: number;
  check: Check;
  severity?: FindingSeverity;
  finding_type?: string;
}

interface DefaultCategory {
  name: string;
  description: string;
  weight: number;
  rules: DefaultRule[];
}

export const DEFAULT_CATEGORIES: DefaultCategory[] = [
  {
    name: 'Ownership',
    description: 'Someone answers for the entity',
    weight: 3,
    rules: [
      {
        name: 'Has an owner',
        weight: 3,
        check: { kind: 'field_set', field: 'owner' },
        severity: 'medium',
        finding_type: 'missing_owner',
      },
      { name: 'Has a tier', weight: 1, check: { kind: 'field_set', field: 'tier' } },
    ],
  },
  {
    name: 'Documentation',
    description: 'A newcomer can find out what it is and how it works',
    weight: 2,
    rules: [
      { name: 'Has a description', weight: 1, check: { kind: 'field_set', field: 'description' } },
      {
        name: 'Has a README or docs',
        weight: 2,
        check: { kind: 'has_docs' },
        severity: 'low',
        finding_type: 'no_readme',
      },
      { name: 'Has at least one link', weight: 1, check: { kind: 'min_links', count: 1 } },
    ],
  },
  {
    name: 'Operations',
    description: 'It is maintained and does not lean on what is going away',
    weight: 2,
    rules: [
      {
        name: 'Lifecycle is production or development',
        weight: 1,
        check: { kind: 'lifecycle_in', values: ['production', 'development'] },
      },
      { name: 'No deprecated dependencies', weight: 2, check: { kind: 'no_deprecated_dependencies' } },
    ],
  },
  {
    name: 'Security',
    description: 'No serious security finding is left open',
    weight: 3,
    rules: [
      { name: 'No open finding above medium', weight: 1, check: { kind: 'no_open_finding_above', severity: 'medium' } },
    ],
  },
];
