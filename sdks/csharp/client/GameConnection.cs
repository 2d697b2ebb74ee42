// The player's side of the game server's join protocol (apps/game-server/README.md "Join
// protocol", libs/contracts/src/join-protocol.ts): a WebSocket at ws://<endpoint>/join whose first
// message is {"type":"join","token"}. The token travels in a message, never in the URL, so it does
// not end up in access logs.
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
    /// <summary>The join protocol's close codes.</summary>
    public static class GameCloseCode
    {
        public const int Normal = 1000, GoingAway = 1001, ServerError = 1011, BadJoinMessage = 4400,
            InvalidToken = 4401, NotOnRoster = 4403, JoinTimeout = 4408, Duplicate = 4409, JoiningClosed = 4410;
    }

    public sealed class GameConnectionOptions
    {
        /// <summary>"ws" (default) or "wss", for a server behind TLS.</summary>
        public string Scheme = "ws";
        /// <summary>How long connecting and the join handshake may take together (ms).</summary>
        public int JoinTimeoutMs = 10000;
        /// <summary>Called with every message after joined (started, tick, ended), in order, on a thread-pool thread.</summary>
        public Action<JsonValue> OnMessage;
    }

    /// <summary>The server closed the connection instead of admitting the player (4401 invalid token, 4403 not on the roster, 4410 joining closed, ...).</summary>
    public sealed class GameJoinRefusedException : Exception
    {
        public readonly int Code;
        public readonly string Reason;
        public GameJoinRefusedException(int code, string reason)
            : base("game server refused the join (" + code + ")" + (string.IsNullOrEmpty(reason) ? "" : ": " + reason))
        {
            Code = code;
            Reason = reason;
        }
    }

    /// <summary>The connection closed before the server sent ended.</summary>
    public sealed class GameConnectionClosedException : Exception
    {
        public readonly int Code;
        public GameConnectionClosedException(int code, string reason)
            : base("game connection closed (" + code + ") before the match ended" + (string.IsNullOrEmpty(reason) ? "" : ": " + reason))
        {
            Code = code;
        }
    }

    /// <summary>How the match ended, from the server's ended message.</summary>
    public sealed class GameEnded
    {
        /// <summary>COMPLETED or FAILED.</summary>
        public string Outcome;
        /// <summary>Only for COMPLETED.</summary>
        public int? WinningTeam;
    }

    /// <summary>A joined player's connection to its match's game server.</summary>
    public sealed class GameConnection
    {
        readonly ClientWebSocket _socket;
        readonly Action<JsonValue> _onMessage;
        readonly List<JsonValue> _messages = new List<JsonValue>();
        readonly TaskCompletionSource<GameEnded> _ended = new TaskCompletionSource<GameEnded>();
        readonly TaskCompletionSource<int> _closed = new TaskCompletionSource<int>();

        /// <summary>The joined message's player and team.</summary>
        public readonly string PlayerId;
        public readonly int Team;
        /// <summary>Completes on the server's ended; faults with GameConnectionClosedException if the connection closes first.</summary>
        public Task<GameEnded> Ended { get { return _ended.Task; } }
        /// <summary>Completes (never faults) with the close code once the connection has closed.</summary>
        public Task<int> Closed { get { return _closed.Task; } }

        GameConnection(ClientWebSocket socket, JsonValue joined, Action<JsonValue> onMessage)
        {
            _socket = socket;
            _onMessage = onMessage;
            PlayerId = joined["playerId"].Str;
            Team = (int)joined["team"].Long;
        }

        /// <summary>Every message after joined so far, in order.</summary>
        public List<JsonValue> Messages() { lock (_messages) return new List<JsonValue>(_messages); }

        /// <summary>Connects, sends the join message and waits for joined.</summary>
        public static async Task<GameConnection> JoinAsync(string endpoint, string joinToken, GameConnectionOptions options = null)
        {
            options = options ?? new GameConnectionOptions();
            var url = new Uri(options.Scheme + "://" + endpoint + "/join");
            var socket = new ClientWebSocket();
            using (var timeout = new CancellationTokenSource(options.JoinTimeoutMs))
            {
                try
                {
                    await socket.ConnectAsync(url, timeout.Token).ConfigureAwait(false);
                    byte[] join = Encoding.UTF8.GetBytes("{\"type\":\"join\",\"token\":" + JsonText.Quote(joinToken) + "}");
                    await socket.SendAsync(new ArraySegment<byte>(join), WebSocketMessageType.Text, true, timeout.Token).ConfigureAwait(false);
                    Task<string> first = NotificationSubscription.ReceiveTextAsync(socket);
                    // ClientWebSocket aborts a receive that is cancelled: the timeout is raced instead.
                    if (await Task.WhenAny(first, Task.Delay(options.JoinTimeoutMs, timeout.Token)).ConfigureAwait(false) != first)
                        throw new TimeoutException("no join answer in time from " + url);
                    string text = await first.ConfigureAwait(false);
                    if (text == null)
                        throw new GameJoinRefusedException(socket.CloseStatus.HasValue ? (int)socket.CloseStatus.Value : 1006, socket.CloseStatusDescription);
                    JsonValue message = MiniJson.Parse(text);
                    if (TypeOf(message) != "joined") throw new FormatException("expected joined, got " + text);
                    var connection = new GameConnection(socket, message, options.OnMessage);
                    _ = Task.Run(connection.ReceiveLoopAsync);
                    return connection;
                }
                catch (OperationCanceledException)
                {
                    socket.Abort();
                    throw new TimeoutException("no join answer in time from " + url);
                }
                catch (Exception)
                {
                    socket.Abort();
                    throw;
                }
            }
        }

        /// <summary>Leaves the match (the server keeps a player who drops out during play out).</summary>
        public async Task CloseAsync(int code = 1000, string reason = "client closed")
        {
            if (_socket.State != WebSocketState.Open) return;
            try { await _socket.CloseOutputAsync((WebSocketCloseStatus)code, reason, CancellationToken.None).ConfigureAwait(false); }
            catch (Exception e) when (e is WebSocketException || e is IOException || e is ObjectDisposedException) { }
        }

        async Task ReceiveLoopAsync()
        {
            try
            {
                string text;
                while ((text = await NotificationSubscription.ReceiveTextAsync(_socket).ConfigureAwait(false)) != null)
                {
                    JsonValue message;
                    try { message = MiniJson.Parse(text); }
                    catch (FormatException) { continue; }
                    lock (_messages) _messages.Add(message);
                    // The listener first: once Ended completes, it has seen every message, ended included.
                    if (_onMessage != null)
                    {
                        try { _onMessage(message); }
                        catch (Exception) { /* a throwing listener must not break the connection */ }
                    }
                    if (TypeOf(message) != "ended") continue;
                    var team = message.Find("winningTeam");
                    _ended.TrySetResult(new GameEnded
                    {
                        Outcome = message["outcome"].Str,
                        WinningTeam = team != null && team.Kind == JsonKind.Number ? (int?)team.Long : null,
                    });
                }
            }
            catch (Exception e) when (e is WebSocketException || e is IOException || e is ObjectDisposedException) { }
            int code = _socket.CloseStatus.HasValue ? (int)_socket.CloseStatus.Value : 1006;
            _ended.TrySetException(new GameConnectionClosedException(code, _socket.CloseStatusDescription));
            _closed.TrySetResult(code);
            _socket.Dispose();
        }

        static string TypeOf(JsonValue message)
        {
            var type = message.Find("type");
            return type != null && type.Kind == JsonKind.String ? type.String : null;
        }
    }
}
