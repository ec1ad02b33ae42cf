// Response schema pieces for counts, shared by the statistics, dashboard and overview routes.

export const COUNT = { type: 'integer', minimum: 0 } as const;

/** An object holding one count for each of `keys`, every one present. */
export const countsOf = <const K extends readonly string[]>(keys: K) =>
  ({
    type: 'object',
    required: keys,
    properties: Object.fromEntries(keys.map((key) => [key, COUNT])) as { [P in K[number]]: typeof COUNT },
    additionalProperties: false,
  }) as const;
