// The team hierarchy as pure functions of each team's parent: the org chart's order, and the
// cycles a set of parent changes would make.

export interface OrgChartTeam<T> {
  team: T;
  depth: number;
  children: string[];
}

/**
 * The teams depth-first from each root, each after its parent and before its next sibling, in
 * the order given (the list's: by name). Iterative, so no depth of tree exhausts the stack.
 */
export function orgChartOrder<T extends { id: string; parent_id: string | null }>(teams: T[]): OrgChartTeam<T>[] {
  const known = new Set(teams.map((team) => team.id));
  const children = Map.groupBy(
    teams.filter((team) => team.parent_id !== null && known.has(team.parent_id)),
    (team) => team.parent_id as string,
  );
  const roots = teams.filter((team) => team.parent_id === null || !known.has(team.parent_id));
  const ordered: OrgChartTeam<T>[] = [];
  const pending = roots.map((team) => ({ team, depth: 0 })).reverse();
  for (let next = pending.pop(); next; next = pending.pop()) {
    const kids = children.get(next.team.id) ?? [];
    ordered.push({ team: next.team, depth: next.depth, children: kids.map((kid) => kid.id) });
    for (let i = kids.length - 1; i >= 0; i--) pending.push({ team: kids[i], depth: next.depth + 1 });
  }
  return ordered;
}

/**
 * A cycle the parents would make, as the teams in it (starting from the first changed team that
 * leads into one), or undefined. `parents` is every team's parent after the changes; only
 * ancestries through a changed team can have become cyclic, so only those are walked.
 */
export function parentCycle(
  parents: ReadonlyMap<string, string | null>,
  changed: Iterable<string>,
): string[] | undefined {
  const acyclic = new Set<string>();
  for (const start of changed) {
    const path: string[] = [];
    const onPath = new Map<string, number>();
    for (let id: string | null | undefined = start; id != null && !acyclic.has(id); id = parents.get(id)) {
      const seen = onPath.get(id);
      if (seen !== undefined) return path.slice(seen);
      onPath.set(id, path.length);
      path.push(id);
    }
    for (const id of path) acyclic.add(id);
  }
  return undefined;
}
