// The identity providers users and groups come from, defined once for schemas, stores and the
// database's CHECK constraints (test/integration/vocabulary.test.ts holds them together).

export const IDENTITY_PROVIDERS = ['idp-a', 'idp-b', 'idp-c', 'idp-d'] as const;
export type IdentityProvider = (typeof IDENTITY_PROVIDERS)[number];

/** The provider this deployment signs users in with (the spec's shape C names it). */
export const IDENTITY_PROVIDER: IdentityProvider = 'idp-a';
