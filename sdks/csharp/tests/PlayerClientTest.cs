// The player client against a local HttpListener standing in for the API: the requests it makes
// (paths, bearer token, Idempotency-Key, bodies) and how it reads answers and problem+json errors.
// Prints each failed check and "csharp-client: N passed, M failed" last.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using Matchplane.Client;
using Matchplane.JoinAuth;

static class PlayerClientTest
{
    static readonly Checks T = new Checks("csharp-client");
    const string EdgeChallenge = "{\"v\":1, \"nonce\":\"AAEC\",\"mac\":\"x\"}";
    const string EdgeMeasurement = "{\"measurementId\":\"m-1\",\"region\":\"eu\",\"rttMs\":4,\"mac\":\"y\"}";

    static int Main(string[] args)
    {
        // The vectors' first token (mp-2026-01, player 2222..., match 1111...) is the assignment's join token.
        string vectorsPath = args.Length > 0 ? args[0] : "../../test/fixtures/join-auth-vectors.json";
        JsonValue vectors = MiniJson.Parse(File.ReadAllText(vectorsPath, Encoding.UTF8));
        JsonValue simple = vectors["tokens"].Array[0];
        string joinToken = simple["token"].Str;
        Dictionary<string, KeyValuePair<int, string>> answers = null;
        var api = new ApiStandIn(call =>
        {
            KeyValuePair<int, string> answer;
            return answers.TryGetValue(call.Method + " " + call.Path, out answer) ? answer : new KeyValuePair<int, string>(404, "{\"status\":404,\"code\":\"NOT_FOUND\"}");
        });
        int port = api.Port;
        var seen = api.Recorded;
        // Canned answers by "METHOD path", as the API gives them.
        answers = new Dictionary<string, KeyValuePair<int, string>>
        {
            { "POST /v1/sessions", new KeyValuePair<int, string>(201, "{\"token\":\"s3ss10n\",\"playerId\":\"22222222-2222-4222-8222-222222222222\",\"expiresAt\":\"2026-12-07T00:00:00Z\",\"deviceSecret\":\"d\"}") },
            { "GET /v1/queue/options", new KeyValuePair<int, string>(200, "{\"modes\":[{\"mode\":\"duel\",\"teamSize\":1,\"teamCount\":2}],\"regions\":[\"eu\",\"us\"],\"heartbeatIntervalMs\":5000," +
                "\"probeEdges\":{\"eu\":[\"udp://127.0.0.1:9\",\"http://127.0.0.1:" + port + "/edge/\"]}}") },
            // eu's edge (on this listener too): an opaque challenge, then a signed measurement.
            { "POST /edge/v1/probe/challenges", new KeyValuePair<int, string>(201, EdgeChallenge) },
            { "POST /edge/v1/probe/answers", new KeyValuePair<int, string>(200, EdgeMeasurement) },
            { "POST /v1/probes/measurements", new KeyValuePair<int, string>(200, "{\"measurementId\":\"m-1\",\"region\":\"eu\",\"rttMs\":4,\"estimateMs\":4,\"samplesMs\":[4]}") },
            // us has no edge: the API's own challenge and answer.
            { "POST /v1/probes/us/challenge", new KeyValuePair<int, string>(201, "{\"challengeId\":\"c-1\",\"region\":\"us\",\"nonce\":\"n-1\"}") },
            { "POST /v1/probes/us/answer", new KeyValuePair<int, string>(200, "{\"region\":\"us\",\"rttMs\":7,\"estimateMs\":7,\"samplesMs\":[7]}") },
            { "POST /v1/parties", new KeyValuePair<int, string>(201, "{\"partyId\":\"p-1\",\"leaderId\":\"22222222-2222-4222-8222-222222222222\",\"inviteCode\":\"INV1\",\"maxSize\":2,\"inviteExpiresAt\":\"2026-12-07T01:00:00Z\",\"members\":[{\"playerId\":\"22222222-2222-4222-8222-222222222222\",\"joinedAt\":\"2026-12-07T00:00:00Z\",\"probed\":true,\"regionsMeasured\":[\"eu\"]}]}") },
            { "POST /v1/parties/join", new KeyValuePair<int, string>(200, "{\"partyId\":\"p-1\",\"leaderId\":\"33333333-3333-4333-8333-333333333333\",\"members\":[]}") },
            { "POST /v1/queue/party-tickets", new KeyValuePair<int, string>(201, "{\"partyTicketId\":\"pt-1\",\"partyId\":\"p-1\",\"mode\":\"duel\",\"tickets\":[]}") },
            { "POST /v1/queue/tickets", new KeyValuePair<int, string>(201, "{\"id\":\"t-1\",\"playerId\":\"22222222-2222-4222-8222-222222222222\",\"mode\":\"duel\",\"state\":\"SEARCHING\",\"revision\":1,\"regionsMeasured\":[\"eu\"],\"predictedRttMs\":{\"eu\":4.5},\"enqueuedAt\":\"2026-12-07T00:00:00Z\",\"lastHeartbeatAt\":\"2026-12-07T00:00:00Z\",\"waitSeconds\":1.5,\"attributes\":{\"skill\":1500},\"estimatedWaitSeconds\":null}") },
            { "POST /v1/queue/tickets/t-1/heartbeat", new KeyValuePair<int, string>(200, "{\"id\":\"t-1\",\"playerId\":\"22222222-2222-4222-8222-222222222222\",\"mode\":\"duel\",\"state\":\"MATCHED\",\"revision\":2,\"regionsMeasured\":[\"eu\"],\"predictedRttMs\":{\"eu\":4.5},\"enqueuedAt\":\"2026-12-07T00:00:00Z\",\"lastHeartbeatAt\":\"2026-12-07T00:00:00Z\",\"waitSeconds\":1.5,\"attributes\":{\"skill\":1500},\"matchId\":\"11111111-1111-4111-8111-111111111111\"}") },
            { "GET /v1/matches/11111111-1111-4111-8111-111111111111/assignment", new KeyValuePair<int, string>(200,
                "{\"matchId\":\"11111111-1111-4111-8111-111111111111\",\"state\":\"ASSIGNMENT_READY\",\"region\":\"eu\",\"serverRegion\":\"eu\",\"serverId\":\"gs-1\",\"endpoint\":\"127.0.0.1:7777\",\"team\":1,\"expiresAt\":\"2026-12-07T00:10:00Z\",\"joinToken\":" + JsonText.Quote(joinToken) + "}") },
            { "GET /v1/matches/0f8e6c2a-5d1b-4c3e-9a7f-2b4d6e8f0a1c/assignment", new KeyValuePair<int, string>(409,
                "{\"type\":\"https://matchplane.dev/problems/assignment-not-ready\",\"title\":\"Conflict\",\"status\":409,\"code\":\"ASSIGNMENT_NOT_READY\",\"detail\":\"not yet\",\"matchState\":\"ALLOCATING\"}") },
            { "DELETE /v1/sessions/current", new KeyValuePair<int, string>(401, "{\"status\":401,\"code\":\"UNAUTHENTICATED\"}") },
        };

        try
        {
            var client = new PlayerClient("http://127.0.0.1:" + port + "/");
            Session session = client.CreateSessionAsync().Result;
            T.Check(client.SessionToken == "s3ss10n" && client.PlayerId == "22222222-2222-4222-8222-222222222222", "keeps the session token and player id");
            T.Check(session.Token == "s3ss10n" && session.ExpiresAt == "2026-12-07T00:00:00Z" && session.DeviceSecret == "d", "answers the session typed",
                session.ExpiresAt + " " + session.DeviceSecret);
            T.Check(seen[0].Path == "/v1/sessions" && seen[0].Authorization == null && !string.IsNullOrEmpty(seen[0].IdempotencyKey) && seen[0].Body == "{}",
                "signs in as a new guest with an Idempotency-Key and no bearer", seen[0].Path + " " + seen[0].Authorization + " " + seen[0].Body);

            QueueOptions options = client.QueueOptionsAsync().Result;
            T.Check(options.HeartbeatIntervalMs == 5000 && seen[1].Authorization == "Bearer s3ss10n", "reads queue options with the session token");
            T.Check(options.Modes.Count == 1 && options.Modes[0].Mode == "duel" && options.Modes[0].TeamCount == 2 && options.Modes[0].SearchTimeoutMs == null &&
                string.Join(",", options.Regions) == "eu,us" && options.ProbeEdges["eu"].Count == 2 && !options.ProbeEdges.ContainsKey("us"),
                "answers the queue options typed: modes, regions, probe edges");

            Ticket ticket = client.CreateTicketAsync("duel", "{\"skill\":1500}").Result;
            T.Check(ticket.Id == "t-1" && ticket.State == "SEARCHING" && ticket.Revision == 1 && ticket.WaitSeconds == 1.5 && ticket.PredictedRttMs["eu"] == 4.5 &&
                ticket.MatchId == null && ticket.EstimatedWaitSeconds == null && ticket.Attributes["skill"].Long == 1500, "answers the ticket typed");
            T.Check( seen[2].Body == "{\"mode\":\"duel\",\"attributes\":{\"skill\":1500}}" && seen[2].IdempotencyKey != null,
                "queues with the mode and attributes and an Idempotency-Key", seen[2].Body);
            Ticket beat = client.HeartbeatAsync("t-1").Result;
            T.Check(beat.State == "MATCHED" && beat.MatchId == "11111111-1111-4111-8111-111111111111" && seen[3].IdempotencyKey != null && seen[3].IdempotencyKey != seen[2].IdempotencyKey,
                "heartbeats with a fresh Idempotency-Key");

            {
                int before = seen.Count;
                ProbeAllResult probed = client.ProbeAllAsync(new[] { "eu", "us", "mars" }, 2).Result;
                List<SeenCall> probes;
                lock (seen) probes = seen.GetRange(before, seen.Count - before);
                string route = string.Join(",", probes.Select(c => c.Method + " " + c.Path));
                // This edge has no rounds (404): the refused round's challenge is dropped, then pairs.
                T.Check(route == "GET /v1/queue/options," +
                    "POST /edge/v1/probe/challenges,POST /edge/v1/probe/rounds," +
                    "POST /edge/v1/probe/challenges,POST /edge/v1/probe/answers,POST /v1/probes/measurements," +
                    "POST /edge/v1/probe/challenges,POST /edge/v1/probe/answers,POST /v1/probes/measurements," +
                    "POST /v1/probes/us/challenge,POST /v1/probes/us/answer,POST /v1/probes/us/challenge,POST /v1/probes/us/answer," +
                    "POST /v1/probes/mars/challenge", "probes each region in turn: at eu's http edge, at the API for us", route);
                T.Check(probes[1].Body == "{\"playerId\":\"22222222-2222-4222-8222-222222222222\",\"region\":\"eu\"}" && probes[1].Authorization == null,
                    "asks the edge for a challenge for this player and region, without the session token", probes[1].Body);
                string answer = "{\"playerId\":\"22222222-2222-4222-8222-222222222222\",\"region\":\"eu\",\"challenge\":" + EdgeChallenge + "}";
                T.Check(probes[2].Body == answer && probes[4].Body == answer, "answers the edge with its challenge byte for byte, in a round or an answer", probes[4].Body);
                T.Check(probes[5].Body == EdgeMeasurement && probes[5].Authorization == "Bearer s3ss10n", "hands the edge's measurement to the API unchanged", probes[5].Body);
                T.Check(probes[9].IdempotencyKey != null && probes[10].Body == "{\"challengeId\":\"c-1\",\"nonce\":\"n-1\"}", "answers the API's challenge with its id and nonce", probes[10].Body);
                T.Check(probed.Measured["eu"].EstimateMs == 4 && probed.Measured["eu"].MeasurementId == "m-1" && probed.Measured["us"].EstimateMs == 7 && probed.Measured["us"].MeasurementId == null, "answers each region's last estimate");
                Exception mars;
                T.Check(probed.Failed.TryGetValue("mars", out mars) && ((MatchplaneApiException)mars).Status == 404 && probed.Failed.Count == 1,
                    "a region that fails is reported, not thrown");
            }

            {
                Party party = client.CreatePartyAsync().Result;
                T.Check(party.Members.Count == 1 && party.Members[0].Probed && party.LeaderId == party.Members[0].PlayerId && party.MaxSize == 2, "answers the party typed");
                T.Check(party.InviteCode == "INV1" && seen[seen.Count - 1].IdempotencyKey != null, "creates a party with an Idempotency-Key");
                client.JoinPartyAsync("INV\"2").Wait();
                T.Check(seen[seen.Count - 1].Body == "{\"inviteCode\":\"INV\\\"2\"}", "joins a party by its invite code", seen[seen.Count - 1].Body);
                client.EnqueuePartyAsync("duel").Wait();
                T.Check(seen[seen.Count - 1].Path == "/v1/queue/party-tickets" && seen[seen.Count - 1].Body == "{\"mode\":\"duel\"}" && seen[seen.Count - 1].IdempotencyKey != null,
                    "the leader queues the party for a mode");
            }

            try
            {
                client.AssignmentAsync("0f8e6c2a-5d1b-4c3e-9a7f-2b4d6e8f0a1c").Wait();
                T.Check(false, "an assignment not ready throws");
            }
            catch (AggregateException e)
            {
                var refused = e.InnerException as MatchplaneApiException;
                T.Check(refused != null && refused.Status == 409 && refused.Code == "ASSIGNMENT_NOT_READY" && refused.Title == "Conflict" && refused.Detail == "not yet" &&
                    refused.Type == "https://matchplane.dev/problems/assignment-not-ready" && refused.ProblemString("matchState") == "ALLOCATING",
                    "an assignment not ready throws its problem's type, title, status, detail and code",
                    e.InnerException.GetType().Name + " " + e.InnerException.Message);
            }

            {
                Assignment assignment = client.AssignmentAsync("11111111-1111-4111-8111-111111111111").Result;
                T.Check(assignment.Team == 1 && assignment.ServerId == "gs-1" && assignment.Endpoint == "127.0.0.1:7777" && assignment.State == "ASSIGNMENT_READY",
                    "answers the assignment typed");
                // What a game server then does with the token the player presents.
                var keys = KeySet.FromJsonMap("{\"mp-2026-01\":" + JsonText.Quote(vectors["keys"]["mp-2026-01"].Str) + "}");
                var verification = new JoinTokenVerifier(keys).Verify(assignment.JoinToken,
                    new Expectation { ServerId = "gs-1", MatchId = "11111111-1111-4111-8111-111111111111", Now = simple["claims"]["issuedAt"].Long });
                T.Check(verification.Ok && verification.Claims.PlayerId == client.PlayerId, "the assignment's join token verifies for this player",
                    verification.Reason);
            }

            client.EndSessionAsync().Wait();
            T.Check(client.SessionToken == null && seen[seen.Count - 1].Method == "DELETE", "ending a session already gone (401) forgets the token");
        }
        catch (Exception e)
        {
            T.Check(false, "player client", e.ToString());
        }
        finally
        {
            api.Stop();
        }
        ProbesInRounds();
        return T.Summary();
    }

    // eu's edge with rounds, on its own listener, each round taking 300 ms; both servers log their
    // calls in one timeline, so where the recordings fall among the samples shows.
    static void ProbesInRounds()
    {
        const string player = "22222222-2222-4222-8222-222222222222";
        int issued = 0;
        var timeline = new List<string>();
        // Written unlike MiniJson would: spacing, a brace and a key name inside strings, nesting.
        Func<int, string> challengeText = n => "{ \"v\":1,\"nonce\":\"n" + n + "\",\"note\":\"a \\\"}\\\" b\",\"x\":[1,{\"challenge\":2}] }";
        Func<int, string> measurementText = n => "{\"measurementId\":\"m" + n + "\",\"samplesMs\":[4.25], \"tag\":\"measurement\"}";
        var edge = new ApiStandIn(call =>
        {
            lock (timeline) timeline.Add(call.Path.Substring("/v1/probe/".Length));
            if (call.Path == "/v1/probe/challenges") return new KeyValuePair<int, string>(201, challengeText(issued++));
            if (call.Path == "/v1/probe/rounds")
            {
                Thread.Sleep(300);
                return new KeyValuePair<int, string>(200, "{\"measurement\": " + measurementText(issued - 1) + " ,\"challenge\":" + challengeText(issued++) + "}");
            }
            return new KeyValuePair<int, string>(200, measurementText(issued - 1));
        });
        var api = new ApiStandIn(call =>
        {
            if (call.Path == "/v1/sessions") return new KeyValuePair<int, string>(201, "{\"token\":\"s\",\"playerId\":\"" + player + "\",\"expiresAt\":\"2026-12-07T00:00:00Z\"}");
            if (call.Path == "/v1/queue/options")
                return new KeyValuePair<int, string>(200, "{\"modes\":[],\"regions\":[\"eu\"],\"heartbeatIntervalMs\":5000,\"probeEdges\":{\"eu\":[\"" + edge.BaseUrl + "\"]}}");
            lock (timeline) timeline.Add("RECORD");
            return new KeyValuePair<int, string>(200, "{\"measurementId\":\"m\",\"region\":\"eu\",\"rttMs\":4,\"estimateMs\":4,\"samplesMs\":[4]}");
        });
        try
        {
            var client = new PlayerClient(api.BaseUrl);
            client.CreateSessionAsync().Wait();
            client.QueueOptionsAsync().Wait();
            // 500 ms to record within: the first chain is 600 ms old after its second round, so its
            // third sample is a plain answer.
            ProbeResult result = client.ProbeAsync("eu", 5, 500).Result;
            List<SeenCall> atEdge = edge.Calls();
            string route;
            lock (timeline) route = string.Join(",", timeline);
            T.Check(route == "challenges,rounds,rounds,answers,RECORD,RECORD,RECORD,challenges,rounds,answers,RECORD,RECORD",
                "takes samples in rounds and records a chain once it ends, nothing on the wire, a chain ending once it is recordWithinMs old", route);
            T.Check(atEdge[2].Body == "{\"playerId\":\"" + player + "\",\"region\":\"eu\",\"challenge\":" + challengeText(1) + "}" &&
                atEdge[3].Body.EndsWith("\"challenge\":" + challengeText(2) + "}", StringComparison.Ordinal),
                "answers each challenge a round brought byte for byte", atEdge[2].Body);
            List<string> handedOver = api.Calls().Where(c => c.Path == "/v1/probes/measurements").Select(c => c.Body).ToList();
            T.Check(handedOver.SequenceEqual(new[] { 0, 1, 2, 3, 4 }.Select(measurementText)) && result.EstimateMs == 4,
                "hands every measurement to the API byte for byte, in order", string.Join(" | ", handedOver));
            int before = api.Calls().Count + atEdge.Count;
            foreach (int samples in new[] { 0, -1, EdgeProber.MaxSamples + 1 })
            {
                try { client.ProbeAsync("eu", samples).Wait(); T.Check(false, samples + " samples is refused"); }
                catch (AggregateException e) { T.Check(e.InnerException is ArgumentOutOfRangeException && e.InnerException.Message.Contains("from 1 to 50"), samples + " samples is refused", e.InnerException.Message); }
            }
            foreach (int recordWithinMs in new[] { 0, -1 })
            {
                try { client.ProbeAsync("eu", 3, recordWithinMs).Wait(); T.Check(false, "recording within " + recordWithinMs + " ms is refused"); }
                catch (AggregateException e) { T.Check(e.InnerException is ArgumentOutOfRangeException && e.InnerException.Message.Contains("positive number of milliseconds"), "recording within " + recordWithinMs + " ms is refused", e.InnerException.Message); }
            }
            T.Check(api.Calls().Count + edge.Calls().Count == before, "a refused sample count or recordWithinMs sends nothing");
        }
        catch (Exception e)
        {
            T.Check(false, "probes in rounds", e.ToString());
        }
        finally
        {
            edge.Stop();
            api.Stop();
        }
    }
}
