// The API keys' vocabulary. Scopes are the permission vocabulary (core/auth/permissions.ts).

/**
 * What the key listing shows, by a key's state. `active`: usable (neither revoked nor expired),
 * the default, and the keys that count against a user's 25. A key both revoked and expired is
 * `revoked`.
 */
export const API_KEY_STATUSES = ['active', 'expired', 'revoked'] as const;
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number];
export const API_KEY_LIST_FILTERS = [...API_KEY_STATUSES, 'all'] as const;
export type ApiKeyListFilter = (typeof API_KEY_LIST_FILTERS)[number];
