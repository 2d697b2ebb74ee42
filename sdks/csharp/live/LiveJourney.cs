// One match played to COMPLETED by two C# players against the real stack (sdks/run-tests.sh
// "csharp-live", through test/sdk-live/csharp-live.spec.ts, which starts the stack with a ready
// check on duels): guest sessions, probes at the region's edge (in rounds), the queue with the ticket heartbeat
// loop, the match learnt from the notification socket (its idle limit from the announced
// interval), the ready check accepted from OnReadyCheck, the assignment (its join token verified
// with the C# verifier), the reference game server joined with it, player a's connection dropped
// mid-game and rejoined (PlayMatchAsync: the server reports it LEFT, then REJOINED), the game's
// end and the ticket's. Before the duel, three guests of its own go through the avoid list
// (live/AvoidListSteps.cs). Answers are read typed; the API replicas are tried in order, so a replica
// listed first that is down is failed over. Prints each failed check and
// "csharp-live: N passed, M failed" last; exits non-zero on any failure.
// Usage: LiveJourney.exe <api base url>[,<another replica>...] <join key file> [mode]
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Matchplane.Client;
using Matchplane.JoinAuth;

/// <summary>Records the probe edge's paths a client calls (the API's are /v1/probes/...), and its
/// recordings of measurements at the API as "measurements", in the order sent.</summary>
sealed class ProbeCallRecorder : DelegatingHandler
{
    readonly List<string> _paths = new List<string>();

    public ProbeCallRecorder() : base(new HttpClientHandler()) { }

    public List<string> Paths() { lock (_paths) return new List<string>(_paths); }

    protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellation)
    {
        string path = request.RequestUri.AbsolutePath;
        const string edgePrefix = "/v1/probe/";
        if (path.StartsWith(edgePrefix, StringComparison.Ordinal)) lock (_paths) _paths.Add(path.Substring(edgePrefix.Length));
        else if (path.EndsWith("/v1/probes/measurements", StringComparison.Ordinal)) lock (_paths) _paths.Add("measurements");
        return base.SendAsync(request, cancellation);
    }
}

static class LiveJourney
{
    static int passed, failed;
    static readonly string[] HappyPath = { "AWAITING_ACCEPTANCE", "ALLOCATING", "PROCESS_READY", "ASSIGNMENT_READY", "IN_PROGRESS", "COMPLETED" };
    // Player a's drop and rejoin: two match.presence_changed events among the states.
    const int PresenceEvents = 2;
    const string RejoiningPlayer = "a";
    const int StepTimeoutMs = 60000;

    static void Check(bool ok, string name, string detail = null)
    {
        lock (HappyPath)
        {
            if (ok) { passed++; return; }
            failed++;
            Console.WriteLine("FAIL " + name + (detail == null ? "" : ": " + detail));
        }
    }

    sealed class Outcome
    {
        public string PlayerId, MatchId, TicketState;
        public Assignment Assignment;
        public GameEnded Ended;
        public List<MatchEvent> Events;
        public ReadyCheckAnswer Accepted;
    }

    static int Main(string[] args)
    {
        if (args.Length < 2) { Console.Error.WriteLine("usage: LiveJourney.exe <api base url>[,<another replica>...] <join key file> [mode]"); return 2; }
        string[] apiUrls = args[0].Split(',');
        var verifier = new JoinTokenVerifier(KeySet.ParseKeyFile(File.ReadAllBytes(args[1])));
        string mode = args.Length > 2 ? args[2] : "duel";
        try
        {
            AvoidListSteps.RunAsync(apiUrls, Check).Wait();
            Outcome[] outcomes = Task.WhenAll(PlayAsync(apiUrls, mode, "a"), PlayAsync(apiUrls, mode, "b")).Result;
            Outcome a = outcomes[0], b = outcomes[1];
            Check(a.MatchId == b.MatchId, "both players are in one match", a.MatchId + " / " + b.MatchId);
            Check(a.Assignment.Endpoint == b.Assignment.Endpoint && a.Assignment.ServerId == b.Assignment.ServerId, "both join one game server");
            Check(a.Assignment.Team != b.Assignment.Team, "each player has a team of the duel");
            Check(a.Ended.WinningTeam == b.Ended.WinningTeam, "both are told the same winner");
            string[] afterAccepts = { a.Accepted.MatchState, b.Accepted.MatchState };
            Check(afterAccepts.Count(s => s == "ALLOCATING") == 1 && afterAccepts.Count(s => s == "AWAITING_ACCEPTANCE") == 1,
                "the last of the two acceptances starts the allocation", string.Join(",", afterAccepts));
            foreach (Outcome player in outcomes)
            {
                string assignedServer = player.Assignment.ServerId;
                Verification verified = verifier.Verify(player.Assignment.JoinToken,
                    new Expectation { ServerId = assignedServer, MatchId = player.MatchId, Now = (long)(DateTime.UtcNow - new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc)).TotalMilliseconds });
                Check(verified.Ok, "the join token verifies with the C# verifier", verified.Reason + " " + verified.Message);
                Check(verified.Ok && verified.Claims.PlayerId == player.PlayerId, "the join token is the player's own");
            }
        }
        catch (AggregateException e)
        {
            foreach (Exception inner in e.Flatten().InnerExceptions) Check(false, "the journey", inner.ToString());
        }
        Console.WriteLine("csharp-live: " + passed + " passed, " + failed + " failed");
        return failed == 0 && passed > 0 ? 0 : 1;
    }

    static async Task<Outcome> PlayAsync(string[] apiUrls, string mode, string name)
    {
        var probeCalls = new ProbeCallRecorder();
        var client = new PlayerClient(new ApiEndpoints(apiUrls), new HttpClient(probeCalls) { Timeout = TimeSpan.FromSeconds(10) });
        Session session = await client.CreateSessionAsync().ConfigureAwait(false);
        Uri live = new ApiEndpoints(apiUrls[apiUrls.Length - 1]).Current;
        Check(client.ApiUrl == live, name + "'s client fails over to the replica that answers", client.ApiUrl.ToString());
        Check(session.Token.Length > 0 && session.PlayerId == client.PlayerId && session.DeviceSecret != null, name + " signs in as a new guest");

        ProbeAllResult probed = await client.ProbeAllAsync(new[] { "eu-west" }).ConfigureAwait(false);
        Check(probed.Failed.Count == 0, name + " probes eu-west", string.Join("; ", probed.Failed.Select(f => f.Key + ": " + f.Value.Message)));
        Check(EdgeProber.HttpEdgeOf(client.LastQueueOptions, "eu-west") != null, name + " is offered eu-west's probe edge");
        ProbeResult measured;
        Check(probed.Measured.TryGetValue("eu-west", out measured) && measured.Region == "eu-west" && measured.MeasurementId != null && measured.SamplesMs.Count > 0,
            name + "'s edge measurement is accepted by the API");
        // Three samples in rounds: each answer brings the next challenge, the last a plain answer;
        // the measurements go to the API once the chain has ended, none while a sample is on the wire.
        string probeRoute = string.Join(",", probeCalls.Paths());
        Check(probeRoute == "challenges,rounds,rounds,answers,measurements,measurements,measurements" && measured != null && measured.SamplesMs.Count == 3,
            name + " takes its three samples at the edge in rounds, then records them", probeRoute);
        QueueModeOption duel = client.LastQueueOptions.Modes.FirstOrDefault(m => m.Mode == mode);
        Check(duel != null && duel.TeamCount == 2 && duel.TeamSize == 1, name + " is offered " + mode + " for two teams of one");

        // Events arrive on the socket's thread; the journey waits on them here.
        var events = new List<MatchEvent>();
        var errors = new List<Exception>();
        var accepting = new TaskCompletionSource<Task<ReadyCheckAnswer>>();
        var subscription = client.Subscribe(new NotificationHandlers
        {
            OnEvent = e => { lock (events) events.Add(e); },
            OnError = e => { lock (errors) errors.Add(e); },
            // The game would ask its player here; this one accepts at once.
            OnReadyCheck = e => accepting.TrySetResult(client.AcceptMatchAsync(e.MatchId)),
        }, null, NotificationSubscription.IdleFromAnnounced);
        try
        {
            await WithTimeout(subscription.Ready, name + "'s notification socket to be ready").ConfigureAwait(false);
            Ticket ticket = await client.CreateTicketAsync(mode).ConfigureAwait(false);
            string ticketId = ticket.Id;
            Check(ticket.State == "SEARCHING" && ticket.PlayerId == client.PlayerId && ticket.RegionsMeasured.Contains("eu-west"), name + " queues for " + mode);
            TicketHeartbeats heartbeats = client.StartHeartbeats(ticketId, null, e => { lock (errors) errors.Add(e); });

            MatchEvent first = await WaitForEvent(events, e => true, name + " to hear of a match").ConfigureAwait(false);
            string matchId = first.MatchId;
            Check(first.State == "AWAITING_ACCEPTANCE", name + " is asked to accept the match first", first.State);
            Task<ReadyCheckAnswer> accept = await WithTimeout(accepting.Task, name + "'s ready check").ConfigureAwait(false);
            ReadyCheckAnswer accepted = await accept.ConfigureAwait(false);
            Check(accepted.MatchId == matchId && accepted.Answer == "ACCEPTED", name + " accepts the ready check", accepted.Answer);
            await WaitForEvent(events, e => e.MatchId == matchId && e.State == "ASSIGNMENT_READY", name + " to hear ASSIGNMENT_READY").ConfigureAwait(false);
            Assignment assignment = await client.WaitForAssignmentAsync(matchId, StepTimeoutMs).ConfigureAwait(false);
            Check(assignment.MatchId == matchId && assignment.ServerRegion == "eu-west", name + "'s assignment is for the notified match, served in eu-west",
                assignment.ServerRegion);

            GameEnded ended = name == RejoiningPlayer
                ? await RejoiningPlayAsync(client, matchId, assignment, name).ConfigureAwait(false)
                : await PlainPlayAsync(client, assignment, name).ConfigureAwait(false);
            Check(ended.Outcome == "COMPLETED" && ended.WinningTeam.HasValue, name + "'s game ends COMPLETED with a winner", ended.Outcome);

            int revisions = HappyPath.Length + PresenceEvents;
            await WaitForEvent(events, e => e.MatchId == matchId && e.Revision == revisions, name + " to hear every revision").ConfigureAwait(false);
            List<MatchEvent> ofMatch;
            lock (events) ofMatch = events.Where(e => e.MatchId == matchId).ToList();
            Check(ofMatch.Where(e => e.Event != "match.presence_changed").Select(e => e.State).SequenceEqual(HappyPath), name + " is told every state once, in order",
                string.Join(",", ofMatch.Select(e => e.Revision + ":" + e.State)));
            Check(ofMatch.Count(e => e.Event == "match.presence_changed") == PresenceEvents, name + " is told of a's leave and rejoin",
                string.Join(",", ofMatch.Select(e => e.Revision + ":" + e.Event)));
            Check(ofMatch.Select(e => e.Revision).SequenceEqual(Enumerable.Range(1, revisions).Select(r => (long)r)),
                name + " sees revisions 1-" + revisions + " without a gap", string.Join(",", ofMatch.Select(e => e.Revision)));
            lock (errors) Check(errors.Count == 0, name + "'s socket and heartbeats reported no error", string.Join("; ", errors.Select(e => e.Message)));

            HeartbeatStop beatsEnded = await WithTimeout(heartbeats.Done, name + "'s heartbeat loop to end").ConfigureAwait(false);
            Check(beatsEnded.Reason != HeartbeatStopReason.Stopped, name + "'s heartbeat loop ended by itself once the ticket left the queue", beatsEnded.Reason.ToString());
            string ticketState = await WaitForTicketEnd(client, ticketId).ConfigureAwait(false);
            Check(ticketState == "COMPLETED", name + "'s ticket ends COMPLETED", ticketState);
            return new Outcome { PlayerId = client.PlayerId, MatchId = matchId, Assignment = assignment, Ended = ended, TicketState = ticketState, Events = ofMatch, Accepted = accepted };
        }
        finally
        {
            subscription.Close();
            Check(await subscription.Done.ConfigureAwait(false) == "closed", name + "'s subscription ends when closed");
            await client.EndSessionAsync().ConfigureAwait(false);
        }
    }

    static async Task<GameEnded> PlainPlayAsync(PlayerClient client, Assignment assignment, string name)
    {
        GameConnection game = await client.JoinMatchAsync(assignment).ConfigureAwait(false);
        Check(game.PlayerId == client.PlayerId, name + " joins the game server as itself");
        Check(game.Team == assignment.Team, name + " joins on its assigned team");
        GameEnded ended = await WithTimeout(game.Ended, name + "'s game to end").ConfigureAwait(false);
        Check(game.Messages().Any(m => m["type"].Str == "tick"), name + " saw the game's ticks");
        int closeCode = await WithTimeout(game.Closed, name + "'s game connection to close").ConfigureAwait(false);
        Check(closeCode == GameCloseCode.Normal, name + "'s game connection closes normally", closeCode.ToString());
        return ended;
    }

    /// <summary>Plays with PlayMatchAsync, drops the connection after the first tick and is back by the end.</summary>
    static async Task<GameEnded> RejoiningPlayAsync(PlayerClient client, string matchId, Assignment assignment, string name)
    {
        var firstTick = new TaskCompletionSource<bool>();
        var options = new MatchPlayOptions { OnMessage = m => { if (m["type"].Str == "tick") firstTick.TrySetResult(true); } };
        MatchPlay play = await client.PlayMatchAsync(matchId, options).ConfigureAwait(false);
        Check(play.Connection.PlayerId == client.PlayerId && play.Connection.Team == assignment.Team, name + " joins the game server as itself, on its team");
        await WithTimeout(firstTick.Task, name + "'s first tick").ConfigureAwait(false);
        await play.DropAsync().ConfigureAwait(false);
        MatchPlayResult result = await WithTimeout(play.Ended, name + "'s game to end after the rejoin").ConfigureAwait(false);
        Check(result.Rejoins == 1, name + " rejoins its match once after the drop", result.Rejoins.ToString());
        Check(play.Connection.Team == assignment.Team, name + " is back on its team");
        return result.Ended;
    }

    static async Task<string> WaitForTicketEnd(PlayerClient client, string ticketId)
    {
        DateTime deadline = DateTime.UtcNow.AddMilliseconds(StepTimeoutMs);
        for (;;)
        {
            Ticket ticket = await client.TicketAsync(ticketId).ConfigureAwait(false);
            string state = ticket.State;
            if (state != "SEARCHING" && state != "MATCHED" && state != "ASSIGNED" && state != "CONNECTED") return state;
            if (DateTime.UtcNow > deadline) return state;
            await Task.Delay(200).ConfigureAwait(false);
        }
    }

    static async Task<MatchEvent> WaitForEvent(List<MatchEvent> events, Func<MatchEvent, bool> wanted, string what)
    {
        DateTime deadline = DateTime.UtcNow.AddMilliseconds(StepTimeoutMs);
        for (;;)
        {
            lock (events)
            {
                MatchEvent found = events.FirstOrDefault(wanted);
                if (found != null) return found;
            }
            if (DateTime.UtcNow > deadline) throw new TimeoutException("timed out waiting for " + what);
            await Task.Delay(25).ConfigureAwait(false);
        }
    }

    static async Task<T> WithTimeout<T>(Task<T> task, string what)
    {
        if (await Task.WhenAny(task, Task.Delay(StepTimeoutMs)).ConfigureAwait(false) != task)
            throw new TimeoutException("timed out waiting for " + what);
        return await task.ConfigureAwait(false);
    }

    static async Task WithTimeout(Task task, string what)
    {
        if (await Task.WhenAny(task, Task.Delay(StepTimeoutMs)).ConfigureAwait(false) != task)
            throw new TimeoutException("timed out waiting for " + what);
        await task.ConfigureAwait(false);
    }
}
