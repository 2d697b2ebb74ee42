export * from './contract-paths';
export * from './public-route.decorator';
