// A small strict JSON reader for key files and the golden vectors. Unity's JsonUtility cannot
// read dictionaries, and no package is needed for this little. Objects keep member order.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Matchplane.JoinAuth
{
    public enum JsonKind { Null, Bool, Number, String, Array, Object }

    public sealed class JsonValue
    {
        public JsonKind Kind;
        public bool Bool;
        public bool IsInteger;
        public long Integer;
        public double Number;
        public string String;
        public readonly List<JsonValue> Array = new List<JsonValue>();
        public readonly List<KeyValuePair<string, JsonValue>> Object = new List<KeyValuePair<string, JsonValue>>();

        public JsonValue Find(string key)
        {
            foreach (var member in Object) if (member.Key == key) return member.Value;
            return null;
        }

        public bool Has(string key) { return Find(key) != null; }

        public JsonValue this[string key]
        {
            get
            {
                var member = Find(key);
                if (member == null) throw new FormatException("missing JSON member " + key);
                return member;
            }
        }

        public string Str
        {
            get
            {
                if (Kind != JsonKind.String) throw new FormatException("JSON value is not a string");
                return String;
            }
        }

        public long Long
        {
            get
            {
                if (Kind != JsonKind.Number || !IsInteger) throw new FormatException("JSON value is not an integer");
                return Integer;
            }
        }
    }

    public static class MiniJson
    {
        public static JsonValue Parse(string text)
        {
            int pos = 0;
            var value = ParseValue(text, ref pos, 0);
            SkipSpace(text, ref pos);
            if (pos != text.Length) throw Fail("trailing characters", pos);
            return value;
        }

        static FormatException Fail(string what, int pos)
        {
            return new FormatException("JSON: " + what + " at offset " + pos);
        }

        static void SkipSpace(string s, ref int pos)
        {
            while (pos < s.Length && (s[pos] == ' ' || s[pos] == '\n' || s[pos] == '\r' || s[pos] == '\t')) pos++;
        }

        static bool Consume(string s, ref int pos, string literal)
        {
            if (string.CompareOrdinal(s, pos, literal, 0, literal.Length) != 0) return false;
            pos += literal.Length;
            return true;
        }

        static JsonValue ParseValue(string s, ref int pos, int depth)
        {
            if (depth > 64) throw Fail("nesting too deep", pos);
            SkipSpace(s, ref pos);
            if (pos >= s.Length) throw Fail("unexpected end", pos);
            var value = new JsonValue();
            char c = s[pos];
            if (c == '{')
            {
                value.Kind = JsonKind.Object;
                pos++;
                SkipSpace(s, ref pos);
                if (pos < s.Length && s[pos] == '}') { pos++; return value; }
                while (true)
                {
                    SkipSpace(s, ref pos);
                    if (pos >= s.Length || s[pos] != '"') throw Fail("expected a member name", pos);
                    string key = ParseString(s, ref pos);
                    SkipSpace(s, ref pos);
                    if (pos >= s.Length || s[pos] != ':') throw Fail("expected ':'", pos);
                    pos++;
                    value.Object.Add(new KeyValuePair<string, JsonValue>(key, ParseValue(s, ref pos, depth + 1)));
                    SkipSpace(s, ref pos);
                    if (pos < s.Length && s[pos] == ',') { pos++; continue; }
                    if (pos < s.Length && s[pos] == '}') { pos++; return value; }
                    throw Fail("expected ',' or '}'", pos);
                }
            }
            if (c == '[')
            {
                value.Kind = JsonKind.Array;
                pos++;
                SkipSpace(s, ref pos);
                if (pos < s.Length && s[pos] == ']') { pos++; return value; }
                while (true)
                {
                    value.Array.Add(ParseValue(s, ref pos, depth + 1));
                    SkipSpace(s, ref pos);
                    if (pos < s.Length && s[pos] == ',') { pos++; continue; }
                    if (pos < s.Length && s[pos] == ']') { pos++; return value; }
                    throw Fail("expected ',' or ']'", pos);
                }
            }
            if (c == '"') { value.Kind = JsonKind.String; value.String = ParseString(s, ref pos); return value; }
            if (Consume(s, ref pos, "true")) { value.Kind = JsonKind.Bool; value.Bool = true; return value; }
            if (Consume(s, ref pos, "false")) { value.Kind = JsonKind.Bool; return value; }
            if (Consume(s, ref pos, "null")) return value;
            return ParseNumber(s, ref pos);
        }

        static JsonValue ParseNumber(string s, ref int pos)
        {
            int start = pos;
            if (pos < s.Length && s[pos] == '-') pos++;
            int digits = pos;
            while (pos < s.Length && char.IsDigit(s[pos]) && s[pos] < 128) pos++;
            if (pos == digits) throw Fail("expected a value", pos);
            if (s[digits] == '0' && pos - digits > 1) throw Fail("leading zero", pos);
            bool integral = true;
            if (pos < s.Length && s[pos] == '.')
            {
                integral = false;
                pos++;
                int fraction = pos;
                while (pos < s.Length && s[pos] >= '0' && s[pos] <= '9') pos++;
                if (pos == fraction) throw Fail("bad fraction", pos);
            }
            if (pos < s.Length && (s[pos] == 'e' || s[pos] == 'E'))
            {
                integral = false;
                pos++;
                if (pos < s.Length && (s[pos] == '+' || s[pos] == '-')) pos++;
                int exponent = pos;
                while (pos < s.Length && s[pos] >= '0' && s[pos] <= '9') pos++;
                if (pos == exponent) throw Fail("bad exponent", pos);
            }
            string literal = s.Substring(start, pos - start);
            var value = new JsonValue { Kind = JsonKind.Number };
            value.Number = double.Parse(literal, CultureInfo.InvariantCulture);
            long integer;
            // Beyond 2^53 - 1 the JavaScript that wrote the vectors is not exact.
            if (integral && long.TryParse(literal, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out integer)
                && integer <= 9007199254740991L && integer >= -9007199254740991L)
            {
                value.IsInteger = true;
                value.Integer = integer;
            }
            return value;
        }

        static string ParseString(string s, ref int pos)
        {
            pos++;
            var sb = new StringBuilder();
            while (true)
            {
                if (pos >= s.Length) throw Fail("unterminated string", pos);
                char c = s[pos++];
                if (c == '"') return sb.ToString();
                if (c < 0x20) throw Fail("control character in string", pos);
                if (c != '\\') { sb.Append(c); continue; }
                if (pos >= s.Length) throw Fail("unterminated escape", pos);
                char e = s[pos++];
                switch (e)
                {
                    case '"': sb.Append('"'); break;
                    case '\\': sb.Append('\\'); break;
                    case '/': sb.Append('/'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'n': sb.Append('\n'); break;
                    case 'r': sb.Append('\r'); break;
                    case 't': sb.Append('\t'); break;
                    case 'u':
                        if (pos + 4 > s.Length) throw Fail("truncated \\u escape", pos);
                        sb.Append((char)int.Parse(s.Substring(pos, 4), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture));
                        pos += 4;
                        break;
                    default: throw Fail("bad escape", pos);
                }
            }
        }
    }
}
