// Timestamps leave the stores as ISO 8601 strings, the form every response schema declares.
// (pg returns Dates; a value built elsewhere may already be a string, which `new Date` accepts.)

export const toIso = (value: Date | string): string => new Date(value).toISOString();

export const toIsoOrNull = (value: Date | string | null): string | null => (value ? toIso(value) : null);
