import { getBearerJson } from '../egress/bearerJson';
import type { EgressClient } from '../egress/egressClient';
import {
  INCIDENT_SEVERITIES,
  INCIDENT_STATUSES,
  INCIDENT_URGENCIES,
  type IncidentSeverity,
  type IncidentUrgency,
  type ToolIncident,
  type ToolOncall,
} from './types';

// The incident-tool-a REST API as a sync reads it (docs/integrations.md#the-incident-tool-api):
// services, each service's incidents and who is on call for it, paged with limit/offset/more.
// Every request goes through the egress guard, bounded in time and bytes; the token is sent to
// the tool only. Malformed answers are refused here, so the stores only see valid values.

/** The tool answered with an error status (`status`), or with something that is not its API. */
export class IncidentToolError extends Error {
  constructor(
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'IncidentToolError';
  }
}

const TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 5 * 1024 * 1024;
const PAGE_SIZE = 100;
/** Pages read per list: at most 5,000 services, 2,000 incidents and 500 on-call entries per service. */
const MAX_PAGES = { services: 50, incidents: 20, oncalls: 5 } as const;
const TEXT_MAX = 500;
/** ISO 8601 with a zone, as the tool writes it; year 0000 does not exist in the database. */
const TIMESTAMP = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

export interface ToolService {
  id: string;
  name: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value.slice(0, TEXT_MAX) : null;
const timestamp = (value: unknown): string | null =>
  typeof value === 'string' && TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value)) ? value : null;
const oneOf = <T extends string>(values: readonly T[], value: unknown): T | null =>
  values.includes(value as T) ? (value as T) : null;

function serviceOf(value: unknown): ToolService {
  const id = isObject(value) ? text(value.id) : null;
  if (!isObject(value) || !id) throw new IncidentToolError(undefined, 'a service is not what the tool API answers');
  return { id, name: text(value.name) ?? id };
}

function incidentOf(serviceId: string, value: unknown): ToolIncident {
  const fields = isObject(value) ? value : {};
  const externalId = text(fields.id);
  const status = oneOf(INCIDENT_STATUSES, fields.status);
  const openedAt = timestamp(fields.created_at);
  const resolvedAt = timestamp(fields.resolved_at);
  if (!externalId || !status || !openedAt || (fields.resolved_at != null && !resolvedAt))
    throw new IncidentToolError(undefined, 'an incident is not what the tool API answers');
  return {
    external_id: externalId,
    service_id: serviceId,
    title: text(fields.title) ?? externalId,
    status,
    urgency: oneOf<IncidentUrgency>(INCIDENT_URGENCIES, fields.urgency),
    severity: oneOf<IncidentSeverity>(INCIDENT_SEVERITIES, fields.severity),
    url: text(fields.html_url),
    opened_at: openedAt,
    resolved_at: resolvedAt,
  };
}

function oncallOf(serviceId: string, value: unknown): ToolOncall {
  const fields = isObject(value) ? value : {};
  const user = isObject(fields.user) ? fields.user : {};
  const name = text(user.name) ?? text(user.email);
  const level = fields.escalation_level;
  if (!name || !Number.isInteger(level) || (level as number) < 1 || (level as number) > 1000)
    throw new IncidentToolError(undefined, 'an on-call entry is not what the tool API answers');
  const named = (entry: unknown) => (isObject(entry) ? text(entry.name) : null);
  return {
    service_id: serviceId,
    escalation_policy: named(fields.escalation_policy),
    schedule: named(fields.schedule),
    level: level as number,
    user_name: name,
    user_email: text(user.email),
    starts_at: timestamp(fields.start),
    ends_at: timestamp(fields.end),
  };
}

export class IncidentToolClient {
  private readonly baseUrl: string;

  constructor(
    private readonly egress: EgressClient,
    private readonly options: { baseUrl: string; token: string },
  ) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** Every service the token can see. */
  services(): Promise<ToolService[]> {
    return this.list('/services', 'services', MAX_PAGES.services, serviceOf);
  }

  /** The service's incidents created or changed at or after `since`. */
  incidents(serviceId: string, since: Date): Promise<ToolIncident[]> {
    const path = `${servicePath(serviceId)}/incidents?since=${encodeURIComponent(since.toISOString())}`;
    return this.list(path, 'incidents', MAX_PAGES.incidents, (value) => incidentOf(serviceId, value));
  }

  /** Who is on call for the service now, every escalation level. */
  oncalls(serviceId: string): Promise<ToolOncall[]> {
    return this.list(`${servicePath(serviceId)}/oncalls`, 'oncalls', MAX_PAGES.oncalls, (value) =>
      oncallOf(serviceId, value),
    );
  }

  /** Every page of a list (`{<key>: [...], more}`), up to `maxPages`. */
  private async list<T>(path: string, key: string, maxPages: number, item: (value: unknown) => T): Promise<T[]> {
    const items: T[] = [];
    const separator = path.includes('?') ? '&' : '?';
    for (let page = 0; page < maxPages; page++) {
      const answer = await this.get(`${path}${separator}limit=${PAGE_SIZE}&offset=${page * PAGE_SIZE}`);
      const listed = isObject(answer) ? answer[key] : undefined;
      if (!Array.isArray(listed))
        throw new IncidentToolError(undefined, `the ${key} list is not what the tool API answers`);
      items.push(...listed.map(item));
      if (answer.more !== true || !listed.length) break;
    }
    return items;
  }

  private async get(path: string): Promise<Record<string, unknown>> {
    return (await getBearerJson(
      this.egress,
      {
        baseUrl: this.baseUrl,
        path,
        token: this.options.token,
        name: 'incident-tool-a',
        timeoutMs: TIMEOUT_MS,
        maxBodyBytes: MAX_BODY_BYTES,
      },
      (status, message) => new IncidentToolError(status, message),
    )) as Record<string, unknown>;
  }
}

/** A service's path; its id is one encoded segment, so it cannot add or climb segments. */
const servicePath = (serviceId: string) => `/services/${encodeURIComponent(serviceId)}`;
