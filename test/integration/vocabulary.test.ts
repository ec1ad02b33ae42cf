import type { Knex } from 'knex';
import { ACTOR_TYPES, AUDIT_STATUSES } from '../../core/audit/types';
import {
  CHANGELOG_ACTIONS,
  ENTITY_SOURCES,
  ENTITY_TYPES,
  LIFECYCLES,
  MANIFEST_TYPES,
  README_FORMATS,
  RELATION_TYPES,
  TIERS,
} from '../../core/catalog/types';
import { BACKUP_STATUSES } from '../../core/database/types';
import { ACTION_PRIORITIES, ACTION_SOURCE_TYPES, ACTION_STATUSES } from '../../core/governance/types';
import { FINDING_SEVERITIES, FINDING_SOURCES, FINDING_STATUSES } from '../../core/security/types';
import { GITOPS_COMMAND_ACTIONS, GITOPS_COMMAND_STATUSES } from '../../core/gitops/types';
import { DECISION_KINDS, LOG_LEVELS, RUN_STATUSES, SLOT_KINDS, STEP_STATUSES } from '../../core/forge/types';
import { INTEGRATION_STATUSES, INTEGRATION_TYPES } from '../../core/integrations/types';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES, INCIDENT_URGENCIES } from '../../core/incidents/types';
import { ACTOR_KINDS, CALLER_KINDS } from '../../core/insights/platformMetricsRules';
import { EDITION_PREFIX, LICENSE_TYPES } from '../../core/license/keys';
import { NOTIFICATION_KINDS } from '../../core/notifications/types';
import { GRADES } from '../../core/scorecards/types';
import { TEAM_MEMBER_ROLES } from '../../core/teams/types';
import { IDENTITY_PROVIDERS } from '../../core/users/types';
import { DELIVERY_STATUSES, EVENT_KINDS } from '../../core/webhooks/types';
import { createPool } from '../../db/pool';
import { testConfig } from '../support/harness';

// Migrations are frozen SQL: their CHECK constraints spell each vocabulary out again. This reads
// what the database allows and holds it to the arrays in core/<domain>/types.ts that schemas,
// types, stores and workflows use, so a new value cannot ship without its migration.

let db: Knex;
beforeAll(() => {
  db = createPool(testConfig().database.appUrl, 1);
});
afterAll(() => db.destroy());

/** The values the one CHECK constraint on `table.column` allows (an `in (...)` list). */
async function allowedValues(table: string, column: string): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { definition: string }[] }>(
    `select pg_get_constraintdef(oid) as definition from pg_constraint
      where conrelid = ?::regclass and contype = 'c'`,
    [table],
  );
  const checks = rows.filter(({ definition }) => new RegExp(`\\(${column} = ANY`).test(definition));
  expect(checks).toHaveLength(1);
  return [...checks[0].definition.matchAll(/'([^']*)'::text/g)].map((match) => match[1]);
}

test.each([
  ['team_members', 'role', TEAM_MEMBER_ROLES],
  ['team_group_mappings', 'provider', IDENTITY_PROVIDERS],
  ['team_group_mappings', 'role', TEAM_MEMBER_ROLES],
  ['audit_log', 'status', AUDIT_STATUSES],
  ['audit_log', 'actor_type', ACTOR_TYPES],
  ['integrations', 'type', INTEGRATION_TYPES],
  ['integrations', 'status', INTEGRATION_STATUSES],
  ['runs', 'status', RUN_STATUSES],
  ['run_steps', 'status', STEP_STATUSES],
  ['run_logs', 'level', LOG_LEVELS],
  ['run_decisions', 'decision', DECISION_KINDS],
  ['forge_slots', 'kind', SLOT_KINDS],
  ['gitops_commands', 'action', GITOPS_COMMAND_ACTIONS],
  ['gitops_commands', 'status', GITOPS_COMMAND_STATUSES],
  ['entities', 'type', ENTITY_TYPES],
  ['entities', 'lifecycle', LIFECYCLES],
  ['entities', 'tier', TIERS],
  ['entities', 'source', ENTITY_SOURCES],
  ['entities', 'readme_format', README_FORMATS],
  ['entity_relations', 'type', RELATION_TYPES],
  ['licenses', 'edition', Object.keys(EDITION_PREFIX)],
  ['licenses', 'type', LICENSE_TYPES],
  ['entity_changelog', 'action', CHANGELOG_ACTIONS],
  ['manifests', 'manifest_type', MANIFEST_TYPES],
  ['notifications', 'kind', NOTIFICATION_KINDS],
  ['notification_preferences', 'kind', NOTIFICATION_KINDS],
  ['database_backups', 'status', BACKUP_STATUSES],
  ['security_findings', 'severity', FINDING_SEVERITIES],
  ['security_findings', 'status', FINDING_STATUSES],
  ['security_findings', 'source', FINDING_SOURCES],
  ['governance_actions', 'status', ACTION_STATUSES],
  ['governance_actions', 'priority', ACTION_PRIORITIES],
  ['governance_actions', 'source_type', ACTION_SOURCE_TYPES],
  ['scorecard_rules', 'severity', FINDING_SEVERITIES],
  ['entity_scorecards', 'grade', GRADES],
  ['incidents', 'status', INCIDENT_STATUSES],
  ['incidents', 'urgency', INCIDENT_URGENCIES],
  ['incidents', 'severity', INCIDENT_SEVERITIES],
  ['webhook_events', 'kind', EVENT_KINDS],
  ['webhook_deliveries', 'status', DELIVERY_STATUSES],
  ['platform_api_calls', 'caller_kind', CALLER_KINDS],
  ['platform_daily_actors', 'actor_kind', ACTOR_KINDS],
])('the CHECK constraint on %s.%s allows exactly the vocabulary of core/', async (table, column, vocabulary) => {
  expect((await allowedValues(table, column)).sort()).toEqual([...vocabulary].sort());
});
