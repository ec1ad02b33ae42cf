/** A UUID in its canonical text form: how a path or a CLI argument tells an id from a slug or a name. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * SQL: `column` (text) as a uuid when it holds one, else null. Joining on it (`b.id = …`) uses
 * the uuid key's index, where `b.id::text = column` cannot; a role key is a bundle's id or a
 * built-in role's name.
 */
export const uuidOrNullSql = (column: string) => `case when ${column} ~* '${UUID.source}' then ${column}::uuid end`;
