import { listRepositories, toRepositoryView } from '../../core/repositories/store';
import { defineRoute } from '../http/route';
import { shapeBPagination, shapeBWindow } from '../http/pagination';
import { repositoryListQuery, repositoryListSchema } from './schemas';

export const repositoryRoutes = [
  defineRoute({
    method: 'GET',
    path: '/repositories',
    tag: 'Repositories',
    access: 'repositories:read',
    summary:
      "The tenant's repositories as the crawler found them through its vcs-host-a integration, with their crawl status. Shape B (page-based). Forks and archived repositories are left out unless asked for",
    query: repositoryListQuery,
    responses: { 200: { description: '`{repositories, pagination}`', schema: repositoryListSchema } },
    handler: async ({ db, query }) => {
      const { page, page_size, ...filters } = query;
      const window = shapeBWindow({ page, page_size });
      const { rows, total } = await listRepositories(db, filters, window);
      return { repositories: rows.map(toRepositoryView), pagination: shapeBPagination(window, total) };
    },
  }),
];
