// Checks join tokens and roster manifests offline, in the order docs/JOIN-AUTH.md gives; the
// first failure is the reason. Build a new verifier from a new key set to add or retire keys.
using System;
using System.Collections.Generic;

namespace Matchplane.JoinAuth
{
    public sealed class JoinTokenVerifier
    {
        readonly KeySet _keys;
        readonly long _clockSkewMs;

        public JoinTokenVerifier(KeySet keys, long clockSkewMs = JoinAuthLimits.DefaultClockSkewMs)
        {
            if (keys == null) throw new ArgumentNullException("keys");
            if (clockSkewMs < 0) throw new JoinAuthException("INVALID_EXPECTATION", "clockSkewMs must be a non-negative integer");
            _keys = keys;
            _clockSkewMs = clockSkewMs;
        }

        public Verification Verify(string token, Expectation expect)
        {
            AssertExpectation(expect);
            byte[] claimBytes, mac;
            if (!SplitToken(token, out claimBytes, out mac))
                return Verification.Reject("MALFORMED", "token is not two unpadded base64url parts with a 32-byte MAC");
            string problem;
            JoinClaims claims = JoinAuthBytes.DecodeJoinClaims(claimBytes, out problem);
            if (claims == null) return Verification.Reject("MALFORMED", problem);

            Verification rejection = CheckMac(claims.KeyId, claimBytes, mac, id => JoinAuthBytes.EncodeJoinClaims(claims.WithKeyId(id)))
                ?? CheckBinding(claims.ServerId, claims.MatchId, claims.IssuedAt, expect);
            if (rejection != null) return rejection;
            if (expect.Now >= claims.ExpiresAt)
                return Verification.Reject("EXPIRED", "token expired at " + claims.ExpiresAt + " (now " + expect.Now + ")");
            return new Verification { Ok = true, Claims = claims };
        }

        /// <summary>
        /// The manifest's MAC and binding, then that the entries are exactly those it commits to.
        /// Each player's token is still verified with Verify when that player connects.
        /// </summary>
        public Verification VerifyRoster(RosterManifest manifest, IList<RosterEntry> entries, Expectation expect)
        {
            AssertExpectation(expect);
            if (manifest == null) return Verification.Reject("MALFORMED", "malformed roster manifest: manifest must be an object");
            string problem = JoinAuthBytes.ManifestProblem(manifest);
            if (problem != null) return Verification.Reject("MALFORMED", "malformed roster manifest: " + problem);
            byte[] signature = JoinAuthBytes.Base64UrlDecode(manifest.Signature);
            if (signature == null || signature.Length != JoinAuthLimits.MacBytes)
                return Verification.Reject("MALFORMED", "roster manifest signature must be a 32-byte unpadded base64url MAC");

            Verification rejection = CheckMac(manifest.KeyId, JoinAuthBytes.EncodeRosterManifest(manifest), signature,
                    id => JoinAuthBytes.EncodeRosterManifest(manifest.WithKeyId(id)))
                ?? CheckBinding(manifest.ServerId, manifest.MatchId, manifest.IssuedAt, expect);
            if (rejection != null) return rejection;

            if (entries == null) return Verification.Reject("MALFORMED", "roster entries must be an array");
            if (entries.Count != manifest.EntryCount)
                return Verification.Reject("ROSTER_COUNT_MISMATCH",
                    "roster has " + entries.Count + " entries; its manifest commits to " + manifest.EntryCount);
            for (int i = 0; i < entries.Count; i++)
            {
                var e = entries[i];
                if (e == null || !JoinAuthBytes.IsCanonicalUuid(e.PlayerId) || string.IsNullOrEmpty(e.Token) || !JoinAuthBytes.IsWellFormed(e.Token))
                    return Verification.Reject("MALFORMED", "malformed roster: entry " + i);
            }
            for (int i = 1; i < entries.Count; i++)
            {
                if (string.CompareOrdinal(entries[i - 1].PlayerId, entries[i].PlayerId) >= 0)
                    return Verification.Reject("ROSTER_NOT_CANONICAL",
                        "entry " + i + ": entries must be in ascending playerId order without duplicates");
            }
            byte[] digest = JoinAuthBytes.Sha256(JoinAuthBytes.EncodeRosterDigestInput(manifest.MatchId, manifest.ServerId, entries));
            if (!KeySet.FixedTimeEquals(digest, JoinAuthBytes.FromHex(manifest.Digest)))
                return Verification.Reject("ROSTER_DIGEST_MISMATCH", "roster entries do not match the manifest digest");
            for (int i = 0; i < entries.Count; i++)
            {
                byte[] claimBytes, mac;
                string ignored;
                JoinClaims claims = SplitToken(entries[i].Token, out claimBytes, out mac)
                    ? JoinAuthBytes.DecodeJoinClaims(claimBytes, out ignored) : null;
                if (claims == null || claims.PlayerId != entries[i].PlayerId || claims.MatchId != manifest.MatchId
                    || claims.ServerId != manifest.ServerId)
                    return Verification.Reject("ROSTER_ENTRY_MISMATCH", "entry " + i + ": token is not for this player, match and server");
            }
            return new Verification { Ok = true, Manifest = manifest };
        }

        static bool SplitToken(string token, out byte[] claimBytes, out byte[] mac)
        {
            claimBytes = null;
            mac = null;
            if (token == null || token.Length > JoinAuthLimits.MaxTokenLength) return false;
            string[] parts = token.Split('.');
            if (parts.Length != 2) return false;
            claimBytes = JoinAuthBytes.Base64UrlDecode(parts[0]);
            mac = JoinAuthBytes.Base64UrlDecode(parts[1]);
            return claimBytes != null && mac != null && mac.Length == JoinAuthLimits.MacBytes;
        }

        // Only failures pay for the extra MACs: was it signed under another held key, or relabelled?
        Verification CheckMac(string keyId, byte[] bytes, byte[] mac, Func<string, byte[]> relabel)
        {
            if (_keys.MacMatches(keyId, bytes, mac)) return null;
            foreach (string held in _keys.Ids)
            {
                if (held == keyId) continue;
                if (_keys.MacMatches(held, bytes, mac) || _keys.MacMatches(held, relabel(held), mac))
                    return Verification.Reject("KEY_MISMATCH", "names key \"" + keyId + "\" but was signed with key \"" + held + "\"");
            }
            if (!_keys.Has(keyId)) return Verification.Reject("UNKNOWN_KEY", "key id \"" + keyId + "\" is not a current key");
            return Verification.Reject("BAD_SIGNATURE", "MAC does not match under key \"" + keyId + "\"");
        }

        Verification CheckBinding(string serverId, string matchId, long issuedAt, Expectation expect)
        {
            if (serverId != expect.ServerId) return Verification.Reject("WRONG_SERVER", "signed for server \"" + serverId + "\"");
            if (expect.MatchId != null && matchId != expect.MatchId) return Verification.Reject("WRONG_MATCH", "signed for match " + matchId);
            if (issuedAt > expect.Now + _clockSkewMs)
                return Verification.Reject("NOT_YET_VALID", "issued at " + issuedAt + ", more than " + _clockSkewMs + " ms after now (" + expect.Now + ")");
            return null;
        }

        // An empty server id or a nonsense clock would make the checks moot: refuse, never skip.
        static void AssertExpectation(Expectation expect)
        {
            if (expect == null || !JoinAuthBytes.IsServerId(expect.ServerId))
                throw new JoinAuthException("INVALID_EXPECTATION", "expect.ServerId must be the verifying server id");
            if (expect.MatchId != null && !JoinAuthBytes.IsCanonicalUuid(expect.MatchId))
                throw new JoinAuthException("INVALID_EXPECTATION", "expect.MatchId must be a canonical lowercase uuid");
            if (!JoinAuthBytes.IsInstant(expect.Now))
                throw new JoinAuthException("INVALID_EXPECTATION", "expect.Now must be a non-negative integer of epoch ms");
        }
    }
}
