import type { Knex } from 'knex';
import type { SystemActor } from '../audit/actor';
import { recordFinding, resolveFindings } from '../security/findingCommands';
import type { Rule } from './configStore';
import type { PreviousEvaluation } from './resultStore';
import type { EntityScore } from './scoringRules';

// A failing rule with a finding severity opens a security finding (source `scorecard`,
// fingerprint = the rule id, one per entity and rule); passing again resolves it. Only a change
// calls gov's commands: of the rule's result, or of the rule itself since the entity's previous
// evaluation (a severity just given, a new finding type), so a full pass over a stable catalog
// costs no finding round trips.

export const SCORECARD_ACTOR = (tenantId: string): SystemActor => ({ kind: 'system', tenantId, name: 'scorecards' });

type FindingRule = Pick<Rule, 'id' | 'name' | 'severity' | 'finding_type' | 'updated_at'>;

export async function syncFindings(
  trx: Knex,
  actor: SystemActor,
  rules: FindingRule[],
  scored: { entity_id: string; result: EntityScore }[],
  previous: Map<string, PreviousEvaluation>,
): Promise<void> {
  const withSeverity = new Map(
    rules.filter((rule) => rule.severity && rule.finding_type).map((rule) => [rule.id, rule]),
  );
  if (withSeverity.size === 0) return;
  for (const { entity_id, result } of scored) {
    const before = previous.get(entity_id);
    const passedAgain: string[] = [];
    for (const outcome of result.rule_results) {
      const rule = withSeverity.get(outcome.rule_id);
      if (!rule) continue;
      const failedBefore = before?.failed.has(rule.id) ?? false;
      const ruleChanged = before !== undefined && Date.parse(rule.updated_at) > before.evaluatedAt.getTime();
      if (!outcome.passed && (!failedBefore || ruleChanged)) {
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
