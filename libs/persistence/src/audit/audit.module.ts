import { Module } from '@nestjs/common';
import { AuditReader } from './audit.reader';
import { AuditWriter } from './audit.writer';

/** Owns `audit_log`: who replayed, discarded or otherwise changed something by hand, and why. */
@Module({ providers: [AuditWriter, AuditReader], exports: [AuditWriter, AuditReader] })
export class AuditModule {}
