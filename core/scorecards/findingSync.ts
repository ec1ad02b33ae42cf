import type { Knex } from 'knex';
import type { SystemActor } from '../audit/actor';
import { recordFinding, resolveFindings } from '../security/findingCommands';
import type { Rule } from './configStore';
import type { EntityScore } from './scoringRules';

// A failing rule with a finding severity opens a security finding (source `scorecard`,
// fingerprint = the rule id, one per entity and rule); passing again resolves it. Only changes
// of a rule's result call gov's commands: an entity scored again with the same results makes
// no finding write, so a full pass over a stable catalog costs no finding round trips.

export const SCORECARD_ACTOR = (tenantId: string): SystemActor => ({ kind: 'system', tenantId, name: 'scorecards' });

type FindingRule = Pick<Rule, 'id' | 'name' | 'severity' | 'finding_type'>;

export async function syncFindings(
  trx: Knex,
  actor: SystemActor,
  rules: FindingRule[],
  scored: { entity_id: string; result: EntityScore }[],
  previouslyFailed: Map<string, Set<string>>,
): Promise<void> {
  const withSeverity = new Map(
    rules.filter((rule) => rule.severity && rule.finding_type).map((rule) => [rule.id, rule]),
  );
  if (withSeverity.size === 0) return;
  for (const { entity_id, result } of scored) {
    const before = previouslyFailed.get(entity_id);
    const passedAgain: string[] = [];
    for (const outcome of result.rule_results) {
      const rule = withSeverity.get(outcome.rule_id);
      if (!rule) continue;
      const failedBefore = before?.has(rule.id) ?? false;
      if (!outcome.passed && !failedBefore) {
        await recordFinding(trx, actor, {
          entity_id,
          type: rule.finding_type!,
          severity: rule.severity!,
          title: `Scorecard rule failed: ${rule.name}`,
          description: outcome.reason,
          source: 'scorecard',
          fingerprint: rule.id,
        });
      } else if (outcome.passed && failedBefore) {
        passedAgain.push(rule.id);
      }
    }
    if (passedAgain.length > 0)
      await resolveFindings(trx, actor, { entityId: entity_id, source: 'scorecard', fingerprints: passedAgain });
  }
}
