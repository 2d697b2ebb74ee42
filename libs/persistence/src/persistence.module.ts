import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { databaseTarget, type DatabaseConfig } from '@matchplane/config';
import { dataSourceOptions, initializeWithBackoff, type DataSourceExtras } from './data-source';

@Module({})
export class PersistenceModule {
  /** The app's single DataSource, which waits for PostgreSQL with backoff rather than exiting. */
  static forRoot(config: DatabaseConfig, extras: DataSourceExtras = {}): DynamicModule {
    const logger = new Logger('Persistence');
    return {
      module: PersistenceModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(config, extras),
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('PersistenceModule: no data source options');
            return initializeWithBackoff(
              new DataSource(options),
              logger,
              Number.POSITIVE_INFINITY,
              databaseTarget(config),
            );
          },
        }),
      ],
    };
  }

  /**
   * For a one-shot command that opened its own DataSource (and fails fast instead of waiting):
   * the same providers as forRoot, so the services it composes find what they do in an app.
   */
  static forDataSource(dataSource: DataSource): DynamicModule {
    return {
      module: PersistenceModule,
      global: true,
      providers: [{ provide: DataSource, useValue: dataSource }],
      exports: [DataSource],
    };
  }
}
