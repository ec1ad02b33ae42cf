import { isAlias, isMap, isScalar, isSeq, type Document, type Node } from 'yaml';

// What a parsed YAML document would cost to expand, measured on its syntax tree before anything
// expands it (toJS, the NUL walk, ajv): an alias counts as the size of its anchor, so a few bytes
// of aliases to aliases ("billion laughs") are seen as the millions of nodes they become. The
// `yaml` package's own maxAliasCount counts an alias to an empty collection as nothing, and
// `uniqueKeys` compares every key with every other; this pass is linear in the source.

export interface YamlBudget {
  /** Nodes of the document as it expands. */
  nodes: number;
  /** Keys of one map. */
  keysPerMap: number;
}

/** A place in the source (its offset) and what is wrong there. */
export interface BudgetProblem {
  offset: number;
  message: string;
}

export interface Measurement {
  /** Over the budget, or an alias to its own anchor: the document must not be expanded at all. */
  overBudget: BudgetProblem[];
  /** A key given twice in one map: a problem of the document, which is not read further. */
  duplicateKeys: BudgetProblem[];
}

const offsetOf = (node: Node | null | undefined): number => node?.range?.[0] ?? 0;

/** `doc` against `budget`: an alias to its own anchor, too many nodes, too wide a map; and keys given twice. */
export function measureDocument(doc: Document, budget: YamlBudget): Measurement {
  const problems: BudgetProblem[] = [];
  const duplicateKeys: BudgetProblem[] = [];
  /** The anchor each name stands for at this point of the source (a later anchor of the same name replaces it). */
  const anchors = new Map<string, Node>();
  /** Expanded size of each anchored node, once measured. */
  const sizes = new Map<Node, number>();
  /** Anchored nodes being measured: an alias to one of them refers to itself. */
  const open = new Set<Node>();
  // Sizes saturate just above the budget: the comparison needs no more, and no sum can overflow.
  const cap = budget.nodes + 1;
  const add = (a: number, b: number) => Math.min(cap, a + b);

  // Recursive, in source order (anchors are defined where they are written); the depth is
  // bounded before parsing (tooDeepAt in streamScan.ts).
  const measure = (node: Node | null | undefined): number => {
    if (!node) return 1;
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      // An alias to no anchor is reported by the reader itself.
      if (!target) return 1;
      if (open.has(target)) {
        problems.push({ offset: offsetOf(node), message: `alias *${node.source} refers to its own anchor` });
        return cap;
      }
      return sizes.get(target) ?? 1;
    }
    if (node.anchor) {
      anchors.set(node.anchor, node);
      open.add(node);
    }
    let size = 1;
    if (isMap(node)) {
      if (node.items.length > budget.keysPerMap) {
        problems.push({
          offset: offsetOf(node),
          message: `a map has ${node.items.length} keys, more than ${budget.keysPerMap} (SHIPYARD_MANIFEST_MAX_KEYS)`,
        });
      }
      const keys = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        if (isScalar(key)) {
          const name = String(key.value);
          if (keys.has(name))
            duplicateKeys.push({ offset: offsetOf(key), message: `Map keys must be unique: "${name}"` });
          keys.add(name);
        }
        size = add(size, add(measure(key), measure(pair.value as Node | null)));
      }
    } else if (isSeq(node)) {
      for (const item of node.items) size = add(size, measure(item as Node | null));
    }
    if (node.anchor) {
      open.delete(node);
      sizes.set(node, size);
    }
    return size;
  };

  const total = measure(doc.contents as Node | null);
  if (total > budget.nodes) {
    problems.push({
      offset: offsetOf(doc.contents as Node | null),
      message: `the document expands to more than ${budget.nodes} nodes (SHIPYARD_MANIFEST_MAX_NODES); aliases count as what they repeat`,
    });
  }
  return { overBudget: problems, duplicateKeys };
}
