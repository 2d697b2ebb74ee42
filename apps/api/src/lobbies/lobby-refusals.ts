import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/** The refusals of the lobby routes, each with the message a player reads. */
export const LobbyRefusal = {
  notFound: () => new CodedError(ErrorCode.LOBBY_NOT_FOUND, 'This player is in no open lobby'),
  inviteInvalid: () =>
    new CodedError(
      ErrorCode.LOBBY_INVITE_INVALID,
      'No open lobby has this invite code (wrong code, or the lobby expired or started)',
    ),
  alreadyJoined: () =>
    new CodedError(
      ErrorCode.LOBBY_ALREADY_JOINED,
      'This player is in a lobby already: leave it first (POST /v1/lobbies/current/leave)',
    ),
  full: (size: number) =>
    new CodedError(ErrorCode.LOBBY_FULL, `The lobby is full: it holds ${size} players`),
  ownerOnly: () => new CodedError(ErrorCode.LOBBY_OWNER_ONLY, 'Only the lobby owner may do this'),
  started: (matchId: string | undefined) =>
    new CodedError(
      ErrorCode.LOBBY_ALREADY_STARTED,
      `The lobby was started (match ${matchId ?? 'unknown'}): its members and teams no longer change`,
    ),
  /** Without a player: one queued while the lobby started (the unique index caught it). */
  queued: (playerId?: string, ticketId?: string) =>
    new CodedError(
      ErrorCode.LOBBY_PLAYER_QUEUED,
      playerId === undefined
        ? 'A member queued while the lobby started: its ticket must end before it plays in a lobby'
        : `Player ${playerId} holds a live queue ticket (${ticketId}): it must end before the player plays in a lobby`,
      playerId === undefined ? {} : { extensions: { playerId } },
    ),
  notMember: (playerId: string) =>
    new CodedError(ErrorCode.LOBBY_NOT_MEMBER, `Player ${playerId} is not a member of this lobby`),
  regionNotOffered: (region: string, offered: readonly string[]) =>
    new CodedError(
      ErrorCode.LOBBY_REGION_NOT_OFFERED,
      `Region "${region.slice(0, 64)}" is not offered; regions: ${offered.join(', ')}`,
    ),
  teams: (problem: string) => new CodedError(ErrorCode.LOBBY_TEAMS_INVALID, problem),
  invalid: (field: string, problem: string) =>
    new CodedError(ErrorCode.VALIDATION_FAILED, problem, {
      errors: [{ field, problems: [problem] }],
    }),
};
