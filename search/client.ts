import { Client } from '@elastic/elasticsearch';
import type { Config } from '../core/config';

/** The engine and the prefix of our index names in it (tests and lanes use their own). */
export interface SearchEngine {
  client: Client;
  indexPrefix: string;
}

/** One client per process. Bounded waits: an engine outage must not hold a drain or a request. */
export function createSearchEngine(config: Config, options: { url?: string } = {}): SearchEngine {
  return {
    client: new Client({ node: options.url ?? config.elasticsearch.url, requestTimeout: 10_000, maxRetries: 0 }),
    indexPrefix: config.elasticsearch.indexPrefix,
  };
}
