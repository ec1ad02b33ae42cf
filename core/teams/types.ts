// The teams' vocabulary, defined once for schemas, stores and the database's CHECK constraints
// (test/integration/vocabulary.test.ts holds the two together).

export const TEAM_MEMBER_ROLES = ['lead', 'member', 'viewer'] as const;
export type TeamMemberRole = (typeof TEAM_MEMBER_ROLES)[number];
