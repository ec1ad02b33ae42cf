// The bus factor of a set of commits (pure, unit-tested): the smallest number of contributors
// who together authored more than half of the lines changed (additions + deletions). A
// contributor is an author email. Taking contributors by lines, largest first, reaches the half
// with the fewest, whatever order equal shares take; equal shares are listed by email so the
// answer is the same at every read.

export const BUS_FACTOR_WINDOWS = ['30d', '90d', '365d'] as const;
export type BusFactorWindow = (typeof BUS_FACTOR_WINDOWS)[number];
/** The window of the kept per-entity figure (the `/entities` filter, the scorecard check). */
export const DEFAULT_BUS_FACTOR_WINDOW: BusFactorWindow = '90d';

export const windowDays = (window: BusFactorWindow): number => Number(window.slice(0, -1));

/** Why there is no bus factor. */
export const NO_BUS_FACTOR_REASONS = ['no_linked_repository', 'no_commits_in_window', 'no_lines_changed'] as const;
export type NoBusFactorReason = (typeof NO_BUS_FACTOR_REASONS)[number];

export interface AuthorLines {
  name: string;
  email: string;
  lines: number;
}

export interface Contributor extends AuthorLines {
  /** The contributor's lines over all lines changed, 0 to 1. */
  share: number;
}

export type BusFactor =
  | { bus_factor: number; lines: number; contributors: Contributor[] }
  | { bus_factor: null; reason: NoBusFactorReason; lines: number; contributors: Contributor[] };

const byShare = (a: AuthorLines, b: AuthorLines) =>
  b.lines - a.lines || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0);

/** The bus factor of the lines each author changed (one entry per email). */
export function busFactorOf(authors: AuthorLines[]): BusFactor {
  if (authors.length === 0) return { bus_factor: null, reason: 'no_commits_in_window', lines: 0, contributors: [] };
  const lines = authors.reduce((sum, author) => sum + author.lines, 0);
  const sorted = [...authors].sort(byShare);
  const contributors = sorted.map((author) => ({ ...author, share: lines === 0 ? 0 : author.lines / lines }));
  if (lines === 0) return { bus_factor: null, reason: 'no_lines_changed', lines, contributors };
  let covered = 0;
  let count = 0;
  while (covered * 2 <= lines) covered += sorted[count++].lines;
  return { bus_factor: count, lines, contributors };
}
