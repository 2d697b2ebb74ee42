// Errors of the clients (problem+json answers, no answer at all, a match without an assignment),
// and the little JSON writing their request bodies need.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>
    /// The API (or a probe edge) answered with an error status, its problem+json (RFC 9457) fields
    /// read out. Switch on Code (stable), never on the message; Code is null only when the body was
    /// not a problem document (e.g. a proxy's error page).
    /// </summary>
    public sealed class MatchplaneApiException : Exception
    {
        public readonly string Method, Path;
        public readonly int Status;
        /// <summary>The problem document's code, e.g. ASSIGNMENT_NOT_READY; null when the body was not one.</summary>
        public readonly string Code;
        public readonly string Type, Title, Detail;
        /// <summary>From the Retry-After header (delta-seconds or HTTP-date), when the server sent one.</summary>
        public readonly long? RetryAfterSeconds;
        /// <summary>The whole parsed body, e.g. for a validation failure's errors; null when empty or not JSON.</summary>
        public readonly JsonValue Problem;

        public MatchplaneApiException(string method, string path, int status, JsonValue problem, long? retryAfterSeconds = null)
            : base(method + " " + path + " failed: " + status + (StringOf(problem, "code") == null ? "" : " " + StringOf(problem, "code")) +
                (StringOf(problem, "detail") == null ? "" : ": " + StringOf(problem, "detail")))
        {
            Method = method;
            Path = path;
            Status = status;
            Problem = problem;
            Code = StringOf(problem, "code");
            Type = StringOf(problem, "type");
            Title = StringOf(problem, "title");
            Detail = StringOf(problem, "detail");
            RetryAfterSeconds = retryAfterSeconds;
        }

        /// <summary>A string member of the problem document (e.g. matchState, endReason), or null.</summary>
        public string ProblemString(string member) { return StringOf(Problem, member); }

        static string StringOf(JsonValue problem, string member)
        {
            var value = problem == null || problem.Kind != JsonKind.Object ? null : problem.Find(member);
            return value != null && value.Kind == JsonKind.String ? value.String : null;
        }
    }

    /// <summary>No HTTP answer: the connection failed, or the attempt outlived the HttpClient's timeout.</summary>
    public sealed class MatchplaneNetworkException : Exception
    {
        public readonly string Method, Path;
        public readonly bool TimedOut;

        public MatchplaneNetworkException(string method, string path, bool timedOut, Exception cause)
            : base(method + " " + path + (timedOut ? " timed out" : " failed to reach the API") + ": " + cause.Message, cause)
        {
            Method = method;
            Path = path;
            TimedOut = timedOut;
        }
    }

    /// <summary>The match ended before (or while) the player waited for its assignment: there will never be one.</summary>
    public sealed class AssignmentUnavailableException : Exception
    {
        public readonly string MatchId;
        public readonly string State;
        /// <summary>The match's end reason when the API gave one (e.g. NO_SHOW), else null.</summary>
        public readonly string Reason;

        public AssignmentUnavailableException(string matchId, string state, string reason)
            : base("match " + matchId + " is " + state + (reason == null ? "" : " (" + reason + ")") + ": it will never have an assignment to join")
        {
            MatchId = matchId;
            State = state;
            Reason = reason;
        }
    }

    /// <summary>Just enough JSON writing for request bodies.</summary>
    public static class JsonText
    {
        public static string Quote(string s)
        {
            var sb = new StringBuilder("\"");
            foreach (char c in s)
            {
                if (c == '"' || c == '\\') sb.Append('\\').Append(c);
                else if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                else sb.Append(c);
            }
            return sb.Append('"').ToString();
        }

        public static string Object(IDictionary<string, string> members)
        {
            var parts = new List<string>();
            foreach (var member in members) parts.Add(Quote(member.Key) + ":" + Quote(member.Value));
            return "{" + string.Join(",", parts.ToArray()) + "}";
        }

        /// <summary>A JSON array of strings.</summary>
        public static string Strings(IEnumerable<string> items)
        {
            var parts = new List<string>();
            foreach (string item in items) parts.Add(Quote(item));
            return "[" + string.Join(",", parts.ToArray()) + "]";
        }

        /// <summary>A JSON object of string arrays, e.g. a party's {playerId: roles}.</summary>
        public static string StringLists(IEnumerable<KeyValuePair<string, IList<string>>> members)
        {
            var parts = new List<string>();
            foreach (var member in members) parts.Add(Quote(member.Key) + ":" + Strings(member.Value));
            return "{" + string.Join(",", parts.ToArray()) + "}";
        }

        /// <summary>A JSON object of integers, e.g. a resume's {matchId: revision}.</summary>
        public static string Numbers(IEnumerable<KeyValuePair<string, long>> members)
        {
            var parts = new List<string>();
            foreach (var member in members) parts.Add(Quote(member.Key) + ":" + member.Value.ToString(CultureInfo.InvariantCulture));
            return "{" + string.Join(",", parts.ToArray()) + "}";
        }
    }
}
