// The C# player client (issue 36 item 2) over HttpClient, with the API's conventions (bearer
// session token, Idempotency-Key on mutations, problem+json errors as MatchplaneApiException):
// session, latency probes (API-hosted or at the region's edge), parties, queue tickets and their
// heartbeat loop, the match history and assignment, the notification socket (Subscribe), joining
// the game server (JoinMatchAsync, or PlayMatchAsync, which rejoins after a drop). The ready check
// (ReadyCheck.cs), block lists (BlockList.cs), avoid lists (AvoidList.cs) and lobbies (Lobbies.cs)
// are in their own files.
// Answers are typed (PlayerAnswers.cs); each call is retried as the TypeScript SDK retries it
// (ApiTransport, RetryMode), against the API's replicas (ApiEndpoints).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed partial class PlayerClient
    {
        readonly ApiTransport _api;
        readonly EdgeProber _edges;
        // The running heartbeat loops by ticket, so a cancel ends its ticket's loop.
        readonly Dictionary<string, TicketHeartbeats> _heartbeats = new Dictionary<string, TicketHeartbeats>();

        /// <summary>The session token calls are made with, once CreateSessionAsync succeeded.</summary>
        public string SessionToken { get; private set; }
        public string PlayerId { get; private set; }

        /// <param name="baseUrl">Where the API is served, e.g. https://mm.example.com (the /v1 prefix is added).</param>
        public PlayerClient(string baseUrl, HttpClient http = null, RetryOptions retry = null)
            : this(new ApiEndpoints(baseUrl), http, retry) { }

        /// <param name="endpoints">Every replica of the API, in order of preference: HTTP calls and the
        /// notification socket share it, so a replica found dead by one is left by both.</param>
        public PlayerClient(ApiEndpoints endpoints, HttpClient http = null, RetryOptions retry = null)
        {
            _api = new ApiTransport(endpoints, http, retry);
            _edges = new EdgeProber(_api.Http);
            Lobbies = new LobbyCalls(this);
        }

        /// <summary>Lobbies (custom games): create, join by code, leave, kick, set teams, start.</summary>
        public LobbyCalls Lobbies { get; private set; }

        /// <summary>The current replica's base URL with the /v1/ prefix.</summary>
        public Uri ApiUrl { get { return _api.ApiUrl; } }

        /// <summary>The replicas calls go to (Current is the one in use).</summary>
        public ApiEndpoints Endpoints { get { return _api.Endpoints; } }

        /// <summary>The last answer of QueueOptionsAsync: where ProbeAsync finds the regions' edges.</summary>
        public QueueOptions LastQueueOptions { get; private set; }

        /// <summary>Signs in (a new guest without arguments; a guest's deviceSecret resumes it) and keeps the token.</summary>
        public async Task<Session> CreateSessionAsync(string provider = null, string credential = null)
        {
            var body = new Dictionary<string, string>();
            if (provider != null) body["provider"] = provider;
            if (credential != null) body["credential"] = credential;
            // Sent without the old token: signing in must not depend on a session that may have expired.
            Session session = await SendAsync(HttpMethod.Post, "sessions", JsonText.Object(body), RetryMode.IdempotencyKey, Session.From, false).ConfigureAwait(false);
            SessionToken = session.Token;
            PlayerId = session.PlayerId;
            return session;
        }

        /// <summary>Ends the session server-side; a 401 means it is already gone.</summary>
        public async Task EndSessionAsync()
        {
            try { await _api.SendAsync(HttpMethod.Delete, "sessions/current", null, RetryMode.Safe, SessionToken).ConfigureAwait(false); }
            catch (MatchplaneApiException e) when (e.Status == 401) { }
            SessionToken = null;
        }

        /// <summary>What this player may queue for, the regions, and heartbeatIntervalMs.</summary>
        public async Task<QueueOptions> QueueOptionsAsync()
        {
            LastQueueOptions = await SendAsync(HttpMethod.Get, "queue/options", null, RetryMode.Safe, QueueOptions.From).ConfigureAwait(false);
            return LastQueueOptions;
        }

        // ---- Latency probes ---------------------------------------------------------------------

        /// <summary>
        /// Measures the round trip to a region, `samples` times (1 to EdgeProber.MaxSamples, 50);
        /// answers the API's last answer (its estimateMs covers the kept samples). Where the last queue
        /// options list an http(s) edge for the region, the samples are taken there in rounds and the
        /// signed measurements go to the API (POST /v1/probes/measurements) after each chain of
        /// rounds, never while a sample is on the wire; a chain ends once it is `recordWithinMs` old
        /// (default EdgeProber.DefaultRecordWithinMs, 20 s; keep it below the API's
        /// PROBE_MEASUREMENT_MAX_AGE_MS). Else challenge and answer go to the API. A challenge is
        /// retried with its Idempotency-Key; an answer or a measurement is sent once (a retry would
        /// time the backoff). An out-of-range samples or recordWithinMs throws
        /// ArgumentOutOfRangeException before any request.
        /// </summary>
        public async Task<ProbeResult> ProbeAsync(string region, int samples = 3, int recordWithinMs = EdgeProber.DefaultRecordWithinMs)
        {
            // Checked here, the one way in (ProbeAllAsync comes through here too), whichever path follows.
            EdgeProber.CheckSamples(samples);
            EdgeProber.CheckRecordWithinMs(recordWithinMs);
            string edge = EdgeProber.HttpEdgeOf(LastQueueOptions, region);
            if (edge != null)
            {
                if (PlayerId == null) throw new InvalidOperationException("probing at a region's edge needs a session made by CreateSessionAsync");
                return await _edges.ProbeAsync(edge, PlayerId, region, samples, recordWithinMs,
                    measurement => SendAsync(HttpMethod.Post, "probes/measurements", measurement, RetryMode.Never, ProbeResult.From)).ConfigureAwait(false);
            }
            ProbeResult last = null;
            for (int sample = 0; sample < samples; sample++)
            {
                ProbeChallenge challenge = await SendAsync(HttpMethod.Post, "probes/" + Escape(region) + "/challenge", null, RetryMode.IdempotencyKey, ProbeChallenge.From).ConfigureAwait(false);
                string answer = "{\"challengeId\":" + JsonText.Quote(challenge.ChallengeId) + ",\"nonce\":" + JsonText.Quote(challenge.Nonce) + "}";
                last = await SendAsync(HttpMethod.Post, "probes/" + Escape(region) + "/answer", answer, RetryMode.Never, ProbeResult.From).ConfigureAwait(false);
            }
            return last;
        }

        /// <summary>
        /// Probes each region in turn (so probes do not skew each other), by default every region of
        /// the queue options (fetched anew). A failing region lands in Failed, not thrown.
        /// </summary>
        public async Task<ProbeAllResult> ProbeAllAsync(IEnumerable<string> regions = null, int samples = 3, int recordWithinMs = EdgeProber.DefaultRecordWithinMs)
        {
            QueueOptions options = await QueueOptionsAsync().ConfigureAwait(false);
            var targets = new List<string>(regions ?? options.Regions);
            var result = new ProbeAllResult();
            foreach (string region in targets)
            {
                try { result.Measured[region] = await ProbeAsync(region, samples, recordWithinMs).ConfigureAwait(false); }
                catch (Exception e) when (e is MatchplaneApiException || e is MatchplaneNetworkException || e is HttpRequestException || e is TaskCanceledException || e is FormatException)
                {
                    result.Failed[region] = e;
                }
            }
            return result;
        }

        // ---- Parties ----------------------------------------------------------------------------

        /// <summary>Creates a party led by this player; the answer's inviteCode (shown once) lets others join.</summary>
        public Task<Party> CreatePartyAsync() { return SendAsync(HttpMethod.Post, "parties", null, RetryMode.IdempotencyKey, Party.From); }

        /// <summary>Joins by invite code; retried as is (joining the party one is in answers it again).</summary>
        public Task<Party> JoinPartyAsync(string inviteCode)
        {
            return SendAsync(HttpMethod.Post, "parties/join", "{\"inviteCode\":" + JsonText.Quote(inviteCode) + "}", RetryMode.Safe, Party.From);
        }

        /// <summary>This player's party: its members, whether each has probed, and each one's ticket once queued.</summary>
        public Task<Party> PartyAsync() { return SendAsync(HttpMethod.Get, "parties/current", null, RetryMode.Safe, Party.From); }

        /// <summary>Leaves the party (the leader leaving disbands it). Sent once: a repeat would find no party.</summary>
        public Task LeavePartyAsync() { return _api.SendAsync(HttpMethod.Post, "parties/current/leave", null, RetryMode.Never, SessionToken); }

        /// <summary>Disbands the party (the leader only). Sent once: a repeat would find no party.</summary>
        public Task DisbandPartyAsync() { return _api.SendAsync(HttpMethod.Delete, "parties/current", null, RetryMode.Never, SessionToken); }

        /// <summary>
        /// The leader queues the whole party: one ticket per member, matched onto one team.
        /// attributesJson: every member's attributes (a JSON object, or null); memberRoles: each
        /// member's own roles by player id, in a mode with a roles rule (a member left out plays the
        /// roles of the attributes).
        /// </summary>
        public Task<PartyTickets> EnqueuePartyAsync(string mode, string attributesJson = null, IDictionary<string, IList<string>> memberRoles = null)
        {
            string body = "{\"mode\":" + JsonText.Quote(mode) + (attributesJson == null ? "" : ",\"attributes\":" + attributesJson) +
                (memberRoles == null ? "" : ",\"memberRoles\":" + JsonText.StringLists(memberRoles)) + "}";
            return SendAsync(HttpMethod.Post, "queue/party-tickets", body, RetryMode.IdempotencyKey, PartyTickets.From);
        }

        /// <param name="attributesJson">The ticket's attributes as a JSON object, or null.</param>
        public Task<Ticket> CreateTicketAsync(string mode, string attributesJson = null)
        {
            string body = "{\"mode\":" + JsonText.Quote(mode) + (attributesJson == null ? "" : ",\"attributes\":" + attributesJson) + "}";
            return SendAsync(HttpMethod.Post, "queue/tickets", body, RetryMode.IdempotencyKey, Ticket.From);
        }

        public Task<Ticket> TicketAsync(string ticketId) { return SendAsync(HttpMethod.Get, "queue/tickets/" + Escape(ticketId), null, RetryMode.Safe, Ticket.From); }

        /// <summary>Tells the server the player still waits; a ticket without heartbeats expires.</summary>
        public Task<Ticket> HeartbeatAsync(string ticketId)
        {
            return SendAsync(HttpMethod.Post, "queue/tickets/" + Escape(ticketId) + "/heartbeat", null, RetryMode.IdempotencyKey, Ticket.From);
        }

        /// <summary>Leaves the queue; a heartbeat loop of the ticket ends with the cancelled ticket (LeftQueue).</summary>
        public async Task<Ticket> CancelTicketAsync(string ticketId)
        {
            Ticket cancelled = await SendAsync(HttpMethod.Delete, "queue/tickets/" + Escape(ticketId), null, RetryMode.IdempotencyKey, Ticket.From).ConfigureAwait(false);
            TicketHeartbeats loop;
            lock (_heartbeats) _heartbeats.TryGetValue(ticketId, out loop);
            if (loop != null) loop.Finish(new HeartbeatStop(HeartbeatStopReason.LeftQueue, cancelled, null));
            return cancelled;
        }

        /// <summary>
        /// Heartbeats the ticket every intervalMs (default: the queue options' heartbeatIntervalMs,
        /// fetched when none were read yet, else 10 s) until stopped or disposed, until a beat shows
        /// the ticket left SEARCHING/MATCHED, until CancelTicketAsync cancels it, or until the server
        /// answers 404 / 409 TICKET_FINISHED. A failed beat goes to onError and the loop goes on.
        /// </summary>
        public TicketHeartbeats StartHeartbeats(string ticketId, int? intervalMs = null, Action<Exception> onError = null)
        {
            if (intervalMs.HasValue && intervalMs.Value <= 0) throw new ArgumentOutOfRangeException("intervalMs", "the heartbeat interval must be positive");
            var loop = new TicketHeartbeats(this, ticketId, onError);
            TicketHeartbeats previous;
            lock (_heartbeats)
            {
                _heartbeats.TryGetValue(ticketId, out previous);
                _heartbeats[ticketId] = loop;
            }
            if (previous != null) previous.Stop();
            loop.Done.ContinueWith(_ => ForgetHeartbeats(loop), TaskContinuationOptions.ExecuteSynchronously);
            loop.Run(intervalMs);
            return loop;
        }

        void ForgetHeartbeats(TicketHeartbeats ended)
        {
            TicketHeartbeats current;
            lock (_heartbeats)
                if (_heartbeats.TryGetValue(ended.TicketId, out current) && current == ended) _heartbeats.Remove(ended.TicketId);
        }

        /// <summary>
        /// Where and how to join (endpoint, join token). Before ASSIGNMENT_READY the API answers
        /// 409 ASSIGNMENT_NOT_READY, after the match 410 MATCH_ENDED: both MatchplaneApiException.
        /// </summary>
        public Task<Assignment> AssignmentAsync(string matchId)
        {
            return SendAsync(HttpMethod.Get, "matches/" + Escape(matchId) + "/assignment", null, RetryMode.Safe, Assignment.From);
        }

        /// <summary>
        /// A match's history after revision `after` and its current state: what the notification
        /// socket would replay (GET /v1/matches/{id}/events?after=N).
        /// </summary>
        public Task<MatchEvents> MatchEventsAsync(string matchId, long after = 0)
        {
            if (after < 0) throw new ArgumentOutOfRangeException("after", "after must not be negative");
            return SendAsync(HttpMethod.Get, "matches/" + Escape(matchId) + "/events?after=" + after.ToString(CultureInfo.InvariantCulture), null, RetryMode.Safe, MatchEvents.From);
        }

        /// <summary>
        /// Polls the assignment while it answers 409 ASSIGNMENT_NOT_READY; throws
        /// AssignmentUnavailableException as soon as the match has ended (410 MATCH_ENDED, or a
        /// terminal state in its history), TimeoutException after timeoutMs.
        /// </summary>
        public async Task<Assignment> WaitForAssignmentAsync(string matchId, int timeoutMs = 30000, int pollMs = 250)
        {
            DateTime deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
            long lastRevision = 0;
            string lastState = null;
            for (;;)
            {
                try { return await AssignmentAsync(matchId).ConfigureAwait(false); }
                catch (MatchplaneApiException e) when (e.Code == "MATCH_ENDED")
                {
                    throw new AssignmentUnavailableException(matchId, e.ProblemString("matchState") ?? "ENDED", e.ProblemString("endReason"));
                }
                catch (MatchplaneApiException e) when (e.Code == "ASSIGNMENT_NOT_READY") { }
                // Not ready: is the match still on its way, or over? Only new events are fetched.
                MatchEvents events = await MatchEventsAsync(matchId, lastRevision).ConfigureAwait(false);
                lastState = events.State;
                lastRevision = Math.Max(lastRevision, events.Revision);
                if (lastState == "COMPLETED" || lastState == "FAILED" || lastState == "CANCELLED")
                    throw new AssignmentUnavailableException(matchId, lastState, null);
                if (DateTime.UtcNow.AddMilliseconds(pollMs) > deadline)
                    throw new TimeoutException("match " + matchId + " had no assignment within " + timeoutMs + " ms (last state " + lastState + ")");
                await Task.Delay(pollMs).ConfigureAwait(false);
            }
        }

        /// <summary>
        /// Follows this player's matches over the /v1/notifications WebSocket, reading the session
        /// token at every (re)connect. See NotificationSubscription.
        /// </summary>
        /// <param name="idleTimeoutMs">The socket's opt-in idle check (NotificationSubscription.IdleTimeoutMs): 0 off, or IdleFromAnnounced.</param>
        public NotificationSubscription Subscribe(NotificationHandlers handlers, IDictionary<string, long> lastSeen = null, int idleTimeoutMs = 0)
        {
            return NotificationSubscription.Start(_api.Endpoints, () => SessionToken, handlers, lastSeen, idleTimeoutMs);
        }

        /// <summary>Joins the assignment's game server (ws://endpoint/join with its join token); see GameConnection.</summary>
        public Task<GameConnection> JoinMatchAsync(Assignment assignment, GameConnectionOptions options = null)
        {
            return GameConnection.JoinAsync(assignment.Endpoint, assignment.JoinToken, options);
        }

        /// <summary>
        /// Joins the match with its assignment and keeps the player in it: after a dropped
        /// connection, the assignment is fetched again (the API then serves the join token the
        /// allocator signed for the rejoin) and the player rejoins. See MatchPlay.
        /// </summary>
        public Task<MatchPlay> PlayMatchAsync(string matchId, MatchPlayOptions options = null)
        {
            return MatchPlay.StartAsync(() => AssignmentAsync(matchId), matchId, options);
        }

        internal static string Escape(string segment) { return Uri.EscapeDataString(segment); }

        /// <summary>A call whose answer may be empty (204).</summary>
        internal Task SendWithoutAnswerAsync(HttpMethod method, string path, string body, RetryMode retry)
        {
            return _api.SendAsync(method, path, body, retry, SessionToken);
        }

        /// <summary>A call whose success has a body, read into its typed answer.</summary>
        internal async Task<T> SendAsync<T>(HttpMethod method, string path, string body, RetryMode retry, Func<JsonValue, T> read, bool withToken = true)
        {
            JsonValue answer = await _api.SendAsync(method, path, body, retry, withToken ? SessionToken : null).ConfigureAwait(false);
            return read(JsonRead.Required(answer, method.Method + " " + path));
        }
    }

    public sealed class ProbeAllResult
    {
        /// <summary>The API's last answer per measured region (its estimateMs is what placement uses).</summary>
        public readonly Dictionary<string, ProbeResult> Measured = new Dictionary<string, ProbeResult>();
        /// <summary>Regions whose probe failed; queueing needs only one measured region.</summary>
        public readonly Dictionary<string, Exception> Failed = new Dictionary<string, Exception>();
    }
}
