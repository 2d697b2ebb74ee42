import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { providersMarkedWith } from '../marked-providers';
import type { MatchReconciliationOptions } from '@matchplane/matches';
import {
  RECONCILES_LIFECYCLE,
  type ReconciliationContribution,
  type ReconciliationStage,
} from '@matchplane/persistence';
import type { TicketReconciliationOptions } from '@matchplane/tickets';

/** What the app's configuration gives every owner's stages: each owner's own knobs, together. */
export type MaintenanceReconciliationOptions = TicketReconciliationOptions &
  MatchReconciliationOptions;

/** A contribution of any owner the app imports: each takes its own part of the options. */
type AnyContribution = ReconciliationContribution<MaintenanceReconciliationOptions>;

/** The options the contributions' stages are built with (the maintenance app's). */
export const RECONCILIATION_OPTIONS = Symbol('RECONCILIATION_OPTIONS');

/**
 * Every `@ReconcilesLifecycle()` provider of the modules the maintenance app imports (found the way
 * the dispatcher finds its outbox subscribers), asked for its stages once every provider exists
 * (at module init: during construction some may be placeholders still).
 */
@Injectable()
export class ReconciliationStages implements OnModuleInit {
  private readonly logger = new Logger(ReconciliationStages.name);
  private assembled?: readonly ReconciliationStage[];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    @Inject(RECONCILIATION_OPTIONS) private readonly options: MaintenanceReconciliationOptions,
  ) {}

  /** Throws (stopping the app at start-up) when a stage or case is contributed twice, or none is. */
  onModuleInit(): void {
    this.assembled = assembleReconciliationStages(this.found(), this.options, this.logger);
  }

  get stages(): readonly ReconciliationStage[] {
    if (!this.assembled) throw new Error('reconciliation stages are read before module init');
    return this.assembled;
  }

  private found(): AnyContribution[] {
    return providersMarkedWith(this.discovery, this.reflector, RECONCILES_LIFECYCLE);
  }
}

/**
 * The contributions' stages in the order a round takes them, checked once: a stage or case named
 * twice is a start-up error, never a pass that counts two things as one.
 */
export function assembleReconciliationStages(
  contributions: readonly AnyContribution[],
  options: MaintenanceReconciliationOptions,
  logger?: Logger,
): ReconciliationStage[] {
  const stages = contributions
    .flatMap((contribution) => contribution.reconciliationStages(options))
    .sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
  const problems: string[] = [];
  const names = new Set<string>();
  const cases = new Set<string>();
  for (const stage of stages) {
    if (names.has(stage.name)) problems.push(`stage ${stage.name} is contributed twice`);
    names.add(stage.name);
    for (const name of stage.cases) {
      if (cases.has(name)) problems.push(`case ${name} is counted by two stages`);
      cases.add(name);
    }
  }
  if (stages.length === 0) problems.push('no module contributes a reconciliation stage');
  if (problems.length > 0) throw new Error(`reconciliation: ${problems.join('; ')}`);
  logger?.log(`reconciliation stages: ${stages.map((stage) => stage.name).join(', ')}`);
  return stages;
}
