// One HTTP call to the Matchplane API, shared by the player and server clients: JSON in and out,
// the bearer credential, problem+json errors thrown as MatchplaneApiException, and the TypeScript
// SDK's retry policy (libs/sdk http.transport.ts): retryable failures are tried again after a
// jittered backoff (or the answer's Retry-After), a mutation keeping its one Idempotency-Key, and
// a replica that does not answer is left for the next one of ApiEndpoints.
using System;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    /// <summary>How a call may be retried.</summary>
    public enum RetryMode
    {
        /// <summary>A mutation: one fresh Idempotency-Key per call, resent by every retry, so the server applies it once.</summary>
        IdempotencyKey,
        /// <summary>Idempotent by itself (a read, signing out, a repeatable report): retried without a key.</summary>
        Safe,
        /// <summary>Sent once (a probe answer: a retry would measure the backoff, not the network; a heartbeat: the next beat is the retry).</summary>
        Never,
    }

    public sealed class RetryOptions
    {
        /// <summary>Further attempts after the first, for retryable failures only.</summary>
        public int Retries = 2;
        /// <summary>Backoff before the first retry (ms); doubles with each retry, with jitter.</summary>
        public int BaseDelayMs = 250;
        /// <summary>Cap of one backoff delay (ms).</summary>
        public int MaxDelayMs = 5000;
        /// <summary>Also retry 429s after their Retry-After. Off: a rate limit or a no-show cooldown is for the player to see.</summary>
        public bool RetryRateLimited;
        /// <summary>The longest Retry-After (ms) a retry waits out; a longer one is thrown at once.</summary>
        public int MaxRetryAfterMs = 30000;

        /// <summary>
        /// The jittered backoff before retry number attempt+1: half the capped exponential delay plus
        /// `unit` (in [0, 1)) of the other half, so the retries of many clients hit by one outage spread.
        /// </summary>
        public int BackoffMs(int attempt, double unit)
        {
            double backoff = Math.Min(MaxDelayMs, BaseDelayMs * Math.Pow(2, attempt));
            return (int)Math.Round(backoff / 2 + unit * (backoff / 2));
        }

        internal void Validate()
        {
            if (Retries < 0) throw new ArgumentOutOfRangeException("Retries", "retries must not be negative");
            if (BaseDelayMs < 0 || MaxDelayMs < 0 || MaxRetryAfterMs < 0)
                throw new ArgumentOutOfRangeException("BaseDelayMs", "delays must not be negative");
        }
    }

    public sealed class ApiTransport
    {
        static readonly Random Jitter = new Random();
        readonly HttpClient _http;

        /// <param name="baseUrl">Where the API is served, e.g. https://mm.example.com (the /v1 prefix is added).</param>
        public ApiTransport(string baseUrl, HttpClient http = null, RetryOptions retry = null)
            : this(new ApiEndpoints(baseUrl), http, retry) { }

        /// <param name="endpoints">Every replica of the API, in order of preference.</param>
        public ApiTransport(ApiEndpoints endpoints, HttpClient http = null, RetryOptions retry = null)
        {
            if (endpoints == null) throw new ArgumentNullException("endpoints");
            Endpoints = endpoints;
            Retry = retry ?? new RetryOptions();
            Retry.Validate();
            // Its Timeout bounds each attempt, body included.
            Http = http ?? new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
            _http = Http;
        }

        public ApiEndpoints Endpoints { get; private set; }
        public RetryOptions Retry { get; private set; }

        /// <summary>The current replica's base URL with the /v1/ prefix.</summary>
        public Uri ApiUrl { get { return Endpoints.Current; } }

        /// <summary>The HttpClient calls go through (also used for a region's probe edge).</summary>
        public HttpClient Http { get; private set; }

        /// <summary>
        /// Sends the call, retrying as `retry` allows; answers the parsed body (null when empty).
        /// Throws MatchplaneApiException for an error status and MatchplaneNetworkException when no
        /// attempt got an answer. onUnanswered runs for each attempt that got none: the server may
        /// have applied it, so a later refusal can mean "already done".
        /// </summary>
        public async Task<JsonValue> SendAsync(HttpMethod method, string path, string body, RetryMode retry, string bearer, Action onUnanswered = null)
        {
            // One key per logical call: every retry below resends it.
            string idempotencyKey = retry == RetryMode.IdempotencyKey ? Guid.NewGuid().ToString() : null;
            int maxRetries = retry == RetryMode.Never ? 0 : Retry.Retries;
            for (int attempt = 0; ; attempt++)
            {
                Uri endpoint = Endpoints.Current;
                Exception failure;
                try
                {
                    return await AttemptAsync(endpoint, method, path, body, idempotencyKey, bearer).ConfigureAwait(false);
                }
                catch (MatchplaneApiException e) { failure = e; }
                catch (Exception e) when (e is HttpRequestException || e is TaskCanceledException || e is IOException || e is WebException)
                {
                    // HttpClient's timeout surfaces as a cancellation: no caller token exists to cancel with.
                    failure = new MatchplaneNetworkException(method.Method, path, e is TaskCanceledException, e);
                    if (onUnanswered != null) onUnanswered();
                }
                if (ReplicaUnavailable(failure)) Endpoints.Failover(endpoint);
                int? delayMs = attempt < maxRetries ? RetryDelayMs(failure, attempt) : null;
                if (!delayMs.HasValue) throw failure;
                await Task.Delay(delayMs.Value).ConfigureAwait(false);
            }
        }

        async Task<JsonValue> AttemptAsync(Uri endpoint, HttpMethod method, string path, string body, string idempotencyKey, string bearer)
        {
            using (var request = new HttpRequestMessage(method, new Uri(endpoint, path)))
            {
                request.Headers.Accept.ParseAdd("application/json, application/problem+json");
                if (bearer != null) request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", bearer);
                if (idempotencyKey != null) request.Headers.Add("Idempotency-Key", idempotencyKey);
                if (body != null) request.Content = new StringContent(body, Encoding.UTF8, "application/json");
                using (HttpResponseMessage response = await _http.SendAsync(request).ConfigureAwait(false))
                {
                    string text = response.Content == null ? "" : await response.Content.ReadAsStringAsync().ConfigureAwait(false);
                    // An unparsable success throws FormatException, never retried: a retry will not mend it.
                    if (response.IsSuccessStatusCode) return text.Length > 0 ? MiniJson.Parse(text) : null;
                    JsonValue problem = null;
                    try { problem = text.Length > 0 ? MiniJson.Parse(text) : null; }
                    catch (FormatException) { } // not a problem document: the status alone describes it
                    throw new MatchplaneApiException(method.Method, path, (int)response.StatusCode, problem, RetryAfterSeconds(response));
                }
            }
        }

        /// <summary>How long to wait before retrying `failure`, or null when it must not be retried.</summary>
        int? RetryDelayMs(Exception failure, int attempt)
        {
            double unit;
            lock (Jitter) unit = Jitter.NextDouble();
            int jittered = Retry.BackoffMs(attempt, unit);
            var api = failure as MatchplaneApiException;
            if (api == null) return jittered; // no answer at all
            bool retryable = (api.Status >= 500 && api.Status != 501) ||
                (api.Status == 409 && api.Code == "IDEMPOTENCY_KEY_IN_PROGRESS") ||
                (api.Status == 429 && Retry.RetryRateLimited);
            if (!retryable) return null;
            if (!api.RetryAfterSeconds.HasValue) return jittered;
            long retryAfterMs = api.RetryAfterSeconds.Value * 1000;
            return retryAfterMs <= Retry.MaxRetryAfterMs ? (int?)retryAfterMs : null;
        }

        /// <summary>The replica, not the request, is the trouble: the next attempt goes to another one.</summary>
        static bool ReplicaUnavailable(Exception failure)
        {
            var api = failure as MatchplaneApiException;
            return api == null || api.Status == 502 || api.Status == 503 || api.Status == 504;
        }

        /// <summary>Retry-After as seconds (delta-seconds, or an HTTP-date: 0 once past); null when absent or unreadable.</summary>
        static long? RetryAfterSeconds(HttpResponseMessage response)
        {
            RetryConditionHeaderValue value = response.Headers.RetryAfter;
            if (value == null) return null;
            if (value.Delta.HasValue) return (long)value.Delta.Value.TotalSeconds;
            if (!value.Date.HasValue) return null;
            return Math.Max(0, (long)Math.Ceiling((value.Date.Value - DateTimeOffset.UtcNow).TotalSeconds));
        }
    }
}
