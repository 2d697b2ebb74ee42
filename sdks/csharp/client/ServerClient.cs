// The game server's client of the control plane (libs/contracts/src/server-api.ts), with the
// workload credential the allocator issued for one server id: register, heartbeats, the signed
// roster, initial connect, the result, player presence and backfill. Answers are parsed JSON.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class ServerClient
    {
        /// <summary>The protocol version the control plane speaks (SERVER_PROTOCOL_VERSION).</summary>
        public const int ProtocolVersion = 1;

        readonly ApiTransport _api;
        readonly string _credential;
        public readonly string ServerId;

        /// <param name="baseUrl">MATCHPLANE_API_URL; serverId MATCHPLANE_SERVER_ID; credential MATCHPLANE_SERVER_CREDENTIAL.</param>
        public ServerClient(string baseUrl, string serverId, string credential, HttpClient http = null)
        {
            if (string.IsNullOrEmpty(serverId)) throw new ArgumentException("serverId must not be empty", "serverId");
            if (string.IsNullOrEmpty(credential)) throw new ArgumentException("credential must not be empty", "credential");
            _api = new ApiTransport(baseUrl, http);
            ServerId = serverId;
            _credential = credential;
        }

        /// <summary>The server is up and players may connect (the match becomes ASSIGNMENT_READY).</summary>
        public Task<JsonValue> RegisterAsync(string imageDigest, int protocolVersion = ProtocolVersion)
        {
            string body = "{\"protocolVersion\":" + protocolVersion.ToString(CultureInfo.InvariantCulture) + ",\"imageDigest\":" + JsonText.Quote(imageDigest) + "}";
            return Send(HttpMethod.Post, "register", body);
        }

        /// <summary>
        /// One heartbeat: the server is alive. Send one at least every third of the control plane's
        /// SERVER_HEARTBEAT_TIMEOUT_MS from registration on (RunHeartbeatsAsync does).
        /// </summary>
        public Task<JsonValue> HeartbeatAsync() { return Send(HttpMethod.Post, "heartbeat", null); }

        /// <summary>
        /// Heartbeats every intervalMs until cancelled or until the allocation ended (401
        /// ALLOCATION_ENDED); a failed beat is reported to onError and the next one is the retry.
        /// Completes with the exception that ended it, or null when cancelled.
        /// </summary>
        public async Task<MatchplaneApiException> RunHeartbeatsAsync(CancellationToken stop, int intervalMs = 10000, Action<Exception> onError = null)
        {
            while (!stop.IsCancellationRequested)
            {
                try { await HeartbeatAsync().ConfigureAwait(false); }
                catch (MatchplaneApiException e) when (e.Status == 401) { return e; }
                catch (Exception e) when (e is MatchplaneApiException || e is HttpRequestException || e is TaskCanceledException)
                {
                    if (onError != null) onError(e);
                }
                try { await Task.Delay(intervalMs, stop).ConfigureAwait(false); }
                catch (OperationCanceledException) { return null; }
            }
            return null;
        }

        /// <summary>The match's roster: every player's team and join token, with the allocator's signed manifest.</summary>
        public Task<JsonValue> RosterAsync() { return Send(HttpMethod.Get, "roster", null); }

        /// <summary>
        /// Verifies a RosterAsync answer offline: its manifest signature (VerifyRoster) over every
        /// entry's player and join token, for this server and the expected match. A rejection's
        /// Reason is the TypeScript verifier's (docs/JOIN-AUTH.md).
        /// </summary>
        public Verification VerifyRoster(JoinTokenVerifier verifier, JsonValue roster, string matchId, long nowMs)
        {
            var entries = roster["entries"].Array.Select(e => new RosterEntry(e["playerId"].Str, e["joinToken"].Str)).ToList();
            return verifier.VerifyRoster(RosterManifest.FromJson(roster["manifest"]), entries,
                new Expectation { ServerId = ServerId, MatchId = matchId, Now = nowMs });
        }

        /// <summary>Who connected before the connect deadline; everyone else is a no-show.</summary>
        public Task<JsonValue> InitialConnectAsync(IEnumerable<string> connectedPlayerIds)
        {
            return Send(HttpMethod.Post, "initial-connect", "{\"connectedPlayerIds\":" + Strings(connectedPlayerIds) + "}");
        }

        /// <summary>
        /// The match's outcome (COMPLETED or FAILED); ends it. A repeat after a lost answer is answered
        /// as recorded; one that conflicts with how the match ended is 409 RESULT_CONFLICT.
        /// </summary>
        /// <param name="scoresJson">Per-player scores as a JSON object, or null.</param>
        public Task<JsonValue> ResultAsync(string outcome, int? winningTeam = null, string scoresJson = null)
        {
            string body = "{\"outcome\":" + JsonText.Quote(outcome) +
                (winningTeam.HasValue ? ",\"winningTeam\":" + winningTeam.Value.ToString(CultureInfo.InvariantCulture) : "") +
                (scoresJson == null ? "" : ",\"scores\":" + scoresJson) + "}";
            return Send(HttpMethod.Post, "result", body);
        }

        /// <summary>A joined player's connection dropped: it may rejoin within its mode's grace window.</summary>
        public Task<JsonValue> PlayerLeftAsync(string playerId) { return Send(HttpMethod.Post, "players/" + Uri.EscapeDataString(playerId) + "/left", null); }

        /// <summary>The player who left is back; 410 PLAYER_ABANDONED: it was too late.</summary>
        public Task<JsonValue> PlayerRejoinedAsync(string playerId) { return Send(HttpMethod.Post, "players/" + Uri.EscapeDataString(playerId) + "/rejoined", null); }

        // ---- Backfill: request, poll until PUBLISHED, verify the roster revision, accept, report --------

        /// <summary>Asks to fill `slots` open places on `team` (state OPEN); a repeat answers the same request.</summary>
        public Task<JsonValue> RequestBackfillAsync(int team, int slots, int? timeoutSeconds = null)
        {
            string body = "{\"team\":" + team.ToString(CultureInfo.InvariantCulture) + ",\"slots\":" + slots.ToString(CultureInfo.InvariantCulture) +
                (timeoutSeconds.HasValue ? ",\"timeoutSeconds\":" + timeoutSeconds.Value.ToString(CultureInfo.InvariantCulture) : "") + "}";
            return Send(HttpMethod.Post, "backfills", body, true);
        }

        /// <summary>A backfill request's current state (poll it until PUBLISHED or terminal).</summary>
        public Task<JsonValue> BackfillAsync(string requestId) { return Send(HttpMethod.Get, "backfills/" + Uri.EscapeDataString(requestId), null); }

        /// <summary>Withdraws a backfill request; 409 BACKFILL_CONFLICT once ASSIGNED or FILLED.</summary>
        public Task<JsonValue> CancelBackfillAsync(string requestId) { return Send(HttpMethod.Delete, "backfills/" + Uri.EscapeDataString(requestId), null); }

        /// <summary>The server verified roster revision `rosterRevision` (the request's) and admits its added players.</summary>
        public Task<JsonValue> AcceptBackfillAsync(string requestId, long rosterRevision)
        {
            return Send(HttpMethod.Post, "backfills/" + Uri.EscapeDataString(requestId) + "/accept",
                "{\"rosterRevision\":" + rosterRevision.ToString(CultureInfo.InvariantCulture) + "}");
        }

        /// <summary>Which of the request's added players connected; the rest are no-shows (state FILLED).</summary>
        public Task<JsonValue> ReportBackfillConnectAsync(string requestId, IEnumerable<string> connectedPlayerIds)
        {
            return Send(HttpMethod.Post, "backfills/" + Uri.EscapeDataString(requestId) + "/connect",
                "{\"connectedPlayerIds\":" + Strings(connectedPlayerIds) + "}");
        }

        static string Strings(IEnumerable<string> values) { return "[" + string.Join(",", values.Select(JsonText.Quote).ToArray()) + "]"; }

        Task<JsonValue> Send(HttpMethod method, string route, string body, bool idempotencyKey = false)
        {
            return _api.SendAsync(method, "servers/" + Uri.EscapeDataString(ServerId) + "/" + route, body, idempotencyKey, _credential);
        }
    }
}
