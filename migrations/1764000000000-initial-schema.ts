import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The schema of DESIGN.md's data model. Checks tie each state to the columns that state needs
 * (a terminal ticket or match has finished_at, a published outbox row has published_at, ...),
 * because retention and delivery select on those columns: a row missing one would never be
 * purged or delivered.
 */
export class InitialSchema1764000000000 implements MigrationInterface {
  name = 'InitialSchema1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE players (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        device_secret_hash bytea UNIQUE,
        identity_provider text,
        external_subject text,
        rating double precision NOT NULL DEFAULT 1500,
        rating_deviation double precision NOT NULL DEFAULT 350,
        no_show_count integer NOT NULL DEFAULT 0 CONSTRAINT players_no_show_count_non_negative CHECK (no_show_count >= 0),
        cooldown_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT players_identity_unique UNIQUE (identity_provider, external_subject),
        -- UNIQUE ignores rows with a NULL part, so a half-set identity would escape it.
        CONSTRAINT players_identity_complete CHECK ((identity_provider IS NULL) = (external_subject IS NULL))
      )`);

    await queryRunner.query(`
      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        token_hash bytea NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX sessions_expires_at_idx ON sessions (expires_at)`);
    await queryRunner.query(`CREATE INDEX sessions_player_id_idx ON sessions (player_id)`);

    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        key text NOT NULL CONSTRAINT idempotency_keys_key_length CHECK (length(key) BETWEEN 1 AND 255),
        request_hash bytea NOT NULL,
        route text NOT NULL,
        state text NOT NULL CONSTRAINT idempotency_keys_state_valid CHECK (state IN ('in_progress', 'completed')),
        response_status integer,
        response_body jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        PRIMARY KEY (player_id, key),
        -- A completed key without its response could not answer the replay it exists for.
        CONSTRAINT idempotency_keys_completed_has_response
          CHECK (state <> 'completed' OR (response_status IS NOT NULL AND completed_at IS NOT NULL))
      )`);
    await queryRunner.query(
      `CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at)`,
    );

    await queryRunner.query(`
      CREATE TABLE probe_challenges (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        region text NOT NULL,
        nonce_hash bytea NOT NULL,
        issued_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        answered_at timestamptz,
        rtt_ms double precision
      )`);
    await queryRunner.query(
      `CREATE INDEX probe_challenges_expires_at_idx ON probe_challenges (expires_at)`,
    );
    await queryRunner.query(
      `CREATE INDEX probe_challenges_player_region_idx ON probe_challenges (player_id, region)`,
    );

    await queryRunner.query(`
      CREATE TABLE player_latencies (
        player_id uuid NOT NULL REFERENCES players (id) ON DELETE CASCADE,
        region text NOT NULL,
        samples_ms double precision[] NOT NULL,
        estimate_ms double precision NOT NULL,
        measured_at timestamptz NOT NULL,
        PRIMARY KEY (player_id, region)
      )`);

    await queryRunner.query(`
      CREATE TABLE matches (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        mode text NOT NULL,
        region text NOT NULL,
        state text NOT NULL CONSTRAINT matches_state_valid CHECK (
          state IN ('ALLOCATING', 'PROCESS_READY', 'ASSIGNMENT_READY', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED')
        ),
        revision bigint NOT NULL DEFAULT 1 CONSTRAINT matches_revision_positive CHECK (revision >= 1),
        failure_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        state_changed_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        CONSTRAINT matches_finished_iff_terminal
          CHECK ((finished_at IS NOT NULL) = (state IN ('COMPLETED', 'FAILED', 'CANCELLED')))
      )`);
    await queryRunner.query(`
      CREATE INDEX matches_live_state_idx ON matches (state, state_changed_at)
        WHERE state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`);
    await queryRunner.query(
      `CREATE INDEX matches_finished_at_idx ON matches (finished_at) WHERE finished_at IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE queue_tickets (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        player_id uuid NOT NULL REFERENCES players (id),
        mode text NOT NULL,
        state text NOT NULL CONSTRAINT queue_tickets_state_valid CHECK (
          state IN ('SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED', 'COMPLETED', 'CANCELLED', 'EXPIRED', 'FAILED')
        ),
        revision bigint NOT NULL DEFAULT 1 CONSTRAINT queue_tickets_revision_positive CHECK (revision >= 1),
        predicted_rtt jsonb NOT NULL DEFAULT '{}'::jsonb
          CONSTRAINT queue_tickets_predicted_rtt_is_object CHECK (jsonb_typeof(predicted_rtt) = 'object'),
        rating double precision NOT NULL,
        enqueued_at timestamptz NOT NULL,
        last_heartbeat_at timestamptz NOT NULL,
        -- SET NULL so that purging a finished match does not need its tickets purged first.
        match_id uuid REFERENCES matches (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        CONSTRAINT queue_tickets_matched_has_match
          CHECK (state NOT IN ('MATCHED', 'ASSIGNED', 'CONNECTED') OR match_id IS NOT NULL),
        CONSTRAINT queue_tickets_finished_iff_terminal
          CHECK ((finished_at IS NOT NULL) = (state IN ('COMPLETED', 'CANCELLED', 'EXPIRED', 'FAILED')))
      )`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX queue_tickets_one_live_per_player ON queue_tickets (player_id)
        WHERE state IN ('SEARCHING', 'MATCHED', 'ASSIGNED', 'CONNECTED')`);
    await queryRunner.query(`
      CREATE INDEX queue_tickets_searching_idx ON queue_tickets (mode, enqueued_at) WHERE state = 'SEARCHING'`);
    await queryRunner.query(`
      CREATE INDEX queue_tickets_heartbeat_idx ON queue_tickets (last_heartbeat_at) WHERE state = 'SEARCHING'`);
    await queryRunner.query(`
      CREATE INDEX queue_tickets_finished_at_idx ON queue_tickets (finished_at) WHERE finished_at IS NOT NULL`);
    // Backs the SET NULL above; without it every match purge scans queue_tickets.
    await queryRunner.query(
      `CREATE INDEX queue_tickets_match_id_idx ON queue_tickets (match_id) WHERE match_id IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE match_participants (
        match_id uuid NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
        player_id uuid NOT NULL REFERENCES players (id),
        ticket_id uuid NOT NULL UNIQUE REFERENCES queue_tickets (id),
        team integer NOT NULL CONSTRAINT match_participants_team_non_negative CHECK (team >= 0),
        rating_at_match double precision NOT NULL,
        connected_at timestamptz,
        no_show boolean NOT NULL DEFAULT false,
        PRIMARY KEY (match_id, player_id)
      )`);
    await queryRunner.query(
      `CREATE INDEX match_participants_player_id_idx ON match_participants (player_id)`,
    );

    await queryRunner.query(`
      CREATE TABLE allocations (
        match_id uuid PRIMARY KEY REFERENCES matches (id) ON DELETE CASCADE,
        provider text NOT NULL,
        server_id text NOT NULL,
        endpoint text,
        provider_ref jsonb NOT NULL DEFAULT '{}'::jsonb
          CONSTRAINT allocations_provider_ref_is_object CHECK (jsonb_typeof(provider_ref) = 'object'),
        credential_hash bytea,
        state text NOT NULL CONSTRAINT allocations_state_valid CHECK (state IN ('REQUESTED', 'ALLOCATED', 'RELEASED', 'FAILED')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        released_at timestamptz,
        CONSTRAINT allocations_allocated_has_endpoint CHECK (state <> 'ALLOCATED' OR endpoint IS NOT NULL),
        CONSTRAINT allocations_released_has_time CHECK (state <> 'RELEASED' OR released_at IS NOT NULL)
      )`);
    // Unique only while live: pooled (static) and re-allocatable (Agones) servers serve many matches.
    await queryRunner.query(`
      CREATE UNIQUE INDEX allocations_live_server_id_key ON allocations (server_id)
        WHERE state IN ('REQUESTED', 'ALLOCATED')`);
    await queryRunner.query(`CREATE INDEX allocations_server_id_idx ON allocations (server_id)`);

    await queryRunner.query(`
      CREATE TABLE assignments (
        match_id uuid NOT NULL,
        player_id uuid NOT NULL,
        server_id text NOT NULL,
        endpoint text NOT NULL,
        join_token text NOT NULL,
        key_id text NOT NULL,
        issued_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (match_id, player_id),
        FOREIGN KEY (match_id, player_id) REFERENCES match_participants (match_id, player_id) ON DELETE CASCADE
      )`);

    await queryRunner.query(`
      CREATE TABLE roster_manifests (
        match_id uuid PRIMARY KEY REFERENCES matches (id) ON DELETE CASCADE,
        server_id text NOT NULL,
        entry_count integer NOT NULL CONSTRAINT roster_manifests_entry_count_positive CHECK (entry_count >= 1),
        digest bytea NOT NULL,
        key_id text NOT NULL,
        signature bytea NOT NULL,
        published_at timestamptz NOT NULL DEFAULT now()
      )`);

    await queryRunner.query(`
      CREATE TABLE outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event text NOT NULL,
        aggregate_type text NOT NULL,
        aggregate_id uuid NOT NULL,
        revision bigint NOT NULL CONSTRAINT outbox_revision_positive CHECK (revision >= 1),
        occurred_at timestamptz NOT NULL,
        player_ids uuid[] NOT NULL CONSTRAINT outbox_player_ids_no_nulls CHECK (array_position(player_ids, NULL) IS NULL),
        payload jsonb NOT NULL CONSTRAINT outbox_payload_is_object CHECK (jsonb_typeof(payload) = 'object'),
        status text NOT NULL DEFAULT 'pending' CONSTRAINT outbox_status_valid CHECK (status IN ('pending', 'published', 'dead')),
        attempts integer NOT NULL DEFAULT 0 CONSTRAINT outbox_attempts_non_negative CHECK (attempts >= 0),
        last_error text,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        claimed_at timestamptz,
        published_at timestamptz,
        dead_lettered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT outbox_aggregate_revision_key UNIQUE (aggregate_type, aggregate_id, revision),
        CONSTRAINT outbox_published_has_time CHECK (status <> 'published' OR published_at IS NOT NULL),
        CONSTRAINT outbox_dead_has_time CHECK (status <> 'dead' OR dead_lettered_at IS NOT NULL)
      )`);
    // The relay's DISTINCT ON (aggregate_id) head scan; INCLUDE lets it test the retry time from the index.
    await queryRunner.query(`
      CREATE INDEX outbox_pending_head ON outbox (aggregate_id, revision) INCLUDE (next_attempt_at)
        WHERE status = 'pending'`);
    await queryRunner.query(
      `CREATE INDEX outbox_published_at_idx ON outbox (published_at) WHERE status = 'published'`,
    );
    await queryRunner.query(
      `CREATE INDEX outbox_dead_lettered_at_idx ON outbox (dead_lettered_at) WHERE status = 'dead'`,
    );

    await queryRunner.query(`
      CREATE TABLE outbox_delivery_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        outbox_id bigint NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        error text NOT NULL,
        attempted_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX outbox_delivery_attempts_outbox_id_idx ON outbox_delivery_attempts (outbox_id)`,
    );

    await queryRunner.query(`
      CREATE TABLE audit_log (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        actor text NOT NULL,
        action text NOT NULL,
        target_type text NOT NULL,
        target_id text NOT NULL,
        reason text,
        details jsonb NOT NULL DEFAULT '{}'::jsonb CONSTRAINT audit_log_details_is_object CHECK (jsonb_typeof(details) = 'object'),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX audit_log_created_at_idx ON audit_log (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // No CASCADE: an object made outside the migrations that depends on these tables must stop the
    // rollback, not vanish with it.
    for (const table of [
      'audit_log',
      'outbox_delivery_attempts',
      'outbox',
      'roster_manifests',
      'assignments',
      'allocations',
      'match_participants',
      'queue_tickets',
      'matches',
      'player_latencies',
      'probe_challenges',
      'idempotency_keys',
      'sessions',
      'players',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
