// The byte layouts of docs/JOIN-AUTH.md; test/fixtures/join-auth-vectors.json is their specification.
using System;
using System.Collections.Generic;
using System.IO;
using System.Security.Cryptography;
using System.Text;

namespace Matchplane.JoinAuth
{
    public static class JoinAuthBytes
    {
        const byte JoinClaimsV1 = 0x01;
        const byte RosterDigestV1 = 0x02;
        const byte RosterManifestV1 = 0x03;
        const byte RosterManifestV2 = 0x04;

        // Throws on lone surrogates and invalid bytes instead of replacing them.
        static readonly UTF8Encoding StrictUtf8 = new UTF8Encoding(false, true);

        public static bool IsWellFormed(string s)
        {
            try { StrictUtf8.GetByteCount(s); return true; }
            catch (ArgumentException) { return false; }
        }

        public static bool IsNamedKeyId(string id)
        {
            if (id == null || id.Length < 1 || id.Length > 64) return false;
            foreach (char c in id) if (c < 0x21 || c > 0x7e) return false;
            return true;
        }

        public static bool IsKeyId(string id) { return id == "" || IsNamedKeyId(id); }

        public static bool IsCanonicalUuid(string id)
        {
            if (id == null || id.Length != 36 || id == "00000000-0000-0000-0000-000000000000") return false;
            for (int i = 0; i < 36; i++)
            {
                char c = id[i];
                if (i == 8 || i == 13 || i == 18 || i == 23) { if (c != '-') return false; }
                else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
            }
            return true;
        }

        public static bool IsBoundedText(string s, int maxBytes)
        {
            if (string.IsNullOrEmpty(s) || !IsWellFormed(s) || StrictUtf8.GetByteCount(s) > maxBytes) return false;
            foreach (char c in s) if (c < 0x20 || c == 0x7f) return false;
            return true;
        }

        public static bool IsServerId(string s) { return IsBoundedText(s, 255); }

        public static bool IsInstant(long v) { return v >= 0 && v <= JoinAuthLimits.MaxInstant; }

        /// <summary>The first problem with the claims, or null when they can be encoded.</summary>
        public static string ClaimsProblem(JoinClaims c)
        {
            if (!IsKeyId(c.KeyId)) return "keyId must be \"\" or 1-64 visible ASCII characters";
            if (!IsCanonicalUuid(c.MatchId)) return "matchId must be a canonical lowercase uuid";
            if (!IsCanonicalUuid(c.PlayerId)) return "playerId must be a canonical lowercase uuid";
            if (!IsServerId(c.ServerId)) return "serverId must be 1-255 UTF-8 bytes without control characters";
            if (!IsBoundedText(c.Endpoint, 255)) return "endpoint must be 1-255 UTF-8 bytes without control characters";
            if (!IsInstant(c.IssuedAt)) return "issuedAt must be a non-negative integer of epoch ms";
            if (!IsInstant(c.ExpiresAt)) return "expiresAt must be a non-negative integer of epoch ms";
            if (c.ExpiresAt <= c.IssuedAt) return "expiresAt must be after issuedAt";
            return null;
        }

        public static string ManifestProblem(RosterManifest m)
        {
            if (!IsCanonicalUuid(m.MatchId)) return "matchId must be a canonical lowercase uuid";
            if (!IsServerId(m.ServerId)) return "serverId must be 1-255 UTF-8 bytes without control characters";
            if (!IsKeyId(m.KeyId)) return "keyId must be \"\" or 1-64 visible ASCII characters";
            if (m.Digest == null || m.Digest.Length != 64 || FromHex(m.Digest) == null) return "digest must be 64 lowercase hex digits";
            if (m.EntryCount < 1 || m.EntryCount > 0xffffffffL) return "entryCount must be an integer from 1 to 2^32 - 1";
            if (!IsInstant(m.IssuedAt)) return "issuedAt must be a non-negative integer of epoch ms";
            if (m.Revision.HasValue && (m.Revision.Value < 1 || m.Revision.Value > 0xffffffffL))
                return "revision must be an integer from 1 to 2^32 - 1";
            return null;
        }

        sealed class Writer
        {
            readonly MemoryStream _out = new MemoryStream();
            public Writer U8(int v) { _out.WriteByte((byte)v); return this; }
            public Writer U16(int v) { return U8(v >> 8).U8(v & 0xff); }
            public Writer U32(long v) { return U16((int)((v >> 16) & 0xffff)).U16((int)(v & 0xffff)); }
            public Writer U64(long v) { return U32((long)((ulong)v >> 32)).U32(v & 0xffffffffL); }
            public Writer Str16(string s)
            {
                byte[] bytes = StrictUtf8.GetBytes(s);
                if (bytes.Length > 0xffff) throw new JoinAuthException("INVALID_CLAIMS", "string longer than 65535 bytes");
                U16(bytes.Length);
                return Fixed(bytes);
            }
            public Writer Fixed(byte[] b) { _out.Write(b, 0, b.Length); return this; }
            public byte[] ToArray() { return _out.ToArray(); }
        }

        sealed class Reader
        {
            readonly byte[] _bytes;
            int _pos;
            public Reader(byte[] bytes) { _bytes = bytes; }
            public bool AtEnd { get { return _pos == _bytes.Length; } }
            public bool U8(out int v)
            {
                v = 0;
                if (_pos + 1 > _bytes.Length) return false;
                v = _bytes[_pos++];
                return true;
            }
            public bool U64(out long v)
            {
                v = 0;
                if (_pos + 8 > _bytes.Length) return false;
                ulong x = 0;
                for (int i = 0; i < 8; i++) x = (x << 8) | _bytes[_pos++];
                if (x > (ulong)JoinAuthLimits.MaxInstant) return false;
                v = (long)x;
                return true;
            }
            public bool Str16(out string s)
            {
                s = null;
                if (_pos + 2 > _bytes.Length) return false;
                int length = (_bytes[_pos] << 8) | _bytes[_pos + 1];
                _pos += 2;
                if (_pos + length > _bytes.Length) return false;
                try { s = StrictUtf8.GetString(_bytes, _pos, length); }
                catch (ArgumentException) { return false; }
                _pos += length;
                return true;
            }
        }

        public static byte[] EncodeJoinClaims(JoinClaims c)
        {
            string problem = ClaimsProblem(c);
            if (problem != null) throw new JoinAuthException("INVALID_CLAIMS", "invalid join claims: " + problem);
            return new Writer().U8(JoinClaimsV1).Str16(c.KeyId).Str16(c.MatchId).Str16(c.PlayerId)
                .Str16(c.ServerId).Str16(c.Endpoint).U64(c.IssuedAt).U64(c.ExpiresAt).ToArray();
        }

        /// <summary>Strict: a wrong tag, truncation, trailing bytes or invalid claims give null and a problem.</summary>
        public static JoinClaims DecodeJoinClaims(byte[] bytes, out string problem)
        {
            var r = new Reader(bytes);
            var c = new JoinClaims();
            // Initialised because mcs's flow analysis does not follow the && chain below.
            int format = 0;
            string keyId = null, matchId = null, playerId = null, serverId = null, endpoint = null;
            long issuedAt = 0, expiresAt = 0;
            bool read = r.U8(out format) && format == JoinClaimsV1 && r.Str16(out keyId) && r.Str16(out matchId)
                && r.Str16(out playerId) && r.Str16(out serverId) && r.Str16(out endpoint)
                && r.U64(out issuedAt) && r.U64(out expiresAt) && r.AtEnd;
            if (!read)
            {
                problem = "malformed claim bytes: not join claims v1 (wrong tag, truncated or trailing bytes)";
                return null;
            }
            c.KeyId = keyId; c.MatchId = matchId; c.PlayerId = playerId; c.ServerId = serverId;
            c.Endpoint = endpoint; c.IssuedAt = issuedAt; c.ExpiresAt = expiresAt;
            problem = ClaimsProblem(c);
            if (problem != null) { problem = "malformed claim bytes: " + problem; return null; }
            return c;
        }

        public static byte[] EncodeRosterDigestInput(string matchId, string serverId, IList<RosterEntry> entries)
        {
            var w = new Writer().U8(RosterDigestV1).Str16(matchId).Str16(serverId).U32(entries.Count);
            foreach (var e in entries) w.Str16(e.PlayerId).Str16(e.Token);
            return w.ToArray();
        }

        public static byte[] Sha256(byte[] bytes)
        {
            using (var sha = SHA256.Create()) return sha.ComputeHash(bytes);
        }

        /// <summary>Format 0x03, or 0x04 (with the revision last) for a revision above 1.</summary>
        public static byte[] EncodeRosterManifest(RosterManifest m)
        {
            string problem = ManifestProblem(m);
            if (problem != null) throw new JoinAuthException("INVALID_ROSTER", "invalid roster manifest: " + problem);
            long revision = m.Revision ?? 1;
            var w = new Writer().U8(revision == 1 ? RosterManifestV1 : RosterManifestV2).Str16(m.KeyId)
                .Str16(m.MatchId).Str16(m.ServerId).Fixed(FromHex(m.Digest)).U32(m.EntryCount).U64(m.IssuedAt);
            if (revision != 1) w.U32(revision);
            return w.ToArray();
        }

        public static string ToHex(byte[] bytes)
        {
            var sb = new StringBuilder(bytes.Length * 2);
            foreach (byte b in bytes) sb.Append(b.ToString("x2"));
            return sb.ToString();
        }

        /// <summary>Lowercase hex only; null otherwise.</summary>
        public static byte[] FromHex(string hex)
        {
            if (hex == null || hex.Length % 2 != 0) return null;
            var bytes = new byte[hex.Length / 2];
            for (int i = 0; i < bytes.Length; i++)
            {
                int hi = "0123456789abcdef".IndexOf(hex[2 * i]);
                int lo = "0123456789abcdef".IndexOf(hex[2 * i + 1]);
                if (hi < 0 || lo < 0) return null;
                bytes[i] = (byte)(hi * 16 + lo);
            }
            return bytes;
        }

        const string Base64UrlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const string Base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

        public static string Base64UrlEncode(byte[] bytes)
        {
            var sb = new StringBuilder();
            int buffer = 0, bits = 0;
            foreach (byte b in bytes)
            {
                buffer = (buffer << 8) | b;
                bits += 8;
                while (bits >= 6) { bits -= 6; sb.Append(Base64UrlAlphabet[(buffer >> bits) & 0x3f]); }
                buffer &= (1 << bits) - 1;
            }
            if (bits > 0) sb.Append(Base64UrlAlphabet[(buffer << (6 - bits)) & 0x3f]);
            return sb.ToString();
        }

        /// <summary>Canonical unpadded base64url only (Convert.FromBase64String would accept other spellings).</summary>
        public static byte[] Base64UrlDecode(string text) { return DecodeUnpadded(text, Base64UrlAlphabet); }

        /// <summary>Canonical standard padded base64, as `openssl rand -base64 32` prints.</summary>
        public static byte[] Base64Decode(string text)
        {
            if (text == null || text.Length % 4 != 0) return null;
            int padding = 0;
            while (padding < 2 && padding < text.Length && text[text.Length - 1 - padding] == '=') padding++;
            string body = text.Substring(0, text.Length - padding);
            if (padding > 0 && body.Length % 4 + padding != 4) return null;
            return DecodeUnpadded(body, Base64Alphabet);
        }

        static byte[] DecodeUnpadded(string text, string alphabet)
        {
            if (text == null || text.Length % 4 == 1) return null;
            var output = new List<byte>(text.Length * 3 / 4);
            int buffer = 0, bits = 0;
            foreach (char c in text)
            {
                int index = alphabet.IndexOf(c);
                if (index < 0) return null;
                buffer = (buffer << 6) | index;
                bits += 6;
                if (bits >= 8) { bits -= 8; output.Add((byte)(buffer >> bits)); buffer &= (1 << bits) - 1; }
            }
            return buffer == 0 ? output.ToArray() : null;
        }
    }
}
