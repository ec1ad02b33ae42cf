import type { SourceHostRepository } from '../sourceHost/client';

// Repositories as the API shows them (GET /repositories, shape B) and how that list filters.

export const REPOSITORY_PROVIDERS = ['vcs-host-a'] as const;
export const CRAWL_STATUSES = ['pending', 'crawled', 'failed'] as const;

export interface RepositoryView extends SourceHostRepository {
  id: string;
  provider: (typeof REPOSITORY_PROVIDERS)[number];
  crawl_status: (typeof CRAWL_STATUSES)[number];
  crawl_error: string | null;
  last_crawled_at: string | null;
  next_crawl_at: string;
  created_at: string;
  updated_at: string;
}

export interface RepositoryFilters {
  search?: string;
  provider?: string;
  owner?: string;
  language?: string;
  topic?: string;
  /** The slug of the team owning an entity that links to the repository. */
  team?: string;
  sort: 'name' | 'full_name' | 'created' | 'updated' | 'last_crawled' | 'language';
  order: 'asc' | 'desc';
  show_forks: boolean;
  show_archived: boolean;
  show_private: boolean;
}
