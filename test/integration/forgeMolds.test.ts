import { randomUUID } from 'node:crypto';
import { useForgeSuite } from '../support/forgeRuns';
import { sessionToken } from '../support/harness';

// Molds through HTTP: validation, publication, visibility, versions.

const forge = useForgeSuite();
const { call, createMold } = forge;
let run: string;
let writer: string;
let viewer: string;
beforeAll(() => ({ run, writer, viewer } = forge.suite));

const slug = (name: string) => `${name}-${randomUUID().slice(0, 6)}`;

describe('molds', () => {
  test('a slug is unique per tenant; the same slug in another tenant is fine', async () => {
    const mold = await createMold({});
    expect((await call(writer, 'POST', '/forge/molds', { slug: mold.slug, name: 'again' })).status).toBe(409);
    const other = (await sessionToken({ tenant: `forge-other-${run}`, email: 'dev@other.test', roles: ['admin'] }))
      .token;
    expect((await call(other, 'POST', '/forge/molds', { slug: mold.slug, name: 'theirs' })).status).toBe(201);
  });

  test('parameter and action definitions are validated with per-field details', async () => {
    const badParameters = [
      { name: 'env', type: 'select' },
      { name: 'count', type: 'number', default: 'three' },
      { name: 'count', type: 'string' },
    ];
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: badParameters,
      actions: [{ name: 'call', type: 'api-call', config: { method: 'FETCH' } }],
    });
    expect(res.status).toBe(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['body.actions.0.config.url']));
    const rules = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: badParameters,
    });
    expect(rules.status).toBe(400);
    expect(rules.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'body.parameters.0.options', message: 'a select parameter needs options' },
        { field: 'body.parameters.1.default', message: 'default must be a number' },
        { field: 'body.parameters', message: 'parameter "count" is defined more than once' },
      ]),
    );
  });

  test('config is required for api-call, script and vcs-host-a-action (not approval); an api-call URL must be absolute http(s)', async () => {
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      actions: [
        { name: 'call', type: 'api-call' },
        { name: 'build', type: 'script' },
        { name: 'host', type: 'vcs-host-a-action' },
        { name: 'gate', type: 'approval' },
      ],
    });
    expect(res.status).toBe(400);
    const missing = res.body.error.details.filter(
      (d: { message: string }) => d.message === "must have required property 'config'",
    );
    expect(missing.map((d: { field: string }) => d.field)).toEqual([
      'body.actions.0.config',
      'body.actions.1.config',
      'body.actions.2.config',
    ]);
    const relative = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      actions: [{ name: 'call', type: 'api-call', config: { url: '/hooks' } }],
    });
    expect(relative.status).toBe(400);
    expect(relative.body.error.details).toEqual([
      {
        field: 'body.actions.0.config.url',
        message: 'must be an absolute http(s) URL or begin with a ${{ parameters.name }} reference',
      },
    ]);
  });

  test('a reference to a parameter the mold does not define is a 400 on create and on an update that drops it', async () => {
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters: [{ name: 'service', type: 'string' }],
      actions: [{ name: 'host', type: 'vcs-host-a-action', config: { path: '/repos/${{ parameters.sevice }}' } }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { field: 'body.actions.0.config.path', message: 'refers to "sevice", which is not a parameter of this mold' },
    ]);
    const mold = await createMold({
      parameters: [{ name: 'service', type: 'string' }],
      actions: [
        { name: 'call', type: 'api-call', config: { url: `http://hooks.example.test/\${{ parameters.service }}` } },
      ],
    });
    const update = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { parameters: [] });
    expect(update.status).toBe(400);
    expect(update.body.error.details).toEqual([
      { field: 'body.actions.0.config.url', message: 'refers to "service", which is not a parameter of this mold' },
    ]);
  });

  test('a ${{ }} reference inside script text is a 400 on create and on update, pointing to $PARAM_<NAME>; the variable itself is fine', async () => {
    const parameters = [{ name: 'service', type: 'string' }];
    const detail = {
      field: 'body.actions.0.config.script',
      message:
        'parameters reach scripts as $PARAM_<NAME> environment variables, not through ${{ }} references: write "$PARAM_SERVICE"',
    };
    const templated = [
      { name: 'build', type: 'script', config: { script: 'make deploy SERVICE=${{ parameters.service }}' } },
    ];
    const res = await call(writer, 'POST', '/forge/molds', {
      slug: slug('bad'),
      name: 'bad',
      parameters,
      actions: templated,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([detail]);
    const mold = await createMold({
      parameters,
      actions: [{ name: 'build', type: 'script', config: { script: 'make deploy SERVICE="$PARAM_SERVICE"' } }],
    });
    const update = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { actions: templated });
    expect(update.status).toBe(400);
    expect(update.body.error.details).toEqual([detail]);
    expect((await call(writer, 'GET', `/forge/molds/${mold.slug}`)).body.version).toBe(1);
  });

  test('list filters published=true/false and visibility=all; an unpublish hides the mold from readers again', async () => {
    const category = `pub-${run}`;
    const draft = await createMold({ category });
    const live = await createMold({ category });
    expect((await call(writer, 'POST', `/forge/molds/${live.slug}/publish`)).status).toBe(200);
    const slugs = async (token: string, filter: string) =>
      (await call(token, 'GET', `/forge/molds?category=${category}&${filter}`)).body.molds.map(
        (m: { slug: string }) => m.slug,
      );
    expect(await slugs(writer, 'published=true')).toEqual([live.slug]);
    expect(await slugs(writer, 'published=false')).toEqual([draft.slug]);
    expect(await slugs(writer, 'visibility=all')).toEqual([draft.slug, live.slug].sort());
    expect(await slugs(viewer, 'visibility=all')).toEqual([live.slug]);
    expect(await slugs(viewer, 'published=false')).toEqual([]);

    const unpublished = await call(writer, 'POST', `/forge/molds/${live.slug}/unpublish`);
    expect(unpublished.body).toEqual(expect.objectContaining({ published: false }));
    expect(await slugs(viewer, 'visibility=all')).toEqual([]);
    expect((await call(viewer, 'GET', `/forge/molds/${live.slug}`)).status).toBe(404);
  });

  test('readers see published molds only; writers see drafts; publishing shows a mold to readers', async () => {
    const mold = await createMold({ category: `cat-${run}` });
    expect((await call(viewer, 'GET', `/forge/molds/${mold.slug}`)).status).toBe(404);
    expect((await call(writer, 'GET', `/forge/molds?category=cat-${run}`)).body.molds).toHaveLength(1);
    expect((await call(viewer, 'GET', `/forge/molds?category=cat-${run}`)).body.molds).toHaveLength(0);
    const published = await call(writer, 'POST', `/forge/molds/${mold.slug}/publish`);
    expect(published.body).toEqual(expect.objectContaining({ published: true, version: 1 }));
    const list = await call(viewer, 'GET', `/forge/molds?category=cat-${run}`);
    expect(list.body.molds.map((m: { slug: string }) => m.slug)).toEqual([mold.slug]);
    expect(list.body.pagination).toEqual({ total_count: 1, next_cursor: '', has_more: false });
    expect(
      (await call(writer, 'GET', `/forge/molds?category=cat-${run}&visibility=unpublished`)).body.molds,
    ).toHaveLength(0);
    expect((await call(viewer, 'POST', `/forge/molds/${mold.slug}/unpublish`)).status).toBe(403);
  });

  test('an update bumps the version; delete needs forge:admin and removes the mold', async () => {
    const mold = await createMold({});
    const updated = await call(writer, 'PUT', `/forge/molds/${mold.slug}`, { description: 'changed' });
    expect(updated.body).toEqual(expect.objectContaining({ description: 'changed', version: 2 }));
    const editor = (await sessionToken({ tenant: `forge-${run}`, email: 'editor@forge.test', roles: ['editor'] }))
      .token;
    expect((await call(editor, 'DELETE', `/forge/molds/${mold.slug}`)).status).toBe(403);
    expect((await call(writer, 'DELETE', `/forge/molds/${mold.slug}`)).status).toBe(204);
    expect((await call(writer, 'GET', `/forge/molds/${mold.slug}`)).status).toBe(404);
  });
});
