import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';

/** The ceiling bench:api compares with: one NestJS JSON route on the same adapter, nothing else. */
@Controller()
class BareController {
  @Get('bare')
  bare(): { ok: true; at: number } {
    return { ok: true, at: Date.now() };
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

async function main(): Promise<void> {
  const port = Number(process.argv[2] ?? 0);
  const app = await NestFactory.create<NestFastifyApplication>(BareModule, new FastifyAdapter(), {
    logger: false,
  });
  await app.listen(port, '127.0.0.1');
  process.stdout.write('bare-nest ready\n');
}

void main();
