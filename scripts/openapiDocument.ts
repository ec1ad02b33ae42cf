// Prints the OpenAPI document the API serves at /api/v1/openapi.json, built from the route
// declarations alone: no API, database or other service is needed.
import { buildOpenApiDocument } from '../api/openapi/document';
import { withApiReference } from '../api/openapi/routes';
import { apiRoutes } from '../api/routes';

process.stdout.write(`${JSON.stringify(buildOpenApiDocument(withApiReference(apiRoutes)), null, 2)}\n`);
