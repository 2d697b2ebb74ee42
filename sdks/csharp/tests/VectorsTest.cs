// Holds the C# verifier to test/fixtures/join-auth-vectors.json, the specification of the bytes.
// Usage: mono VectorsTest.exe [path]. Prints each failed check and "csharp: N passed, M failed" last.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using Matchplane.JoinAuth;

static class VectorsTest
{
    static int passed, failed;

    static void Check(bool ok, string name, string detail = null)
    {
        if (ok) { passed++; return; }
        failed++;
        Console.WriteLine("FAIL " + name + (detail == null ? "" : ": " + detail));
    }

    static void CheckEqual(string actual, string expected, string name)
    {
        Check(actual == expected, name, "got " + actual + ", expected " + expected);
    }

    static JoinClaims ClaimsOf(JsonValue v)
    {
        return new JoinClaims
        {
            KeyId = v["keyId"].Str, MatchId = v["matchId"].Str, PlayerId = v["playerId"].Str, ServerId = v["serverId"].Str,
            Endpoint = v["endpoint"].Str, IssuedAt = v["issuedAt"].Long, ExpiresAt = v["expiresAt"].Long,
        };
    }

    static Expectation ExpectationOf(JsonValue v)
    {
        return new Expectation { ServerId = v["serverId"].Str, MatchId = v.Has("matchId") ? v["matchId"].Str : null, Now = v["now"].Long };
    }

    static List<RosterEntry> EntriesOf(JsonValue v)
    {
        return v.Array.Select(e => new RosterEntry(e["playerId"].Str, e["token"].Str)).ToList();
    }

    static string ReasonOf(Verification v) { return v.Ok ? "OK" : v.Reason; }

    static void CheckThrows(string code, string name, Action body)
    {
        try
        {
            body();
            Check(false, name, "did not throw");
        }
        catch (JoinAuthException e)
        {
            Check(e.Code == code, name, "threw " + e.Code);
        }
    }

    // What the vectors cannot say: key files, key sets and expectations that must be refused.
    static void CheckKeySetsAndExpectations()
    {
        const string key = "u4IDTIdbR5HJdc6KQI6E3ar6uoNKI3uIaSnMEiR5gFo=";
        Func<string, byte[]> bytesOf = text => Encoding.UTF8.GetBytes(text);
        CheckThrows("INVALID_KEY_SET", "a key map with a typo is refused, not taken as a raw key",
            () => KeySet.ParseKeyFile(bytesOf("{\"mp-1\": \"" + key + "\",}")));
        CheckThrows("INVALID_KEY_SET", "a key under 32 bytes is refused", () => KeySet.ParseKeyFile(bytesOf("{\"mp-1\": \"AAAA\"}")));
        CheckThrows("INVALID_KEY_SET", "an empty key map is refused", () => KeySet.ParseKeyFile(bytesOf("{}")));
        CheckThrows("INVALID_KEY_SET", "one key id naming two keys is refused", () => KeySet.Union(
            KeySet.ParseKeyFile(bytesOf("{\"mp-1\": \"" + key + "\"}")),
            KeySet.ParseKeyFile(bytesOf("{\"mp-1\": \"c/UGRmzt++PZHVZudFqlmmS7acaaS+MGnEop/s/zj8c=\"}"))));
        KeySet raw = KeySet.ParseKeyFile(bytesOf(new string('k', 32) + "\n"));
        Check(raw.Ids.Count == 1 && raw.Ids[0] == "" && raw.Mac("", new byte[0]) != null, "a raw key file (trailing newline included) is one key with id \"\"");
        Check(!raw.ToString().Contains("kkkk"), "a key set prints its ids only");
        CheckThrows("INVALID_KEY_SET", "retiring the last key is refused", () => raw.Without(new[] { "" }));
        var verifier = new JoinTokenVerifier(raw);
        CheckThrows("INVALID_EXPECTATION", "an empty server id is refused, never treated as no check",
            () => verifier.Verify("x.y", new Expectation { ServerId = "", Now = 0 }));
        CheckThrows("INVALID_EXPECTATION", "an uppercase match id expectation is refused",
            () => verifier.Verify("x.y", new Expectation { ServerId = "gs-1", MatchId = "11111111-1111-4111-8111-11111111111A", Now = 0 }));
        CheckThrows("INVALID_EXPECTATION", "a negative clock is refused",
            () => verifier.Verify("x.y", new Expectation { ServerId = "gs-1", Now = -1 }));
    }

    static int Main(string[] args)
    {
        string path = args.Length > 0 ? args[0] : "../../test/fixtures/join-auth-vectors.json";
        try
        {
            JsonValue vectors = MiniJson.Parse(File.ReadAllText(path, new UTF8Encoding(false, true)));
            var map = new StringBuilder("{");
            foreach (var key in vectors["keys"].Object)
                map.Append(map.Length > 1 ? "," : "").Append("\"" + key.Key + "\":\"" + key.Value.Str + "\"");
            map.Append("}");
            // Through the key-file reader, as a game server loads its mounted Secret.
            KeySet keys = KeySet.Union(
                KeySet.ParseKeyFile(Encoding.UTF8.GetBytes(map.ToString())),
                KeySet.ParseKeyFile(JoinAuthBytes.Base64Decode(vectors["rawKeyBase64"].Str)));
            long skew = vectors["clockSkewMs"].Long;
            var everyKey = new JoinTokenVerifier(keys, skew);

            foreach (JsonValue t in vectors["tokens"].Array)
            {
                string name = "token " + t["name"].Str;
                JoinClaims claims = ClaimsOf(t["claims"]);
                byte[] bytes = JoinAuthBytes.EncodeJoinClaims(claims);
                CheckEqual(JoinAuthBytes.ToHex(bytes), t["claimBytesHex"].Str, name + " claim bytes");
                string problem;
                JoinClaims decoded = JoinAuthBytes.DecodeJoinClaims(JoinAuthBytes.FromHex(t["claimBytesHex"].Str), out problem);
                Check(claims.Equals(decoded), name + " decodes back to its claims", problem);
                byte[] mac = keys.Mac(claims.KeyId, bytes) ?? new byte[0];
                CheckEqual(JoinAuthBytes.ToHex(mac), t["macHex"].Str, name + " MAC");
                CheckEqual(JoinAuthBytes.Base64UrlEncode(bytes) + "." + JoinAuthBytes.Base64UrlEncode(mac), t["token"].Str, name + " token");
                Verification result = everyKey.Verify(t["token"].Str,
                    new Expectation { ServerId = claims.ServerId, MatchId = claims.MatchId, Now = claims.IssuedAt });
                CheckEqual(ReasonOf(result), "OK", name + " verifies");
                Check(result.Ok && claims.Equals(result.Claims), name + " verifies to its claims");
            }

            foreach (JsonValue r in vectors["rejections"].Array)
            {
                var held = r["verifierKeyIds"].Array.Select(id => id.Str).ToList();
                var verifier = new JoinTokenVerifier(keys.Without(keys.Ids.Where(id => !held.Contains(id))), skew);
                CheckEqual(ReasonOf(verifier.Verify(r["token"].Str, ExpectationOf(r["expect"]))), r["reason"].Str,
                    "rejection " + r["name"].Str);
            }

            foreach (JsonValue a in vectors["acceptances"].Array)
            {
                var held = a["verifierKeyIds"].Array.Select(id => id.Str).ToList();
                var verifier = new JoinTokenVerifier(keys.Without(keys.Ids.Where(id => !held.Contains(id))), skew);
                CheckEqual(ReasonOf(verifier.Verify(a["token"].Str, ExpectationOf(a["expect"]))), "OK", "acceptance " + a["name"].Str);
            }

            foreach (JsonValue roster in vectors["rosters"].Array)
            {
                string name = "roster " + roster["name"].Str;
                var entries = EntriesOf(roster["entries"]);
                byte[] input = JoinAuthBytes.EncodeRosterDigestInput(roster["matchId"].Str, roster["serverId"].Str, entries);
                CheckEqual(JoinAuthBytes.ToHex(input), roster["digestInputHex"].Str, name + " digest input");
                CheckEqual(JoinAuthBytes.ToHex(JoinAuthBytes.Sha256(input)), roster["digestHex"].Str, name + " digest");
                RosterManifest manifest = RosterManifest.FromJson(roster["manifest"]);
                Check(manifest != null, name + " manifest reads");
                if (manifest != null)
                {
                    byte[] manifestBytes = JoinAuthBytes.EncodeRosterManifest(manifest);
                    CheckEqual(JoinAuthBytes.ToHex(manifestBytes), roster["manifestBytesHex"].Str, name + " manifest bytes");
                    byte[] mac = keys.Mac(roster["keyId"].Str, manifestBytes) ?? new byte[0];
                    CheckEqual(JoinAuthBytes.ToHex(mac), roster["manifestMacHex"].Str, name + " manifest MAC");
                    CheckEqual(manifest.Signature, JoinAuthBytes.Base64UrlEncode(mac), name + " signature");
                    CheckEqual(ReasonOf(everyKey.VerifyRoster(manifest, entries, ExpectationOf(roster["expect"]))), "OK", name + " verifies");
                }
                foreach (JsonValue r in roster["rejections"].Array)
                {
                    var rejected = RosterManifest.FromJson(r["manifest"]);
                    string reason = ReasonOf(everyKey.VerifyRoster(rejected, EntriesOf(r["entries"]), ExpectationOf(r["expect"])));
                    CheckEqual(reason, r["reason"].Str, name + " rejection " + r["name"].Str);
                }
            }
        }
        catch (Exception e)
        {
            Check(false, "vectors file " + path, e.GetType().Name + ": " + e.Message);
        }
        try { CheckKeySetsAndExpectations(); }
        catch (Exception e) { Check(false, "key sets and expectations", e.ToString()); }
        Console.WriteLine("csharp: " + passed + " passed, " + failed + " failed");
        return failed == 0 ? 0 : 1;
    }
}
