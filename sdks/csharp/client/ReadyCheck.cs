// A player's answers to its match's ready check (libs/sdk ready-check.ts, the API's
// POST /v1/matches/{id}/accept and /decline): a match of a mode with acceptanceTimeoutMs waits
// AWAITING_ACCEPTANCE for every player. The notification socket announces it
// (NotificationHandlers.OnReadyCheck); the game asks its player and answers with one of these.
using System.Net.Http;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>The answer kept for this player, and the match's state after it.</summary>
    public sealed class ReadyCheckAnswer
    {
        public string MatchId;
        /// <summary>ACCEPTED or DECLINED.</summary>
        public string Answer;
        /// <summary>AWAITING_ACCEPTANCE (others still to answer), ALLOCATING (this was the last acceptance), CANCELLED (a decline).</summary>
        public string MatchState;

        public static ReadyCheckAnswer From(JsonValue v)
        {
            return new ReadyCheckAnswer { MatchId = v["matchId"].Str, Answer = v["answer"].Str, MatchState = v["matchState"].Str };
        }
    }

    public sealed partial class PlayerClient
    {
        /// <summary>
        /// Accepts the match's ready check; the last player to accept starts its allocation.
        /// Idempotent on the server, so a lost answer is retried. A match that moved on is a 409
        /// NOT_AWAITING_ACCEPTANCE (its problem's matchState says where it is); having declined is
        /// a 409 ACCEPTANCE_ALREADY_ANSWERED.
        /// </summary>
        public Task<ReadyCheckAnswer> AcceptMatchAsync(string matchId)
        {
            return SendAsync(HttpMethod.Post, "matches/" + Escape(matchId) + "/accept", null, RetryMode.Safe, ReadyCheckAnswer.From);
        }

        /// <summary>Declines the match: it is cancelled, and this player gets the no-show cooldown.</summary>
        public Task<ReadyCheckAnswer> DeclineMatchAsync(string matchId)
        {
            return SendAsync(HttpMethod.Post, "matches/" + Escape(matchId) + "/decline", null, RetryMode.Safe, ReadyCheckAnswer.From);
        }
    }
}
