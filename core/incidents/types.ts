// The incidents' and on-call vocabulary, defined once for the client, stores, schemas and the
// database's CHECK constraints.

export const INCIDENT_STATUSES = ['triggered', 'acknowledged', 'resolved'] as const;
export const INCIDENT_URGENCIES = ['high', 'low'] as const;
export const INCIDENT_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;

export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];
export type IncidentUrgency = (typeof INCIDENT_URGENCIES)[number];
export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];

/**
 * The entity tag that names the incident-tool-a service an entity is (`<prefix><service id>`,
 * e.g. `incident-tool-a/service-id=PX1Y2Z3`): its incidents and on-call go to every entity
 * tagged so.
 */
export const SERVICE_TAG_PREFIX = 'incident-tool-a/service-id=';

/** An incident as the tool reports it, for one service. */
export interface ToolIncident {
  external_id: string;
  service_id: string;
  title: string;
  status: IncidentStatus;
  urgency: IncidentUrgency | null;
  severity: IncidentSeverity | null;
  url: string | null;
  opened_at: string;
  resolved_at: string | null;
}

/** One on-call shift of a service's escalation policy, as the tool reports it. */
export interface ToolOncall {
  service_id: string;
  escalation_policy: string | null;
  schedule: string | null;
  level: number;
  user_name: string;
  user_email: string | null;
  starts_at: string | null;
  ends_at: string | null;
}
