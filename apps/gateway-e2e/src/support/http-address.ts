import { INestApplication } from '@nestjs/common';

/** `http://127.0.0.1:<port>` of an application's HTTP server (a service's health port, a gateway). */
export function httpUrlOf(app: INestApplication): string {
  const address = (app.getHttpServer() as { address(): unknown }).address();
  if (typeof address !== 'object' || address === null || !('port' in address)) {
    throw new Error('the application is not listening');
  }
  return `http://127.0.0.1:${String(address.port)}`;
}
