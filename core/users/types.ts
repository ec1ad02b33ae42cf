// The identity providers users and groups come from, defined once for schemas, stores and the
// database's CHECK constraints (test/integration/vocabulary.test.ts holds them together).

export const IDENTITY_PROVIDERS = ['idp-a', 'idp-b', 'idp-c', 'idp-d'] as const;
export type IdentityProvider = (typeof IDENTITY_PROVIDERS)[number];
