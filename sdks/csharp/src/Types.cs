// What join-auth reads and reports. Plain classes (no records or tuples) for Unity's C# 7.x.
using System;
using System.Collections.Generic;

namespace Matchplane.JoinAuth
{
    /// <summary>Refused key material or an unusable expectation: a programming or deployment error.</summary>
    public class JoinAuthException : Exception
    {
        /// <summary>INVALID_KEY_SET, INVALID_EXPECTATION, INVALID_CLAIMS or INVALID_ROSTER.</summary>
        public readonly string Code;

        public JoinAuthException(string code, string message) : base(message) { Code = code; }
    }

    /// <summary>This player may join this match on this server at this endpoint, on [IssuedAt, ExpiresAt).</summary>
    public sealed class JoinClaims : IEquatable<JoinClaims>
    {
        public string KeyId = "";
        public string MatchId;
        public string PlayerId;
        public string ServerId;
        public string Endpoint;
        /// <summary>Unix epoch milliseconds.</summary>
        public long IssuedAt;
        /// <summary>Unix epoch milliseconds, exclusive.</summary>
        public long ExpiresAt;

        public JoinClaims WithKeyId(string keyId)
        {
            return new JoinClaims
            {
                KeyId = keyId, MatchId = MatchId, PlayerId = PlayerId, ServerId = ServerId,
                Endpoint = Endpoint, IssuedAt = IssuedAt, ExpiresAt = ExpiresAt,
            };
        }

        public bool Equals(JoinClaims o)
        {
            return o != null && KeyId == o.KeyId && MatchId == o.MatchId && PlayerId == o.PlayerId
                && ServerId == o.ServerId && Endpoint == o.Endpoint && IssuedAt == o.IssuedAt && ExpiresAt == o.ExpiresAt;
        }

        public override bool Equals(object obj) { return Equals(obj as JoinClaims); }

        public override int GetHashCode() { return (MatchId + PlayerId).GetHashCode(); }
    }

    public sealed class RosterEntry
    {
        public string PlayerId;
        public string Token;

        public RosterEntry(string playerId, string token) { PlayerId = playerId; Token = token; }
    }

    /// <summary>A roster manifest as published (JSON). A null Revision is the match's first roster.</summary>
    public sealed class RosterManifest
    {
        public string MatchId;
        public string ServerId;
        public string KeyId;
        /// <summary>SHA-256 of the roster digest input, 64 lowercase hex digits.</summary>
        public string Digest;
        public long EntryCount;
        public long IssuedAt;
        public long? Revision;
        /// <summary>Unpadded base64url HMAC-SHA256 of the manifest bytes.</summary>
        public string Signature;

        public RosterManifest WithKeyId(string keyId)
        {
            var copy = (RosterManifest)MemberwiseClone();
            copy.KeyId = keyId;
            return copy;
        }

        /// <summary>Reads a manifest from parsed JSON; null when a member is missing or of the wrong type.</summary>
        public static RosterManifest FromJson(JsonValue v)
        {
            try
            {
                return new RosterManifest
                {
                    MatchId = v["matchId"].Str,
                    ServerId = v["serverId"].Str,
                    KeyId = v["keyId"].Str,
                    Digest = v["digest"].Str,
                    EntryCount = v["entryCount"].Long,
                    IssuedAt = v["issuedAt"].Long,
                    Revision = v.Has("revision") ? v["revision"].Long : (long?)null,
                    Signature = v["signature"].Str,
                };
            }
            catch (FormatException)
            {
                return null;
            }
        }
    }

    public sealed class Expectation
    {
        /// <summary>The verifying game server's own id.</summary>
        public string ServerId;
        /// <summary>When set, the token must be for this match.</summary>
        public string MatchId;
        /// <summary>Unix epoch milliseconds from the caller's clock.</summary>
        public long Now;
    }

    /// <summary>Reasons are the TypeScript verifier's names, so logs compare across languages.</summary>
    public sealed class Verification
    {
        public bool Ok;
        public string Reason;
        /// <summary>For logs; never key material.</summary>
        public string Message;
        public JoinClaims Claims;
        public RosterManifest Manifest;

        public static Verification Reject(string reason, string message)
        {
            return new Verification { Ok = false, Reason = reason, Message = message };
        }
    }

    public static class JoinAuthLimits
    {
        public const int MacBytes = 32;
        public const int MinKeyBytes = 32;
        public const int MaxTokenLength = 1024;
        public const long MaxInstant = 9007199254740991L;
        public const long DefaultClockSkewMs = 30000;
        internal static readonly IList<string> None = new string[0];
    }
}
