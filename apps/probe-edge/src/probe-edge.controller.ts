import { Controller, Get } from '@nestjs/common';
import { ProbeEdge } from './probe-edge.service';

/** Liveness and readiness are the same for a stateless process: it answers. */
@Controller()
export class EdgeHealthController {
  constructor(private readonly edge: ProbeEdge) {}

  @Get(['live', 'health'])
  live(): { status: 'ok'; region: string } {
    return { status: 'ok', region: this.edge.region };
  }
}
