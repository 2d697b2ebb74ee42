// The live journey's avoid-list steps (live/LiveJourney.cs), before the duel: three guests of their
// own (x, y, z; they never queue, so the duel's players are avoided by nobody) on a stack whose
// avoid lists hold one player (PLAYER_AVOID_LIST_MAX_ENTRIES=1, test/sdk-live/csharp-live.spec.ts).
// x avoids y (the list answered typed), reads it, is refused z (409 AVOID_LIST_FULL), itself (400
// VALIDATION_FAILED, as is an id that is not a UUID) and a player nobody is (404 PLAYER_NOT_FOUND),
// then stops avoiding y.
using System;
using System.Linq;
using System.Threading.Tasks;
using Matchplane.Client;

static class AvoidListSteps
{
    const string NobodysId = "00000000-0000-4000-8000-000000000000";

    public static async Task RunAsync(string[] apiUrls, Action<bool, string, string> check)
    {
        PlayerClient x = await SignedInAsync(apiUrls).ConfigureAwait(false);
        PlayerClient y = await SignedInAsync(apiUrls).ConfigureAwait(false);
        PlayerClient z = await SignedInAsync(apiUrls).ConfigureAwait(false);
        try
        {
            AvoidList avoided = await x.AvoidPlayerAsync(y.PlayerId).ConfigureAwait(false);
            check(avoided.Avoided.Count == 1 && avoided.Avoided[0].PlayerId == y.PlayerId && avoided.Avoided[0].AvoidedAt != null && avoided.MaxEntries == 1,
                "x avoids y: y is on x's avoid list, which holds one", string.Join(",", avoided.Avoided.Select(p => p.PlayerId)) + " of " + avoided.MaxEntries);
            AvoidList listed = await x.AvoidListAsync().ConfigureAwait(false);
            check(listed.Avoided.Select(p => p.PlayerId).SequenceEqual(new[] { y.PlayerId }), "x reads its avoid list: y", null);

            await RefusedAsync(x, z.PlayerId, 409, "AVOID_LIST_FULL", "avoiding z with a full list", check).ConfigureAwait(false);
            await RefusedAsync(x, x.PlayerId, 400, "VALIDATION_FAILED", "avoiding itself", check).ConfigureAwait(false);
            await RefusedAsync(x, "not-a-uuid", 400, "VALIDATION_FAILED", "avoiding an id that is not a UUID", check).ConfigureAwait(false);
            await RefusedAsync(x, NobodysId, 404, "PLAYER_NOT_FOUND", "avoiding a player nobody is", check).ConfigureAwait(false);

            AvoidList removed = await x.UnavoidPlayerAsync(y.PlayerId).ConfigureAwait(false);
            AvoidList after = await x.AvoidListAsync().ConfigureAwait(false);
            check(removed.Avoided.Count == 0 && after.Avoided.Count == 0, "x stops avoiding y: the avoid list is empty again", null);
        }
        finally
        {
            await Task.WhenAll(x.EndSessionAsync(), y.EndSessionAsync(), z.EndSessionAsync()).ConfigureAwait(false);
        }
    }

    static async Task<PlayerClient> SignedInAsync(string[] apiUrls)
    {
        var client = new PlayerClient(new ApiEndpoints(apiUrls));
        await client.CreateSessionAsync().ConfigureAwait(false);
        return client;
    }

    static async Task RefusedAsync(PlayerClient client, string playerId, int status, string code, string what, Action<bool, string, string> check)
    {
        try
        {
            await client.AvoidPlayerAsync(playerId).ConfigureAwait(false);
            check(false, what + " is refused", "answered the list");
        }
        catch (MatchplaneApiException e)
        {
            check(e.Status == status && e.Code == code && e.Detail != null, what + " is refused: " + status + " " + code, e.Message);
        }
    }
}
