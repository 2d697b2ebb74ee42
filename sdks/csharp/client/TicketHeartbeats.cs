// A queued ticket's heartbeat loop (the TypeScript SDK's startHeartbeats, libs/sdk
// player-tickets.ts): a ticket without heartbeats expires, so a waiting player beats it every
// interval, one beat after the previous one settled, while it is SEARCHING or MATCHED. Started by
// PlayerClient.StartHeartbeats; its callbacks run on thread-pool threads.
using System;
using System.IO;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace Matchplane.Client
{
    public enum HeartbeatStopReason
    {
        /// <summary>Stop or Dispose was called.</summary>
        Stopped,
        /// <summary>The ticket left SEARCHING/MATCHED (e.g. ASSIGNED, or CANCELLED by CancelTicketAsync): Ticket says how.</summary>
        LeftQueue,
        /// <summary>The server no longer takes its heartbeats (404, or 409 TICKET_FINISHED: Error's problem has ticketState and endReason).</summary>
        Finished,
    }

    /// <summary>Why a heartbeat loop ended.</summary>
    public sealed class HeartbeatStop
    {
        public readonly HeartbeatStopReason Reason;
        /// <summary>For LeftQueue: the ticket as the last beat (or the cancel) answered it.</summary>
        public readonly Ticket Ticket;
        /// <summary>For Finished: the server's refusal.</summary>
        public readonly MatchplaneApiException Error;

        public HeartbeatStop(HeartbeatStopReason reason, Ticket ticket, MatchplaneApiException error)
        {
            Reason = reason;
            Ticket = ticket;
            Error = error;
        }
    }

    public sealed class TicketHeartbeats : IDisposable
    {
        /// <summary>The interval when none is given and the queue options cannot be read.</summary>
        public const int DefaultIntervalMs = 10000;

        readonly PlayerClient _client;
        readonly Action<Exception> _onError;
        readonly CancellationTokenSource _stop = new CancellationTokenSource();
        readonly TaskCompletionSource<HeartbeatStop> _done = new TaskCompletionSource<HeartbeatStop>();

        public readonly string TicketId;

        /// <summary>Completes (never faults) when the loop ends, with why.</summary>
        public Task<HeartbeatStop> Done { get { return _done.Task; } }

        /// <summary>The interval in use (ms), once known (0 before).</summary>
        public int IntervalMs { get; private set; }

        internal TicketHeartbeats(PlayerClient client, string ticketId, Action<Exception> onError)
        {
            _client = client;
            TicketId = ticketId;
            _onError = onError;
        }

        /// <summary>Ends the loop; a beat in flight completes but none follows. Idempotent.</summary>
        public void Stop() { Finish(new HeartbeatStop(HeartbeatStopReason.Stopped, null, null)); }

        public void Dispose() { Stop(); }

        internal void Finish(HeartbeatStop why)
        {
            if (!_done.TrySetResult(why)) return;
            _stop.Cancel();
        }

        internal void Run(int? intervalMs)
        {
            Task.Run(() => LoopAsync(intervalMs));
        }

        async Task LoopAsync(int? explicitMs)
        {
            IntervalMs = explicitMs ?? await IntervalFromQueueOptionsAsync().ConfigureAwait(false);
            while (!_stop.IsCancellationRequested)
            {
                try { await Task.Delay(IntervalMs, _stop.Token).ConfigureAwait(false); }
                catch (OperationCanceledException) { return; }
                try
                {
                    Ticket ticket = await _client.HeartbeatAsync(TicketId).ConfigureAwait(false);
                    if (ticket.State != "SEARCHING" && ticket.State != "MATCHED")
                        Finish(new HeartbeatStop(HeartbeatStopReason.LeftQueue, ticket, null));
                }
                catch (MatchplaneApiException e) when (e.Status == 404 || (e.Status == 409 && e.Code == "TICKET_FINISHED"))
                {
                    Finish(new HeartbeatStop(HeartbeatStopReason.Finished, null, e));
                }
                catch (Exception e) when (IsCallFailure(e)) { Report(e); }
            }
        }

        async Task<int> IntervalFromQueueOptionsAsync()
        {
            QueueOptions known = _client.LastQueueOptions;
            if (known != null && known.HeartbeatIntervalMs > 0) return (int)known.HeartbeatIntervalMs;
            try
            {
                long fetched = (await _client.QueueOptionsAsync().ConfigureAwait(false)).HeartbeatIntervalMs;
                if (fetched > 0) return (int)fetched;
            }
            catch (Exception e) when (IsCallFailure(e)) { Report(e); }
            return DefaultIntervalMs;
        }

        /// <summary>What a call may fail with; anything else is a bug and left to surface.</summary>
        internal static bool IsCallFailure(Exception e)
        {
            return e is MatchplaneApiException || e is MatchplaneNetworkException || e is HttpRequestException ||
                e is TaskCanceledException || e is IOException || e is FormatException;
        }

        void Report(Exception error)
        {
            if (_stop.IsCancellationRequested || _onError == null) return;
            try { _onError(error); }
            catch (Exception) { /* a throwing callback must not end (or crash) the loop */ }
        }
    }
}
