import { Module } from '@nestjs/common';
import { AllocationModule } from '@matchplane/allocation';
import { MatchesModule } from '@matchplane/matches';
import { TicketsModule } from '@matchplane/tickets';
import { AssignmentsController } from './assignments.controller';

/** The player's side of joining: its assignment (server endpoint and join token). */
@Module({
  imports: [AllocationModule, MatchesModule, TicketsModule],
  controllers: [AssignmentsController],
})
export class AssignmentsModule {}
