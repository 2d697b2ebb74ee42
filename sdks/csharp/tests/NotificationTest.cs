// The notification socket's ordering (RevisionTracker) and the subscription itself against a
// local HttpListener WebSocket standing in for the API: the token and subprotocol it connects
// with, the resume it sends on (re)connect and on a gap, events delivered once and in order, a
// resync, the end on 4401, the opt-in idle check and the ready check's handler. Prints each failed check and "csharp-notifications: N passed, M failed".
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Matchplane.Client;

static class NotificationTest
{
    static readonly Checks T = new Checks("csharp-notifications");

    static MatchEvent Event(string matchId, long revision, string state = "ALLOCATING")
    {
        return new MatchEvent { Event = "match.state_changed", MatchId = matchId, Revision = revision, State = state, OccurredAt = "2026-12-06T00:00:00Z" };
    }

    static string Revisions(IEnumerable<MatchEvent> events) { return string.Join(",", events.Select(e => e.Revision.ToString())); }

    static void TrackerChecks()
    {
        long? resume;
        var tracker = new RevisionTracker();
        T.Check(Revisions(tracker.Accept(Event("m", 1), out resume)) == "1" && resume == null, "a first event is delivered");
        T.Check(tracker.Accept(Event("m", 1), out resume).Count == 0 && resume == null, "a duplicate is dropped");
        T.Check(tracker.Accept(Event("m", 3), out resume).Count == 0 && resume == 1, "an event after a gap is held and asks to resume from the last delivered");
        T.Check(tracker.Accept(Event("m", 4), out resume).Count == 0 && resume == null, "a second event past the same gap asks nothing more");
        T.Check(Revisions(tracker.Accept(Event("m", 2), out resume)) == "2,3,4", "filling the gap releases what was held, in order");
        T.Check(tracker.Accept(Event("m", 6), out resume).Count == 0 && resume == 4, "a new gap asks again");
        T.Check(Revisions(tracker.Resync(new ResyncMessage { MatchId = "m", Revision = 5, State = "IN_PROGRESS", Reason = "RETENTION_EXPIRED" })) == "6",
            "a resync jumps to its revision and releases what follows it");
        T.Check(tracker.Resync(new ResyncMessage { MatchId = "m", Revision = 9, Reason = "BUFFER_OVERFLOW" }).Count == 0 && tracker.Snapshot().Single().Value == 6,
            "a buffer-overflow resync changes nothing (the reconnect resumes)");
        T.Check(tracker.Follow("m", 2) == 6 && tracker.Follow("n", 0) == 0, "following never goes back before what was delivered");
        var resumed = new RevisionTracker(new Dictionary<string, long> { { "k", 7 } });
        T.Check(resumed.Accept(Event("k", 7), out resume).Count == 0 && Revisions(resumed.Accept(Event("k", 8), out resume)) == "8",
            "revisions kept from an earlier run are resumed from");
    }

    static string EventJson(long revision)
    {
        return "{\"type\":\"event\",\"event\":\"match.state_changed\",\"matchId\":\"m-1\",\"revision\":" + revision +
            ",\"state\":\"ALLOCATING\",\"occurredAt\":\"2026-12-06T00:00:00Z\"}";
    }

    static void SocketChecks()
    {
        var wsServer = new TestWebSocketServer();
        int port = wsServer.Port;
        var received = new List<string>();
        var headers = new List<string>();
        // Connection 1: ready, r1, r3 (a gap), then on the client's resume r2 and r3, then 1001.
        // Connection 2: the client's resume, then 4401.
        var server = Task.Run(async () =>
        {
            for (int connection = 1; connection <= 2; connection++)
            {
                var socket = await wsServer.AcceptAsync(NotificationSubscription.Subprotocol);
                headers.Add(socket.Path + " " + socket.Headers["authorization"] + " " + socket.Headers["sec-websocket-protocol"]);
                await socket.SendTextAsync("{\"type\":\"ready\",\"playerId\":\"p-1\",\"bufferLimit\":256,\"heartbeatIntervalMs\":30000}");
                if (connection == 1)
                {
                    await socket.SendTextAsync(EventJson(1));
                    await socket.SendTextAsync(EventJson(3));
                    received.Add(await socket.ReceiveTextAsync());
                    await socket.SendTextAsync(EventJson(2));
                    await socket.SendTextAsync(EventJson(3));
                    await socket.SendTextAsync("{\"type\":\"resync\",\"matchId\":\"m-2\",\"state\":\"COMPLETED\",\"revision\":5,\"reason\":\"RETENTION_EXPIRED\"}");
                    await socket.CloseAsync(1001, "going away");
                }
                else
                {
                    received.Add(await socket.ReceiveTextAsync());
                    await socket.CloseAsync(4401, "session expired");
                }
            }
        });

        var events = new List<MatchEvent>();
        var resyncs = new List<ResyncMessage>();
        var reconnects = new List<int>();
        // The first replica is down: the subscription moves to the next, and after each drop to the next again.
        var endpoints = new ApiEndpoints("http://127.0.0.1:" + Ports.Unused(), "http://127.0.0.1:" + port);
        var subscription = NotificationSubscription.Start(endpoints, () => "t0k3n", new NotificationHandlers
        {
            OnEvent = e => { lock (events) events.Add(e); },
            OnResync = r => resyncs.Add(r),
            OnReconnecting = (code, reason, delay) => reconnects.Add(code),
        });
        subscription.BaseDelayMs = 10;
        try
        {
            T.Check(subscription.Ready.Wait(10000), "the subscription is ready once the server accepts the token");
            if (!subscription.Done.Wait(10000)) { T.Check(false, "the subscription ends"); return; }
            T.Check(subscription.Done.Result.StartsWith("unauthenticated: session expired", StringComparison.Ordinal), "4401 ends it as unauthenticated", subscription.Done.Result);
            T.Check(headers.Count == 2 && headers.All(h => h == "/v1/notifications Bearer t0k3n matchplane.notifications.v1"),
                "connects to /v1/notifications with the bearer token and the subprotocol", string.Join(" | ", headers));
            lock (events) T.Check(Revisions(events) == "1,2,3", "events are delivered once, in order, across the gap", Revisions(events));
            T.Check(received.Count == 2 && received[0] == "{\"type\":\"resume\",\"matches\":{\"m-1\":1}}", "a gap asks for a resume from the last delivered revision", string.Join(" | ", received));
            T.Check(received.Count == 2 && received[1] == "{\"type\":\"resume\",\"matches\":{\"m-1\":3,\"m-2\":5}}", "a reconnect resumes from every match's last revision",
                received.Count > 1 ? received[1] : "");
            T.Check(resyncs.Count == 1 && resyncs[0].MatchId == "m-2" && resyncs[0].Revision == 5, "a resync reaches its handler");
            T.Check(reconnects.SequenceEqual(new[] { 1006, 1001, 1006 }), "a replica down or going away is left for the next one, and reconnected to",
                string.Join(",", reconnects));
            T.Check(endpoints.Current.Port == port, "the replica list is left at the one that answers", endpoints.Current.ToString());
        }
        finally
        {
            subscription.Close();
            wsServer.Stop();
            server.Wait(1000);
        }
    }

    /// <summary>
    /// The opt-in idle check: a connection silent past 2.5 announced intervals is dropped and
    /// replaced with a resume; and a match entering AWAITING_ACCEPTANCE reaches OnReadyCheck.
    /// </summary>
    static void IdleAndReadyCheckChecks()
    {
        var wsServer = new TestWebSocketServer();
        var resumes = new List<string>();
        var server = Task.Run(async () =>
        {
            // Connection 1 announces a 200 ms ping interval (so 500 ms idle), sends the ready check, then falls silent.
            var first = await wsServer.AcceptAsync(NotificationSubscription.Subprotocol);
            await first.SendTextAsync("{\"type\":\"ready\",\"playerId\":\"p-1\",\"bufferLimit\":256,\"heartbeatIntervalMs\":200}");
            await first.SendTextAsync("{\"type\":\"event\",\"event\":\"match.state_changed\",\"matchId\":\"m-1\",\"revision\":1," +
                "\"state\":\"AWAITING_ACCEPTANCE\",\"occurredAt\":\"2026-12-06T00:00:00Z\"}");
            var second = await wsServer.AcceptAsync(NotificationSubscription.Subprotocol);
            string resume = await second.ReceiveTextAsync();
            lock (resumes) resumes.Add(resume);
            await second.CloseAsync(4401, "done");
        });
        var readyChecks = new List<string>();
        var reconnects = new List<string>();
        var subscription = NotificationSubscription.Start(new ApiEndpoints("http://127.0.0.1:" + wsServer.Port), () => "t0k3n", new NotificationHandlers
        {
            OnEvent = e => { },
            OnReadyCheck = e => { lock (readyChecks) readyChecks.Add(e.MatchId + "@" + e.Revision); },
            OnReconnecting = (code, reason, delay) => { lock (reconnects) reconnects.Add(code + " " + reason); },
        }, null, NotificationSubscription.IdleFromAnnounced);
        subscription.BaseDelayMs = 10;
        try
        {
            if (!subscription.Done.Wait(10000)) { T.Check(false, "the idle subscription ends", string.Join(" | ", reconnects)); return; }
            lock (readyChecks) T.Check(string.Join(",", readyChecks) == "m-1@1", "a match entering AWAITING_ACCEPTANCE reaches OnReadyCheck", string.Join(",", readyChecks));
            lock (reconnects) T.Check(reconnects.Count == 1 && reconnects[0] == "1006 no frame within 500 ms",
                "a connection silent for 2.5 announced intervals is dropped as 1006", string.Join(" | ", reconnects));
            lock (resumes) T.Check(resumes.Count == 1 && resumes[0] == "{\"type\":\"resume\",\"matches\":{\"m-1\":1}}",
                "the replacement connection resumes from what was delivered", string.Join(" | ", resumes));
            var quiet = NotificationSubscription.Start(new ApiEndpoints("http://127.0.0.1:" + Ports.Unused()), () => "t", new NotificationHandlers { OnEvent = e => { } });
            T.Check(quiet.IdleTimeoutMs == 0, "the idle check is off by default (ClientWebSocket hides the server's pings)");
            quiet.Close();
        }
        finally
        {
            subscription.Close();
            wsServer.Stop();
            server.Wait(1000);
        }
    }

    static int Main()
    {
        try { TrackerChecks(); }
        catch (Exception e) { T.Check(false, "revision tracker", e.ToString()); }
        try { SocketChecks(); }
        catch (Exception e) { T.Check(false, "notification socket", e.ToString()); }
        try { IdleAndReadyCheckChecks(); }
        catch (Exception e) { T.Check(false, "idle check and ready check", e.ToString()); }
        return T.Summary();
    }
}
