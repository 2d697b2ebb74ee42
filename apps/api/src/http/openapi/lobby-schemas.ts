import type { LobbyMember, LobbyResponse } from '@matchplane/contracts';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { arrayOf, bool, dateTime, int, oneOfStrings, schemaOf, str, uuid } from './schema-builders';

/** The lobby routes' answer (apps/api/src/lobbies), merged into CONTRACT_SCHEMAS. */
export const LOBBY_SCHEMAS: Record<string, SchemaObject> = {
  LobbyResponse: schemaOf<LobbyResponse>()(
    {
      lobbyId: uuid(),
      ownerId: uuid(),
      mode: str(),
      size: int('Most members'),
      teamCount: int(),
      teamSize: int('The largest team'),
      teamSizes: arrayOf(int(), "Each team's size, in team order"),
      ranked: bool('Whether its result rates its players'),
      state: oneOfStrings(['OPEN', 'STARTED']),
      members: arrayOf(
        schemaOf<LobbyMember>()(
          { playerId: uuid(), joinedAt: dateTime() },
          {
            team: int('0-based; absent: placed at start'),
            ticketId: uuid('Once STARTED: the member ticket, MATCHED to the match'),
          },
        ),
      ),
      expiresAt: dateTime('Pushed back by every change'),
    },
    {
      region: str('Where its match is placed'),
      matchId: uuid('Once STARTED'),
      inviteCode: str('Only in the answer of POST /v1/lobbies, to the owner'),
    },
  ),
};
