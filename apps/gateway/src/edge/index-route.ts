import { FastifyInstance } from 'fastify';
import { API_PREFIXES } from './openapi';

/**
 * `GET /`: where everything is, without an API key, so that a first request to the bare address
 * points at the documentation and the console rather than answering 401. Not an API operation (no prefix, not in
 * the OpenAPI document).
 */
export function registerIndexRoute(fastify: FastifyInstance): void {
  fastify.get('/', async () => ({
    name: 'Licensing API',
    api: `/${API_PREFIXES[0]}`,
    api_aliases: API_PREFIXES.slice(1).map((prefix) => `/${prefix}`),
    docs: '/docs',
    console: '/console/',
    openapi: '/openapi.json',
    openapi_yaml: '/openapi.yaml',
    authentication: 'Authorization: Bearer <API key>',
    get_an_api_key: 'npm run operator -- keys create --org <organization>',
  }));
}
