import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** The OpenAPI 3 document, generated from the same DTO classes that validate every request. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Licensing API')
    .setDescription(
      'Signed software licenses, products and key pairs, verification and revocation. Every route is ' +
        'served under both /api/v1 and /v1. Errors are RFC 9457 problem details (application/problem+json).',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key: lk_...' })
    .build();
  return SwaggerModule.createDocument(app, config);
}

export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
