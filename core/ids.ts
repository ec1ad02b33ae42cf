/** A UUID in its canonical text form: how a path or a CLI argument tells an id from a slug or a name. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The column a reference names: `id` when it is a uuid, else `other` (a slug, a name, a service id). */
export const idOr = <Other extends string>(ref: string, other: Other): 'id' | Other => (UUID.test(ref) ? 'id' : other);

/**
 * SQL: `column` (text) as a uuid when it holds one, else null. Joining on it (`b.id = …`) uses
 * the uuid key's index, where `b.id::text = column` cannot; a role key is a bundle's id or a
 * built-in role's name.
 */
export const uuidOrNullSql = (column: string) => `case when ${column} ~* '${UUID.source}' then ${column}::uuid end`;

/**
 * A readable id from a name: "Platform Team (EU)" → "platform-team-eu"; '' when nothing usable
 * is left. Team slugs and service ids both start from it.
 */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/, '');
}
