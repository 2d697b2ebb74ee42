// The retry policy and replica failover of ApiTransport (the TypeScript SDK's, libs/sdk
// http.transport.ts) against HttpListener stand-ins answering from a script: what is retried and
// how often, the one Idempotency-Key every retry resends, Retry-After, the jitter's bounds, a
// replica down or answering 502 left for the next, and the clients' choice of retry per call.
// Prints each failed check and "csharp-transport: N passed, M failed" last.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using Matchplane.Client;
using Matchplane.JoinAuth;

static class TransportTest
{
    static readonly Checks T = new Checks("csharp-transport");
    // Short delays: the checks count attempts, they never time them.
    static readonly RetryOptions Fast = new RetryOptions { BaseDelayMs = 1, MaxDelayMs = 2 };
    const string Ok = "{\"ok\":true}";

    static StandInReply Problem(int status, string code)
    {
        return new StandInReply(status, "{\"type\":\"https://matchplane.dev/problems/" + code.ToLowerInvariant() + "\",\"title\":\"T" + status +
            "\",\"status\":" + status + ",\"code\":\"" + code + "\",\"detail\":\"d" + status + "\"}");
    }

    /// <summary>A stand-in answering each call with the next reply of the script, then 200.</summary>
    static ApiStandIn Scripted(params StandInReply[] replies)
    {
        var script = new Queue<StandInReply>(replies);
        return new ApiStandIn(call => { lock (script) return script.Count > 0 ? script.Dequeue() : new StandInReply(200, Ok); });
    }

    /// <summary>Runs one call against a scripted stand-in; answers its calls and what it threw (or null).</summary>
    static List<SeenCall> Run(RetryMode mode, out Exception thrown, RetryOptions retry, params StandInReply[] replies)
    {
        var api = Scripted(replies);
        try
        {
            var transport = new ApiTransport(api.BaseUrl, null, retry ?? Fast);
            thrown = null;
            try { transport.SendAsync(HttpMethod.Post, "things", "{}", mode, "t").Wait(); }
            catch (AggregateException e) { thrown = e.InnerException; }
            return api.Calls();
        }
        finally { api.Stop(); }
    }

    static void RetryChecks()
    {
        Exception thrown;
        var calls = Run(RetryMode.IdempotencyKey, out thrown, null, Problem(503, "UNAVAILABLE"), Problem(500, "INTERNAL"));
        T.Check(thrown == null && calls.Count == 3, "a 5xx is retried until answered", calls.Count + " " + thrown);
        T.Check(calls.All(c => c.IdempotencyKey != null && c.IdempotencyKey == calls[0].IdempotencyKey), "every retry resends the call's one Idempotency-Key",
            string.Join(",", calls.Select(c => c.IdempotencyKey)));
        var again = Run(RetryMode.IdempotencyKey, out thrown, null);
        T.Check(again[0].IdempotencyKey != calls[0].IdempotencyKey, "each call has a fresh key");

        calls = Run(RetryMode.Safe, out thrown, null, Problem(502, "BAD_GATEWAY"));
        T.Check(thrown == null && calls.Count == 2 && calls.All(c => c.IdempotencyKey == null), "a safe call is retried without a key");

        calls = Run(RetryMode.Never, out thrown, null, Problem(503, "UNAVAILABLE"));
        var api = thrown as MatchplaneApiException;
        T.Check(calls.Count == 1 && api != null && api.Status == 503, "a call sent once is not retried");

        calls = Run(RetryMode.Safe, out thrown, null, Problem(503, "A"), Problem(503, "B"), Problem(503, "C"), Problem(503, "D"));
        api = thrown as MatchplaneApiException;
        T.Check(calls.Count == 3 && api != null && api.Code == "C", "retries stop after Retries (2) more attempts, throwing the last failure",
            calls.Count + " " + thrown);

        calls = Run(RetryMode.Safe, out thrown, new RetryOptions { Retries = 0 }, Problem(503, "A"));
        T.Check(calls.Count == 1 && thrown is MatchplaneApiException, "Retries = 0 sends once");

        calls = Run(RetryMode.IdempotencyKey, out thrown, null, Problem(400, "VALIDATION_FAILED"));
        api = thrown as MatchplaneApiException;
        T.Check(calls.Count == 1 && api != null, "a 4xx is not retried");
        T.Check(api != null && api.Status == 400 && api.Code == "VALIDATION_FAILED" && api.Title == "T400" && api.Detail == "d400" &&
            api.Type == "https://matchplane.dev/problems/validation_failed" && api.Method == "POST" && api.Path == "things",
            "the exception carries the problem's type, title, status, detail and code", thrown == null ? "" : thrown.Message);

        calls = Run(RetryMode.Safe, out thrown, null, Problem(501, "NOT_IMPLEMENTED"));
        T.Check(calls.Count == 1 && thrown is MatchplaneApiException, "a 501 is not retried");

        calls = Run(RetryMode.IdempotencyKey, out thrown, null, Problem(409, "IDEMPOTENCY_KEY_IN_PROGRESS"), Problem(409, "IDEMPOTENCY_KEY_IN_PROGRESS"));
        T.Check(thrown == null && calls.Count == 3, "409 IDEMPOTENCY_KEY_IN_PROGRESS is retried");
        calls = Run(RetryMode.IdempotencyKey, out thrown, null, Problem(409, "TICKET_CONFLICT"));
        T.Check(calls.Count == 1 && thrown is MatchplaneApiException, "another 409 is not retried");

        calls = Run(RetryMode.Safe, out thrown, null, Problem(429, "RATE_LIMITED").With("Retry-After", "1"));
        api = thrown as MatchplaneApiException;
        T.Check(calls.Count == 1 && api != null && api.Status == 429 && api.RetryAfterSeconds == 1, "a 429 is thrown with its Retry-After, not retried by default");

        var rateLimited = new RetryOptions { BaseDelayMs = 1, MaxDelayMs = 2, RetryRateLimited = true };
        calls = Run(RetryMode.Safe, out thrown, rateLimited, Problem(429, "RATE_LIMITED").With("Retry-After", "0"));
        T.Check(thrown == null && calls.Count == 2, "with RetryRateLimited a 429 is retried after its Retry-After");
        calls = Run(RetryMode.Safe, out thrown, rateLimited, Problem(429, "RATE_LIMITED").With("Retry-After", "Thu, 01 Jan 2026 00:00:00 GMT"));
        T.Check(thrown == null && calls.Count == 2, "a Retry-After date already past is waited out at once");
        calls = Run(RetryMode.Safe, out thrown, rateLimited, Problem(429, "RATE_LIMITED").With("Retry-After", "31"));
        api = thrown as MatchplaneApiException;
        T.Check(calls.Count == 1 && api != null && api.RetryAfterSeconds == 31, "a Retry-After beyond MaxRetryAfterMs (30 s) is thrown at once");
        calls = Run(RetryMode.Safe, out thrown, null, Problem(503, "UNAVAILABLE").With("Retry-After", "31"));
        T.Check(calls.Count == 1 && thrown is MatchplaneApiException, "so is a 503 asking for longer");

        int unanswered = 0;
        var dropping = new DroppingReplica();
        var answering = Scripted();
        try
        {
            var endpoints = new ApiEndpoints(dropping.BaseUrl, answering.BaseUrl);
            var transport = new ApiTransport(endpoints, null, Fast);
            transport.SendAsync(HttpMethod.Post, "things", "{}", RetryMode.IdempotencyKey, "t", () => unanswered++).Wait();
            calls = answering.Calls();
            T.Check(dropping.Dropped == 1 && calls.Count == 1 && unanswered == 1, "a call without an answer is reported unanswered and retried on the next replica",
                dropping.Dropped + " " + calls.Count + " " + unanswered);
            try
            {
                new ApiTransport(dropping.BaseUrl, null, Fast).SendAsync(HttpMethod.Post, "things", "{}", RetryMode.Never, "t").Wait();
                T.Check(false, "a call sent once that got no answer throws");
            }
            catch (AggregateException e)
            {
                var network = e.InnerException as MatchplaneNetworkException;
                T.Check(network != null && !network.TimedOut && dropping.Dropped == 2, "no answer throws MatchplaneNetworkException", e.InnerException.ToString());
            }
        }
        finally { dropping.Stop(); answering.Stop(); }
    }

    static void BackoffChecks()
    {
        var retry = new RetryOptions();
        T.Check(retry.Retries == 2 && retry.BaseDelayMs == 250 && retry.MaxDelayMs == 5000 && !retry.RetryRateLimited && retry.MaxRetryAfterMs == 30000,
            "the defaults are the TypeScript SDK's");
        T.Check(retry.BackoffMs(0, 0) == 125 && retry.BackoffMs(0, 0.999999) == 250, "the first backoff is jittered within [125, 250] ms",
            retry.BackoffMs(0, 0) + ".." + retry.BackoffMs(0, 0.999999));
        T.Check(retry.BackoffMs(1, 0) == 250 && retry.BackoffMs(1, 0.999999) == 500, "each retry doubles it");
        T.Check(retry.BackoffMs(10, 0) == 2500 && retry.BackoffMs(10, 0.999999) == 5000, "capped at MaxDelayMs");
        try
        {
            new ApiTransport("http://127.0.0.1:1", null, new RetryOptions { Retries = -1 });
            T.Check(false, "negative retries are refused");
        }
        catch (ArgumentOutOfRangeException) { T.Check(true, "negative retries are refused"); }
    }

    static void FailoverChecks()
    {
        var first = Scripted(Problem(502, "BAD_GATEWAY"));
        var second = Scripted();
        try
        {
            // A replica down (connection refused), one answering 502, then one that works.
            var endpoints = new ApiEndpoints("http://127.0.0.1:" + Ports.Unused() + "/", first.BaseUrl, second.BaseUrl);
            var transport = new ApiTransport(endpoints, null, Fast);
            transport.SendAsync(HttpMethod.Post, "things", "{}", RetryMode.IdempotencyKey, "t").Wait();
            T.Check(first.Calls().Count == 1 && second.Calls().Count == 1 && endpoints.Current.Port == second.Port,
                "a replica down or answering 502 is left for the next", first.Calls().Count + " " + second.Calls().Count + " " + endpoints.Current);
            T.Check(first.Calls()[0].IdempotencyKey == second.Calls()[0].IdempotencyKey, "the key follows the call to the next replica");
            transport.SendAsync(HttpMethod.Get, "things", null, RetryMode.Safe, "t").Wait();
            T.Check(second.Calls().Count == 2 && first.Calls().Count == 1, "later calls stay on the replica that answers");
        }
        finally { first.Stop(); second.Stop(); }

        var refusing = Scripted(Problem(400, "VALIDATION_FAILED"));
        var other = Scripted();
        try
        {
            var endpoints = new ApiEndpoints(refusing.BaseUrl, other.BaseUrl);
            try { new ApiTransport(endpoints, null, Fast).SendAsync(HttpMethod.Post, "things", "{}", RetryMode.Safe, "t").Wait(); }
            catch (AggregateException) { }
            T.Check(endpoints.Current.Port == refusing.Port && other.Calls().Count == 0, "a 4xx is the request's fault: the replica is kept");
        }
        finally { refusing.Stop(); other.Stop(); }

        var shared = new ApiEndpoints("http://a.test", "http://b.test");
        Uri a = shared.Current;
        shared.Failover(a);
        shared.Failover(a);
        T.Check(shared.Current.Host == "b.test", "failures of one replica seen by several calls move the list once");
        try { new ApiEndpoints(new string[0]); T.Check(false, "an empty replica list is refused"); }
        catch (ArgumentException) { T.Check(true, "an empty replica list is refused"); }
    }

    /// <summary>Which retry each client call uses (as the TypeScript clients do).</summary>
    static void ClientChecks()
    {
        string ticket = "{\"id\":\"t-1\",\"playerId\":\"p\",\"mode\":\"duel\",\"state\":\"SEARCHING\",\"revision\":1,\"enqueuedAt\":\"x\",\"lastHeartbeatAt\":\"x\"}";
        var api = Scripted(Problem(503, "UNAVAILABLE"), new StandInReply(201, ticket),
            new StandInReply(201, "{\"challengeId\":\"c\",\"region\":\"eu\",\"nonce\":\"n\"}"), Problem(503, "UNAVAILABLE"));
        try
        {
            var client = new PlayerClient(api.BaseUrl, null, Fast);
            Ticket created = client.CreateTicketAsync("duel").Result;
            List<SeenCall> calls = api.Calls();
            T.Check(created.Id == "t-1" && calls.Count == 2 && calls[1].IdempotencyKey != null && calls[1].IdempotencyKey == calls[0].IdempotencyKey,
                "a ticket's creation is retried with its one Idempotency-Key");
            try { client.ProbeAsync("eu", 1).Wait(); T.Check(false, "a probe answer refused with 503 throws"); }
            catch (AggregateException e) { T.Check(e.InnerException is MatchplaneApiException, "a probe answer refused throws"); }
            T.Check(api.Calls().Count(c => c.Path == "/v1/probes/eu/answer") == 1, "a probe answer is sent once, never retried");
        }
        finally { api.Stop(); }

        string result = "{\"matchId\":\"m\",\"state\":\"COMPLETED\",\"revision\":5}";
        var server = Scripted(Problem(401, "ALLOCATION_ENDED"), Problem(503, "UNAVAILABLE"), Problem(401, "ALLOCATION_ENDED"),
            Problem(503, "UNAVAILABLE"), new StandInReply(200, result));
        var lost = new DroppingReplica();
        try
        {
            // The first replica takes the result and drops the connection; the next says the allocation ended.
            var client = new ServerClient(new ApiEndpoints(lost.BaseUrl, server.BaseUrl), "gs-1", "cr3d", null, Fast);
            ServerMatchState recorded = client.ResultAsync("COMPLETED").Result;
            T.Check(recorded.AlreadyRecorded && lost.Dropped == 1 && server.Calls().Count == 1, "a result whose answer was lost, then refused ALLOCATION_ENDED, was recorded");
            try
            {
                new ServerClient(server.BaseUrl, "gs-2", "cr3d", null, Fast).ResultAsync("COMPLETED").Wait();
                T.Check(false, "ALLOCATION_ENDED without a lost answer throws");
            }
            catch (AggregateException e)
            {
                var ended = e.InnerException as MatchplaneApiException;
                T.Check(ended != null && ended.Code == "ALLOCATION_ENDED", "ALLOCATION_ENDED without a lost answer throws");
            }
            try { client.HeartbeatAsync().Wait(); T.Check(false, "a heartbeat refused with 503 throws"); }
            catch (AggregateException) { }
            ServerMatchState answered = client.ResultAsync("COMPLETED").Result;
            List<SeenCall> calls = server.Calls();
            T.Check(calls.Count(c => c.Path.EndsWith("/heartbeat", StringComparison.Ordinal)) == 1, "a heartbeat is sent once: the next beat is the retry");
            T.Check(answered.State == "COMPLETED" && calls.Last().IdempotencyKey == null && calls.Count == 5, "a result is retried without a key");
        }
        finally { server.Stop(); lost.Stop(); }
    }

    static int Main()
    {
        foreach (Action checks in new Action[] { RetryChecks, BackoffChecks, FailoverChecks, ClientChecks })
        {
            try { checks(); }
            catch (Exception e) { T.Check(false, checks.Method.Name, e.ToString()); }
        }
        return T.Summary();
    }
}
