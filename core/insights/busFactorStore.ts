import type { Knex } from 'knex';
import type { OffsetWindow } from '../paging';
import { statement } from '../../db/statements';

// SQL of the bus factor beyond the commits (core/repositories/commitStore.ts): how entities link
// to repositories (a link whose url is the repository's page address, html_url), and the kept
// per-entity figure (entity_bus_factors). In the caller's tenant transaction (RLS).

export interface LinkedEntity {
  id: string;
  service_id: string;
  name: string;
  links: { url: string }[];
}

const entityById = statement<LinkedEntity, { entityId: string }>((q, { entityId }) =>
  q('entities').where('id', entityId).select('id', 'service_id', 'name', 'links'),
);

export const linkedEntity = (trx: Knex, entityId: string): Promise<LinkedEntity | undefined> =>
  entityById.first(trx, { entityId });

export interface LinkedRepository {
  id: string;
  full_name: string;
}

const repositoriesAtUrls = statement<LinkedRepository, { urls: string[] }>((q, { urls }) =>
  q('repositories')
    .whereRaw('tenant_id = app_current_tenant()')
    .whereRaw('html_url = any(?::text[])', [urls])
    .orderBy('full_name')
    .select('id', 'full_name'),
);

/** The repositories whose page address is one of the entity's links. */
export async function repositoriesOfLinks(trx: Knex, links: { url: string }[]): Promise<LinkedRepository[]> {
  const urls = links.map((link) => link.url).filter((url) => typeof url === 'string');
  return urls.length ? repositoriesAtUrls.rows(trx, { urls }) : [];
}

const repositoryById = statement<LinkedRepository & { html_url: string | null }, { repositoryId: string }>(
  (q, { repositoryId }) => q('repositories').where('id', repositoryId).select('id', 'full_name', 'html_url'),
);

export const linkedRepository = (trx: Knex, repositoryId: string) => repositoryById.first(trx, { repositoryId });

const entitiesLinkingTo = statement<{ id: string; links: { url: string }[] }, { link: string }>((q, { link }) =>
  q('entities')
    .whereRaw('tenant_id = app_current_tenant()')
    .whereRaw('links @> ?::jsonb', [link])
    .select('id', 'links'),
);

/** The entities with a link to this page address (the entities_by_link index). */
export const entitiesLinkingToUrl = (trx: Knex, url: string) =>
  entitiesLinkingTo.rows(trx, { link: JSON.stringify([{ url }]) });

/**
 * Keeps each entity's figure; returns the entities whose figure changed (or is new), which the
 * scorecards score again.
 */
export async function saveEntityBusFactors(
  trx: Knex,
  tenantId: string,
  figures: { entity_id: string; bus_factor: number | null }[],
): Promise<string[]> {
  if (figures.length === 0) return [];
  const before = new Map<string, number | null>(
    (
      await trx('entity_bus_factors')
        .whereRaw('entity_id = any(?::uuid[])', [figures.map((figure) => figure.entity_id)])
        .select('entity_id', 'bus_factor')
    ).map((row: { entity_id: string; bus_factor: number | null }) => [row.entity_id, row.bus_factor]),
  );
  await trx('entity_bus_factors')
    .insert(figures.map((figure) => ({ ...figure, tenant_id: tenantId, computed_at: trx.fn.now() })))
    .onConflict('entity_id')
    .merge(['bus_factor', 'computed_at']);
  return figures
    .filter((figure) => !before.has(figure.entity_id) || before.get(figure.entity_id) !== figure.bus_factor)
    .map((figure) => figure.entity_id);
}

/** Forgets the entity's figure (it links no repository any more). */
export const dropEntityBusFactor = (trx: Knex, entityId: string): Promise<number> =>
  trx('entity_bus_factors').where('entity_id', entityId).delete();

export interface EntityBusFactorRow {
  id: string;
  service_id: string;
  name: string;
  bus_factor: number | null;
  computed_at: Date;
}

const entityBusFactorPage = statement<EntityBusFactorRow, OffsetWindow>((q, { limit, offset }) =>
  q('entity_bus_factors as b')
    .join('entities as e', 'e.id', 'b.entity_id')
    .whereRaw('b.tenant_id = app_current_tenant()')
    .select('e.id', 'e.service_id', 'e.name', 'b.bus_factor', 'b.computed_at')
    .orderByRaw('b.bus_factor nulls last, b.entity_id')
    .limit(limit)
    .offset(offset),
);

/** The tenant's entities by kept bus factor, lowest first (those without one last). */
export const listEntityBusFactors = (trx: Knex, window: OffsetWindow) => entityBusFactorPage.rows(trx, window);
