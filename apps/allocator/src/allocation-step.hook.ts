import { Inject, Injectable, Logger } from '@nestjs/common';
import { AllocatorConfig, type AllocationStep } from './allocator.config';

/**
 * Called after each allocation step has taken effect (DI token). The default does nothing unless
 * ALLOCATOR_EXIT_AFTER_STEP names the step: then the process exits on the spot, as a crash there
 * would, which is how the crash-recovery tests stop the allocator between any two steps.
 */
@Injectable()
export class AllocationStepHook {
  private readonly logger = new Logger(AllocationStepHook.name);

  constructor(@Inject(AllocatorConfig) private readonly config: AllocatorConfig) {}

  async reached(step: AllocationStep, matchId: string): Promise<void> {
    if (this.config.ALLOCATOR_EXIT_AFTER_STEP !== step) return Promise.resolve();
    this.logger.warn(
      `ALLOCATOR_EXIT_AFTER_STEP=${step}: exiting after that step of match ${matchId}`,
    );
    process.exit(75);
  }
}
