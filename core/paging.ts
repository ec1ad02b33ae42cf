// The window of rows a list query reads; api/http/pagination.ts turns each spec shape into one.

/** Rows `offset` to `offset + limit - 1` of a filtered, ordered result set. */
export interface OffsetWindow {
  limit: number;
  offset: number;
}
