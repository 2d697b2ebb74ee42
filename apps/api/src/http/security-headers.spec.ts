import { Controller, Get } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { loadConfig } from '@matchplane/config';
import { LoggingModule } from '@matchplane/observability';
import { ApiConfig } from '../api.config';
import { configureApi, createApiAdapter } from './configure-api';

@Controller()
class PageController {
  @Get('page')
  page(): string {
    return '<form method="post"></form>';
  }
}

/** The API's answer headers with OPERATOR_CONSOLE_PLAIN_HTTP as given (unset: the default). */
async function headersWith(plainHttp?: string): Promise<Record<string, unknown>> {
  const config = loadConfig(ApiConfig, {
    LOG_LEVEL: 'silent',
    ...(plainHttp === undefined ? {} : { OPERATOR_CONSOLE_PLAIN_HTTP: plainHttp }),
  });
  const moduleRef = await Test.createTestingModule({
    // As every API has it (ServiceRuntimeModule): configureApi hooks the request log in.
    imports: [LoggingModule.forRoot(config, 'api')],
    controllers: [PageController],
    providers: [{ provide: ApiConfig, useValue: config }],
  }).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createApiAdapter(config), {
    bodyParser: false,
    logger: false,
  });
  configureApi(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  try {
    return (await app.inject({ method: 'GET', url: '/page' })).headers;
  } finally {
    await app.close();
  }
}

describe('security headers', () => {
  it('send browsers to https by default (upgrade-insecure-requests, HSTS)', async () => {
    const headers = await headersWith();
    expect(headers['content-security-policy']).toContain('upgrade-insecure-requests');
    expect(headers['strict-transport-security']).toMatch(/max-age=\d+/);
  });

  it('leave a console on plain HTTP usable when OPERATOR_CONSOLE_PLAIN_HTTP=true, and keep the rest', async () => {
    const headers = await headersWith('true');
    expect(headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(headers['content-security-policy']).toContain("default-src 'self'");
    expect(headers['strict-transport-security']).toBeUndefined();
    expect(headers['x-content-type-options']).toBe('nosniff');
  });

  it('refuses a value that is not true or false', () => {
    expect(() => loadConfig(ApiConfig, { OPERATOR_CONSOLE_PLAIN_HTTP: 'yes' })).toThrow(
      /OPERATOR_CONSOLE_PLAIN_HTTP must be true or false/,
    );
  });
});
