import type { Knex } from 'knex';
import {
  changeFailureRateBand,
  DAY_MS,
  deploymentFrequencyBand,
  leadTimeBand,
  leadTimes,
  median,
  timeToRestoreBand,
  windowMs,
  type DoraBand,
  type DoraWindow,
} from './doraRules';
import {
  commitsOfEntities,
  deploymentCounts,
  doraSources,
  failedDeployments,
  LEAD_TIME_MAX_DEPLOYMENTS,
  namingDeployments,
  previousNamingDeployments,
  restoreFigures,
  type DoraScope,
  type NamingDeploymentRow,
} from './doraStore';

// The four DORA metrics of a scope over a window (docs/insights.md, DORA metrics). A figure whose source
// the tenant lacks is null with that reason; one whose source is there but saw nothing to measure
// (no deployment to rate, no incident resolved) is null with that reason; a frequency of zero
// deployments with a source connected is a real 0.

export const DORA_REASONS = {
  no_deployment_source: 'No cluster agent is connected and no mold is marked as deploying',
  no_incident_source: 'No incident-tool-a integration brings incidents',
  no_commit_source: 'No commits from the source host: no crawled repository has commit history',
  no_deployments: 'No deployment in the window',
  no_changes_deployed: 'No deployment in the window carried a known commit of the entities’ repositories',
  no_resolved_incidents: 'No incident was resolved in the window',
} as const;

export type DoraReasonCode = keyof typeof DORA_REASONS;

export interface DoraMetric {
  value: number | null;
  unit: 'deployments_per_day' | 'hours' | 'percent';
  band: DoraBand | null;
  reason: { code: DoraReasonCode; message: string } | null;
  sources: Record<string, number | boolean>;
}

/** How long before the window a commit may be and still count: lead times are at most this plus the window. */
const COMMIT_LOOKBACK_MS = 90 * DAY_MS;
const HOUR_MS = DAY_MS / 24;

const missing = (unit: DoraMetric['unit'], code: DoraReasonCode, sources: DoraMetric['sources'] = {}): DoraMetric => ({
  value: null,
  unit,
  band: null,
  reason: { code, message: DORA_REASONS[code] },
  sources,
});

const measured = (unit: DoraMetric['unit'], value: number, band: DoraBand, sources: DoraMetric['sources']) => ({
  value,
  unit,
  band,
  reason: null,
  sources,
});

async function leadTimeMetric(db: Knex, scope: DoraScope, from: Date, to: Date): Promise<DoraMetric> {
  const naming = await namingDeployments(db, scope, { from, to });
  const byEntity = Map.groupBy(naming, (row) => row.entity_id);
  // Newest first: each entity's last row is its earliest deployment read.
  const earliest = new Map([...byEntity].map(([entityId, rows]) => [entityId, rows[rows.length - 1].deployed_at]));
  const previous = await previousNamingDeployments(db, earliest);
  const commits = await commitsOfEntities(db, [...byEntity.keys()], new Date(from.getTime() - COMMIT_LOOKBACK_MS));
  const asDeployment = (row: NamingDeploymentRow) => ({ deployedAt: row.deployed_at, ref: row.ref });
  const leads = [...byEntity].flatMap(([entityId, rows]) => {
    const before = previous.get(entityId);
    return leadTimes(
      [...(before ? [before] : []), ...rows].map(asDeployment),
      (commits.get(entityId) ?? []).map((commit) => ({ sha: commit.sha, committedAt: commit.committed_at })),
      earliest.get(entityId)!,
    );
  });
  const sources = {
    deployments_naming_commits: naming.length,
    commits_deployed: leads.length,
    truncated: naming.length === LEAD_TIME_MAX_DEPLOYMENTS,
  };
  const value = median(leads);
  if (value === null) return missing('hours', 'no_changes_deployed', sources);
  return measured('hours', value / HOUR_MS, leadTimeBand(value), sources);
}

export interface DoraReport {
  window: DoraWindow;
  from: string;
  to: string;
  deployment_frequency: DoraMetric;
  lead_time_for_changes: DoraMetric;
  change_failure_rate: DoraMetric;
  time_to_restore_service: DoraMetric;
}

export async function doraReport(
  db: Knex,
  scope: DoraScope,
  window: DoraWindow,
  failureWindowMs: number,
  now = new Date(),
): Promise<DoraReport> {
  const to = now;
  const from = new Date(to.getTime() - windowMs(window));
  const span = { from, to };
  const sources = await doraSources(db);
  const deploys = sources.agents || sources.deploying_molds;

  let deploymentFrequency = missing('deployments_per_day', 'no_deployment_source');
  let changeFailureRate = missing('percent', deploys ? 'no_incident_source' : 'no_deployment_source');
  if (deploys) {
    const counts = await deploymentCounts(db, scope, span);
    const total = counts.agent_deployments + counts.forge_deployments;
    const perDay = total / (windowMs(window) / DAY_MS);
    deploymentFrequency = measured('deployments_per_day', perDay, deploymentFrequencyBand(perDay), {
      ...counts,
      deployments: total,
    });
    if (sources.incident_tool) {
      const failureSources = { deployments: total, failure_window_hours: failureWindowMs / HOUR_MS };
      if (total === 0) changeFailureRate = missing('percent', 'no_deployments', failureSources);
      else {
        const failed = await failedDeployments(db, scope, span, failureWindowMs);
        const percent = (100 * failed) / total;
        changeFailureRate = measured('percent', percent, changeFailureRateBand(percent), {
          ...failureSources,
          failed_deployments: failed,
        });
      }
    }
  }

  let leadTime = missing('hours', deploys ? 'no_commit_source' : 'no_deployment_source');
  if (deploys && sources.commits) leadTime = await leadTimeMetric(db, scope, from, to);

  let restore = missing('hours', 'no_incident_source');
  if (sources.incident_tool) {
    const figures = await restoreFigures(db, scope, span);
    const restoreSources = { resolved_incidents: figures.resolved };
    restore =
      figures.median_seconds === null
        ? missing('hours', 'no_resolved_incidents', restoreSources)
        : measured(
            'hours',
            figures.median_seconds / 3600,
            timeToRestoreBand(figures.median_seconds * 1000),
            restoreSources,
          );
  }

  return {
    window,
    from: from.toISOString(),
    to: to.toISOString(),
    deployment_frequency: deploymentFrequency,
    lead_time_for_changes: leadTime,
    change_failure_rate: changeFailureRate,
    time_to_restore_service: restore,
  };
}
