import { parseEntityRef, serviceIdOfName } from '../../core/manifests/backstage';
import { readManifestDocuments as readWithLimits } from '../../core/manifests/manifestRules';
import { backstageDescriptor } from '../support/manifestFixtures';
import { inputLimitsFrom } from '../../core/limitsConfig';
import type { ManifestType } from '../../core/catalog/types';

/** The default limits, as an unconfigured process has them. */
const LIMITS = inputLimitsFrom({});
const readManifestDocuments = (text: string, format?: ManifestType) => readWithLimits(text, format, LIMITS);

const notes = (list: { path: string; line: number; message: string }[]) =>
  list.map(({ path, line, message }) => `${line} ${path}: ${message}`);

const documents = readManifestDocuments(backstageDescriptor('x'));
const [component, api, searchApi, system, resource, group, location] = documents;

test('every document of the descriptor is read as Backstage’s, in order, with its kind and outcome', () => {
  expect(documents.map((d) => [d.format, d.kind, d.outcome])).toEqual([
    ['backstage', 'Component', 'accepted'],
    ['backstage', 'API', 'accepted'],
    ['backstage', 'API', 'accepted'],
    ['backstage', 'System', 'accepted'],
    ['backstage', 'Resource', 'accepted'],
    ['backstage', 'Group', 'skipped'],
    ['backstage', 'Location', 'skipped'],
  ]);
  expect(documents.flatMap((d) => d.problems)).toEqual([]);
});

test('a Component maps its title, description, tags, links, type and owner, and its relations from refs', () => {
  expect(component.manifest).toEqual({
    apiVersion: 'shipyard.dev/v1',
    kind: 'Entity',
    metadata: {
      name: 'Artist Web',
      service_id: 'x-web',
      description: 'The web app artists use to manage their releases and royalties.',
      tags: ['web', 'react'],
      links: [{ title: 'Site', url: 'https://web.example.com', icon: 'dashboard' }],
    },
    spec: {
      type: 'website',
      owner: 'artists',
      relations: [
        { type: 'depends_on', target: 'x-db' },
        { type: 'provides_api', target: 'x-api' },
        { type: 'consumes_api', target: 'x-search-api' },
        { type: 'part_of', target: 'x-portal' },
      ],
    },
  });
});

test('what a Component has no equivalent for is a warning at its line: annotations, labels, link type, lifecycle, subcomponentOf', () => {
  expect(notes(component.warnings)).toEqual([
    '7 metadata.annotations: annotations have no equivalent; not kept',
    '9 metadata.labels: labels have no equivalent; not kept',
    '16 metadata.links[0].type: has no equivalent; not kept',
    '19 spec.lifecycle: "beta" is not one of experimental, development, production, deprecated; not kept',
    '22 spec.subcomponentOf: sub-components have no equivalent (an entity is part_of a system); not kept',
  ]);
});

test('an API is type api with its format as a tag; its definition and a user owner are warnings', () => {
  expect(api.manifest).toEqual({
    apiVersion: 'shipyard.dev/v1',
    kind: 'Entity',
    metadata: { name: 'x-api', service_id: 'x-api', description: 'Artist API', tags: ['openapi'] },
    spec: { type: 'api', lifecycle: 'production', owner: 'jdoe', relations: [{ type: 'part_of', target: 'x-portal' }] },
  });
  expect(notes(api.warnings)).toEqual([
    '35 spec.owner: a user reference: owner is kept as "jdoe" (ours names a team or an email)',
    '37 spec.definition: API definitions are not stored in the catalog; not kept',
  ]);
  expect(searchApi.manifest?.spec).toEqual({ type: 'api', lifecycle: 'experimental', owner: 'artists' });
  expect(searchApi.warnings).toEqual([]);
});

test('a System is a platform (its domain a warning); a Resource is infrastructure with its type as a tag', () => {
  expect(system.manifest?.spec).toEqual({ type: 'platform', owner: 'artists' });
  expect(notes(system.warnings)).toEqual(['55 spec.domain: domains have no equivalent; not kept']);
  expect(resource.manifest).toMatchObject({
    metadata: { service_id: 'x-db', tags: ['database'] },
    spec: { type: 'infrastructure', owner: 'dba', relations: [{ type: 'part_of', target: 'x-portal' }] },
  });
  expect(notes(resource.warnings)).toEqual([
    '61 metadata.namespace: namespaces have no equivalent: entities are named by service_id alone',
    '66 spec.dependencyOf: relations are declared by the entity that depends: write dependsOn there; not kept',
  ]);
});

test('a Group and an unknown kind are skipped with a warning, never dropped silently', () => {
  expect(group.manifest).toBeUndefined();
  expect(notes(group.warnings)).toEqual([
    '69 kind: teams are managed under /teams and by the identity provider; the Group is not imported',
  ]);
  expect(notes(location.warnings)).toEqual([
    '77 kind: kind "Location" has no equivalent in the catalog; the document is not imported',
  ]);
});

test('entity references lose their kind and default namespace; another namespace is a warning', () => {
  expect(parseEntityRef('component:default/foo')).toEqual({ kind: 'component', namespace: 'default', name: 'foo' });
  expect(parseEntityRef('api:foo')).toEqual({ kind: 'api', namespace: undefined, name: 'foo' });
  expect(parseEntityRef('team/foo')).toEqual({ kind: undefined, namespace: 'team', name: 'foo' });
  expect(parseEntityRef('a:b:c')).toBeUndefined();
  expect(serviceIdOfName('Artist_Web.v2')).toBe('artist-web-v2');
  const [other] = readManifestDocuments(
    'apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {name: Web_App}\nspec:\n  type: gateway\n  dependsOn: [component:other/db, 42]\n',
  );
  expect(other.outcome).toBe('rejected');
  expect(notes(other.problems)).toEqual([
    '6 spec.dependsOn[1]: must be an entity reference such as component:default/name',
  ]);
  expect(notes(other.warnings)).toEqual([
    '3 metadata.name: becomes service_id "web-app"',
    '5 spec.type: type "gateway" is read as "service"',
    '6 spec.dependsOn[0]: namespace "other" has no equivalent: the reference names "db"',
  ]);
});

test('a converted manifest is validated like ours, each problem at the Backstage field it came from', () => {
  const [document] = readManifestDocuments(
    'apiVersion: backstage.io/v1alpha1\nkind: API\nmetadata:\n  name: pay-api\n  description: 12345\n  links:\n    - url: not a url\nspec: {type: openapi}\n',
  );
  expect(document.outcome).toBe('rejected');
  expect(document.problems.map(({ path, line, column }) => [path, line, column])).toEqual([
    ['metadata.description', 5, 16],
    ['metadata.links[0].url', 7, 12],
  ]);
});

test('without metadata.name or kind a descriptor is rejected at the place that lacks it', () => {
  const [noName, noKind] = readManifestDocuments(
    'apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {title: Web}\n---\napiVersion: backstage.io/v1alpha1\nmetadata: {name: web}\n',
  );
  expect(notes(noName.problems)).toEqual(['3 metadata.name: is required']);
  expect(notes(noKind.problems)).toEqual(['5 kind: is required: one of Component, API, System, Resource, Group']);
});
