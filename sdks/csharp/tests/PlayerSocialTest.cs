// The player client's lobbies, block and avoid lists, ready-check answers and queue options against a local
// HttpListener standing in for the API: each call's route, body, retry mode (Idempotency-Key or
// none) and typed answer, and refusals as MatchplaneApiException. Prints each failed check and
// "csharp-social: N passed, M failed" last.
using System;
using System.Collections.Generic;
using System.Linq;
using Matchplane.Client;

static class PlayerSocialTest
{
    static readonly Checks T = new Checks("csharp-social");
    const string Owner = "22222222-2222-4222-8222-222222222222", Guest = "33333333-3333-4333-8333-333333333333";
    const string MatchId = "11111111-1111-4111-8111-111111111111";

    static string LobbyJson(string state, string extra)
    {
        return "{\"lobbyId\":\"l-1\",\"ownerId\":\"" + Owner + "\",\"mode\":\"hunt\",\"size\":5,\"teamCount\":2,\"teamSize\":4,\"teamSizes\":[4,1]," +
            "\"ranked\":false,\"state\":\"" + state + "\",\"expiresAt\":\"2026-12-07T01:00:00Z\"," + extra + "}";
    }

    static readonly string OpenLobby = LobbyJson("OPEN", "\"inviteCode\":\"LOBBY1\",\"members\":[{\"playerId\":\"" + Owner + "\",\"joinedAt\":\"2026-12-07T00:00:00Z\"}," +
        "{\"playerId\":\"" + Guest + "\",\"joinedAt\":\"2026-12-07T00:00:01Z\",\"team\":1}]");
    static readonly string StartedLobby = LobbyJson("STARTED", "\"region\":\"eu\",\"matchId\":\"" + MatchId + "\",\"members\":[" +
        "{\"playerId\":\"" + Owner + "\",\"joinedAt\":\"2026-12-07T00:00:00Z\",\"team\":0,\"ticketId\":\"t-owner\"}," +
        "{\"playerId\":\"" + Guest + "\",\"joinedAt\":\"2026-12-07T00:00:01Z\",\"team\":1,\"ticketId\":\"t-guest\"}]");
    const string Blocks = "{\"blocked\":[{\"playerId\":\"" + Guest + "\",\"blockedAt\":\"2026-12-07T00:00:00Z\"}],\"maxEntries\":100}";
    const string Avoids = "{\"avoided\":[{\"playerId\":\"" + Guest + "\",\"avoidedAt\":\"2026-12-07T00:00:02Z\"}],\"maxEntries\":50}";
    // Avoid targets the stand-in refuses as the API does, and one whose first PUT finds the replica busy.
    const string Unknown = "44444444-4444-4444-8444-444444444444", Overflow = "55555555-5555-4555-8555-555555555555", Busy = "66666666-6666-4666-8666-666666666666";

    static int Main()
    {
        var answers = new Dictionary<string, StandInReply>
        {
            { "POST /v1/sessions", new StandInReply(201, "{\"token\":\"s\",\"playerId\":\"" + Owner + "\",\"expiresAt\":\"2026-12-08T00:00:00Z\"}") },
            { "GET /v1/queue/options", new StandInReply(200, "{\"modes\":[{\"mode\":\"hunt\",\"teamSize\":4,\"teamCount\":2,\"teamSizes\":[4,1],\"queueDepth\":3," +
                "\"fill\":[{\"afterMs\":30000,\"minPlayers\":3}],\"attributes\":[],\"acceptanceTimeoutMs\":15000,\"rejoinGraceMs\":60000}],\"regions\":[\"eu\"],\"heartbeatIntervalMs\":5000}") },
            { "POST /v1/lobbies", new StandInReply(201, OpenLobby) },
            { "POST /v1/lobbies/join", new StandInReply(200, OpenLobby) },
            { "GET /v1/lobbies/current", new StandInReply(200, StartedLobby) },
            { "POST /v1/lobbies/current/kick", new StandInReply(200, OpenLobby) },
            { "POST /v1/lobbies/current/teams", new StandInReply(200, OpenLobby) },
            { "POST /v1/lobbies/current/start", new StandInReply(200, StartedLobby) },
            { "POST /v1/lobbies/current/leave", new StandInReply(204, "") },
            { "GET /v1/blocks", new StandInReply(200, Blocks) },
            { "PUT /v1/blocks/" + Guest, new StandInReply(200, Blocks) },
            { "DELETE /v1/blocks/" + Guest, new StandInReply(200, "{\"blocked\":[],\"maxEntries\":100}") },
            { "GET /v1/avoids", new StandInReply(200, Avoids) },
            { "PUT /v1/avoids/" + Guest, new StandInReply(200, Avoids) },
            { "PUT /v1/avoids/" + Busy, new StandInReply(200, Avoids) },
            { "DELETE /v1/avoids/" + Guest, new StandInReply(200, "{\"avoided\":[],\"maxEntries\":50}") },
            { "PUT /v1/avoids/" + Owner, new StandInReply(400, "{\"status\":400,\"code\":\"VALIDATION_FAILED\",\"detail\":\"A player cannot avoid itself\"}") },
            { "PUT /v1/avoids/" + Unknown, new StandInReply(404, "{\"status\":404,\"code\":\"PLAYER_NOT_FOUND\",\"detail\":\"No player has id " + Unknown + "\"}") },
            { "PUT /v1/avoids/" + Overflow, new StandInReply(409, "{\"status\":409,\"code\":\"AVOID_LIST_FULL\",\"detail\":\"The avoid list holds 50 players\"}") },
            { "POST /v1/matches/" + MatchId + "/accept", new StandInReply(200, "{\"matchId\":\"" + MatchId + "\",\"answer\":\"ACCEPTED\",\"matchState\":\"ALLOCATING\"}") },
            { "POST /v1/matches/" + MatchId + "/decline", new StandInReply(409, "{\"status\":409,\"code\":\"ACCEPTANCE_ALREADY_ANSWERED\",\"detail\":\"already accepted\"}") },
            { "POST /v1/queue/party-tickets", new StandInReply(201, "{\"partyTicketId\":\"pt-1\",\"partyId\":\"p-1\",\"mode\":\"hunt\",\"tickets\":[]}") },
        };
        bool busyOnce = true;
        var api = new ApiStandIn(call =>
        {
            StandInReply reply;
            if (call.Method + " " + call.Path == "PUT /v1/avoids/" + Busy && busyOnce)
            {
                busyOnce = false;
                return new StandInReply(503, "{\"status\":503,\"code\":\"UNAVAILABLE\"}");
            }
            return answers.TryGetValue(call.Method + " " + call.Path, out reply) ? reply : new StandInReply(404, "{\"status\":404,\"code\":\"NOT_FOUND\"}");
        });
        Func<SeenCall> last = () => api.Calls().Last();
        try
        {
            var client = new PlayerClient(api.BaseUrl);
            client.CreateSessionAsync().Wait();

            QueueModeOption hunt = client.QueueOptionsAsync().Result.Modes.Single();
            T.Check(hunt.TeamSizes.SequenceEqual(new long[] { 4, 1 }) && hunt.TeamSize == 4, "a mode's teamSizes are read", string.Join(",", hunt.TeamSizes));
            T.Check(hunt.Fill.Count == 1 && hunt.Fill[0].AfterMs == 30000 && hunt.Fill[0].MinPlayers == 3, "a mode's fill steps are read");
            T.Check(hunt.AcceptanceTimeoutMs == 15000 && hunt.RejoinGraceMs == 60000, "a mode's ready check and rejoin grace are read");

            Lobby created = client.Lobbies.CreateAsync("hunt", 5, "eu", true).Result;
            T.Check(last().Body == "{\"mode\":\"hunt\",\"size\":5,\"region\":\"eu\",\"ranked\":true}" && last().IdempotencyKey != null,
                "creates a lobby with its options and an Idempotency-Key", last().Body);
            T.Check(created.InviteCode == "LOBBY1" && created.State == "OPEN" && created.TeamSizes.SequenceEqual(new long[] { 4, 1 }) && created.TeamSize == 4 &&
                created.Members.Count == 2 && created.Members[0].Team == null && created.Members[1].Team == 1 && created.Region == null && !created.Ranked,
                "answers the lobby typed: invite code, teamSizes, members and their teams");
            client.Lobbies.CreateAsync("hunt").Wait();
            T.Check(last().Body == "{\"mode\":\"hunt\"}", "options left out are not sent", last().Body);

            client.Lobbies.JoinAsync("LOB\"BY").Wait();
            T.Check(last().Path == "/v1/lobbies/join" && last().Body == "{\"inviteCode\":\"LOB\\\"BY\"}" && last().IdempotencyKey == null, "joins by invite code", last().Body);
            client.Lobbies.KickAsync(Guest).Wait();
            T.Check(last().Body == "{\"playerId\":\"" + Guest + "\"}", "the owner kicks a member by id", last().Body);
            client.Lobbies.SetTeamsAsync(new[] { new[] { Owner, "a" }, new[] { Guest } }).Wait();
            T.Check(last().Body == "{\"teams\":[[\"" + Owner + "\",\"a\"],[\"" + Guest + "\"]]}", "the owner arranges the teams", last().Body);
            Lobby started = client.Lobbies.StartAsync().Result;
            T.Check(last().Path == "/v1/lobbies/current/start" && started.State == "STARTED" && started.MatchId == MatchId && started.TicketOf(Owner) == "t-owner" &&
                started.Region == "eu", "the owner starts it: the match and each member's ticket");
            T.Check(client.Lobbies.WaitForStartAsync(5000, 10).Result == "t-owner" && last().Method == "GET" && last().Path == "/v1/lobbies/current",
                "a member waits for the start and gets its own ticket");
            client.Lobbies.LeaveAsync().Wait();
            T.Check(last().Path == "/v1/lobbies/current/leave" && last().Method == "POST", "leaves the lobby (204)");

            BlockList blocked = client.BlockPlayerAsync(Guest).Result;
            T.Check(last().Method == "PUT" && last().Path == "/v1/blocks/" + Guest && last().Authorization == "Bearer s", "blocks a player with PUT /v1/blocks/{id}");
            T.Check(blocked.Blocked.Single().PlayerId == Guest && blocked.MaxEntries == 100, "answers the block list typed");
            T.Check(client.BlockListAsync().Result.Blocked.Count == 1 && last().Method == "GET", "reads the block list");
            T.Check(client.UnblockPlayerAsync(Guest).Result.Blocked.Count == 0 && last().Method == "DELETE", "unblocks a player");

            AvoidListChecks(client, api);

            ReadyCheckAnswer accepted = client.AcceptMatchAsync(MatchId).Result;
            T.Check(last().Path == "/v1/matches/" + MatchId + "/accept" && last().IdempotencyKey == null && accepted.Answer == "ACCEPTED" && accepted.MatchState == "ALLOCATING",
                "accepts the ready check and reads the match's state after it");
            try
            {
                client.DeclineMatchAsync(MatchId).Wait();
                T.Check(false, "a second answer is refused");
            }
            catch (AggregateException e)
            {
                var refused = e.InnerException as MatchplaneApiException;
                T.Check(refused != null && refused.Status == 409 && refused.Code == "ACCEPTANCE_ALREADY_ANSWERED" && last().Path.EndsWith("/decline", StringComparison.Ordinal),
                    "a decline after an accept throws 409 ACCEPTANCE_ALREADY_ANSWERED", e.InnerException.Message);
            }

            client.EnqueuePartyAsync("hunt", "{\"role\":[\"hunter\"]}", new Dictionary<string, IList<string>> { { Guest, new[] { "monster" } } }).Wait();
            T.Check(last().Body == "{\"mode\":\"hunt\",\"attributes\":{\"role\":[\"hunter\"]},\"memberRoles\":{\"" + Guest + "\":[\"monster\"]}}" && last().IdempotencyKey != null,
                "the leader queues the party with every member's attributes and a member's own roles", last().Body);
        }
        catch (Exception e)
        {
            T.Check(false, "social calls", e.ToString());
        }
        finally
        {
            api.Stop();
        }
        return T.Summary();
    }

    static void AvoidListChecks(PlayerClient client, ApiStandIn api)
    {
        Func<SeenCall> last = () => api.Calls().Last();
        AvoidList avoided = client.AvoidPlayerAsync(Guest).Result;
        T.Check(last().Method == "PUT" && last().Path == "/v1/avoids/" + Guest && last().Authorization == "Bearer s", "avoids a player with PUT /v1/avoids/{id}");
        T.Check(avoided.Avoided.Single().PlayerId == Guest && avoided.Avoided[0].AvoidedAt == "2026-12-07T00:00:02Z" && avoided.MaxEntries == 50,
            "answers the avoid list typed");
        T.Check(client.AvoidListAsync().Result.Avoided.Count == 1 && last().Method == "GET" && last().Path == "/v1/avoids", "reads the avoid list");
        T.Check(client.UnavoidPlayerAsync(Guest).Result.Avoided.Count == 0 && last().Method == "DELETE" && last().Path == "/v1/avoids/" + Guest,
            "stops avoiding a player with DELETE /v1/avoids/{id}");

        client.AvoidPlayerAsync(Busy).Wait();
        List<SeenCall> busy = api.Calls().Where(c => c.Path == "/v1/avoids/" + Busy).ToList();
        T.Check(busy.Count == 2 && busy.All(c => c.IdempotencyKey == null), "an avoid is retried after a 503, without an Idempotency-Key", busy.Count + " calls");

        var refusals = new[] { new { Id = Owner, Status = 400, Code = "VALIDATION_FAILED", Why = "avoiding itself" },
            new { Id = Unknown, Status = 404, Code = "PLAYER_NOT_FOUND", Why = "an unknown player" },
            new { Id = Overflow, Status = 409, Code = "AVOID_LIST_FULL", Why = "a full list" } };
        foreach (var refusal in refusals)
        {
            try
            {
                client.AvoidPlayerAsync(refusal.Id).Wait();
                T.Check(false, refusal.Why + " is refused");
            }
            catch (AggregateException e)
            {
                var refused = e.InnerException as MatchplaneApiException;
                int sent = api.Calls().Count(c => c.Path == "/v1/avoids/" + refusal.Id);
                T.Check(refused != null && refused.Status == refusal.Status && refused.Code == refusal.Code && refused.Method == "PUT" && sent == 1,
                    refusal.Why + " throws " + refusal.Status + " " + refusal.Code + ", sent once", e.InnerException.Message + " (" + sent + " calls)");
            }
        }
    }
}
