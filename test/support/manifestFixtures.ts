// Manifest documents the unit and integration tests share. Line numbers matter: tests assert
// the positions of problems and warnings in these texts.

/** A manifest of our format, with every field; `serviceId` names it. */
export function fullManifest(serviceId: string, extra: { relations?: string } = {}): string {
  return `apiVersion: shipyard.dev/v1
kind: Entity
metadata:
  name: ${serviceId} service
  service_id: ${serviceId}
  description: Takes payments from every storefront and settles them nightly.
  tags: [payments, java]
  links:
    - title: Repository
      url: https://git.example.com/${serviceId}
    - title: Runbook
      url: https://wiki.example.com/${serviceId}/runbook
      icon: book
spec:
  type: service
  lifecycle: production
  owner: team-payments
  tier: tier1
${extra.relations ?? ''}  readme:
    format: markdown
    content: |
      # ${serviceId}
      ${'Explains how payments flow from the storefront through the ledger to the bank. '.repeat(4)}
`;
}

/** The least a manifest needs: a name and a type. */
export const minimalManifest = (serviceId: string, type = 'service') => `apiVersion: shipyard.dev/v1
kind: Entity
metadata:
  name: ${serviceId}
spec:
  type: ${type}
`;

/**
 * A Backstage descriptor of every kind the conversion knows, each mapped field once, and the
 * fields without an equivalent. `prefix` keeps names unique per test run. The Component comes
 * first and names entities that come later (its system, API and resource).
 */
export function backstageDescriptor(prefix: string): string {
  return `apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: ${prefix}-web
  title: Artist Web
  description: The web app artists use to manage their releases and royalties.
  annotations:
    backstage.io/techdocs-ref: dir:.
  labels:
    team: artists
  tags: [web, react]
  links:
    - url: https://web.example.com
      title: Site
      icon: dashboard
      type: website
spec:
  type: website
  lifecycle: beta
  owner: group:default/artists
  system: system:default/${prefix}-portal
  subcomponentOf: component:${prefix}-shell
  dependsOn: [resource:default/${prefix}-db]
  providesApis: [api:${prefix}-api]
  consumesApis: [${prefix}-search-api]
---
apiVersion: backstage.io/v1alpha1
kind: API
metadata:
  name: ${prefix}-api
  description: Artist API
spec:
  type: openapi
  lifecycle: production
  owner: user:default/jdoe
  system: ${prefix}-portal
  definition: |
    openapi: 3.0.0
---
apiVersion: backstage.io/v1alpha1
kind: API
metadata:
  name: ${prefix}-search-api
spec:
  type: grpc
  lifecycle: experimental
  owner: artists
---
apiVersion: backstage.io/v1alpha1
kind: System
metadata:
  name: ${prefix}-portal
spec:
  owner: artists
  domain: music
---
apiVersion: backstage.io/v1alpha1
kind: Resource
metadata:
  name: ${prefix}-db
  namespace: data
spec:
  type: database
  owner: group:dba
  system: ${prefix}-portal
  dependencyOf: [component:${prefix}-web]
---
apiVersion: backstage.io/v1alpha1
kind: Group
metadata:
  name: artists
spec:
  type: team
  children: []
---
apiVersion: backstage.io/v1alpha1
kind: Location
metadata:
  name: ${prefix}-location
spec:
  targets: [./other.yaml]
`;
}
