// The audit log's vocabulary, defined once for schemas, stores and the database's CHECK
// constraints (test/integration/vocabulary.test.ts holds them together).

export const AUDIT_STATUSES = ['success', 'failure', 'partial'] as const;
export type AuditStatus = (typeof AUDIT_STATUSES)[number];

/** `system` is for entries no caller made (auto-disconnect). */
export const ACTOR_TYPES = ['user', 'api_key', 'agent', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];
