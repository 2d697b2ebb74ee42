// A player's lobbies, custom games (libs/sdk player-lobbies.ts, the API's /v1/lobbies): the owner
// creates one and shares its invite code (shown once), others join with it, the owner kicks,
// arranges the teams and starts; the start creates the match, and every member follows its own
// ticket (Lobby.Members[i].TicketId) to the assignment like a queued player. Refusals (LOBBY_*)
// are thrown as MatchplaneApiException.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net.Http;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class LobbyMember
    {
        public string PlayerId, JoinedAt;
        /// <summary>The team the owner put the member in (0-based); null: placed at the start.</summary>
        public int? Team;
        /// <summary>Once STARTED: the member's ticket, MATCHED to the lobby's match.</summary>
        public string TicketId;

        public static LobbyMember From(JsonValue v)
        {
            long? team = JsonRead.OptLong(v, "team");
            return new LobbyMember
            {
                PlayerId = v["playerId"].Str, JoinedAt = v["joinedAt"].Str,
                Team = team.HasValue ? (int?)checked((int)team.Value) : null, TicketId = JsonRead.OptString(v, "ticketId"),
            };
        }
    }

    /// <summary>GET /v1/lobbies/current, and the answer of create, join, kick, teams and start.</summary>
    public sealed class Lobby
    {
        public string LobbyId, OwnerId, Mode, ExpiresAt;
        /// <summary>OPEN or STARTED.</summary>
        public string State;
        public long Size, TeamCount;
        /// <summary>The largest team's size.</summary>
        public long TeamSize;
        /// <summary>Each team's size in team order (hunt:4+1: [4, 1]).</summary>
        public List<long> TeamSizes;
        /// <summary>Null: placed in the offered region with the lowest worst member RTT.</summary>
        public string Region;
        public bool Ranked;
        /// <summary>Oldest first (the owner first).</summary>
        public List<LobbyMember> Members;
        /// <summary>Once STARTED: its match.</summary>
        public string MatchId;
        /// <summary>Only in the answer of CreateAsync, to the owner: the server keeps only its hash.</summary>
        public string InviteCode;
        public JsonValue Raw;

        public static Lobby From(JsonValue v)
        {
            var ranked = v["ranked"];
            if (ranked.Kind != JsonKind.Bool) throw new FormatException("ranked is not a boolean");
            return new Lobby
            {
                LobbyId = v["lobbyId"].Str, OwnerId = v["ownerId"].Str, Mode = v["mode"].Str, State = v["state"].Str,
                Size = v["size"].Long, TeamCount = v["teamCount"].Long, TeamSize = v["teamSize"].Long,
                TeamSizes = v["teamSizes"].Array.Select(size => size.Long).ToList(),
                Region = JsonRead.OptString(v, "region"), Ranked = ranked.Bool, ExpiresAt = v["expiresAt"].Str,
                Members = v["members"].Array.Select(LobbyMember.From).ToList(),
                MatchId = JsonRead.OptString(v, "matchId"), InviteCode = JsonRead.OptString(v, "inviteCode"), Raw = v,
            };
        }

        /// <summary>This player's ticket once the lobby STARTED; null before (or for a player not in it).</summary>
        public string TicketOf(string playerId)
        {
            LobbyMember member = Members.FirstOrDefault(m => m.PlayerId == playerId);
            return member == null ? null : member.TicketId;
        }
    }

    /// <summary>PlayerClient.Lobbies.</summary>
    public sealed class LobbyCalls
    {
        readonly PlayerClient _client;

        internal LobbyCalls(PlayerClient client) { _client = client; }

        /// <summary>
        /// Creates a private lobby for `mode`, owned by this player. size: most members (2 up to the
        /// mode's players, default the latter); region: where its match is placed (default the
        /// offered region with the lowest worst member RTT); ranked: whether the result rates its
        /// players (default false). Retried with one Idempotency-Key, so a lost answer is replayed,
        /// invite code included.
        /// </summary>
        public Task<Lobby> CreateAsync(string mode, int? size = null, string region = null, bool? ranked = null)
        {
            string body = "{\"mode\":" + JsonText.Quote(mode) +
                (size.HasValue ? ",\"size\":" + size.Value.ToString(CultureInfo.InvariantCulture) : "") +
                (region != null ? ",\"region\":" + JsonText.Quote(region) : "") +
                (ranked.HasValue ? ",\"ranked\":" + (ranked.Value ? "true" : "false") : "") + "}";
            return _client.SendAsync(HttpMethod.Post, "lobbies", body, RetryMode.IdempotencyKey, Lobby.From);
        }

        /// <summary>Joins by invite code; joining the lobby one is in answers it again, so it is retried as is.</summary>
        public Task<Lobby> JoinAsync(string inviteCode)
        {
            return _client.SendAsync(HttpMethod.Post, "lobbies/join", "{\"inviteCode\":" + JsonText.Quote(inviteCode) + "}", RetryMode.Safe, Lobby.From);
        }

        /// <summary>This player's lobby.</summary>
        public Task<Lobby> CurrentAsync() { return _client.SendAsync(HttpMethod.Get, "lobbies/current", null, RetryMode.Safe, Lobby.From); }

        /// <summary>Leaves the lobby (the owner leaving closes it). Sent once: a repeat would find no lobby.</summary>
        public Task LeaveAsync() { return _client.SendWithoutAnswerAsync(HttpMethod.Post, "lobbies/current/leave", null, RetryMode.Never); }

        /// <summary>The owner removes a member. Sent once: a repeat would find no such member.</summary>
        public Task<Lobby> KickAsync(string playerId)
        {
            return _client.SendAsync(HttpMethod.Post, "lobbies/current/kick", "{\"playerId\":" + JsonText.Quote(playerId) + "}", RetryMode.Never, Lobby.From);
        }

        /// <summary>The owner arranges the teams: team i (0-based) holds teams[i], every member named once. Retried as is.</summary>
        public Task<Lobby> SetTeamsAsync(IEnumerable<IEnumerable<string>> teams)
        {
            string body = "{\"teams\":[" + string.Join(",", teams.Select(JsonText.Strings).ToArray()) + "]}";
            return _client.SendAsync(HttpMethod.Post, "lobbies/current/teams", body, RetryMode.Safe, Lobby.From);
        }

        /// <summary>The owner starts the lobby: the answer is STARTED, with the match and each member's ticket. Sent once.</summary>
        public Task<Lobby> StartAsync() { return _client.SendAsync(HttpMethod.Post, "lobbies/current/start", null, RetryMode.Never, Lobby.From); }

        /// <summary>
        /// A member waits for the owner's start (polling the lobby) and answers its own ticket id;
        /// TimeoutException after timeoutMs. Needs a session made by CreateSessionAsync.
        /// </summary>
        public async Task<string> WaitForStartAsync(int timeoutMs = 30000, int pollMs = 500)
        {
            string playerId = _client.PlayerId;
            if (playerId == null) throw new InvalidOperationException("WaitForStartAsync needs a session made by CreateSessionAsync");
            DateTime deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
            for (;;)
            {
                Lobby lobby = await CurrentAsync().ConfigureAwait(false);
                string ticketId = lobby.TicketOf(playerId);
                if (lobby.State == "STARTED" && ticketId != null) return ticketId;
                if (DateTime.UtcNow.AddMilliseconds(pollMs) > deadline)
                    throw new TimeoutException("the lobby was not started within " + timeoutMs + " ms");
                await Task.Delay(pollMs).ConfigureAwait(false);
            }
        }
    }
}
