// Errors of the player client, and the little JSON writing its request bodies need.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>The API (or a probe edge) answered with an error status. Switch on Code (stable), never on the message.</summary>
    public sealed class MatchplaneApiException : Exception
    {
        public readonly int Status;
        /// <summary>The problem document's code, e.g. ASSIGNMENT_NOT_READY; null when the body was not one.</summary>
        public readonly string Code;
        public readonly JsonValue Problem;

        public MatchplaneApiException(string method, string path, int status, JsonValue problem)
            : base(method + " " + path + " failed: " + status + (CodeOf(problem) == null ? "" : " " + CodeOf(problem)))
        {
            Status = status;
            Problem = problem;
            Code = CodeOf(problem);
        }

        /// <summary>A string member of the problem document (e.g. matchState, endReason), or null.</summary>
        public string ProblemString(string member)
        {
            var value = Problem == null ? null : Problem.Find(member);
            return value != null && value.Kind == JsonKind.String ? value.String : null;
        }

        static string CodeOf(JsonValue problem)
        {
            var code = problem == null ? null : problem.Find("code");
            return code != null && code.Kind == JsonKind.String ? code.String : null;
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

        /// <summary>A JSON object of integers, e.g. a resume's {matchId: revision}.</summary>
        public static string Numbers(IEnumerable<KeyValuePair<string, long>> members)
        {
            var parts = new List<string>();
            foreach (var member in members) parts.Add(Quote(member.Key) + ":" + member.Value.ToString(CultureInfo.InvariantCulture));
            return "{" + string.Join(",", parts.ToArray()) + "}";
        }
    }
}
