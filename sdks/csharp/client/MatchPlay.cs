// A player's play of its match that survives a dropped game connection (the TypeScript SDK's
// MatchPlay, libs/sdk match-play.ts): when the connection closes before the server's ended, the
// assignment is fetched again (once the game server reported the leave, the API serves the join
// token the allocator signed for the rejoin) and the player rejoins, to the same team, until the
// match ends. It gives up when the match is over (410 MATCH_ENDED, 404), when the server refuses
// the player for good (4410: abandoned, past the mode's rejoin grace) or after RejoinWindowMs.
using System;
using System.Threading;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class MatchPlayOptions
    {
        /// <summary>"ws" (default) or "wss".</summary>
        public string Scheme = "ws";
        /// <summary>How long each join (connect and handshake) may take (ms).</summary>
        public int JoinTimeoutMs = 10000;
        /// <summary>Every message after joined, across rejoins, in order (on a thread-pool thread).</summary>
        public Action<JsonValue> OnMessage;
        /// <summary>The connection dropped and the player is back in the match on this new one.</summary>
        public Action<GameConnection> OnRejoined;
        /// <summary>Pause between rejoin attempts (ms).</summary>
        public int RetryDelayMs = 500;
        /// <summary>Give up rejoining after this long without a connection (ms).</summary>
        public int RejoinWindowMs = 120000;

        internal GameConnectionOptions Connection()
        {
            return new GameConnectionOptions { Scheme = Scheme, JoinTimeoutMs = JoinTimeoutMs, OnMessage = OnMessage };
        }
    }

    /// <summary>What MatchPlay.Ended completes with: the server's ended, and how often the player came back.</summary>
    public sealed class MatchPlayResult
    {
        public GameEnded Ended;
        public int Rejoins;
    }

    public sealed class MatchPlay
    {
        readonly Func<Task<Assignment>> _assignment;
        readonly MatchPlayOptions _options;
        readonly CancellationTokenSource _stop = new CancellationTokenSource();
        GameConnection _current;
        int _rejoins;

        public readonly string MatchId;

        /// <summary>
        /// Completes on the server's ended; faults when the player could not get back in (the last
        /// failure: a MatchplaneApiException, a GameJoinRefusedException or GameConnectionClosedException
        /// with code 4410, or the last join failure once the rejoin window passed).
        /// </summary>
        public Task<MatchPlayResult> Ended { get; private set; }

        /// <summary>The connection in use now (a new one after each rejoin).</summary>
        public GameConnection Connection { get { return Volatile.Read(ref _current); } }

        MatchPlay(Func<Task<Assignment>> assignment, string matchId, GameConnection first, MatchPlayOptions options)
        {
            _assignment = assignment;
            MatchId = matchId;
            _current = first;
            _options = options;
            Ended = Task.Run(RunAsync);
        }

        /// <summary>Joins with the assignment `assignment` answers (PlayerClient.PlayMatchAsync passes AssignmentAsync).</summary>
        public static async Task<MatchPlay> StartAsync(Func<Task<Assignment>> assignment, string matchId, MatchPlayOptions options = null)
        {
            options = options ?? new MatchPlayOptions();
            Assignment first = await assignment().ConfigureAwait(false);
            GameConnection connection = await GameConnection.JoinAsync(first.Endpoint, first.JoinToken, options.Connection()).ConfigureAwait(false);
            return new MatchPlay(assignment, matchId, connection, options);
        }

        /// <summary>Drops the game connection as a network loss would (for demos and tests): play goes on.</summary>
        public Task DropAsync() { return Connection.CloseAsync(4000, "connection dropped"); }

        /// <summary>Stops playing: closes the connection and rejoins no more.</summary>
        public Task StopAsync()
        {
            _stop.Cancel();
            return Connection.CloseAsync();
        }

        async Task<MatchPlayResult> RunAsync()
        {
            for (;;)
            {
                try
                {
                    GameEnded ended = await Connection.Ended.ConfigureAwait(false);
                    return new MatchPlayResult { Ended = ended, Rejoins = _rejoins };
                }
                catch (GameConnectionClosedException dropped)
                {
                    if (_stop.IsCancellationRequested || IsFinal(dropped)) throw;
                }
                GameConnection back = await RejoinAsync().ConfigureAwait(false);
                Volatile.Write(ref _current, back);
                _rejoins++;
                if (_options.OnRejoined == null) continue;
                try { _options.OnRejoined(back); }
                catch (Exception) { /* a throwing listener must not end play */ }
            }
        }

        async Task<GameConnection> RejoinAsync()
        {
            DateTime deadline = DateTime.UtcNow.AddMilliseconds(_options.RejoinWindowMs);
            Exception last = null;
            while (!_stop.IsCancellationRequested && DateTime.UtcNow < deadline)
            {
                try
                {
                    Assignment assignment = await _assignment().ConfigureAwait(false);
                    return await GameConnection.JoinAsync(assignment.Endpoint, assignment.JoinToken, _options.Connection()).ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    if (IsFinal(e)) throw;
                    last = e;
                }
                try { await Task.Delay(_options.RetryDelayMs, _stop.Token).ConfigureAwait(false); }
                catch (OperationCanceledException) { break; }
            }
            throw last ?? new OperationCanceledException("stopped before rejoining match " + MatchId);
        }

        /// <summary>The match is over for this player: no point trying again.</summary>
        static bool IsFinal(Exception error)
        {
            var api = error as MatchplaneApiException;
            if (api != null) return api.Status == 410 || api.Status == 404;
            // Refused at the door, or admitted and then sent away once the control plane said "abandoned".
            var refused = error as GameJoinRefusedException;
            if (refused != null) return refused.Code == GameCloseCode.JoiningClosed;
            var closed = error as GameConnectionClosedException;
            return closed != null && closed.Code == GameCloseCode.JoiningClosed;
        }
    }
}
