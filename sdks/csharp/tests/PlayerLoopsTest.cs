// The player client's loops against stand-ins: the ticket heartbeat loop (the queue options'
// interval, a failed beat reported, its end when the ticket leaves the queue, on 409
// TICKET_FINISHED, on Dispose and on CancelTicketAsync) and PlayMatchAsync against a scripted game
// server (a dropped connection rejoined with the assignment fetched again, a refused rejoin tried
// again, no rejoin after 4410 or 410 MATCH_ENDED). Prints each failed check and
// "csharp-loops: N passed, M failed" last.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Matchplane.Client;

static class PlayerLoopsTest
{
    static readonly Checks T = new Checks("csharp-loops");
    const string MatchId = "11111111-1111-4111-8111-111111111111";

    static string TicketJson(string state)
    {
        return "{\"id\":\"t-1\",\"playerId\":\"p-1\",\"mode\":\"duel\",\"state\":\"" + state + "\",\"revision\":1,\"enqueuedAt\":\"2026-12-07T00:00:00Z\"," +
            "\"lastHeartbeatAt\":\"2026-12-07T00:00:00Z\",\"attributes\":{}}";
    }

    static StandInReply Problem(int status, string code, string extra = "")
    {
        return new StandInReply(status, "{\"status\":" + status + ",\"code\":\"" + code + "\"" + extra + "}");
    }

    /// <summary>A stand-in answering each "METHOD path" with the next reply of its script (the last one repeats); 404 elsewhere.</summary>
    static ApiStandIn Scripted(Dictionary<string, Queue<StandInReply>> scripts)
    {
        return new ApiStandIn(call =>
        {
            Queue<StandInReply> script;
            lock (scripts)
            {
                if (!scripts.TryGetValue(call.Method + " " + call.Path, out script)) return Problem(404, "NOT_FOUND");
                return script.Count > 1 ? script.Dequeue() : script.Peek();
            }
        });
    }

    static PlayerClient Client(ApiStandIn api)
    {
        // No retries: each answer of the script is one beat.
        return new PlayerClient(api.BaseUrl, null, new RetryOptions { Retries = 0 });
    }

    static int Beats(ApiStandIn api) { return api.Calls().Count(c => c.Path == "/v1/queue/tickets/t-1/heartbeat"); }

    static void HeartbeatChecks()
    {
        var api = Scripted(new Dictionary<string, Queue<StandInReply>>
        {
            { "GET /v1/queue/options", new Queue<StandInReply>(new[] { new StandInReply(200, "{\"modes\":[],\"regions\":[\"eu\"],\"heartbeatIntervalMs\":20}") }) },
            { "POST /v1/queue/tickets/t-1/heartbeat", new Queue<StandInReply>(new[] {
                Problem(429, "RATE_LIMITED"), new StandInReply(200, TicketJson("SEARCHING")), new StandInReply(200, TicketJson("MATCHED")), new StandInReply(200, TicketJson("ASSIGNED")) }) },
        });
        try
        {
            var errors = new List<Exception>();
            TicketHeartbeats loop = Client(api).StartHeartbeats("t-1", null, e => { lock (errors) errors.Add(e); });
            T.Check(loop.Done.Wait(10000), "the loop ends by itself once the ticket is assigned");
            T.Check(loop.Done.Result.Reason == HeartbeatStopReason.LeftQueue && loop.Done.Result.Ticket.State == "ASSIGNED", "it ends LeftQueue with the ticket",
                loop.Done.Result.Reason.ToString());
            T.Check(loop.IntervalMs == 20 && api.Calls()[0].Path == "/v1/queue/options", "the interval is the queue options' heartbeatIntervalMs, fetched when none were read");
            T.Check(Beats(api) == 4, "it beats while SEARCHING or MATCHED, going on after a failed beat", Beats(api).ToString());
            lock (errors) T.Check(errors.Count == 1 && ((MatchplaneApiException)errors[0]).Status == 429, "a failed beat is reported to onError");
        }
        finally { api.Stop(); }

        api = Scripted(new Dictionary<string, Queue<StandInReply>>
        {
            { "POST /v1/queue/tickets/t-1/heartbeat", new Queue<StandInReply>(new[] { Problem(409, "TICKET_FINISHED", ",\"ticketState\":\"EXPIRED\",\"endReason\":\"SEARCH_TIMED_OUT\"") }) },
        });
        try
        {
            TicketHeartbeats loop = Client(api).StartHeartbeats("t-1", 5);
            T.Check(loop.Done.Wait(10000) && loop.Done.Result.Reason == HeartbeatStopReason.Finished && loop.Done.Result.Error.ProblemString("endReason") == "SEARCH_TIMED_OUT",
                "409 TICKET_FINISHED ends it Finished, with the problem saying how");
            T.Check(Beats(api) == 1 && api.Calls().Count == 1, "an explicit interval needs no queue options; a finished ticket is beaten no more");
        }
        finally { api.Stop(); }

        api = Scripted(new Dictionary<string, Queue<StandInReply>>
        {
            { "POST /v1/queue/tickets/t-1/heartbeat", new Queue<StandInReply>(new[] { new StandInReply(200, TicketJson("SEARCHING")) }) },
            { "DELETE /v1/queue/tickets/t-1", new Queue<StandInReply>(new[] { new StandInReply(200, TicketJson("CANCELLED")) }) },
        });
        try
        {
            PlayerClient client = Client(api);
            TicketHeartbeats loop = client.StartHeartbeats("t-1", 5);
            while (Beats(api) < 2 && !loop.Done.IsCompleted) Thread.Sleep(5);
            using (loop) { }
            T.Check(loop.Done.Wait(1000) && loop.Done.Result.Reason == HeartbeatStopReason.Stopped, "Dispose ends the loop Stopped");
            int beats = Beats(api);
            Thread.Sleep(100); // twenty intervals: any beat still scheduled would have been sent
            T.Check(Beats(api) <= beats + 1, "no beat follows the stop (one in flight may finish)", beats + " then " + Beats(api));

            TicketHeartbeats waiting = client.StartHeartbeats("t-1", 60000);
            Ticket cancelled = client.CancelTicketAsync("t-1").Result;
            T.Check(waiting.Done.Wait(1000) && waiting.Done.Result.Reason == HeartbeatStopReason.LeftQueue && waiting.Done.Result.Ticket.State == "CANCELLED" &&
                cancelled.State == "CANCELLED", "cancelling the ticket ends its loop with the cancelled ticket");
        }
        finally { api.Stop(); }
    }

    /// <summary>Where an assignment's join token says which fetch it came from (tok-1, tok-2, ...).</summary>
    static ApiStandIn AssignmentStandIn(int wsPort, params int[] statuses)
    {
        int fetches = 0;
        return new ApiStandIn(call =>
        {
            int n = Interlocked.Increment(ref fetches);
            int status = n <= statuses.Length ? statuses[n - 1] : 200;
            if (status == 410) return Problem(410, "MATCH_ENDED", ",\"matchState\":\"COMPLETED\"");
            return new StandInReply(200, "{\"matchId\":\"" + MatchId + "\",\"state\":\"IN_PROGRESS\",\"region\":\"eu\",\"serverRegion\":\"eu\",\"serverId\":\"gs-1\"," +
                "\"endpoint\":\"127.0.0.1:" + wsPort + "\",\"team\":1,\"expiresAt\":\"2026-12-07T00:10:00Z\",\"joinToken\":\"tok-" + n + "\"}");
        });
    }

    static void RejoinChecks()
    {
        var game = new TestWebSocketServer();
        var api = AssignmentStandIn(game.Port);
        var tokens = new List<string>();
        var script = Task.Run(async () =>
        {
            var first = await game.AcceptAsync();
            tokens.Add(await first.ReceiveTextAsync());
            await first.SendTextAsync("{\"type\":\"joined\",\"playerId\":\"p-1\",\"team\":1}");
            await first.SendTextAsync("{\"type\":\"tick\",\"seq\":1}");
            first.Drop();
            // Not yet told of the leave: the rejoin's first token is refused, the next one admitted.
            var refused = await game.AcceptAsync();
            tokens.Add(await refused.ReceiveTextAsync());
            await refused.CloseAsync(GameCloseCode.InvalidToken, "invalid join token");
            var back = await game.AcceptAsync();
            tokens.Add(await back.ReceiveTextAsync());
            await back.SendTextAsync("{\"type\":\"joined\",\"playerId\":\"p-1\",\"team\":1}");
            await back.SendTextAsync("{\"type\":\"ended\",\"outcome\":\"COMPLETED\",\"winningTeam\":1}");
            await back.CloseAsync(1000, "match over");
        });
        try
        {
            var messages = new List<string>();
            int rejoined = 0;
            var options = new MatchPlayOptions
            {
                RetryDelayMs = 10,
                OnMessage = m => { lock (messages) messages.Add(m["type"].Str); },
                OnRejoined = c => Interlocked.Increment(ref rejoined),
            };
            MatchPlay play = new PlayerClient(api.BaseUrl).PlayMatchAsync(MatchId, options).Result;
            T.Check(play.Ended.Wait(10000), "play ends once the server sends ended");
            T.Check(play.Ended.Result.Ended.Outcome == "COMPLETED" && play.Ended.Result.Ended.WinningTeam == 1 && play.Ended.Result.Rejoins == 1,
                "a dropped connection is rejoined and the match's end reported, with one rejoin");
            T.Check(string.Join(",", tokens) == string.Join(",", new[] { 1, 2, 3 }.Select(n => "{\"type\":\"join\",\"token\":\"tok-" + n + "\"}")),
                "each join uses a freshly fetched assignment's token, a refused rejoin tried again", string.Join(" | ", tokens));
            T.Check(api.Calls().All(c => c.Path == "/v1/matches/" + MatchId + "/assignment") && api.Calls().Count == 3, "the assignment is fetched for each join");
            lock (messages) T.Check(string.Join(",", messages) == "tick,ended", "messages reach OnMessage across the rejoin", string.Join(",", messages));
            T.Check(rejoined == 1 && play.Connection.Ended.IsCompleted, "OnRejoined sees the new connection, which Connection is now");
            script.Wait(2000);
        }
        finally
        {
            api.Stop();
            game.Stop();
        }
    }

    /// <summary>One drop, then the rejoin ends for good (4410 from the server, or 410 from the API).</summary>
    static void GivesUp(string name, bool abandoned)
    {
        var game = new TestWebSocketServer();
        var api = abandoned ? AssignmentStandIn(game.Port) : AssignmentStandIn(game.Port, 200, 410);
        int connections = 0;
        var script = Task.Run(async () =>
        {
            var first = await game.AcceptAsync();
            await first.ReceiveTextAsync();
            await first.SendTextAsync("{\"type\":\"joined\",\"playerId\":\"p-1\",\"team\":1}");
            first.Drop();
            Interlocked.Increment(ref connections);
            if (!abandoned) return;
            var refused = await game.AcceptAsync();
            Interlocked.Increment(ref connections);
            await refused.ReceiveTextAsync();
            await refused.CloseAsync(GameCloseCode.JoiningClosed, "abandoned");
        });
        try
        {
            MatchPlay play = new PlayerClient(api.BaseUrl, null, new RetryOptions { Retries = 0 }).PlayMatchAsync(MatchId, new MatchPlayOptions { RetryDelayMs = 10 }).Result;
            try
            {
                play.Ended.Wait(10000);
                T.Check(false, name + ": play fails");
            }
            catch (AggregateException e)
            {
                Exception why = e.InnerException;
                bool expected = abandoned
                    ? why is GameJoinRefusedException && ((GameJoinRefusedException)why).Code == GameCloseCode.JoiningClosed
                    : why is MatchplaneApiException && ((MatchplaneApiException)why).Status == 410;
                T.Check(expected, name + ": play fails with why", why.GetType().Name + " " + why.Message);
            }
            script.Wait(2000);
            T.Check(api.Calls().Count == 2 && connections == (abandoned ? 2 : 1), name + ": no further rejoin is tried",
                api.Calls().Count + " fetches, " + connections + " connections");
        }
        finally
        {
            api.Stop();
            game.Stop();
        }
    }

    static int Main()
    {
        try { HeartbeatChecks(); }
        catch (Exception e) { T.Check(false, "heartbeat loop", e.ToString()); }
        try { RejoinChecks(); }
        catch (Exception e) { T.Check(false, "rejoin", e.ToString()); }
        try { GivesUp("4410 at the rejoin", true); }
        catch (Exception e) { T.Check(false, "4410", e.ToString()); }
        try { GivesUp("410 MATCH_ENDED at the rejoin", false); }
        catch (Exception e) { T.Check(false, "410", e.ToString()); }
        return T.Summary();
    }
}
