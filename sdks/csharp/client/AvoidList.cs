// A player's avoid list (libs/sdk player-avoids.ts client.avoids, the API's /v1/avoids): the
// matcher puts two players in one match when either avoids the other only when nothing else fits
// (docs/decisions/2026-12-07-avoid-lists.md). Block lists (BlockList.cs) keep them apart always.
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class AvoidedPlayer
    {
        public string PlayerId, AvoidedAt;

        public static AvoidedPlayer From(JsonValue v)
        {
            return new AvoidedPlayer { PlayerId = v["playerId"].Str, AvoidedAt = v["avoidedAt"].Str };
        }
    }

    /// <summary>GET /v1/avoids, and the answer of avoiding and unavoiding.</summary>
    public sealed class AvoidList
    {
        /// <summary>Oldest entry first.</summary>
        public List<AvoidedPlayer> Avoided;
        /// <summary>How many players the list may hold.</summary>
        public long MaxEntries;

        public static AvoidList From(JsonValue v)
        {
            return new AvoidList { Avoided = v["avoided"].Array.Select(AvoidedPlayer.From).ToList(), MaxEntries = v["maxEntries"].Long };
        }
    }

    public sealed partial class PlayerClient
    {
        /// <summary>The players this player avoids (oldest first) and how many the list may hold.</summary>
        public Task<AvoidList> AvoidListAsync() { return SendAsync(HttpMethod.Get, "avoids", null, RetryMode.Safe, AvoidList.From); }

        /// <summary>
        /// Avoids a player. A repeat changes nothing (so it is retried as is); a blocked player moves to this list;
        /// a full list is a 409 AVOID_LIST_FULL.
        /// </summary>
        public Task<AvoidList> AvoidPlayerAsync(string playerId)
        {
            return SendAsync(HttpMethod.Put, "avoids/" + Escape(playerId), null, RetryMode.Safe, AvoidList.From);
        }

        /// <summary>Stops avoiding a player (one not on the list changes nothing).</summary>
        public Task<AvoidList> UnavoidPlayerAsync(string playerId)
        {
            return SendAsync(HttpMethod.Delete, "avoids/" + Escape(playerId), null, RetryMode.Safe, AvoidList.From);
        }
    }
}
