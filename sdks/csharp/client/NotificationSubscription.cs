// A player's match notifications over the /v1/notifications WebSocket (ClientWebSocket, which
// Unity has): connects with the session token, reconnects with backoff and resumes from the last
// revision seen per match, dedupes on (matchId, revision) and holds back anything after a gap
// until the server has filled it, so handlers see each match's revisions once, in order.
// Handlers run on a thread-pool thread: a Unity caller queues their work to the main thread.
using System;
using System.Collections.Generic;
using System.IO;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class NotificationHandlers
    {
        /// <summary>Every match event once, in revision order per match, without a gap.</summary>
        public Action<MatchEvent> OnEvent;
        /// <summary>
        /// After OnEvent, for an event entering AWAITING_ACCEPTANCE: the match waits for its players
        /// to answer its ready check (PlayerClient.AcceptMatchAsync / DeclineMatchAsync) within the
        /// mode's acceptanceTimeoutMs. A replayed history shows it too: answering a match that moved
        /// on is a 409 NOT_AWAITING_ACCEPTANCE.
        /// </summary>
        public Action<MatchEvent> OnReadyCheck;
        /// <summary>The server jumped a match to its current state; events after its revision follow.</summary>
        public Action<ResyncMessage> OnResync;
        /// <summary>The server accepted the token (after each (re)connect), with the player id.</summary>
        public Action<string> OnConnected;
        /// <summary>The connection ended with (close code, reason) and is retried after the delay (ms).</summary>
        public Action<int, string, int> OnReconnecting;
        /// <summary>A refused client message (the server's error message), a socket error or a throwing handler.</summary>
        public Action<Exception> OnError;
    }

    /// <summary>The server's error message (INVALID_MESSAGE, MATCH_NOT_FOUND, RESUME_TOO_LARGE); the socket stays open.</summary>
    public sealed class NotificationErrorException : Exception
    {
        public readonly string Code;
        public NotificationErrorException(string code, string message) : base(code + ": " + message) { Code = code; }
    }

    public sealed class NotificationSubscription
    {
        public const string Subprotocol = "matchplane.notifications.v1";
        const int Unauthenticated = 4401, SlowConsumer = 4008;
        // The server's default resume bound (NOTIFY_RESUME_MAX_MATCHES); larger resumes are split.
        const int ResumeChunk = 20;

        readonly ApiEndpoints _endpoints;
        readonly Func<string> _token;
        readonly NotificationHandlers _handlers;
        readonly RevisionTracker _tracker;
        readonly object _lock = new object();
        readonly SemaphoreSlim _sending = new SemaphoreSlim(1, 1);
        readonly CancellationTokenSource _stop = new CancellationTokenSource();
        readonly TaskCompletionSource<bool> _ready = new TaskCompletionSource<bool>();
        readonly TaskCompletionSource<string> _done = new TaskCompletionSource<string>();
        readonly Random _jitter = new Random();
        ClientWebSocket _socket;

        /// <summary>Backoff before the first reconnect (ms), doubled per failed one, capped at MaxDelayMs.</summary>
        public int BaseDelayMs = 250, MaxDelayMs = 10000;

        /// <summary>IdleTimeoutMs: 2.5 times the ping interval the server announces in ready (75 s before ready).</summary>
        public const int IdleFromAnnounced = -1;
        const int IdleBeforeReadyMs = 75000;

        /// <summary>
        /// A connection on which no message arrives for this long (ms) is taken for dead, dropped
        /// (OnReconnecting with 1006 and "no frame within N ms") and replaced with a resume. 0 (the
        /// default) is off: ClientWebSocket answers the server's pings itself and never shows them,
        /// so a quiet, healthy socket would be replaced too (the Godot client's rule,
        /// docs/decisions/2026-12-07-godot-socket-idle-check-is-opt-in.md). Set it before Start's
        /// first connection completes, or use Start's idleTimeoutMs.
        /// </summary>
        public int IdleTimeoutMs;
        int _announcedIntervalMs;

        /// <summary>Completes once the server first accepts the token; faults if the subscription ends first.</summary>
        public Task Ready { get { return _ready.Task; } }
        /// <summary>Completes when the subscription ends: "closed" (Close) or "unauthenticated: ..." (sign in again).</summary>
        public Task<string> Done { get { return _done.Task; } }

        NotificationSubscription(ApiEndpoints endpoints, Func<string> token, NotificationHandlers handlers, IDictionary<string, long> lastSeen)
        {
            _endpoints = endpoints;
            _token = token;
            _handlers = handlers;
            _tracker = new RevisionTracker(lastSeen);
        }

        /// <param name="endpoints">The API's replicas (a PlayerClient passes the list its HTTP calls use): a
        /// connection that drops (other than a slow consumer's) moves the list to the next one.</param>
        /// <param name="idleTimeoutMs">IdleTimeoutMs from the first connection on (0: off, IdleFromAnnounced).</param>
        public static NotificationSubscription Start(ApiEndpoints endpoints, Func<string> token, NotificationHandlers handlers, IDictionary<string, long> lastSeen = null, int idleTimeoutMs = 0)
        {
            if (idleTimeoutMs < 0 && idleTimeoutMs != IdleFromAnnounced) throw new ArgumentOutOfRangeException("idleTimeoutMs", "a positive number of ms, 0 (off) or IdleFromAnnounced");
            var subscription = new NotificationSubscription(endpoints, token, handlers, lastSeen) { IdleTimeoutMs = idleTimeoutMs };
            Task.Run(subscription.RunAsync);
            return subscription;
        }

        /// <summary>Also follows a match from afterRevision (0: its whole history), e.g. one learnt from a ticket.</summary>
        public void Follow(string matchId, long afterRevision = 0)
        {
            long from;
            lock (_lock) from = _tracker.Follow(matchId, afterRevision);
            // Not connected: the next connect resumes from the tracker, which covers this.
            SendResume(new[] { new KeyValuePair<string, long>(matchId, from) });
        }

        /// <summary>The last revision delivered per match: keep it to resume in a later run.</summary>
        public Dictionary<string, long> LastSeen()
        {
            lock (_lock)
            {
                var copy = new Dictionary<string, long>();
                foreach (var entry in _tracker.Snapshot()) copy[entry.Key] = entry.Value;
                return copy;
            }
        }

        /// <summary>Ends the subscription and its connection. Idempotent.</summary>
        public void Close() { End("closed"); }

        async Task RunAsync()
        {
            int attempt = 0;
            while (!_stop.IsCancellationRequested)
            {
                string token = _token();
                if (string.IsNullOrEmpty(token)) { End("unauthenticated: no session token"); return; }
                Uri endpoint = _endpoints.Current;
                var socket = new ClientWebSocket();
                socket.Options.AddSubProtocol(Subprotocol);
                socket.Options.SetRequestHeader("Authorization", "Bearer " + token);
                int code = 1006;
                string reason = "";
                var idle = new IdleWatch(socket);
                try
                {
                    await socket.ConnectAsync(SocketUrl(endpoint), _stop.Token).ConfigureAwait(false);
                    lock (_lock) _socket = socket;
                    idle.Arm(CurrentIdleMs());
                    // Sent at once (the server holds it until the token is checked): what this client has.
                    List<KeyValuePair<string, long>> seen;
                    lock (_lock) seen = _tracker.Snapshot();
                    for (int i = 0; i < seen.Count; i += ResumeChunk)
                        SendResume(seen.GetRange(i, Math.Min(ResumeChunk, seen.Count - i)));
                    string text;
                    while ((text = await ReceiveTextAsync(socket).ConfigureAwait(false)) != null)
                    {
                        if (Receive(text)) attempt = 0;
                        idle.Arm(CurrentIdleMs());
                    }
                    if (socket.CloseStatus.HasValue) code = (int)socket.CloseStatus.Value;
                    reason = socket.CloseStatusDescription ?? "";
                }
                catch (Exception e) when (e is WebSocketException || e is IOException || e is OperationCanceledException || e is ObjectDisposedException)
                {
                    if (!idle.Fired && !_stop.IsCancellationRequested) Report(e);
                }
                finally
                {
                    idle.Dispose();
                    lock (_lock) if (_socket == socket) _socket = null;
                    socket.Dispose();
                }
                if (_stop.IsCancellationRequested) return;
                // A close the server sent wins over an idle abort racing it.
                if (idle.Fired && code == 1006) reason = "no frame within " + idle.LimitMs + " ms";
                if (code == Unauthenticated) { End("unauthenticated: " + (reason.Length > 0 ? reason : "session refused")); return; }
                // A slow consumer's close is about this client, not the replica.
                if (code != SlowConsumer) _endpoints.Failover(endpoint);
                int backoff = (int)Math.Min(MaxDelayMs, BaseDelayMs * Math.Pow(2, Math.Min(attempt, 16)));
                int delayMs;
                // Jitter spreads the reconnects of every client of a replica that went away at once.
                lock (_jitter) delayMs = backoff / 2 + _jitter.Next(backoff / 2 + 1);
                if (code == SlowConsumer) delayMs = Math.Min(delayMs, BaseDelayMs);
                attempt++;
                Safely(() => { if (_handlers.OnReconnecting != null) _handlers.OnReconnecting(code, reason, delayMs); });
                try { await Task.Delay(delayMs, _stop.Token).ConfigureAwait(false); }
                catch (OperationCanceledException) { return; }
            }
        }

        /// <summary>ws(s)://replica/v1/notifications.</summary>
        static Uri SocketUrl(Uri endpoint)
        {
            var builder = new UriBuilder(new Uri(endpoint, "notifications"));
            builder.Scheme = builder.Scheme == "https" ? "wss" : "ws";
            return builder.Uri;
        }

        /// <summary>Handles one frame; answers whether it was the server's ready.</summary>
        bool Receive(string text)
        {
            JsonValue message;
            try { message = MiniJson.Parse(text); }
            catch (FormatException e) { Report(new FormatException("unparsable notification frame: " + e.Message)); return false; }
            var type = message.Find("type");
            switch (type != null && type.Kind == JsonKind.String ? type.String : null)
            {
                case "ready":
                    var announced = message.Find("heartbeatIntervalMs");
                    if (announced != null && announced.Kind == JsonKind.Number) _announcedIntervalMs = (int)announced.Long;
                    _ready.TrySetResult(true);
                    string playerId = message["playerId"].Str;
                    Safely(() => { if (_handlers.OnConnected != null) _handlers.OnConnected(playerId); });
                    return true;
                case "event":
                    long? resumeFrom;
                    List<MatchEvent> deliver;
                    MatchEvent e = MatchEvent.From(message);
                    lock (_lock) deliver = _tracker.Accept(e, out resumeFrom);
                    // A gap: ask for what is missing (once per gap); what follows it is held meanwhile.
                    if (resumeFrom.HasValue) SendResume(new[] { new KeyValuePair<string, long>(e.MatchId, resumeFrom.Value) });
                    Deliver(deliver);
                    return false;
                case "resync":
                    ResyncMessage resync = ResyncMessage.From(message);
                    List<MatchEvent> released;
                    lock (_lock) released = _tracker.Resync(resync);
                    if (resync.Reason != "BUFFER_OVERFLOW") Safely(() => { if (_handlers.OnResync != null) _handlers.OnResync(resync); });
                    Deliver(released);
                    return false;
                case "error":
                    var code = message.Find("code");
                    var text2 = message.Find("message");
                    Report(new NotificationErrorException(code != null && code.Kind == JsonKind.String ? code.String : "UNKNOWN",
                        text2 != null && text2.Kind == JsonKind.String ? text2.String : ""));
                    return false;
                default:
                    return false;
            }
        }

        void Deliver(List<MatchEvent> events)
        {
            foreach (MatchEvent e in events)
            {
                Safely(() => _handlers.OnEvent(e));
                if (e.State == "AWAITING_ACCEPTANCE" && _handlers.OnReadyCheck != null) Safely(() => _handlers.OnReadyCheck(e));
            }
        }

        /// <summary>The idle limit now (ms), 0 when off.</summary>
        int CurrentIdleMs()
        {
            int configured = IdleTimeoutMs;
            if (configured != IdleFromAnnounced) return Math.Max(0, configured);
            return _announcedIntervalMs > 0 ? (int)(2.5 * _announcedIntervalMs) : IdleBeforeReadyMs;
        }

        /// <summary>Aborts a connection that received nothing for LimitMs; re-armed after each message.</summary>
        sealed class IdleWatch : IDisposable
        {
            readonly ClientWebSocket _socket;
            readonly Timer _timer;
            public volatile bool Fired;
            public int LimitMs;

            public IdleWatch(ClientWebSocket socket)
            {
                _socket = socket;
                _timer = new Timer(_ => Expire(), null, Timeout.Infinite, Timeout.Infinite);
            }

            public void Arm(int limitMs)
            {
                LimitMs = limitMs;
                _timer.Change(limitMs > 0 ? limitMs : Timeout.Infinite, Timeout.Infinite);
            }

            void Expire()
            {
                Fired = true;
                // Abort, not a close handshake: a dead peer would never answer one.
                try { _socket.Abort(); } catch (ObjectDisposedException) { }
            }

            public void Dispose() { _timer.Dispose(); }
        }

        void SendResume(IEnumerable<KeyValuePair<string, long>> matches)
        {
            ClientWebSocket socket;
            lock (_lock) socket = _socket;
            if (socket == null || socket.State != WebSocketState.Open) return;
            byte[] bytes = Encoding.UTF8.GetBytes("{\"type\":\"resume\",\"matches\":" + JsonText.Numbers(matches) + "}");
            Task.Run(async () =>
            {
                // ClientWebSocket takes one send at a time.
                await _sending.WaitAsync().ConfigureAwait(false);
                try { await socket.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true, CancellationToken.None).ConfigureAwait(false); }
                catch (Exception e) when (e is WebSocketException || e is ObjectDisposedException || e is IOException || e is InvalidOperationException) { }
                finally { _sending.Release(); }
            });
        }

        /// <summary>One whole text message, or null once the server closed the connection.</summary>
        internal static async Task<string> ReceiveTextAsync(WebSocket socket)
        {
            var buffer = new byte[8192];
            using (var message = new MemoryStream())
            {
                for (;;)
                {
                    WebSocketReceiveResult result = await socket.ReceiveAsync(new ArraySegment<byte>(buffer), CancellationToken.None).ConfigureAwait(false);
                    if (result.MessageType == WebSocketMessageType.Close)
                    {
                        if (socket.State == WebSocketState.CloseReceived)
                        {
                            try { await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", CancellationToken.None).ConfigureAwait(false); }
                            catch (Exception e) when (e is WebSocketException || e is IOException || e is ObjectDisposedException) { }
                        }
                        return null;
                    }
                    message.Write(buffer, 0, result.Count);
                    if (!result.EndOfMessage) continue;
                    if (result.MessageType == WebSocketMessageType.Text) return Encoding.UTF8.GetString(message.ToArray());
                    message.SetLength(0); // neither protocol sends binary frames: skipped
                }
            }
        }

        void End(string why)
        {
            if (!_done.TrySetResult(why)) return;
            _stop.Cancel();
            _ready.TrySetException(new InvalidOperationException("notification subscription ended before it was ready (" + why + ")"));
            ClientWebSocket socket;
            lock (_lock) socket = _socket;
            if (socket == null) return;
            // Abort, not a close handshake: the receive loop holds the socket's one pending receive.
            try { socket.Abort(); } catch (ObjectDisposedException) { }
        }

        void Report(Exception error)
        {
            if (_stop.IsCancellationRequested || _handlers.OnError == null) return;
            try { _handlers.OnError(error); }
            catch (Exception) { /* the caller's error handler threw; nothing is left to tell */ }
        }

        /// <summary>A throwing handler must not break the ordering of what follows.</summary>
        void Safely(Action call)
        {
            try { call(); }
            catch (Exception e) { Report(e); }
        }
    }
}
