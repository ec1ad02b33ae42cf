import type { Knex } from 'knex';
import { authorLines } from '../repositories/commitStore';
import { requestRescoreOf } from '../scorecards/queueStore';
import {
  busFactorOf,
  DEFAULT_BUS_FACTOR_WINDOW,
  windowDays,
  type BusFactor,
  type BusFactorWindow,
} from './busFactorRules';
import {
  dropEntityBusFactor,
  entitiesLinkingToUrl,
  linkedEntity,
  linkedRepository,
  repositoriesOfLinks,
  saveEntityBusFactors,
  type LinkedRepository,
} from './busFactorStore';

// The bus factor of a repository or an entity (its linked repositories together) over a window
// ending now, from the commits the crawl keeps; and the kept per-entity figure, refreshed by the
// crawl of a repository for the entities linking to it, and by a write of an entity's links.

const DAY_MS = 86_400_000;
const windowStart = (window: BusFactorWindow, now: Date) => new Date(now.getTime() - windowDays(window) * DAY_MS);

export type BusFactorReport = BusFactor & {
  window: BusFactorWindow;
  since: Date;
  repositories: LinkedRepository[];
};

async function busFactorOfRepositories(
  trx: Knex,
  repositories: LinkedRepository[],
  window: BusFactorWindow,
  now: Date,
): Promise<BusFactorReport> {
  const since = windowStart(window, now);
  const base = { window, since, repositories };
  if (repositories.length === 0)
    return { ...base, bus_factor: null, reason: 'no_linked_repository', lines: 0, contributors: [] };
  const authors = await authorLines(
    trx,
    repositories.map((repository) => repository.id),
    since,
  );
  return { ...base, ...busFactorOf(authors) };
}

/** The repository's bus factor; undefined when the tenant has no such repository. */
export async function repositoryBusFactor(
  trx: Knex,
  repositoryId: string,
  window: BusFactorWindow,
  now = new Date(),
): Promise<BusFactorReport | undefined> {
  const repository = await linkedRepository(trx, repositoryId);
  if (!repository) return undefined;
  return busFactorOfRepositories(trx, [{ id: repository.id, full_name: repository.full_name }], window, now);
}

/** The entity's bus factor over the repositories it links to; undefined when there is no such entity. */
export async function entityBusFactor(
  trx: Knex,
  entityId: string,
  window: BusFactorWindow,
  now = new Date(),
): Promise<(BusFactorReport & { entity: { id: string; service_id: string; name: string } }) | undefined> {
  const entity = await linkedEntity(trx, entityId);
  if (!entity) return undefined;
  const report = await busFactorOfRepositories(trx, await repositoriesOfLinks(trx, entity.links), window, now);
  return { ...report, entity: { id: entity.id, service_id: entity.service_id, name: entity.name } };
}

/** An entity's figure over the default window, for entity_bus_factors; null without a linked repository. */
async function keptFigure(trx: Knex, entity: { id: string; links: { url: string }[] }, now: Date) {
  const repositories = await repositoriesOfLinks(trx, entity.links);
  if (repositories.length === 0) return null;
  const report = await busFactorOfRepositories(trx, repositories, DEFAULT_BUS_FACTOR_WINDOW, now);
  return { entity_id: entity.id, bus_factor: report.bus_factor };
}

/** Keeps the figures and asks the scorecards to score again the entities whose figure changed. */
async function keep(trx: Knex, tenantId: string, figures: { entity_id: string; bus_factor: number | null }[]) {
  await requestRescoreOf(trx, tenantId, await saveEntityBusFactors(trx, tenantId, figures));
}

/**
 * Computes again, over the default window, the kept figure of every entity linking to the
 * repository at `htmlUrl` (after its crawl changed its commits, or the window moved on). In the
 * crawl's transaction.
 */
export async function refreshEntityBusFactors(
  trx: Knex,
  tenantId: string,
  htmlUrl: string | null,
  now = new Date(),
): Promise<number> {
  if (!htmlUrl) return 0;
  const entities = await entitiesLinkingToUrl(trx, htmlUrl);
  const figures = [];
  for (const entity of entities) {
    const figure = await keptFigure(trx, entity, now);
    if (figure) figures.push(figure);
  }
  await keep(trx, tenantId, figures);
  return entities.length;
}

/**
 * The kept figure of an entity whose links were just written (in the write's transaction): so
 * the filter and the check follow a new or changed link at once, not at the next crawl. An
 * entity that links no repository keeps none.
 */
export async function refreshLinkedEntityBusFactor(
  trx: Knex,
  tenantId: string,
  entity: { id: string; links: { url: string }[] },
  now = new Date(),
): Promise<void> {
  const figure = await keptFigure(trx, entity, now);
  if (figure) await keep(trx, tenantId, [figure]);
  else await dropEntityBusFactor(trx, entity.id);
}
