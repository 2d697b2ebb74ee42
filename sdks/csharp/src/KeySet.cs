// HMAC keys by key id, as the TypeScript KeySet holds them ("" is the raw-file key). Key bytes
// never leave the set; ToString prints the ids only, so a logged config carries no key material.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Text;

namespace Matchplane.JoinAuth
{
    public sealed class KeySet
    {
        readonly List<KeyValuePair<string, byte[]>> _keys;

        public KeySet(IEnumerable<KeyValuePair<string, byte[]>> keys)
        {
            _keys = new List<KeyValuePair<string, byte[]>>();
            foreach (var key in keys)
            {
                if (!JoinAuthBytes.IsKeyId(key.Key))
                    throw new JoinAuthException("INVALID_KEY_SET", "key id \"" + key.Key + "\" must be 1-64 visible ASCII characters");
                if (key.Value == null || key.Value.Length < JoinAuthLimits.MinKeyBytes)
                    throw new JoinAuthException("INVALID_KEY_SET", "key \"" + key.Key + "\" is shorter than 32 bytes");
                if (Has(key.Key)) throw new JoinAuthException("INVALID_KEY_SET", "key id \"" + key.Key + "\" appears twice");
                _keys.Add(new KeyValuePair<string, byte[]>(key.Key, (byte[])key.Value.Clone()));
            }
            if (_keys.Count == 0) throw new JoinAuthException("INVALID_KEY_SET", "key set holds no keys");
        }

        /// <summary>A key file's {"keyId": "standard padded base64"} map.</summary>
        public static KeySet FromJsonMap(string json)
        {
            JsonValue parsed;
            try { parsed = MiniJson.Parse(json); }
            catch (FormatException e) { throw new JoinAuthException("INVALID_KEY_SET", "key map does not parse: " + e.Message); }
            if (parsed.Kind != JsonKind.Object) throw new JoinAuthException("INVALID_KEY_SET", "key map must be a JSON object");
            var keys = new List<KeyValuePair<string, byte[]>>();
            foreach (var member in parsed.Object)
            {
                if (!JoinAuthBytes.IsNamedKeyId(member.Key))
                    throw new JoinAuthException("INVALID_KEY_SET", "key id \"" + member.Key + "\" must be 1-64 visible ASCII characters");
                byte[] key = member.Value.Kind == JsonKind.String ? JoinAuthBytes.Base64Decode(member.Value.String) : null;
                if (key == null)
                    throw new JoinAuthException("INVALID_KEY_SET", "key \"" + member.Key + "\" must be standard padded base64");
                keys.Add(new KeyValuePair<string, byte[]>(member.Key, key));
            }
            return new KeySet(keys);
        }

        public static KeySet FromRawKey(byte[] key)
        {
            return new KeySet(new[] { new KeyValuePair<string, byte[]>("", key) });
        }

        /// <summary>
        /// A key file's contents: a JSON object is a key map; anything else is one raw key with id "",
        /// taken exactly. Text shaped like an object must parse as one, so a typo never becomes a raw key.
        /// </summary>
        public static KeySet ParseKeyFile(byte[] contents)
        {
            string text = null;
            try { text = new UTF8Encoding(false, true).GetString(contents); }
            catch (ArgumentException) { }
            string trimmed = text == null ? null : text.Trim(' ', '\t', '\r', '\n');
            if (trimmed != null && trimmed.StartsWith("{", StringComparison.Ordinal) && trimmed.EndsWith("}", StringComparison.Ordinal))
                return FromJsonMap(text);
            return FromRawKey(contents);
        }

        /// <summary>Every key of both sets (a raw key beside a map during rotation); one id with two keys is refused.</summary>
        public static KeySet Union(KeySet a, KeySet b)
        {
            var keys = new List<KeyValuePair<string, byte[]>>(a._keys);
            foreach (var key in b._keys)
            {
                byte[] held = a.Find(key.Key);
                if (held == null) keys.Add(key);
                else if (!held.SequenceEqual(key.Value))
                    throw new JoinAuthException("INVALID_KEY_SET", "key id \"" + key.Key + "\" names two different keys");
            }
            return new KeySet(keys);
        }

        public IList<string> Ids { get { return _keys.Select(k => k.Key).ToList(); } }

        public bool Has(string keyId) { return Find(keyId) != null; }

        /// <summary>The set minus these ids: how a verifier retires a key.</summary>
        public KeySet Without(IEnumerable<string> keyIds)
        {
            var retired = new HashSet<string>(keyIds);
            return new KeySet(_keys.Where(k => !retired.Contains(k.Key)));
        }

        public byte[] Mac(string keyId, byte[] bytes)
        {
            byte[] key = Find(keyId);
            if (key == null) return null;
            using (var hmac = new HMACSHA256(key)) return hmac.ComputeHash(bytes);
        }

        public bool MacMatches(string keyId, byte[] bytes, byte[] mac)
        {
            byte[] expected = Mac(keyId, bytes);
            return expected != null && FixedTimeEquals(expected, mac);
        }

        /// <summary>Constant time for equal lengths (.NET Framework 4.x has no CryptographicOperations).</summary>
        [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
        public static bool FixedTimeEquals(byte[] a, byte[] b)
        {
            if (a.Length != b.Length) return false;
            int difference = 0;
            for (int i = 0; i < a.Length; i++) difference |= a[i] ^ b[i];
            return difference == 0;
        }

        public override string ToString()
        {
            return "KeySet { keyIds: [" + string.Join(", ", Ids.Select(id => "\"" + id + "\"").ToArray()) + "] }";
        }

        byte[] Find(string keyId)
        {
            foreach (var key in _keys) if (key.Key == keyId) return key.Value;
            return null;
        }
    }
}
