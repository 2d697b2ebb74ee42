// The start of the C# player client (issue 36 item 2): session, queue and assignment over
// HttpClient, with the API's conventions (bearer session token, Idempotency-Key on mutations,
// problem+json errors). Answers are returned as parsed JSON (JsonValue); typed responses, retries,
// probes, parties and the notification socket (ClientWebSocket) are still to come.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>The API answered with an error status. Switch on Code (stable), never on the message.</summary>
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

        static string CodeOf(JsonValue problem)
        {
            var code = problem == null ? null : problem.Find("code");
            return code != null && code.Kind == JsonKind.String ? code.String : null;
        }
    }

    public sealed class PlayerClient
    {
        readonly HttpClient _http;
        readonly Uri _baseUrl;

        /// <summary>The session token calls are made with, once CreateSessionAsync succeeded.</summary>
        public string SessionToken { get; private set; }
        public string PlayerId { get; private set; }

        /// <param name="baseUrl">Where the API is served, e.g. https://mm.example.com (the /v1 prefix is added).</param>
        public PlayerClient(string baseUrl, HttpClient http = null)
        {
            _baseUrl = new Uri(baseUrl.TrimEnd('/') + "/v1/");
            _http = http ?? new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        }

        /// <summary>Signs in (a new guest without arguments; a guest's deviceSecret resumes it) and keeps the token.</summary>
        public async Task<JsonValue> CreateSessionAsync(string provider = null, string credential = null)
        {
            var body = new Dictionary<string, string>();
            if (provider != null) body["provider"] = provider;
            if (credential != null) body["credential"] = credential;
            // Sent without the old token: signing in must not depend on a session that may have expired.
            JsonValue session = await SendAsync(HttpMethod.Post, "sessions", JsonText.Object(body), true, false).ConfigureAwait(false);
            SessionToken = session["token"].Str;
            PlayerId = session["playerId"].Str;
            return session;
        }

        /// <summary>Ends the session server-side; a 401 means it is already gone.</summary>
        public async Task EndSessionAsync()
        {
            try { await SendAsync(HttpMethod.Delete, "sessions/current", null, false).ConfigureAwait(false); }
            catch (MatchplaneApiException e) when (e.Status == 401) { }
            SessionToken = null;
        }

        /// <summary>What this player may queue for, the regions, and heartbeatIntervalMs.</summary>
        public Task<JsonValue> QueueOptionsAsync() { return SendAsync(HttpMethod.Get, "queue/options", null, false); }

        /// <param name="attributesJson">The ticket's attributes as a JSON object, or null.</param>
        public Task<JsonValue> CreateTicketAsync(string mode, string attributesJson = null)
        {
            string body = "{\"mode\":" + JsonText.Quote(mode) + (attributesJson == null ? "" : ",\"attributes\":" + attributesJson) + "}";
            return SendAsync(HttpMethod.Post, "queue/tickets", body, true);
        }

        public Task<JsonValue> TicketAsync(string ticketId) { return SendAsync(HttpMethod.Get, "queue/tickets/" + Escape(ticketId), null, false); }

        /// <summary>Tells the server the player still waits; a ticket without heartbeats expires.</summary>
        public Task<JsonValue> HeartbeatAsync(string ticketId)
        {
            return SendAsync(HttpMethod.Post, "queue/tickets/" + Escape(ticketId) + "/heartbeat", null, true);
        }

        public Task<JsonValue> CancelTicketAsync(string ticketId)
        {
            return SendAsync(HttpMethod.Delete, "queue/tickets/" + Escape(ticketId), null, true);
        }

        /// <summary>
        /// Where and how to join (endpoint, join token). Before ASSIGNMENT_READY the API answers
        /// 409 ASSIGNMENT_NOT_READY, after the match 410 MATCH_ENDED: both MatchplaneApiException.
        /// </summary>
        public Task<JsonValue> AssignmentAsync(string matchId)
        {
            return SendAsync(HttpMethod.Get, "matches/" + Escape(matchId) + "/assignment", null, false);
        }

        static string Escape(string segment) { return Uri.EscapeDataString(segment); }

        async Task<JsonValue> SendAsync(HttpMethod method, string path, string body, bool idempotencyKey, bool withToken = true)
        {
            using (var request = new HttpRequestMessage(method, new Uri(_baseUrl, path)))
            {
                request.Headers.Accept.ParseAdd("application/json, application/problem+json");
                if (withToken && SessionToken != null) request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", SessionToken);
                // One key per logical call, so a retried mutation is applied once.
                if (idempotencyKey) request.Headers.Add("Idempotency-Key", Guid.NewGuid().ToString());
                if (body != null) request.Content = new StringContent(body, Encoding.UTF8, "application/json");
                using (HttpResponseMessage response = await _http.SendAsync(request).ConfigureAwait(false))
                {
                    string text = response.Content == null ? "" : await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                    JsonValue parsed = null;
                    if (text.Length > 0)
                    {
                        try { parsed = MiniJson.Parse(text); }
                        catch (FormatException) when (!response.IsSuccessStatusCode) { }
                    }
                    if (!response.IsSuccessStatusCode)
                        throw new MatchplaneApiException(method.Method, path, (int)response.StatusCode, parsed);
                    return parsed;
                }
            }
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
    }
}
