/** A UUID in its canonical text form: how a path or a CLI argument tells an id from a slug or a name. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
