// One HTTP call to the Matchplane API, shared by the player and server clients: JSON in and out,
// the bearer credential, an Idempotency-Key on mutations, problem+json errors thrown as
// MatchplaneApiException.
using System;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading.Tasks;
using Matchplane.JoinAuth;

namespace Matchplane.Client
{
    public sealed class ApiTransport
    {
        readonly HttpClient _http;

        /// <summary>The API's base URL with the /v1/ prefix.</summary>
        public readonly Uri ApiUrl;

        /// <param name="baseUrl">Where the API is served, e.g. https://mm.example.com (the /v1 prefix is added).</param>
        public ApiTransport(string baseUrl, HttpClient http = null)
        {
            ApiUrl = new Uri(baseUrl.TrimEnd('/') + "/v1/");
            Http = http ?? new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
            _http = Http;
        }

        /// <summary>The HttpClient calls go through (also used for a region's probe edge).</summary>
        public HttpClient Http { get; private set; }

        /// <summary>Answers the parsed body (null when empty).</summary>
        public async Task<JsonValue> SendAsync(HttpMethod method, string path, string body, bool idempotencyKey, string bearer)
        {
            using (var request = new HttpRequestMessage(method, new Uri(ApiUrl, path)))
            {
                request.Headers.Accept.ParseAdd("application/json, application/problem+json");
                if (bearer != null) request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", bearer);
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
}
