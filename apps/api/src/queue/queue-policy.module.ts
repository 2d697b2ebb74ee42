import { Module } from '@nestjs/common';
import { QueuePolicy } from './queue-policy';

@Module({ providers: [QueuePolicy], exports: [QueuePolicy] })
export class QueuePolicyModule {}
