import { Module } from '@nestjs/common';
import { AuditWriter } from './audit.writer';

/** Owns `audit_log`: who replayed, discarded or otherwise changed something by hand, and why. */
@Module({ providers: [AuditWriter], exports: [AuditWriter] })
export class AuditModule {}
