// The integrations' vocabulary, defined once for schemas, stores and the database's CHECK constraints.

export const INTEGRATION_TYPES = [
  'vcs-host-a',
  'vcs-host-b',
  'incident-tool-a',
  'incident-tool-b',
  'monitoring-tool-a',
  'custom',
] as const;
export const INTEGRATION_STATUSES = ['active', 'inactive', 'error'] as const;

export type IntegrationType = (typeof INTEGRATION_TYPES)[number];
export type IntegrationStatus = (typeof INTEGRATION_STATUSES)[number];

/** The types a sync pulls from (POST /integrations/{id}/sync, the schedule); the others have nothing to pull. */
export const SYNCED_TYPES = ['vcs-host-a', 'incident-tool-a'] as const satisfies readonly IntegrationType[];
export type SyncedType = (typeof SYNCED_TYPES)[number];
