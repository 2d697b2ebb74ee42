// The game server's client of the control plane (libs/contracts/src/server-api.ts), with the
// workload credential the allocator issued for one server id: register, heartbeats, the signed
// roster, initial connect, the result, player presence and backfill. Answers are typed
// (ServerAnswers.cs). Every call but a heartbeat is idempotent on the server's side, so each is
// retried as the TypeScript server client retries it (ApiTransport), without an Idempotency-Key.
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
        // Set once a result attempt went unanswered: the control plane may have recorded it.
        volatile bool _resultMayBeRecorded;

        /// <param name="baseUrl">MATCHPLANE_API_URL; serverId MATCHPLANE_SERVER_ID; credential MATCHPLANE_SERVER_CREDENTIAL.</param>
        public ServerClient(string baseUrl, string serverId, string credential, HttpClient http = null, RetryOptions retry = null)
            : this(new ApiEndpoints(baseUrl), serverId, credential, http, retry) { }

        /// <param name="endpoints">Every replica of the API, in order of preference.</param>
        public ServerClient(ApiEndpoints endpoints, string serverId, string credential, HttpClient http = null, RetryOptions retry = null)
        {
            if (string.IsNullOrEmpty(serverId)) throw new ArgumentException("serverId must not be empty", "serverId");
            if (string.IsNullOrEmpty(credential)) throw new ArgumentException("credential must not be empty", "credential");
            _api = new ApiTransport(endpoints, http, retry);
            ServerId = serverId;
            _credential = credential;
        }

        /// <summary>The server is up and players may connect (the match becomes ASSIGNMENT_READY).</summary>
        public Task<ServerMatchState> RegisterAsync(string imageDigest, int protocolVersion = ProtocolVersion)
        {
            string body = "{\"protocolVersion\":" + protocolVersion.ToString(CultureInfo.InvariantCulture) + ",\"imageDigest\":" + JsonText.Quote(imageDigest) + "}";
            return Send(HttpMethod.Post, "register", body, ServerMatchState.From);
        }

        /// <summary>
        /// One heartbeat: the server is alive. Send one at least every third of the control plane's
        /// SERVER_HEARTBEAT_TIMEOUT_MS from registration on (RunHeartbeatsAsync does). Sent once,
        /// never retried: the next beat is the retry.
        /// </summary>
        public Task<ServerHeartbeat> HeartbeatAsync() { return Send(HttpMethod.Post, "heartbeat", null, ServerHeartbeat.From, RetryMode.Never); }

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
                catch (Exception e) when (e is MatchplaneApiException || e is MatchplaneNetworkException)
                {
                    if (onError != null) onError(e);
                }
                try { await Task.Delay(intervalMs, stop).ConfigureAwait(false); }
                catch (OperationCanceledException) { return null; }
            }
            return null;
        }

        /// <summary>The match's roster: every player's team and join token, with the allocator's signed manifest.</summary>
        public Task<Roster> RosterAsync() { return Send(HttpMethod.Get, "roster", null, Roster.From); }

        /// <summary>
        /// Verifies a RosterAsync answer offline: its manifest signature (VerifyRoster) over every
        /// entry's player and join token, for this server and the expected match. A rejection's
        /// Reason is the TypeScript verifier's (docs/JOIN-AUTH.md).
        /// </summary>
        public Verification VerifyRoster(JoinTokenVerifier verifier, Roster roster, string matchId, long nowMs)
        {
            var entries = roster.Entries.Select(e => new RosterEntry(e.PlayerId, e.JoinToken)).ToList();
            return verifier.VerifyRoster(roster.Manifest, entries,
                new Expectation { ServerId = ServerId, MatchId = matchId, Now = nowMs });
        }

        /// <summary>Who connected before the connect deadline; everyone else is a no-show.</summary>
        public Task<ServerMatchState> InitialConnectAsync(IEnumerable<string> connectedPlayerIds)
        {
            return Send(HttpMethod.Post, "initial-connect", "{\"connectedPlayerIds\":" + Strings(connectedPlayerIds) + "}", ServerMatchState.From);
        }

        /// <summary>
        /// The match's outcome (COMPLETED or FAILED); ends it. A repeat after a lost answer is answered
        /// as recorded; one that conflicts with how the match ended is 409 RESULT_CONFLICT. When an
        /// earlier attempt (of this call or an earlier one that threw MatchplaneNetworkException) went
        /// unanswered and a retry is refused with 401 ALLOCATION_ENDED, that attempt was recorded and
        /// the allocation released: answered with AlreadyRecorded. ALLOCATION_ENDED with no unanswered
        /// attempt before it is thrown (the match was ended without this server's result).
        /// </summary>
        /// <param name="scoresJson">Per-player scores as a JSON object, or null.</param>
        public async Task<ServerMatchState> ResultAsync(string outcome, int? winningTeam = null, string scoresJson = null)
        {
            string body = "{\"outcome\":" + JsonText.Quote(outcome) +
                (winningTeam.HasValue ? ",\"winningTeam\":" + winningTeam.Value.ToString(CultureInfo.InvariantCulture) : "") +
                (scoresJson == null ? "" : ",\"scores\":" + scoresJson) + "}";
            try
            {
                JsonValue answer = await _api.SendAsync(HttpMethod.Post, Route("result"), body, RetryMode.Safe, _credential,
                    () => _resultMayBeRecorded = true).ConfigureAwait(false);
                return ServerMatchState.From(JsonRead.Required(answer, "POST result"));
            }
            catch (MatchplaneApiException e) when (_resultMayBeRecorded && e.Code == "ALLOCATION_ENDED")
            {
                return new ServerMatchState { AlreadyRecorded = true, NoShowPlayerIds = new List<string>() };
            }
        }

        /// <summary>A joined player's connection dropped: it may rejoin within its mode's grace window.</summary>
        public Task<PlayerPresence> PlayerLeftAsync(string playerId) { return Send(HttpMethod.Post, "players/" + Uri.EscapeDataString(playerId) + "/left", null, PlayerPresence.From); }

        /// <summary>The player who left is back; 410 PLAYER_ABANDONED: it was too late.</summary>
        public Task<PlayerPresence> PlayerRejoinedAsync(string playerId) { return Send(HttpMethod.Post, "players/" + Uri.EscapeDataString(playerId) + "/rejoined", null, PlayerPresence.From); }

        // ---- Backfill: request, poll until PUBLISHED, verify the roster revision, accept, report --------

        /// <summary>
        /// Asks to fill `slots` open places on `team` (state OPEN). Retried without an
        /// Idempotency-Key (the route takes none): the API keeps one live request per team and
        /// answers a repeat of the same request, still OPEN, with the one it opened, so a retry after
        /// a lost answer keeps the request id; a different one is 409 BACKFILL_CONFLICT.
        /// </summary>
        public Task<Backfill> RequestBackfillAsync(int team, int slots, int? timeoutSeconds = null)
        {
            string body = "{\"team\":" + team.ToString(CultureInfo.InvariantCulture) + ",\"slots\":" + slots.ToString(CultureInfo.InvariantCulture) +
                (timeoutSeconds.HasValue ? ",\"timeoutSeconds\":" + timeoutSeconds.Value.ToString(CultureInfo.InvariantCulture) : "") + "}";
            return Send(HttpMethod.Post, "backfills", body, Backfill.From);
        }

        /// <summary>A backfill request's current state (poll it until PUBLISHED or terminal).</summary>
        public Task<Backfill> BackfillAsync(string requestId) { return Send(HttpMethod.Get, "backfills/" + Uri.EscapeDataString(requestId), null, Backfill.From); }

        /// <summary>Withdraws a backfill request; 409 BACKFILL_CONFLICT once ASSIGNED or FILLED.</summary>
        public Task<Backfill> CancelBackfillAsync(string requestId) { return Send(HttpMethod.Delete, "backfills/" + Uri.EscapeDataString(requestId), null, Backfill.From); }

        /// <summary>The server verified roster revision `rosterRevision` (the request's) and admits its added players.</summary>
        public Task<Backfill> AcceptBackfillAsync(string requestId, long rosterRevision)
        {
            return Send(HttpMethod.Post, "backfills/" + Uri.EscapeDataString(requestId) + "/accept",
                "{\"rosterRevision\":" + rosterRevision.ToString(CultureInfo.InvariantCulture) + "}", Backfill.From);
        }

        /// <summary>Which of the request's added players connected; the rest are no-shows (state FILLED).</summary>
        public Task<Backfill> ReportBackfillConnectAsync(string requestId, IEnumerable<string> connectedPlayerIds)
        {
            return Send(HttpMethod.Post, "backfills/" + Uri.EscapeDataString(requestId) + "/connect",
                "{\"connectedPlayerIds\":" + Strings(connectedPlayerIds) + "}", Backfill.From);
        }

        static string Strings(IEnumerable<string> values) { return "[" + string.Join(",", values.Select(JsonText.Quote).ToArray()) + "]"; }

        async Task<T> Send<T>(HttpMethod method, string route, string body, Func<JsonValue, T> read, RetryMode retry = RetryMode.Safe)
        {
            JsonValue answer = await _api.SendAsync(method, Route(route), body, retry, _credential).ConfigureAwait(false);
            return read(JsonRead.Required(answer, method.Method + " " + route));
        }

        string Route(string route) { return "servers/" + Uri.EscapeDataString(ServerId) + "/" + route; }
    }
}
