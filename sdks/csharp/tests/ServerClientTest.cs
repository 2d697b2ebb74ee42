// The server client against a local HttpListener standing in for the API: the routes, the
// workload credential, the bodies, backfill's Idempotency-Key, heartbeats ending on 401, and the
// roster verified with the vectors' first roster. Prints "csharp-server: N passed, M failed".
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using Matchplane.Client;
using Matchplane.JoinAuth;

static class ServerClientTest
{
    static readonly Checks T = new Checks("csharp-server");

    static int Main(string[] args)
    {
        string vectorsPath = args.Length > 0 ? args[0] : "../../test/fixtures/join-auth-vectors.json";
        JsonValue vectors = MiniJson.Parse(File.ReadAllText(vectorsPath, Encoding.UTF8));
        JsonValue roster = vectors["rosters"].Array[0];
        string serverId = roster["serverId"].Str, matchId = roster["matchId"].Str;
        // The roster route's answer: the vector's entries (token as joinToken) and its signed manifest.
        string rosterAnswer = "{\"matchId\":" + JsonText.Quote(matchId) + ",\"serverId\":" + JsonText.Quote(serverId) + ",\"entries\":[" +
            string.Join(",", roster["entries"].Array.Select(e => "{\"playerId\":" + JsonText.Quote(e["playerId"].Str) + ",\"team\":0,\"joinToken\":" + JsonText.Quote(e["token"].Str) + "}")) +
            "],\"manifest\":" + ManifestJson(roster["manifest"]) + "}";

        int heartbeats = 0;
        string prefix = "/v1/servers/" + serverId + "/";
        var api = new ApiStandIn(call =>
        {
            string route = call.Method + " " + call.Path.Replace(prefix, "");
            if (route == "GET roster") return new KeyValuePair<int, string>(200, rosterAnswer);
            // The third heartbeat finds the allocation ended.
            if (route == "POST heartbeat" && Interlocked.Increment(ref heartbeats) >= 3)
                return new KeyValuePair<int, string>(401, "{\"status\":401,\"code\":\"ALLOCATION_ENDED\"}");
            if (route.StartsWith("POST backfills", StringComparison.Ordinal))
                return new KeyValuePair<int, string>(201, "{\"requestId\":\"b-1\",\"matchId\":" + JsonText.Quote(matchId) + ",\"team\":0,\"slots\":1,\"state\":\"OPEN\"," +
                    "\"expiresAt\":\"2026-12-07T00:00:30Z\",\"playerIds\":[],\"revision\":1" + (route.EndsWith("/connect", StringComparison.Ordinal) ? ",\"noShowPlayerIds\":[\"p-4\"]" : "") + "}");
            if (route == "POST initial-connect")
                return new KeyValuePair<int, string>(200, "{\"matchId\":" + JsonText.Quote(matchId) + ",\"state\":\"IN_PROGRESS\",\"revision\":4,\"noShowPlayerIds\":[\"p-9\"]}");
            // register, result and heartbeat: the match (and the server, for register and heartbeat).
            return new KeyValuePair<int, string>(200, "{\"matchId\":" + JsonText.Quote(matchId) + ",\"serverId\":" + JsonText.Quote(serverId) + ",\"state\":\"OK\",\"revision\":1}");
        });
        try
        {
            var client = new ServerClient(api.BaseUrl, serverId, "cr3d");
            ServerMatchState registered = client.RegisterAsync("sha256:abc").Result;
            T.Check(registered.ServerId == serverId && registered.MatchId == matchId && registered.Revision == 1, "answers the registration typed");
            Roster fetched = client.RosterAsync().Result;
            T.Check(fetched.Entries.Count == roster["entries"].Array.Count && fetched.Manifest.MatchId == matchId, "answers the roster typed");
            var keys = KeySet.FromJsonMap("{\"mp-2026-01\":" + JsonText.Quote(vectors["keys"]["mp-2026-01"].Str) + "}");
            long now = roster["expect"]["now"].Long;
            Verification verified = client.VerifyRoster(new JoinTokenVerifier(keys), fetched, matchId, now);
            T.Check(verified.Ok, "the fetched roster verifies against its signed manifest", verified.Reason + " " + verified.Message);
            T.Check(client.VerifyRoster(new JoinTokenVerifier(keys), fetched, "00000000-0000-4000-8000-000000000000", now).Reason == "WRONG_MATCH",
                "a roster for another match is refused");
            ServerMatchState connected = client.InitialConnectAsync(new[] { "p-1", "p\"2" }).Result;
            T.Check(connected.State == "IN_PROGRESS" && connected.NoShowPlayerIds.SequenceEqual(new[] { "p-9" }), "answers initial connect typed, with its no-shows");
            ServerMatchState result = client.ResultAsync("COMPLETED", 1, "{\"p-1\":3}").Result;
            T.Check(!result.AlreadyRecorded && result.MatchId == matchId, "answers the result typed");
            Backfill requested = client.RequestBackfillAsync(0, 1, 30).Result;
            T.Check(requested.RequestId == "b-1" && requested.State == "OPEN" && requested.RosterRevision == null && requested.PlayerIds.Count == 0,
                "answers the backfill request typed");
            client.AcceptBackfillAsync("b-1", 2).Wait();
            Backfill reported = client.ReportBackfillConnectAsync("b-1", new[] { "p-3" }).Result;
            T.Check(reported.NoShowPlayerIds.SequenceEqual(new[] { "p-4" }), "answers the connect report with its no-shows");
            MatchplaneApiException ended = client.RunHeartbeatsAsync(CancellationToken.None, 10).Result;
            T.Check(ended != null && ended.Code == "ALLOCATION_ENDED" && heartbeats == 3, "heartbeats go on until the allocation ended (401)");

            List<SeenCall> calls = api.Calls();
            T.Check(calls.All(c => c.Authorization == "Bearer cr3d"), "every call carries the workload credential");
            string expected = "POST register {\"protocolVersion\":1,\"imageDigest\":\"sha256:abc\"}|GET roster |" +
                "POST initial-connect {\"connectedPlayerIds\":[\"p-1\",\"p\\\"2\"]}|POST result {\"outcome\":\"COMPLETED\",\"winningTeam\":1,\"scores\":{\"p-1\":3}}|" +
                "POST backfills {\"team\":0,\"slots\":1,\"timeoutSeconds\":30}|POST backfills/b-1/accept {\"rosterRevision\":2}|" +
                "POST backfills/b-1/connect {\"connectedPlayerIds\":[\"p-3\"]}|POST heartbeat |POST heartbeat |POST heartbeat ";
            string actual = string.Join("|", calls.Select(c => c.Method + " " + c.Path.Replace(prefix, "") + " " + c.Body));
            T.Check(actual == expected, "calls each server route with its body", actual);
            // The backfill route takes no Idempotency-Key: a repeat of the same open request answers it.
            T.Check(calls.All(c => c.IdempotencyKey == null), "no server call carries an Idempotency-Key (no server route takes one)");
        }
        catch (Exception e)
        {
            T.Check(false, "server client", e.ToString());
        }
        finally
        {
            api.Stop();
        }
        return T.Summary();
    }

    /// <summary>The vector's manifest object written back as JSON (strings and integers only).</summary>
    static string ManifestJson(JsonValue manifest)
    {
        return "{" + string.Join(",", manifest.Object.Select(m => JsonText.Quote(m.Key) + ":" +
            (m.Value.Kind == JsonKind.String ? JsonText.Quote(m.Value.String) : m.Value.Long.ToString()))) + "}";
    }
}
