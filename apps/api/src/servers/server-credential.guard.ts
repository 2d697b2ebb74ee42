import {
  createParamDecorator,
  Injectable,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import {
  AllocationStore,
  hashWorkloadCredential,
  LIVE_ALLOCATION_STATES,
  ServerHeartbeatStore,
  type AllocationRecord,
} from '@matchplane/allocation';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

export interface ServerRequest extends FastifyRequest {
  allocation?: AllocationRecord;
}

const CHALLENGE = 'Bearer realm="matchplane-servers"';

const RECORDS_HEARTBEAT = 'matchplane:records-server-heartbeat';

/**
 * The route is a heartbeat: the guard's credential check is the heartbeat's own write (one
 * statement, ServerHeartbeatStore.record), so a live server's beat costs nothing more.
 */
export const RecordsServerHeartbeat = (): MethodDecorator => SetMetadata(RECORDS_HEARTBEAT, true);

const ANSWERS_ENDED_ALLOCATION = 'matchplane:answers-ended-allocation';

/**
 * The route answers for a match that has ended too (the result report: an identical repeat
 * replays, a conflicting one is a 409 naming the conflict), so the guard admits the credential
 * of an ended allocation, still bound to its own server id. The route must refuse anything that
 * would change a match through an ended allocation ({@link refuseEndedAllocation}).
 */
export const AnswersEndedAllocation = (): MethodDecorator =>
  SetMetadata(ANSWERS_ENDED_ALLOCATION, true);

/** 401 ALLOCATION_ENDED unless the allocation is live. */
export function refuseEndedAllocation(allocation: AllocationRecord): void {
  if (LIVE_ALLOCATION_STATES.includes(allocation.state)) return;
  throw new CodedError(
    ErrorCode.ALLOCATION_ENDED,
    `The workload credential's allocation is ${allocation.state}: match ${allocation.matchId} is over`,
    { challenge: CHALLENGE },
  );
}

/**
 * Game-server routes: `Authorization: Bearer <workload credential>`, the secret the allocator
 * handed this server. Missing or unknown: 401. Its allocation released or failed: 401
 * ALLOCATION_ENDED (the match is over and the server may already serve another match under a
 * new credential), except on a route marked {@link AnswersEndedAllocation}. A credential used for another server's id: 403 (it is bound to the one server
 * id its allocation names). The credential is looked up by its SHA-256, which only its holder
 * can produce.
 */
@Injectable()
export class ServerCredentialGuard implements CanActivate {
  constructor(
    private readonly dataSource: DataSource,
    private readonly allocations: AllocationStore,
    private readonly heartbeats: ServerHeartbeatStore,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ServerRequest>();
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) {
      throw new CodedError(ErrorCode.UNAUTHENTICATED, 'A server workload credential is required', {
        challenge: CHALLENGE,
      });
    }
    const hash = hashWorkloadCredential(match[1]);
    const params = request.params as Record<string, string | undefined>;
    if (this.reflector.get<boolean>(RECORDS_HEARTBEAT, context.getHandler()) && params.id) {
      const beaten = await this.heartbeats.record(this.dataSource.manager, hash, params.id);
      // Otherwise the lookup below says why (unknown, ended, another server's id).
      if (beaten) return this.admit(request, beaten);
    }
    const allocation = await this.allocations.byCredentialHash(this.dataSource.manager, hash);
    if (!allocation) {
      throw new CodedError(ErrorCode.UNAUTHENTICATED, 'The workload credential is not valid', {
        challenge: CHALLENGE,
      });
    }
    if (!this.reflector.get<boolean>(ANSWERS_ENDED_ALLOCATION, context.getHandler())) {
      refuseEndedAllocation(allocation);
    }
    if (params.id !== allocation.serverId) {
      throw new CodedError(
        ErrorCode.FORBIDDEN,
        'The workload credential belongs to another server',
      );
    }
    return this.admit(request, allocation);
  }

  private admit(request: ServerRequest, allocation: AllocationRecord): true {
    request.allocation = allocation;
    return true;
  }
}

/** The allocation behind the credential of a route guarded by {@link ServerCredentialGuard}. */
export const CurrentAllocation = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AllocationRecord => {
    const allocation = context.switchToHttp().getRequest<ServerRequest>().allocation;
    if (!allocation)
      throw new Error('CurrentAllocation used on a route without ServerCredentialGuard');
    return allocation;
  },
);
