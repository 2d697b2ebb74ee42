export * from './rule-variables';
export * from './rule-set.store';
export * from './active-rule-set';
export * from './rule-sets.module';
