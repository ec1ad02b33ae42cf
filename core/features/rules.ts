/** A flag as it applies to one tenant: the tenant's override when it has one, else the flag's default. */
export const evaluateFlag = (flag: { enabled: boolean; override: boolean | null }): boolean =>
  flag.override ?? flag.enabled;
