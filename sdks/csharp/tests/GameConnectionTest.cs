// Joining a game server (GameConnection) against a scripted WebSocket server: the join message
// carries the token, joined admits the player, later messages and ended are delivered, and a
// refusal surfaces its close code. Prints each failed check and "csharp-game: N passed, M failed".
using System;
using System.Linq;
using System.Threading.Tasks;
using Matchplane.Client;

static class GameConnectionTest
{
    static readonly Checks T = new Checks("csharp-game");

    static void PlayedChecks()
    {
        var server = new TestWebSocketServer();
        string joinMessage = null, path = null;
        var script = Task.Run(async () =>
        {
            var socket = await server.AcceptAsync();
            path = socket.Path;
            joinMessage = await socket.ReceiveTextAsync();
            await socket.SendTextAsync("{\"type\":\"joined\",\"playerId\":\"p-1\",\"team\":1}");
            await socket.SendTextAsync("{\"type\":\"started\",\"durationMs\":400}");
            await socket.SendTextAsync("{\"type\":\"tick\",\"seq\":1,\"remainingMs\":200}");
            await socket.SendTextAsync("{\"type\":\"ended\",\"outcome\":\"COMPLETED\",\"winningTeam\":0}");
            await socket.CloseAsync(1000, "match over");
        });
        try
        {
            GameConnection game = GameConnection.JoinAsync("127.0.0.1:" + server.Port, "tok\"en").Result;
            T.Check(path == "/join" && joinMessage == "{\"type\":\"join\",\"token\":\"tok\\\"en\"}", "joins at /join with the token in the first message", path + " " + joinMessage);
            T.Check(game.PlayerId == "p-1" && game.Team == 1, "joined names the player and its team");
            T.Check(game.Ended.Wait(5000) && game.Ended.Result.Outcome == "COMPLETED" && game.Ended.Result.WinningTeam == 0, "ended completes with the outcome and winner");
            T.Check(game.Closed.Wait(5000) && game.Closed.Result == GameCloseCode.Normal, "the close code is reported", game.Closed.IsCompleted ? game.Closed.Result.ToString() : "open");
            T.Check(string.Join(",", game.Messages().Select(m => m["type"].Str)) == "started,tick,ended", "every message after joined is kept in order");
            script.Wait(2000);
        }
        finally { server.Stop(); }
    }

    static void RefusedChecks()
    {
        var server = new TestWebSocketServer();
        var script = Task.Run(async () =>
        {
            var socket = await server.AcceptAsync();
            await socket.ReceiveTextAsync();
            await socket.CloseAsync(GameCloseCode.InvalidToken, "invalid join token: EXPIRED");
        });
        try
        {
            GameConnection.JoinAsync("127.0.0.1:" + server.Port, "expired").Wait();
            T.Check(false, "a refused join throws");
        }
        catch (AggregateException e)
        {
            var refused = e.InnerException as GameJoinRefusedException;
            T.Check(refused != null && refused.Code == GameCloseCode.InvalidToken && refused.Reason == "invalid join token: EXPIRED",
                "a refused join throws the server's close code and reason", e.InnerException.ToString());
        }
        finally
        {
            script.Wait(2000);
            server.Stop();
        }
    }

    static int Main()
    {
        try { PlayedChecks(); }
        catch (Exception e) { T.Check(false, "game connection", e.ToString()); }
        try { RefusedChecks(); }
        catch (Exception e) { T.Check(false, "refused join", e.ToString()); }
        return T.Summary();
    }
}
